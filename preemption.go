package allot

import (
	"slices"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/preempt"
	"github.com/allot-sched/allot/quota"
)

// Fair-sharing preemption strategies (Kueue's names).
const (
	lessThanOrEqualToFinalShare = "LessThanOrEqualToFinalShare"
	lessThanInitialShare        = "LessThanInitialShare"
)

// fairStrategies are the configured fair-sharing preemption strategies, in
// order; by default both.
func fairStrategies(names []string) [2]preempt.Strategy {
	if len(names) == 0 {
		return [2]preempt.Strategy{preempt.LessThanOrEqualToFinalShare, preempt.LessThanInitialShare}
	}
	var out [2]preempt.Strategy
	for i, name := range names[:min(len(names), len(out))] {
		switch name {
		case lessThanOrEqualToFinalShare:
			out[i] = preempt.LessThanOrEqualToFinalShare
		case lessThanInitialShare:
			out[i] = preempt.LessThanInitialShare
		}
	}
	return out
}

// cost prices evictions now.
func (s *Snapshot) cost() preempt.Cost {
	return preempt.Cost{Now: s.now, GPU: s.gpu, Tokens: s.tokens, Resources: len(s.resources)}
}

// preemptWorld is the snapshot as the preemption search reads it.
func (dc *decider) preemptWorld() preempt.World {
	s := dc.s
	w := preempt.World{Tree: s.rtree, Usage: s.usage, Free: s.state, Empty: s.capacity, Nodes: s.nodeRes,
		Cost: s.cost(), Debt: s.debt, HalfLife: s.history.HalfLife, KueueOrder: s.kueueExact(),
		Fair: preempt.Sharing{Enabled: s.fairSharing.Enabled, Strategies: fairStrategies(s.fairSharing.PreemptionStrategies)}}
	if w.Fair.Enabled {
		weights := dc.d.work.weights[:0]
		for n := range s.rtree.Len() {
			weights = append(weights, s.weightOf(int32(n)))
		}
		dc.d.work.weights = weights
		w.Fair.Weights = weights
	}
	return w
}

// tryPreemption is the preemption step: it looks for victims whose
// eviction lets the request fit, both its quota and a placement on the
// freed capacity, concludes the decision and reports true when it finds
// some. The pod sets the flavor assignment fitted keep their flavors (Kueue
// preempts only for the pod sets whose assignment needs it). The unit that
// failed goes on flavor only, the flavor the assignment chose for
// preemption (Kueue looks for victims there and nowhere else), or, with
// only -1 (when the nodes, not quota, are in the way), on each flavor of
// the queue in turn, a pod set that does not allow it on the first flavor
// it allows: under whenCanBorrow TryNextFlavor victims that still leave
// the request borrowing give way to a later flavor's that do not;
// otherwise the first flavor with victims wins.
func (dc *decider) tryPreemption(only int32) bool {
	// With every admitted workload pinned each search finds no victim
	// (preempt.Admitted.NoneTakeable): the preemptors are not even built.
	if !dc.s.limits[dc.q].preempts() || dc.s.running.noneTakeable() {
		return false
	}
	if only >= 0 {
		flavors, ok := dc.preemptionFlavors(only)
		if !ok {
			return false
		}
		w := dc.preemptWorld()
		found, ok := dc.findVictims(&w, flavors[:dc.n])
		if !ok {
			return false
		}
		dc.concludePreemption(flavors[:dc.n], found)
		return true
	}
	w := dc.preemptWorld()
	var first preempt.Result
	var firstFlavors [maxPodSets]int32
	haveFirst := false
	for k := range dc.qc.Flavors {
		f := dc.qc.Flavors[k].Flavor
		flavors, ok := dc.preemptionFlavors(f)
		if !ok {
			continue // the failed unit may not use f
		}
		found, ok := dc.findVictims(&w, flavors[:dc.n])
		if !ok {
			continue
		}
		if !dc.qc.TryNextWhenBorrowing || !found.Borrows {
			dc.concludePreemption(flavors[:dc.n], found)
			return true
		}
		if !haveFirst {
			first, firstFlavors, haveFirst = found, flavors, true
		}
	}
	if haveFirst {
		dc.concludePreemption(firstFlavors[:dc.n], first)
		return true
	}
	return false
}

// findVictims runs the search on w with pod set i on flavors[i].
func (dc *decider) findVictims(w *preempt.World, flavors []int32) (preempt.Result, bool) {
	p, ok := dc.preemptorFor(flavors)
	// The preemptor's memory is the workspace's, for the next search: it
	// keeps nothing of the snapshot once this one is done.
	w0 := dc.d.work
	defer func() {
		clear(w0.preemptQuota)
		clear(w0.preemptSets)
	}()
	if !ok {
		return preempt.Result{}, false
	}
	// A search that failed on this snapshot fails again: the next heads of
	// a queue often ask the same.
	failed := dc.d.work.failures(dc.s)
	if failed.Failed(&p) {
		return preempt.Result{}, false
	}
	found, ok := preempt.Find(w, &p, &dc.d.work.search, dc.s.running.admitted(dc.s, dc.q))
	if !ok {
		failed.Add(&p)
	}
	return found, ok
}

// preemptorFor is the request as the search sees it with pod set i on
// flavors[i]; false when a pod set may not use its flavor, the queue has
// no quota there, or its quota there can never hold the request (or only
// past a cap preemption cannot lift).
func (dc *decider) preemptorFor(flavors []int32) (preempt.Preemptor, bool) {
	s := dc.s
	nf := len(s.flavors)
	w := dc.d.work
	vecs := grown(&w.preemptVecs, 2*nf)
	clear(vecs)
	quotas := grown(&w.preemptQuota, nf)
	clear(quotas)
	l := &s.limits[dc.q]
	p := preempt.Preemptor{Queue: dc.q, Priority: dc.r.Priority, SubmittedAt: dc.r.SubmittedAt,
		Policies: l.policies(),
		Need:     vecs[:nf:nf], Open: vecs[nf:], Quota: quotas}
	nodes := false
	for i, f := range flavors {
		if f < 0 || !dc.allowed(1<<i, f) {
			return p, false
		}
		fq, ok := dc.qc.Quota(f)
		if !ok {
			return p, false
		}
		p.Quota[f] = fq
		p.Need[f] = p.Need[f].Add(dc.need[i])
		if dc.asg.flavor[i] < 0 {
			p.Open[f] = p.Open[f].Add(dc.need[i])
		}
		nodes = nodes || s.flavorHasNodes(f)
	}
	// Quota that can never fit, or a cap preemption cannot lift.
	for f, fq := range p.Quota {
		if fq == nil {
			continue
		}
		fit := s.fitQuota(dc.q, fq, res.Vec{}, p.Need[f])
		if fit.verdict == quota.NoFitEver {
			return p, false
		}
		p.Exhausted = p.Exhausted || fit.verdict == quota.NoFitNow && fit.reason == QuotaExhausted
	}
	if !nodes {
		return p, true
	}
	// Pod sets in request order (the placement maps back by it); the
	// members of a topology group share a group number and a flavor.
	w.preemptSets = w.preemptSets[:0]
	var groups [maxPodSets]string
	ng := 0
	for i, f := range flavors {
		if !s.flavorHasNodes(f) {
			continue
		}
		ps := &dc.r.PodSets[i]
		g := s.gangPodSet(ps, dc.perPod[i], f)
		if name := ps.Topology.Group; name != "" {
			at := slices.Index(groups[:ng], name)
			if at < 0 {
				groups[ng], at = name, ng
				ng++
			}
			g.Group = at + 1
		}
		w.preemptSets = append(w.preemptSets, g)
	}
	p.Sets = w.preemptSets
	return p, true
}

// grown is the first n elements of *buf, which it grows when shorter.
func grown[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// concludePreemption fills in a Preempt decision: the victims, with their
// cost, and the placement the preemptor gets once they are gone.
func (dc *decider) concludePreemption(flavors []int32, found preempt.Result) {
	s, r, d := dc.s, dc.r, dc.d
	victims := found.Victims
	cost := s.cost()
	own, fair := true, false
	for _, v := range victims {
		own = own && v.Variant == preempt.WithinQueue
		fair = fair || v.Variant == preempt.FairSharing
		policy := "withinQueue: " + s.limits[dc.q].withinQueue.String()
		switch v.Variant {
		case preempt.WithinQueue:
		case preempt.ReclaimWhileBorrowing:
			policy = "borrowWithinCohort: " + s.limits[dc.q].borrow.String()
		case preempt.FairSharing:
			policy = "fairSharing: reclaimWithinCohort " + s.limits[dc.q].reclaim.String()
		default:
			policy = "reclaimWithinCohort: " + s.limits[dc.q].reclaim.String()
		}
		ckpt := int64(0)
		if v.Checkpointable {
			ckpt = v.LastCheckpoint
		}
		d.Victims = append(d.Victims, Victim{ID: v.ID, Queue: s.queues[v.Queue].Name, Priority: v.Priority,
			Reason: v.Variant.Reason(), LostGPUSeconds: cost.Lost(v.Booking), Preemptor: r.ID, CheckpointAt: ckpt, Policy: policy,
			AdmittedAt: v.AdmittedAt})
	}
	slices.SortFunc(d.Victims, func(a, b Victim) int { return cmpStrings(a.ID, b.ID) })
	d.Preemptible = false
	for i := 0; i < dc.n; i++ {
		f := flavors[i]
		dc.asg.flavor[i] = f
		d.Flavors = append(d.Flavors, PodSetFlavor{PodSet: r.PodSets[i].Name, Flavor: s.flavors[f].Name})
		d.Preemptible = d.Preemptible || s.flavors[f].Spot
	}
	// The placement the victims free, for the embedder to hold.
	if asg := found.Placement; asg != nil {
		at := 0
		for i := 0; i < dc.n; i++ {
			ps := &r.PodSets[i]
			if !s.flavorHasNodes(flavors[i]) {
				continue
			}
			for k := int32(0); k < ps.Count; k++ {
				a := asg[at]
				at++
				d.Placement = append(d.Placement, PodPlacement{PodSet: ps.Name, Pod: k, Node: s.topo.NodeName(a.Node), GPUs: GPUSet(a.GPUs)})
			}
		}
	}
	reason := PriorityPreemption
	switch {
	case fair:
		reason = FairSharePreemption
	case !own:
		reason = ReclaimQuota
	}
	m := dc.mark()
	dc.w("evicting ")
	dc.wi(int64(len(victims)))
	if len(victims) == 1 {
		dc.w(" workload (")
	} else {
		dc.w(" workloads (")
	}
	lost := int64(0)
	for i, v := range d.Victims {
		if i > 0 {
			dc.w(", ")
		}
		dc.w(v.ID)
		lost += v.LostGPUSeconds
	}
	dc.w(") lets the request fit on ")
	for i := 0; i < dc.n; i++ {
		f := flavors[i]
		if slices.Index(flavors[:i], f) >= 0 {
			continue
		}
		if i > 0 {
			dc.w(" and ")
		}
		dc.w(s.flavors[f].Name)
	}
	dc.w("; they lose ")
	dc.wi(lost)
	dc.w(" GPU-seconds of work")
	dc.conclude(StagePreemption, reason, m)
	d.Verdict = VerdictPreempt
}

func cmpStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
