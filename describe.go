// A snapshot described back as a Builder: saving a production state to
// build it again, as a repro or a fresh start.

package allot

import (
	"math"
	"slices"

	"github.com/allot-sched/allot/quota"
)

// Builder describes the snapshot as a Builder that builds it again: every
// decision made on the snapshot Build returns from it is the one made on s
// (its Version too), and so is its own Builder. Nodes carry their
// condition, running workloads their placement (nodes and GPU indices, pod
// by pod), pending workloads are listed as submitted or as evicted, the
// queues and cohorts as configured, and options and fair sharing as
// given. History holds each queue's fairness debt and historical usage as
// they stand now, decayed: preemptions to the full float64, usage rounded
// to the whole base-unit second. What the store has done (its evictions)
// is no part of a description. Lists of workloads come sorted by ID.
//
// Nothing of s is shared with the Builder. It costs what reading every
// node, queue and workload costs, and Build what building it costs.
func (s *Snapshot) Builder() Builder {
	b := Builder{
		Now:       s.now,
		Version:   s.version,
		Resources: s.Resources(),
		// GPUResource and IgnoredResources as the snapshot reads them.
		GPUResource:      s.GPUResource(),
		GPUShareResource: s.GPUShareResource(),
		IgnoredResources: s.IgnoredResources(),
		Levels:           s.Levels(),
		Flavors:          s.Flavors(),
		Nodes:            s.Nodes(),
		Cohorts:          s.Cohorts(),
		Queues:           s.Queues(),
		Running:          make([]Workload, 0, s.running.Len()),
		Pending:          s.PendingWorkloads(),
		History:          s.historyNow(),
		Options:          s.options,
		FairSharing: FairSharing{Enabled: s.fairSharing.Enabled,
			PreemptionStrategies: slices.Clone(s.fairSharing.PreemptionStrategies)},
		Namespaces:      s.Namespaces(),
		LocalQueues:     s.LocalQueues(),
		PriorityClasses: s.PriorityClasses(),
	}
	b.Options.Backfill, b.Options.TopologyAware = clonePtr(s.options.Backfill), clonePtr(s.options.TopologyAware)
	s.running.Scan(func(r *running) bool {
		b.Running = append(b.Running, r.workload(s))
		return true
	})
	return b
}

// historyNow is the fairness history as it stands now: each queue's debt
// and historical usage decayed to the snapshot's time, where not zero.
func (s *Snapshot) historyNow() History {
	h := History{HalfLife: s.history.HalfLife}
	main := s.resources[s.historyResource()]
	for q := range s.queues {
		name := s.queues[q].Name
		if d := s.debt[q].Now(s.now, h.HalfLife); d != 0 {
			if h.Preemptions == nil {
				h.Preemptions = map[string]float64{}
			}
			h.Preemptions[name] = d
		}
		// Build takes at most quota.MaxQuantity: 2^61 GPU-seconds, some
		// seventy billion GPU-years.
		if u := min(math.Round(s.used[q].Now(s.now, h.HalfLife)), float64(quota.MaxQuantity)); u != 0 {
			if h.Usage == nil {
				h.Usage = map[string]Resources{}
			}
			h.Usage[name] = Resources{main: int64(u)}
		}
	}
	return h
}
