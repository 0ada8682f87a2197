package raypg

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/allot-sched/allot"
)

// Errors Request returns, wrapped with the field at fault.
var (
	ErrInvalid        = errors.New("raypg: invalid placement group")
	ErrNotExpressible = errors.New("raypg: not expressible in allot")
)

// The strategies of a placement group, as Ray names them.
const (
	Pack         = "PACK"
	StrictPack   = "STRICT_PACK"
	Spread       = "SPREAD"
	StrictSpread = "STRICT_SPREAD"
)

// PlacementGroup is a placement group as ray.util.placement_group takes
// it: its bundles and strategy (empty is Ray's default, PACK), and a name.
type PlacementGroup struct {
	Name     string   `json:"name"`
	Bundles  []Bundle `json:"bundles"`
	Strategy string   `json:"strategy,omitempty"`
}

// Bundle is one bundle's resources, as Ray counts them: CPU and GPU in
// units (fractions allowed by Ray), memory in bytes, others in units.
type Bundle map[string]float64

// Warning names a field whose meaning allot changes.
type Warning struct {
	Field, Message string
}

func (w Warning) String() string { return w.Field + ": " + w.Message }

// Request returns the placement group as a request of id to queue: its
// pod sets, their topology and policy by the strategy, and a warning for
// each field allot decides otherwise than Ray would.
func Request(pg PlacementGroup, id, queue string) (allot.Request, []Warning, error) {
	strategy := pg.Strategy
	if strategy == "" {
		strategy = Pack
	}
	if !slices.Contains([]string{Pack, StrictPack, Spread, StrictSpread}, strategy) {
		return allot.Request{}, nil, fmt.Errorf("%w: strategy: %q is none of PACK, STRICT_PACK, SPREAD, STRICT_SPREAD", ErrInvalid, pg.Strategy)
	}
	if len(pg.Bundles) == 0 {
		return allot.Request{}, nil, fmt.Errorf("%w: bundles: a placement group needs at least one bundle", ErrInvalid)
	}
	per := make([]allot.Resources, len(pg.Bundles))
	for i, b := range pg.Bundles {
		r, err := resources(b, "bundles["+strconv.Itoa(i)+"]")
		if err != nil {
			return allot.Request{}, nil, err
		}
		per[i] = r
	}
	req := allot.Request{ID: id, Queue: queue}
	for i := 0; i < len(per); {
		j := i + 1
		for j < len(per) && maps.Equal(per[j], per[i]) {
			j++
		}
		req.PodSets = append(req.PodSets, allot.PodSet{Name: "bundle-" + strconv.Itoa(i), Count: int32(j - i), PerPod: per[i]})
		i = j
	}
	var warns []Warning
	group := ""
	if len(req.PodSets) > 1 {
		group = "placement-group"
	}
	for k := range req.PodSets {
		t := &req.PodSets[k].Topology
		switch strategy {
		case StrictPack:
			t.Required, t.Group = "node", group
		case Pack:
			t.Preferred, t.Group = "node", group
		case Spread, StrictSpread:
			t.Policy = allot.Spread
		}
	}
	switch {
	case strategy == StrictSpread && len(req.PodSets) > 1:
		return allot.Request{}, nil, fmt.Errorf("%w: strategy: STRICT_SPREAD over bundles of %d shapes: allot keeps the pods of one pod set on distinct nodes, not those of different pod sets",
			ErrNotExpressible, len(req.PodSets))
	case strategy == Spread:
		msg := "SPREAD is best effort in Ray; allot's spread policy is strict: decided as STRICT_SPREAD, each bundle on its own node or none placed"
		if len(req.PodSets) > 1 {
			msg += " (bundles of different shapes may still share a node)"
		}
		warns = append(warns, Warning{Field: "strategy", Message: msg})
	}
	return req, warns, nil
}

// resources maps one bundle's resources onto allot's, at path p.
func resources(b Bundle, p string) (allot.Resources, error) {
	out := allot.Resources{}
	for _, name := range slices.Sorted(maps.Keys(b)) {
		v := b[name]
		f := p + "." + name
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: %s: %v is not a quantity", ErrInvalid, f, v)
		}
		if v == 0 {
			continue
		}
		switch name {
		case "CPU":
			m := v * 1000
			if m != math.Trunc(m) || m > math.MaxInt64/2 {
				return nil, fmt.Errorf("%w: %s: %v CPUs is not a whole number of millicores", ErrNotExpressible, f, v)
			}
			out["cpu"] = int64(m)
		case "GPU":
			if v != math.Trunc(v) || v > math.MaxInt32 {
				return nil, fmt.Errorf("%w: %s: %v GPUs: allot counts whole GPUs", ErrNotExpressible, f, v)
			}
			out["gpu"] = int64(v)
		default:
			if v != math.Trunc(v) || v > math.MaxInt64/2 {
				return nil, fmt.Errorf("%w: %s: %v: allot counts %s in whole units", ErrNotExpressible, f, v, name)
			}
			out[name] = int64(v)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s: a bundle needs a resource", ErrInvalid, p)
	}
	return out, nil
}
