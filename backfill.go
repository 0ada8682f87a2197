package allot

import (
	"cmp"
	"slices"
	"sync"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
)

// reservation is a blocked workload's planned start: when the running
// workloads' expected run times free enough for it, and the GPUs it would
// then take.
type reservation struct {
	w      *Workload
	start  int64
	flavor int32
	// gpus[n] is the node-local GPU mask reserved on node n.
	nodes []int32
	gpus  []uint64
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
// reservations ahead of it, whichever was decided first.
type backfillCache struct {
	mu sync.Mutex
	// plan is nil until a decision first needs it: every version carries
	// a cache, few are asked for it.
	plan *backfillPlan
}

type backfillPlan struct {
	ahead []*Workload // the first maxBackfillTest pending, in order
	next  int         // ahead[:next] have been examined
	rs    []reservation
	ends  []leaving
}

// reservationsBefore returns the reservations of blocked pending
// workloads ahead of request r in priority order: for the first ones that
// cannot start now (at most the backfill depth of them, among the first
// maxBackfillTest pending), when and where they will start, running
// workloads leaving at admission plus expected run time (never, without
// one) and each blocked workload taking the first moment its quota and a
// placement fit. A workload that could never be planned gets no
// reservation.
func (s *Snapshot) reservationsBefore(r *Request, work *workspace) []reservation {
	bf := s.bf
	if bf == nil {
		bf = new(backfillCache)
	}
	bf.mu.Lock()
	defer bf.mu.Unlock()
	c := bf.plan
	if c == nil {
		c = &backfillPlan{ahead: make([]*Workload, 0, maxBackfillTest)}
		s.queued.Scan(func(w *Workload) bool {
			c.ahead = append(c.ahead, w)
			return len(c.ahead) < maxBackfillTest
		})
		bf.plan = c
	}
	depth := max(1, s.options.BackfillDepth)
	rq := (*Workload)(r)
	for c.next < len(c.ahead) && len(c.rs) < depth && pendingBefore(c.ahead[c.next], rq) {
		w := c.ahead[c.next]
		c.next++
		if !s.waitsForCapacity(w, work) {
			continue // it starts now, or waits for something else
		}
		if c.ends == nil {
			c.ends = s.leavingOrder()
		}
		if rv, ok := s.plan(w, c.ends, c.rs); ok {
			c.rs = append(c.rs, rv)
		}
	}
	var out []reservation
	for _, rv := range c.rs {
		if rv.w.ID != r.ID && pendingBefore(rv.w, rq) {
			out = append(out, rv)
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
			ends = append(ends, leaving{w, w.w.AdmittedAt + w.w.ExpectedRuntime})
		}
		return true
	})
	slices.SortFunc(ends, func(a, b leaving) int {
		if a.end != b.end {
			return cmp.Compare(a.end, b.end)
		}
		return cmp.Compare(a.r.w.ID, b.r.w.ID)
	})
	return ends
}

// leaving is a running workload and when it is expected to end.
type leaving struct {
	r   *running
	end int64
}

// plan finds when blocked workload w can start as running workloads leave,
// on its queue's first flavor with nodes, and where.
func (s *Snapshot) plan(w *Workload, ends []leaving, held []reservation) (reservation, bool) {
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
	sets, need, ok := s.podSetsFor(w, fq.Flavor)
	if !ok {
		return reservation{}, false
	}
	m := sim{s: s, usage: s.usage.Clone(), state: s.state.Fork()}
	for _, h := range held {
		for i, n := range h.nodes {
			m.state.Allocate(n, h.gpus[i], res.Vec{}, 0)
		}
	}
	m.state.Flush()
	for _, l := range ends {
		m.evict(l.r)
		if !quotaFitsIn(s, m.usage, q, fq, need) {
			continue
		}
		var pl gang.Placer
		pl.Reset(m.state)
		pl.Final = true
		asg, _, ok := pl.Place(sets, nil)
		if !ok {
			continue
		}
		out := reservation{w: w, start: max(l.end, s.now), flavor: fq.Flavor}
		for _, a := range asg {
			out.nodes = append(out.nodes, a.Node)
			out.gpus = append(out.gpus, a.GPUs)
		}
		return out, true
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

// podSetsFor resolves a workload's pod sets for the placer on flavor f and
// what it charges to quota there.
func (s *Snapshot) podSetsFor(w *Workload, f int32) ([]gang.PodSet, res.Vec, bool) {
	return s.podSetsInto(w, f, make([]gang.PodSet, 0, len(w.PodSets)))
}

// podSetsInto is podSetsFor appending to sets (of a valid workload).
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
	rs := s.reservationsBefore(r, dc.d.work)
	if len(rs) == 0 {
		return true, false
	}
	asg := dc.d.work.asg
	var blocking *reservation
	for i := range rs {
		rv := &rs[i]
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
		dc.wi(int64(len(rs)))
		dc.w(" blocked workload(s), or ends before they start")
		dc.check(StageBackfill, true, dc.since(m))
		return true, false
	}
	// Place again around every reserved GPU.
	if dc.replaceAround(rs) {
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
		for i, n := range rv.nodes {
			if n == a.Node && rv.gpus[i]&a.GPUs != 0 {
				return true
			}
		}
	}
	return false
}

// replaceAround places the request again on a view where every reserved
// GPU is taken; it keeps the new placement when that fits.
func (dc *decider) replaceAround(rs []reservation) bool {
	s := dc.s
	st := s.state.Fork()
	for _, rv := range rs {
		for i, n := range rv.nodes {
			st.Allocate(n, rv.gpus[i], res.Vec{}, 0)
		}
	}
	st.Flush()
	var pl gang.Placer
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
