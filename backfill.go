package allot

import (
	"cmp"
	"slices"
	"sync/atomic"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

// reservation is a blocked workload's planned start: when the running
// workloads' expected run times free enough for it, and the GPUs it would
// then take.
type reservation struct {
	w      *Workload
	start  int64
	flavor int32
	// pods are the node-local GPU masks reserved, one per pod.
	pods []gang.Assignment
}

// backfillOn reports whether backfill reservations are kept (the default).
func (s *Snapshot) backfillOn() bool { return s.options.Backfill == nil || *s.options.Backfill }

// maxBackfillTest bounds how many pending workloads, in priority order, are
// examined for a reservation (Slurm's bf_max_job_test): the planning is
// done once per snapshot and shared by every decision made on it.
const maxBackfillTest = 64

// backfillCache holds a snapshot's reservations, planned as far down the
// priority order as the decisions made so far needed: the blocked
// workloads are found in priority order, so every decision sees the same
// reservations ahead of it, whichever was decided first. Each extension
// is a new plan published by compare-and-swap: no decision waits for
// another, and planners that race plan the same thing.
type backfillCache struct {
	// plan is nil until a decision first needs it: every version carries
	// a cache, few are asked for it.
	plan atomic.Pointer[backfillPlan]
}

// backfillPlan is one extent of a snapshot's plan, never changed once
// published; a longer one extends it, sharing what they have in common.
type backfillPlan struct {
	ahead []*Workload // the first maxBackfillTest pending, in order
	next  int         // ahead[:next] have been examined
	rs    []reservation
	// held[k] is the snapshot's state with the GPUs of rs[:k+1] taken
	// (base with none): what the next blocked workload is planned on, and
	// what a request is placed again on around the reservations.
	held []*topology.State
	base *topology.State
	// reserved are the GPUs of rs, one entry per node, sorted by node: a
	// running workload that leaves does not free them for the next
	// blocked workload.
	reserved []gang.Assignment
	ends     []leaving
}

// heldState is the snapshot's state with the GPUs of rs[:k] taken.
func (p *backfillPlan) heldState(k int) *topology.State {
	if k == 0 {
		return p.base
	}
	return p.held[k-1]
}

// covers reports whether the plan has examined every blocked workload
// that can get a reservation ahead of w.
func (p *backfillPlan) covers(w *Workload, depth int) bool {
	return p.next == len(p.ahead) || len(p.rs) >= depth || !pendingBefore(p.ahead[p.next], w)
}

// aheadOf counts the reservations ahead of request w in priority order (the
// first n of the plan's) and finds among them the one of w's own ID, which
// is not in its way (-1 when none is).
func (p *backfillPlan) aheadOf(w *Workload) (n, self int) {
	self = -1
	for n < len(p.rs) && pendingBefore(p.rs[n].w, w) {
		if p.rs[n].w.ID == w.ID {
			self = n
		}
		n++
	}
	return n, self
}

// reservationPlan returns the snapshot's plan of reservations, extended far
// enough for request r: for the first pending workloads that cannot start
// now (at most the backfill depth of them, among the first
// maxBackfillTest pending), when and where they will start, running
// workloads leaving at admission plus expected run time (never, without
// one) and each blocked workload taking the first moment its quota and a
// placement fit. A workload that could never be planned gets no
// reservation. Once planned far enough, it costs a load.
func (s *Snapshot) reservationPlan(r *Request, work *workspace) *backfillPlan {
	rq := (*Workload)(r)
	depth := max(1, s.options.BackfillDepth)
	var p *backfillPlan
	if s.bf != nil {
		p = s.bf.plan.Load()
	}
	if p != nil && p.covers(rq, depth) {
		return p
	}
	q := s.extendPlan(p, rq, depth, work)
	if s.bf == nil {
		return q
	}
	// Every extent is a prefix of the same plan: publish q unless another
	// decision has published one at least as long meanwhile.
	for !s.bf.plan.CompareAndSwap(p, q) {
		if p = s.bf.plan.Load(); p.next >= q.next {
			break
		}
	}
	return q
}

// extendPlan plans on from p (nil: from the start) until the plan covers
// request w.
func (s *Snapshot) extendPlan(p *backfillPlan, w *Workload, depth int, work *workspace) *backfillPlan {
	var q backfillPlan
	if p == nil {
		q.base = s.state
		q.ahead = make([]*Workload, 0, min(maxBackfillTest, s.queued.Len()))
		s.queued.Scan(func(w *Workload) bool {
			q.ahead = append(q.ahead, w)
			return len(q.ahead) < maxBackfillTest
		})
	} else {
		// Appending must not write into the arrays p shares.
		q = *p
		q.rs, q.held = slices.Clip(q.rs), slices.Clip(q.held)
	}
	for !q.covers(w, depth) {
		b := q.ahead[q.next]
		q.next++
		if !s.waitsForCapacity(b, work) {
			continue // it starts now, or waits for something else
		}
		if q.ends == nil {
			q.ends = s.leavingOrder()
		}
		base := q.heldState(len(q.rs))
		rv, ok := s.plan(b, q.ends, base, q.reserved, work)
		if !ok {
			continue
		}
		held := base.Fork()
		for _, a := range rv.pods {
			held.Allocate(a.Node, a.GPUs, res.Vec{}, 0)
		}
		held.Flush()
		q.rs = append(q.rs, rv)
		q.held = append(q.held, held)
		q.reserved = withReserved(q.reserved, rv.pods)
	}
	return &q
}

// withReserved is reserved (one entry per node, sorted by node) with the
// GPUs of pods added, in a new slice: plans share the old one.
func withReserved(reserved, pods []gang.Assignment) []gang.Assignment {
	out := make([]gang.Assignment, 0, len(reserved)+len(pods))
	out = append(out, reserved...)
	for _, a := range pods {
		i, ok := slices.BinarySearchFunc(out, a.Node, func(b gang.Assignment, n int32) int { return cmp.Compare(b.Node, n) })
		if ok {
			out[i].GPUs |= a.GPUs
		} else {
			out = slices.Insert(out, i, a)
		}
	}
	return out
}

// waitsForCapacity reports whether a pending workload is held back only
// by quota or free capacity: a queue on hold, a tenant or a cap keeps it
// waiting whatever is reserved, so such a workload gets no reservation.
func (s *Snapshot) waitsForCapacity(w *Workload, work *workspace) bool {
	if msg, _ := s.validate((*Request)(w)); msg != "" {
		return false
	}
	q, ok := s.queueIdx[w.Queue]
	if !ok {
		return false
	}
	qc := &s.quota.Queues[q]
	if !qc.Authorized(w.Tenant) || qc.Hold {
		return false
	}
	// The decision's scratch placer and pod sets: this runs for many
	// workloads ahead of every request.
	pl := &work.search
	pl.Reset(s.state)
	for k := range qc.Flavors {
		fq := &qc.Flavors[k]
		if !allowsFlavor(w, s.flavors[fq.Flavor].Name) {
			continue
		}
		sets, need, ok := s.podSetsInto(w, fq.Flavor, work.ahead[:0])
		if !ok {
			return false
		}
		work.ahead = sets
		fit := s.fitQuota(q, fq, res.Vec{}, need)
		if fit.verdict == quota.NoFitEver {
			continue
		}
		if fit.verdict == quota.Fit && (!s.flavorHasNodes(fq.Flavor) || pl.Feasible(sets)) {
			return false // it can start now
		}
	}
	return true
}

// leavingOrder lists the running workloads with an expected run time in
// the order they are expected to end.
func (s *Snapshot) leavingOrder() []leaving {
	ends := []leaving{}
	s.running.Scan(func(w *running) bool {
		if w.w.ExpectedRuntime > 0 {
			ends = append(ends, leaving{w, w.AdmittedAt + w.w.ExpectedRuntime})
		}
		return true
	})
	slices.SortFunc(ends, func(a, b leaving) int {
		if a.end != b.end {
			return cmp.Compare(a.end, b.end)
		}
		return cmp.Compare(a.r.ID, b.r.ID)
	})
	return ends
}

// leaving is a running workload and when it is expected to end.
type leaving struct {
	r   *running
	end int64
}

// plan finds when blocked workload w can start as running workloads leave,
// on its queue's first flavor with nodes, and where: held is the state
// with the reservations ahead of it taken, reserved their GPUs, which stay
// taken as the workloads on them leave.
func (s *Snapshot) plan(w *Workload, ends []leaving, held *topology.State, reserved []gang.Assignment, work *workspace) (reservation, bool) {
	q, ok := s.queueIdx[w.Queue]
	if !ok {
		return reservation{}, false
	}
	var fq *quota.FlavorQuota
	for k := range s.quota.Queues[q].Flavors {
		f := &s.quota.Queues[q].Flavors[k]
		if s.flavorHasNodes(f.Flavor) && allowsFlavor(w, s.flavors[f.Flavor].Name) {
			fq = f
			break
		}
	}
	if fq == nil {
		return reservation{}, false
	}
	sets, need, ok := s.podSetsInto(w, fq.Flavor, work.ahead[:0])
	if !ok {
		return reservation{}, false
	}
	work.ahead = sets
	m := s.whatIf(held.Fork(), reserved)
	pl := &work.search
	for _, l := range ends {
		m.Evict(&l.r.Booking)
		if !quotaFitsIn(s, m.Usage, q, fq, need) {
			continue
		}
		pl.Reset(m.State)
		pl.Final = true
		asg, _, ok := pl.Place(sets, work.planned[:0])
		work.planned = asg
		if !ok {
			continue
		}
		return reservation{w: w, start: max(l.end, s.now), flavor: fq.Flavor, pods: slices.Clone(asg)}, true
	}
	return reservation{}, false
}

func allowsFlavor(w *Workload, name string) bool {
	for _, ps := range w.PodSets {
		if len(ps.Flavors) > 0 && !slices.Contains(ps.Flavors, name) {
			return false
		}
	}
	return true
}

// podSetsInto resolves a valid workload's pod sets for the placer on
// flavor f, appending them to sets, and what it charges to quota there.
func (s *Snapshot) podSetsInto(w *Workload, f int32, sets []gang.PodSet) ([]gang.PodSet, res.Vec, bool) {
	var need res.Vec
	for _, ps := range w.PodSets {
		per, err := s.vector(ps.PerPod, "perPod")
		if err != nil {
			return nil, need, false
		}
		charge, err := s.podCharge(per, ps.Tokens, "tokens")
		if err != nil {
			return nil, need, false
		}
		need = need.Add(charge.Scale(int64(ps.Count)))
		sets = append(sets, s.gangPodSet(&ps, per, f))
	}
	return sets, need, true
}

// quotaFitsIn checks need against what is available to queue q in usage u.
func quotaFitsIn(s *Snapshot, u quota.Usage, q int32, fq *quota.FlavorQuota, need res.Vec) bool {
	for r := range s.resources {
		if need[r] > 0 && need[r] > s.rtree.AvailableClamped(u, q, s.rtree.FR(int(fq.Flavor), r)) {
			return false
		}
	}
	return true
}

// backfillSafe checks the admission found against the reservations: a
// request that ends before a reservation starts, or takes none of its GPUs,
// may start now; otherwise it is placed again around the reserved GPUs
// (moved), or it waits: then it concludes the decision and reports false.
func (dc *decider) backfillSafe() (ok, moved bool) {
	s, r := dc.s, dc.r
	if !s.backfillOn() || s.pending.Len() == 0 {
		return true, false
	}
	p := s.reservationPlan(r, dc.d.work)
	n, self := p.aheadOf((*Workload)(r))
	count := n
	if self >= 0 {
		count--
	}
	if count == 0 {
		return true, false
	}
	asg := dc.d.work.asg
	var blocking *reservation
	for i := range p.rs[:n] {
		rv := &p.rs[i]
		if i == self {
			continue
		}
		if r.ExpectedRuntime > 0 && s.now+r.ExpectedRuntime <= rv.start {
			continue // it ends before the reservation starts
		}
		if overlaps(asg, rv) {
			blocking = rv
			break
		}
	}
	m := dc.mark()
	if blocking == nil {
		dc.w("takes none of the GPUs reserved for ")
		dc.wi(int64(count))
		dc.w(" blocked workload(s), or ends before they start")
		dc.check(StageBackfill, true, dc.since(m))
		return true, false
	}
	// Place again around every reserved GPU.
	if dc.replaceAround(p, n, self) {
		dc.w("placed again, around the GPUs reserved for ")
		dc.wq(blocking.w.ID)
		dc.check(StageBackfill, true, dc.since(m))
		return true, true
	}
	dc.w("starting now would delay workload ")
	dc.wq(blocking.w.ID)
	dc.w(" (priority ")
	dc.wi(int64(blocking.w.Priority))
	dc.w("), reserved to start at t=")
	dc.wi(blocking.start)
	if r.ExpectedRuntime > 0 {
		dc.w("; the request would run until t=")
		dc.wi(s.now + r.ExpectedRuntime)
	} else {
		dc.w("; the request has no expected run time to plan around it")
	}
	dc.conclude(StageBackfill, BackfillReservation, m)
	return false, false
}

// overlaps reports whether any assignment takes a GPU of the reservation.
func overlaps(asg []gang.Assignment, rv *reservation) bool {
	for _, a := range asg {
		for _, b := range rv.pods {
			if b.Node == a.Node && b.GPUs&a.GPUs != 0 {
				return true
			}
		}
	}
	return false
}

// replaceAround places the request again on a view where the GPUs of the
// plan's first n reservations are taken, but for the request's own (self,
// -1 when none); it keeps the new placement when that fits.
func (dc *decider) replaceAround(p *backfillPlan, n, self int) bool {
	s := dc.s
	st := p.heldState(n)
	if self >= 0 {
		// Rare: the request is a pending workload asked for again with
		// another priority. Its own reservation is not in its way.
		st = p.heldState(self).Fork()
		for _, rv := range p.rs[self+1 : n] {
			for _, a := range rv.pods {
				st.Allocate(a.Node, a.GPUs, res.Vec{}, 0)
			}
		}
		st.Flush()
	}
	pl := &dc.d.work.search
	pl.Reset(st)
	w := dc.d.work
	w.asg = w.asg[:0]
	for i := 0; i < dc.n; i++ {
		dc.asgFrom[i] = -1
	}
	for i := 0; i < dc.n; i++ {
		f := dc.chosen[i]
		if dc.asgFrom[i] >= 0 || !s.flavorHasNodes(f) {
			continue
		}
		u := dc.unit(i)
		mark := len(w.asg)
		asg, _, ok := pl.Place(dc.gangSets(u, f), w.asg)
		if !ok {
			return false
		}
		w.asg = asg
		at := int32(mark)
		for k := 0; k < dc.n; k++ {
			if u&(1<<k) != 0 {
				dc.asgFrom[k] = at
				at += dc.r.PodSets[k].Count
			}
		}
	}
	return true
}
