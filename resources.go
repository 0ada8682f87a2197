// Resource-name resolution: between the Resources maps of the API and the
// vectors of the declared resources, which the fixed part of a snapshot
// numbers once.

package allot

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
)

// vector converts a resource map, refusing unknown names and bad values.
func (s *fixed) vector(m Resources, path string) (res.Vec, error) {
	v, _, err := s.vectorKeys(m, path, false)
	return v, err
}

// podVector converts what a node or a pod set names, which may carry the
// ignored names: vectorKeys dropping them.
func (s *fixed) podVector(m Resources, path string) (res.Vec, uint16, error) {
	return s.vectorKeys(m, path, true)
}

// vectorKeys is vector also reporting which resources m names (bit r for
// resource r), zero quantities included, so that m can be rebuilt exactly;
// with ignore, the ignored names are dropped rather than refused.
func (s *fixed) vectorKeys(m Resources, path string, ignore bool) (res.Vec, uint16, error) {
	var v res.Vec
	var keys uint16
	found := 0
	for i, name := range s.resources {
		q, ok := m[name]
		if !ok {
			continue
		}
		found++
		keys |= 1 << i
		if q < 0 || q > quota.MaxQuantity {
			return v, keys, buildErr(ErrInvalid, path+"."+name, "quantity %d out of range [0, %s]", q, quota.MaxQuantityText)
		}
		v[i] = q
	}
	if ignore {
		found += s.ignoredIn(m)
	}
	if found != len(m) {
		for _, name := range sortedKeys(m) {
			if _, ok := s.resIdx[name]; !ok && !(ignore && slices.Contains(s.ignored, name)) {
				return v, keys, buildErr(ErrUnknownResource, path+"."+name, "resource %q is not declared", name)
			}
		}
	}
	return v, keys, nil
}

// ignoredIn counts the ignored names m has.
func (s *fixed) ignoredIn(m Resources) int {
	n := 0
	for _, name := range s.ignored {
		if _, ok := m[name]; ok {
			n++
		}
	}
	return n
}

// resourceMap rebuilds the map a vector was read from by vectorKeys.
func (s *fixed) resourceMap(v res.Vec, keys uint16) Resources {
	m := make(Resources, bits.OnesCount16(keys))
	for r, name := range s.resources {
		if keys&(1<<r) != 0 {
			m[name] = v[r]
		}
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (s *fixed) fmtVec(v res.Vec) string {
	out := "{"
	for i, n := range s.resources {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("%s:%d", n, v[i])
	}
	return out + "}"
}

// podCharge is what one pod charges to quota: its resources plus its token
// budget.
func (s *fixed) podCharge(per res.Vec, t *Tokens, p string) (res.Vec, error) {
	if t == nil {
		return per, nil
	}
	if s.tokens < 0 {
		return per, buildErr(ErrUnknownResource, p+".tokens", "the snapshot declares no \"tokens\" resource")
	}
	if t.Prompt < 0 || t.MaxTokens < 0 || t.Prompt > quota.MaxQuantity || t.MaxTokens > quota.MaxQuantity {
		return per, buildErr(ErrInvalid, p+".tokens", "token counts out of range")
	}
	per[s.tokens] += t.Prompt + t.MaxTokens
	if per[s.tokens] > quota.MaxQuantity {
		return per, buildErr(ErrInvalid, p+".tokens", "token counts out of range")
	}
	return per, nil
}

// podTokens is what one pod's token budget adds to the "tokens" resource,
// checked as podCharge checks it.
func (s *fixed) podTokens(per res.Vec, t *Tokens, p string) (int64, error) {
	c, err := s.podCharge(per, t, p)
	if err != nil || t == nil {
		return 0, err
	}
	return c[s.tokens] - per[s.tokens], nil
}
