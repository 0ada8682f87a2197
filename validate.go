// Request validation: a request is checked against the names no event
// changes (resources, flavors, topology levels), so the checks are the
// fixed part's.

package allot

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
)

// maxPodSets is the most pod sets a workload may have (Kueue's limit).
const maxPodSets = 8

// maxPodCount bounds a pod set's count.
const maxPodCount = 1 << 20

// validate checks a request; on a problem it returns a message and the path
// of the field at fault. It does not allocate when the request is valid.
func (s *fixed) validate(r *Request) (msg, field string) { return s.validateInto(r, nil) }

// validateInto is validate resolving a valid request's pod sets into a's
// vectors (assigner.resolve) on the way, when a is not nil: the checks read
// every quantity once, and Decide need not read them again.
func (s *fixed) validateInto(r *Request, a *assigner) (msg, field string) {
	if r.ID == "" {
		return "must not be empty", "id"
	}
	if r.Queue == "" && r.LocalQueue == "" {
		return "must not be empty", "queue"
	}
	if r.LocalQueue != "" && r.Tenant == "" {
		return "must name the namespace of local queue " + strconv.Quote(r.LocalQueue), "tenant"
	}
	if r.SubmittedAt < 0 {
		return "must not be negative", "submittedAt"
	}
	if r.ExpectedRuntime < 0 {
		return "must not be negative", "expectedRuntime"
	}
	if r.Preemption.Class > Never {
		return "unknown preemption class", "preemption.class"
	}
	if r.Preemption.LastCheckpointAt < 0 {
		return "must not be negative", "preemption.lastCheckpointAt"
	}
	if len(r.PodSets) == 0 {
		return "a workload needs at least one pod set", "podSets"
	}
	if len(r.PodSets) > maxPodSets {
		return fmt.Sprintf("%d pod sets, at most %d", len(r.PodSets), maxPodSets), "podSets"
	}
	// total is what the pod sets before the one checked charge: together
	// they may charge no more than quota.MaxQuantity of a resource either.
	var total res.Vec
	var into resolvedSet
	for i := range r.PodSets {
		if m, f := s.validatePodSet(r, i, &total, &into); m != "" {
			return m, "podSets[" + strconv.Itoa(i) + "]." + f
		}
		if a != nil {
			a.perPod[i], a.zeros[i], a.need[i] = into.per, into.zeros, into.need
		}
	}
	if a != nil {
		a.resolved(len(r.PodSets))
	}
	return "", ""
}

// resolvedSet is one pod set as validation reads it: what a pod books on a
// node, the resources asked for as an explicit 0, and what the pod set
// charges to quota, tokens included.
type resolvedSet struct {
	per, need res.Vec
	zeros     uint16
}

func (s *fixed) validatePodSet(r *Request, i int, total *res.Vec, into *resolvedSet) (msg, field string) {
	ps := &r.PodSets[i]
	if ps.Name == "" {
		return "must not be empty", "name"
	}
	for j := range i {
		if r.PodSets[j].Name == ps.Name {
			return fmt.Sprintf("pod set %q twice", ps.Name), "name"
		}
	}
	if ps.Count < 1 {
		return fmt.Sprintf("must be at least 1, got %d", ps.Count), "count"
	}
	if ps.Count > maxPodCount {
		return fmt.Sprintf("%d pods, at most %d", ps.Count, maxPodCount), "count"
	}
	found := 0
	var per, charge res.Vec // charge: what the pod set charges, within quota.MaxQuantity
	var zeros uint16
	for k, name := range s.resources {
		q, ok := ps.PerPod[name]
		if !ok {
			continue
		}
		found++
		per[k] = q
		if q == 0 {
			zeros |= 1 << k
		}
		if q < 0 {
			return fmt.Sprintf("must not be negative, got %d", q), "perPod." + name
		}
		if q > quota.MaxQuantity {
			return fmt.Sprintf("%d is more than %s", q, quota.MaxQuantityText), "perPod." + name
		}
		if !quota.Bounded(0, q, ps.Count) {
			return fmt.Sprintf("%d pods × %d overflows", ps.Count, q), "perPod." + name
		}
		charge[k] = q * int64(ps.Count)
	}
	if s.share >= 0 {
		if msg := s.shareRule(ps.PerPod[s.resources[s.gpu]], ps.PerPod[s.resources[s.share]]); msg != "" {
			return msg, "perPod." + s.resources[s.share]
		}
	}
	if found != len(ps.PerPod) {
		found += s.ignoredIn(ps.PerPod)
	}
	if found != len(ps.PerPod) {
		for _, name := range sortedKeys(ps.PerPod) {
			if _, ok := s.resIdx[name]; !ok && !slices.Contains(s.ignored, name) {
				return fmt.Sprintf("resource %q is not declared by the snapshot", name), "perPod." + name
			}
		}
	}
	if ps.Tokens != nil {
		if s.tokens < 0 {
			return "the snapshot declares no \"tokens\" resource", "tokens"
		}
		t := ps.Tokens
		if t.Prompt < 0 || t.MaxTokens < 0 {
			return "must not be negative", "tokens"
		}
		// Each term is at most quota.MaxQuantity, so the sum of three
		// cannot overflow.
		if t.Prompt > quota.MaxQuantity || t.MaxTokens > quota.MaxQuantity ||
			!quota.Bounded(0, t.Prompt+t.MaxTokens+ps.PerPod["tokens"], ps.Count) {
			return "token budget overflows", "tokens"
		}
		charge[s.tokens] = (t.Prompt + t.MaxTokens + ps.PerPod["tokens"]) * int64(ps.Count)
	}
	// The first pod set's charge is within the bound: it is the total.
	if i == 0 {
		*total = charge
	} else if k := quota.AddCharge(total, charge); k >= 0 {
		return fmt.Sprintf("with the pod sets before it, more than %s of %s", quota.MaxQuantityText, s.resources[k]), "perPod." + s.resources[k]
	}
	*into = resolvedSet{per: per, need: charge, zeros: zeros}
	for k, f := range ps.Flavors {
		if _, ok := s.flavorIdx[f]; !ok {
			return fmt.Sprintf("unknown flavor %q", f), "flavors[" + strconv.Itoa(k) + "]"
		}
	}
	if len(ps.Tolerations) > 0 {
		if m, f := validateTolerations(ps.Tolerations, "tolerations"); m != "" {
			return m, f
		}
	}
	if ps.Flavor != "" || len(ps.Nodes) > 0 || len(ps.GPUIndices) > 0 {
		return "a request carries no placement (flavor, nodes, gpuIndices)", "nodes"
	}
	if msg, field := ps.validateMinCount(); msg != "" {
		return msg, field
	}
	return s.validateTopology(&ps.Topology, ps.Count)
}

func (s *fixed) validateTopology(t *TopologyRequest, count int32) (msg, field string) {
	if t.Required != "" && t.Preferred != "" {
		return "required and preferred exclude each other", "topology"
	}
	main := 0
	for _, c := range [...]struct{ name, field string }{{t.Required, "topology.required"}, {t.Preferred, "topology.preferred"}} {
		if c.name == "" {
			continue
		}
		l, ok := s.topo.LevelIndex(c.name)
		if !ok {
			return fmt.Sprintf("unknown level %q", c.name), c.field
		}
		main = l
	}
	if t.Policy > Balanced {
		return "unknown policy", "topology.policy"
	}
	prevLevel, prevSize := main-1, int32(count)
	for k, sl := range t.Slices {
		f := "topology.slices[" + strconv.Itoa(k) + "]"
		l, ok := s.topo.LevelIndex(sl.Level)
		if !ok {
			return fmt.Sprintf("unknown level %q", sl.Level), f + ".level"
		}
		if l <= prevLevel {
			return fmt.Sprintf("level %q must be narrower than the levels before it", sl.Level), f + ".level"
		}
		if sl.Size < 1 {
			return fmt.Sprintf("size must be at least 1, got %d", sl.Size), f + ".size"
		}
		if prevSize%sl.Size != 0 {
			return fmt.Sprintf("size %d does not divide %d", sl.Size, prevSize), f + ".size"
		}
		prevLevel, prevSize = l, sl.Size
	}
	return "", ""
}
