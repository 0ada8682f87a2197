package allot

import (
	"slices"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/preempt"
	"github.com/allot-sched/allot/quota"
)

// The flavor assignment: which flavor each pod set of a request goes on, as
// Kueue's flavor assigner decides it, unit by unit (a pod set, or the pod
// sets of one topology group) in request order, the queue's flavors in its
// order. Decide assigns with placement (a flavor whose nodes cannot hold
// the unit now gives way to the next); the scheduling loop's order keys and
// backfill planning assign by quota alone (nominate); preemption starts
// from the assignment Decide made. All of them use the functions below.

// assigner is a request resolved into vectors and its flavor assignment in
// progress: what Decide's decider and nominate share.
type assigner struct {
	s *Snapshot
	r *Request

	q  int32
	qc *quota.Queue
	// Per pod set: resolved vectors, in storage of the caller's that
	// outlives the assigner (a decision's workspace, a nominee's own), so
	// that a decision does not clear a kilobyte of them (vectors).
	n      int
	perPod *[maxPodSets]res.Vec // what a pod books on a node of its flavor
	need   *[maxPodSets]res.Vec // what the pod set charges to quota, tokens included
	// zeros marks the resources the pod set asks for as an explicit 0
	// (bit r for resource r), which Kueue's flavor assignment checks.
	zeros [maxPodSets]uint16
	// asg is the flavor assignment, handed from the quota check to
	// placement and to preemption.
	asg assignment
	// usage is the quota usage the assignment is made against: the
	// snapshot's, or a private one when the loop orders its heads.
	usage quota.Usage
}

// assignment is a request's flavor assignment, handed from the quota check
// to placement and to preemption.
type assignment struct {
	// flavor is each pod set's flavor, -1 while it has none.
	flavor [maxPodSets]int32
	// placed is, for each pod set placed on nodes, the index of its first
	// pod in the workspace's assignments; -1 if none.
	placed [maxPodSets]int32
	// level is the largest borrowing level of the flavors chosen, and
	// overSoft whether any passes a soft cap.
	level    int
	overSoft bool
}

// vectors is where the assigner's per-pod-set vectors live.
type vectors struct {
	perPod, need [maxPodSets]res.Vec
}

// useVectors gives the assigner the vectors v to resolve into, or vectors
// of its own when v is nil and it has none.
func (dc *assigner) useVectors(v *vectors) {
	switch {
	case v != nil:
		dc.perPod, dc.need = &v.perPod, &v.need
	case dc.perPod == nil:
		v = new(vectors)
		dc.perPod, dc.need = &v.perPod, &v.need
	}
}

// resolve turns the request's pod sets into vectors (validateInto does it
// for a request it validates).
func (dc *assigner) resolve() {
	s, r := dc.s, dc.r
	for i := range r.PodSets {
		ps := &r.PodSets[i]
		var v res.Vec
		var zeros uint16
		for k, name := range s.resources {
			q, asked := ps.PerPod[name]
			v[k] = q
			if asked && q == 0 {
				zeros |= 1 << k
			}
		}
		dc.perPod[i], dc.zeros[i] = v, zeros
		set := view.Set{Count: ps.Count, Per: v}
		if ps.Tokens != nil && s.tokens >= 0 {
			set.Tokens = ps.Tokens.Prompt + ps.Tokens.MaxTokens
		}
		dc.need[i] = set.Need(s.tokens)
	}
	dc.resolved(len(r.PodSets))
}

// resolved starts the flavor assignment of n pod sets resolved into
// vectors: none has a flavor yet.
func (dc *assigner) resolved(n int) {
	dc.n = n
	for i := range n {
		dc.asg.flavor[i] = -1
		dc.asg.placed[i] = -1
	}
}

// attempt is the outcome of trying one flavor for one unit of pod sets.
type attempt struct {
	flavor int32
	reason Reason
	never  bool
	fit    quotaFit
	fail   gang.Failure
	podSet int
	// deferred marks a flavor that fits only by borrowing, passed over
	// for now under whenCanBorrow: TryNextFlavor.
	deferred bool
}

// rank orders failed attempts by how close they came: a flavor whose quota
// fits but whose nodes do not (yet) beats one that waits for quota, which
// beats one that can never hold the request.
func (a *attempt) rank() int {
	switch {
	case a.never:
		return 1
	case a.reason == QuotaExhausted || a.reason == HardCapReached:
		return 2
	}
	return 3
}

// assign picks a flavor for every pod set (a group's members together) and
// places it. It concludes the decision on failure.
//
// The flavors of the queue are tried in order, as Kueue's flavor assigner
// tries them: a flavor where the unit fits (quota, and allot's addition,
// a placement on its nodes now) is taken, unless it borrows and the queue
// says whenCanBorrow TryNextFlavor; a flavor whose quota needs preemption
// is ranked by what preemption could do there (mode) and, under
// whenCanPreempt Preempt, taken at once. When no flavor is taken on the
// way, the best one tried wins (choice.preferred): a fit over any
// preemption, then the lowest borrowing level.
func (dc *decider) assign() bool {
	r := dc.r
	for i := 0; i < dc.n; i++ {
		if dc.asg.flavor[i] >= 0 {
			continue // placed with its group
		}
		members := dc.unit(i)
		var best attempt // the failure that came closest, to explain
		tried := false
		// The best flavor that needs victims for quota, and the fits passed
		// over for borrowing (whenCanBorrow TryNextFlavor), placed only
		// once every flavor has been tried.
		choice, chosen := mode{}, attempt{}
		var deferredBuf [16]deferredFit // more flavors than this grow it
		deferred := deferredBuf[:0]
		placeable := false // some flavor's quota holds the unit
		for k := range dc.qc.Flavors {
			fq := &dc.qc.Flavors[k]
			f := fq.Flavor
			if !dc.allowed(members, f) {
				continue
			}
			a := dc.try(members, fq, !dc.qc.TryNextWhenBorrowing)
			if a.deferred {
				deferred = append(deferred, deferredFit{k: k, level: a.fit.level})
				continue
			}
			if a.reason == 0 {
				dc.take(members, a)
				goto placed
			}
			if !tried || a.rank() > best.rank() {
				best, tried = a, true
			}
			if a.fit.verdict == quota.Fit {
				// Only the nodes are in the way. allot gives way to the
				// next flavor; Kueue, its flavor chosen by quota, looks for
				// victims on this one and nowhere else.
				if dc.s.kueueExact() {
					dc.placementFailed(a)
					return false
				}
				placeable = true
				continue
			}
			if a.fit.verdict != quota.NoFitNow || a.never {
				continue
			}
			m := dc.preemptionMode(members, fq, dc.flavorsAllowed(members) == 1)
			if !m.tryNext(dc.qc) {
				// whenCanPreempt Preempt: this flavor, victims or not.
				dc.explain(a)
				dc.tryPreemption(f)
				return false
			}
			if m.preferred(choice) {
				choice, chosen = m, a
			}
		}
		// The fits passed over for borrowing: the lowest borrowing level
		// first, in the queue's order among equals.
		slices.SortStableFunc(deferred, func(a, b deferredFit) int { return a.level - b.level })
		for _, d := range deferred {
			a := dc.try(members, &dc.qc.Flavors[d.k], true)
			if a.reason == 0 {
				dc.take(members, a)
				goto placed
			}
			if dc.s.kueueExact() && a.fit.verdict == quota.Fit {
				dc.placementFailed(a)
				return false
			}
			placeable = placeable || a.fit.verdict == quota.Fit
			if !tried || a.rank() > best.rank() {
				best, tried = a, true
			}
		}
		// No flavor took the unit: explain the one that came closest.
		switch {
		case choice.kind != noFit && !placeable:
			// Kueue's choice needs victims for quota: only there.
			dc.explain(chosen)
			dc.tryPreemption(chosen.flavor)
		case tried:
			dc.explain(best)
			// Not admissible as things stand: when the request could fit
			// later and the queue's policy allows, look for victims.
			if !best.never {
				dc.tryPreemption(-1)
			}
		default:
			m := dc.mark()
			dc.w("queue ")
			dc.wq(r.Queue)
			dc.w(" has no quota on any flavor pod set ")
			dc.wq(r.PodSets[i].Name)
			dc.w(" may use")
			for k := range dc.qc.Flavors {
				f := dc.qc.Flavors[k].Flavor
				if t := dc.s.untoleratedTaint(&r.PodSets[i], f); t != nil && r.PodSets[i].allows(dc.s.flavors[f].Name) {
					dc.w(": it does not tolerate flavor ")
					dc.wq(dc.s.flavors[f].Name)
					dc.w("'s nodeTaint " + t.Key + "=" + t.Value + ":" + t.Effect)
					break
				}
			}
			dc.conclude(StageQuota, NeverFits, m)
		}
		return false
	placed:
	}
	return true
}

// placementFailed concludes a unit whose quota fits on the flavor of
// attempt a but whose nodes cannot hold it, as Kueue does once its flavor
// assignment chose that flavor: victims there, or it waits.
func (dc *decider) placementFailed(a attempt) {
	dc.explain(a)
	if !a.never {
		dc.tryPreemption(a.flavor)
	}
}

// deferredFit is a flavor passed over for borrowing: its index in the
// queue's flavors and the borrowing level it fits at.
type deferredFit struct{ k, level int }

// take gives unit u the flavor of attempt a, which fitted and placed it.
func (dc *decider) take(u uint16, a attempt) {
	for m := 0; m < dc.n; m++ {
		if u&(1<<m) != 0 {
			dc.asg.flavor[m] = a.flavor
		}
	}
	dc.asg.level = max(dc.asg.level, a.fit.level)
	dc.asg.overSoft = dc.asg.overSoft || a.fit.overSoft
}

// mode is how a flavor can take a unit, as Kueue's flavor assigner ranks
// flavors: what preemption could do there (the worst over the resources
// the unit asks for; a resource that fits counts as the best) and the
// borrowing level the queue would have.
type mode struct {
	kind  modeKind
	level int
}

// modeKind is the kind of a mode, worst first.
type modeKind uint8

const (
	noFit         modeKind = iota // preemption cannot make room
	noCandidates                  // it may, but no workload would
	preemptOwn                    // candidates include the own queue's
	reclaimOthers                 // candidates are all other queues'
	fitsNow                       // nothing to preempt
)

// modeOf maps preemption's answer to a mode kind.
var modeOf = [...]modeKind{preempt.Impossible: noFit, preempt.NoCandidates: noCandidates,
	preempt.PreemptOwn: preemptOwn, preempt.Reclaim: reclaimOthers}

// needsVictims reports whether preemption may make room.
func (m mode) needsVictims() bool { return m.kind == preemptOwn || m.kind == reclaimOthers }

// preferred reports whether m beats o, Kueue's default preference
// (BorrowingOverPreemption): a fit over reclaiming from other queues over
// preempting in the own queue over finding no candidates, then the lower
// borrowing level. No fit beats nothing.
func (m mode) preferred(o mode) bool {
	switch {
	case m.kind == noFit:
		return false
	case o.kind == noFit:
		return true
	case m.kind != o.kind:
		return m.kind > o.kind
	}
	return m.level < o.level
}

// tryNext reports whether the flavor assignment goes on past a flavor of
// mode m, Kueue's shouldTryNextFlavor: without candidates always, with
// victims under whenCanPreempt TryNextFlavor, and under whenCanBorrow
// TryNextFlavor while the queue would borrow.
func (m mode) tryNext(q *quota.Queue) bool {
	switch {
	case m.kind <= noCandidates:
		return true
	case m.kind < fitsNow && !q.StopAtPreemption:
		return true
	}
	return m.level > 0 && q.TryNextWhenBorrowing
}

// preemptionMode asks preemption, resource by resource, what it could do
// on flavor fq for unit u (preempt.Simulate, Kueue's oracle); a resource
// beyond what the tree could give makes the flavor a no-fit.
func (dc *decider) preemptionMode(u uint16, fq *quota.FlavorQuota, alone bool) mode {
	s := dc.s
	t := s.rtree
	f := int(fq.Flavor)
	var earlier, need res.Vec
	for m := range dc.n {
		switch {
		case u&(1<<m) != 0:
			need = need.Add(dc.need[m])
		case dc.asg.flavor[m] == fq.Flavor:
			earlier = earlier.Add(dc.need[m])
		}
	}
	val := earlier.Add(need)
	// The search's world and preemptor, made for the first search.
	var w preempt.World
	var p preempt.Preemptor
	used := dc.usage[dc.q][f*len(s.resources):]
	// The search runs only where its answer can change the choice: a queue
	// that preempts nothing has no candidates, and with one flavor to try
	// the search on it decides alone.
	searches := s.limits[dc.q].preempts() && !alone
	worst := mode{kind: fitsNow}
	for r := range s.resources {
		if need[r] == 0 {
			continue
		}
		fr := t.FR(f, r)
		var m mode
		switch {
		case val[r] > t.PotentialAvailable(dc.q, fr):
			return mode{kind: noFit}
		case val[r] <= t.AvailableClamped(dc.usage, dc.q, fr) && (fq.HardMask&(1<<r) == 0 || used[r]+val[r] <= fq.Hard[r]):
			m.kind = fitsNow
			m.level, _ = t.BorrowingLevel(dc.usage, dc.q, fr, val[r])
		case !searches:
			m.kind = noCandidates
			m.level, _ = t.BorrowingLevel(dc.usage, dc.q, fr, val[r])
		default:
			if p.Quota == nil {
				w = dc.preemptWorld()
				p = preempt.Preemptor{Queue: dc.q, Priority: dc.r.Priority, SubmittedAt: dc.r.SubmittedAt,
					Policies: s.limits[dc.q].policies(), Quota: make([]*quota.FlavorQuota, len(s.flavors))}
				p.Quota[f] = fq
			}
			poss, level := preempt.Simulate(&w, &p, fr, val[r], &dc.d.work.search, s.running.admitted(s, dc.q))
			if m = (mode{kind: modeOf[poss], level: level}); m.kind == noFit {
				return m
			}
		}
		// The worst resource: the lowest kind, then the highest level.
		if m.kind < worst.kind || m.kind == worst.kind && m.level > worst.level {
			worst = m
		}
	}
	return worst
}

// unit is the set of pod sets placed together with pod set i: its group, or
// itself. Bit k set means pod set k.
func (dc *assigner) unit(i int) uint16 {
	g := dc.r.PodSets[i].Topology.Group
	if g == "" {
		return 1 << i
	}
	var u uint16
	for k := i; k < dc.n; k++ {
		if dc.r.PodSets[k].Topology.Group == g {
			u |= 1 << k
		}
	}
	return u
}

// allowed reports whether every member may use flavor f.
func (dc *assigner) allowed(u uint16, f int32) bool {
	for k := 0; k < dc.n; k++ {
		if u&(1<<k) != 0 && !dc.s.serves(&dc.r.PodSets[k], f) {
			return false
		}
	}
	return true
}

// try checks quota and placement of a unit on one flavor.
func (dc *decider) try(u uint16, fq *quota.FlavorQuota, mayBorrow bool) attempt {
	s := dc.s
	f := fq.Flavor
	a := attempt{flavor: f}
	// Quota: what earlier pod sets of this request put on the same flavor,
	// plus this unit, against the queue's quota in its cohort tree.
	a.fit = dc.fit(u, fq, dc.asg.flavor[:dc.n])
	switch a.fit.verdict {
	case quota.NoFitEver:
		a.reason, a.never = a.fit.reason, true
		return a
	case quota.NoFitNow:
		a.reason = a.fit.reason
		a.never = !dc.everPlaceable(u, f)
		return a
	}
	if a.fit.level > 0 && !mayBorrow {
		a.deferred = true
		return a
	}
	if !s.flavorHasNodes(f) {
		return a
	}
	sets := dc.gangSets(u, f)
	w := dc.d.work
	if len(sets) == 1 {
		w.capacity.Reset(s.capacity)
		if fail, never := w.capacity.Never(&sets[0]); never {
			a.reason, a.never, a.fail, a.podSet = NeverFits, true, fail, dc.memberIndex(u, 0)
			return a
		}
	}
	mark := len(w.asg)
	for i := range sets {
		w.asg = slices.Grow(w.asg, int(sets[i].Count))
	}
	pl := dc.placer()
	pl.Final = !dc.laterUnits(u)
	// On a placer that holds no pod of the request yet, a placement that
	// failed on this snapshot fails again.
	fresh := !dc.placedAny
	if fail, _, known := w.failedOnState.lookup(s.state, sets, pl.Final); fresh && known {
		w.asg = w.asg[:mark]
		a.fail, a.podSet = fail, dc.memberIndex(u, fail.PodSet)
		dc.classify(&a, u, sets)
		return a
	}
	asg, fail, ok := pl.Place(sets, w.asg)
	w.asg = asg
	if ok {
		dc.placedAny = true
		dc.markPlaced(u, int32(mark))
		return a
	}
	if fresh {
		w.failedOnState.record(s.state, sets, pl.Final, fail, false)
	}
	w.asg = w.asg[:mark]
	a.fail, a.podSet = fail, dc.memberIndex(u, fail.PodSet)
	dc.classify(&a, u, sets)
	return a
}

// markPlaced records that the pod sets of unit u are placed, their pods
// one after another from index at of the workspace's assignments.
func (dc *decider) markPlaced(u uint16, at int32) {
	for k := 0; k < dc.n; k++ {
		if u&(1<<k) != 0 {
			dc.asg.placed[k] = at
			at += dc.r.PodSets[k].Count
		}
	}
}

// laterUnits reports whether pod sets after unit u are still to be placed.
func (dc *decider) laterUnits(u uint16) bool {
	for k := 0; k < dc.n; k++ {
		if u&(1<<k) == 0 && dc.asg.flavor[k] < 0 {
			return true
		}
	}
	return false
}

// memberIndex maps an index into a unit's pod sets back to the request's.
func (dc *decider) memberIndex(u uint16, i int) int {
	for k := 0; k < dc.n; k++ {
		if u&(1<<k) != 0 {
			if i == 0 {
				return k
			}
			i--
		}
	}
	return 0
}

// gangSets resolves a unit's pod sets for the placer on flavor f.
func (dc *decider) gangSets(u uint16, f int32) []gang.PodSet {
	s := dc.s
	out := dc.d.work.gsets[:0]
	for k := 0; k < dc.n; k++ {
		if u&(1<<k) == 0 {
			continue
		}
		g := s.gangPodSet(&dc.r.PodSets[k], dc.perPod[k], f)
		if dc.r.PodSets[k].Topology.Group != "" {
			g.Group = 1
		}
		out = append(out, g)
	}
	dc.d.work.gsets = out
	return out
}

// everPlaceable reports whether the unit could be placed on flavor f of an
// empty cluster (always true on a quota-only flavor).
func (dc *decider) everPlaceable(u uint16, f int32) bool {
	if !dc.s.flavorHasNodes(f) {
		return true
	}
	if ok, known := dc.d.work.placeable.lookup(dc, u, f); known {
		return ok
	}
	sets := dc.gangSets(u, f)
	p := &dc.d.work.capacity
	p.Reset(dc.s.capacity)
	if len(sets) == 1 {
		if _, never := p.Never(&sets[0]); never {
			return false
		}
	}
	w := dc.d.work
	ok := w.placeOnCapacity(dc.s, sets).ok
	w.placeable.record(dc, u, f, ok)
	return ok
}

// placeOnCapacity places sets on s's empty cluster with the capacity
// placer, or answers from the memo of what an earlier placement of the
// same pod sets there gave.
func (w *workspace) placeOnCapacity(s *Snapshot, sets []gang.PodSet) placeAnswer {
	if fail, ok, known := w.placedOnCapacity.lookup(s.capacity, sets, false); known {
		return placeAnswer{fail: fail, ok: ok}
	}
	p := &w.capacity
	p.Reset(s.capacity)
	mark := len(w.asg)
	asg, fail, ok := p.Place(sets, w.asg)
	w.asg = asg[:mark]
	w.placedOnCapacity.record(s.capacity, sets, false, fail, ok)
	return placeAnswer{fail: fail, ok: ok}
}

// classify tells why a placement failed: it never fits, it waits for nodes
// to cool down, there is not enough free, or the free capacity has the
// wrong shape.
func (dc *decider) classify(a *attempt, u uint16, sets []gang.PodSet) {
	s := dc.s
	w := dc.d.work
	p := &w.capacity
	mark := len(w.asg)
	if ok, known := w.placeable.lookup(dc, u, a.flavor); !ok || !known {
		placed := w.placeOnCapacity(s, sets)
		w.placeable.record(dc, u, a.flavor, placed.ok)
		if !placed.ok {
			a.reason, a.never, a.fail = NeverFits, true, placed.fail
			return
		}
	}
	if len(s.state.Cooling()) > 0 {
		p.Reset(s.state)
		p.IgnoreCooldown = true
		asg, _, ok := p.Place(sets, w.asg)
		w.asg = asg[:mark]
		if ok {
			a.reason = Cooldown
			return
		}
	}
	free := s.state.FlavorFree(a.flavor)
	var need res.Vec
	for i := range sets {
		need = need.Add(sets[i].Res.Scale(sets[i].Count))
	}
	for r := range s.resources {
		if need[r] > free[r] {
			a.reason = InsufficientCapacity
			a.fit.res, a.fit.need, a.fit.avail = r, need[r], free[r]
			return
		}
	}
	a.reason = TopologyUnsatisfiable
	if s.gpu >= 0 {
		a.fit.res, a.fit.need, a.fit.avail = s.gpu, need[s.gpu], free[s.gpu]
	}
}

// placer returns the decision's reusable placer, set to the snapshot on
// first use; later pod sets of the request see the earlier ones' pods.
func (dc *decider) placer() *gang.Placer {
	p := &dc.d.work.placer
	if !dc.placerReady {
		p.Reset(dc.s.state)
		dc.placerReady = true
	}
	return p
}

// preemptionFlavors is the flavor assignment tryPreemption searches with
// flavor f: the units that fit keep their flavors; the unit that failed
// goes on f (or, not allowed there, on its first allowed flavor); each
// later unit, as Kueue's flavor assigner goes on to the next pod sets,
// takes the first flavor whose quota holds it with what the earlier pod
// sets put there (within nominal quota first under whenCanBorrow
// TryNextFlavor), and otherwise waits for victims on f too. ok is false
// when the failed unit may not use f: another flavor's search covers it.
func (dc *decider) preemptionFlavors(f int32) (flavors [maxPodSets]int32, ok bool) {
	var failed, done uint16
	for i := 0; i < dc.n; i++ {
		if done&(1<<i) != 0 {
			continue
		}
		if dc.asg.flavor[i] >= 0 {
			flavors[i] = dc.asg.flavor[i]
			continue
		}
		members := dc.unit(i)
		done |= members
		target := f
		switch {
		case failed == 0:
			if !dc.allowed(members, f) {
				return flavors, false
			}
			failed = members
		default:
			if g, _, fits := dc.quotaFlavor(members, flavors[:i]); fits {
				target = g
			} else if !dc.allowed(members, f) {
				target = dc.firstAllowed(members)
			}
		}
		for m := i; m < dc.n; m++ {
			if members&(1<<m) != 0 {
				flavors[m] = target
			}
		}
	}
	return flavors, true
}

// quotaFlavor is the first flavor of the queue, in order, whose quota
// holds unit u on top of what the pod sets before it were given
// (assigned), with that fit; under whenCanBorrow TryNextFlavor one within
// nominal quota comes first, and among those that borrow the lowest
// borrowing level, as assign ranks them.
func (dc *assigner) quotaFlavor(u uint16, assigned []int32) (int32, quotaFit, bool) {
	best, bestFit := int32(-1), quotaFit{}
	for k := range dc.qc.Flavors {
		fq := &dc.qc.Flavors[k]
		if !dc.allowed(u, fq.Flavor) {
			continue
		}
		fit := dc.fit(u, fq, assigned)
		if fit.verdict != quota.Fit {
			continue
		}
		if fit.level == 0 || !dc.qc.TryNextWhenBorrowing {
			return fq.Flavor, fit, true
		}
		if best < 0 || fit.level < bestFit.level {
			best, bestFit = fq.Flavor, fit
		}
	}
	return best, bestFit, best >= 0
}

// fit checks unit u on flavor fq against the assignment's usage, with
// what the pod sets assigned before it (assigned) put on the same flavor.
func (dc *assigner) fit(u uint16, fq *quota.FlavorQuota, assigned []int32) quotaFit {
	var earlier, need res.Vec
	var zeros uint16
	f := fq.Flavor
	for m, a := range assigned[:min(len(assigned), dc.n)] {
		if u&(1<<m) == 0 && a == f {
			earlier = earlier.Add(dc.need[m])
		}
	}
	for m := range dc.n {
		if u&(1<<m) != 0 {
			need = need.Add(dc.need[m])
			zeros |= dc.zeros[m]
		}
	}
	return fromFit(dc.s.rtree.Fit(dc.usage, dc.q, fq, earlier, need, zeros))
}

// nominate assigns pending workload w's pod sets flavors by quota alone on
// usage u, as Kueue nominates a cycle's heads before ordering them: each
// unit in request order on the first flavor whose quota holds it with what
// the pod sets before it put there (quotaFlavor, the rule Decide and
// preemption use); a unit no flavor holds now goes on the first flavor it
// allows (-1 when none does), and the nomination does not fit. a is the
// caller's, reused from one call to the next: the flavors land in
// a.asg.flavor, what each pod set charges in a.need, the borrowing level in
// a.asg.level.
func (s *Snapshot) nominate(w *Workload, u quota.Usage, a *assigner) (fits bool) {
	q, ok := s.queueIdx[w.Queue]
	if !ok || len(w.PodSets) > maxPodSets {
		a.n = 0
		return false
	}
	a.s, a.r, a.q, a.qc, a.usage = s, (*Request)(w), q, &s.quota.Queues[q], u
	a.asg.level, a.asg.overSoft = 0, false
	a.useVectors(nil)
	a.resolve()
	fits = true
	var done uint16
	for i := 0; i < a.n; i++ {
		if done&(1<<i) != 0 {
			continue
		}
		unit := a.unit(i)
		done |= unit
		f, fit, ok := a.quotaFlavor(unit, a.asg.flavor[:a.n])
		if ok {
			a.asg.level = max(a.asg.level, fit.level)
		} else {
			f, fits = a.firstAllowed(unit), false
		}
		for m := i; m < a.n; m++ {
			if unit&(1<<m) != 0 {
				a.asg.flavor[m] = f
			}
		}
	}
	return fits
}

// flavorsAllowed is how many of the queue's flavors unit u allows.
func (dc *assigner) flavorsAllowed(u uint16) int {
	n := 0
	for k := range dc.qc.Flavors {
		if dc.allowed(u, dc.qc.Flavors[k].Flavor) {
			n++
		}
	}
	return n
}

// firstAllowed is the first flavor of the queue unit u allows (-1 when
// none does).
func (dc *assigner) firstAllowed(u uint16) int32 {
	for k := range dc.qc.Flavors {
		if f := dc.qc.Flavors[k].Flavor; dc.allowed(u, f) {
			return f
		}
	}
	return -1
}
