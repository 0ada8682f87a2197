package allot

import (
	"slices"
	"sync/atomic"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

// reservation is a blocked workload's planned start: when the running
// workloads' expected run times free enough for it, and the GPUs it would
// then take.
type reservation struct {
	w     *Workload
	start int64
	// pods are the node-local GPU masks reserved, one per pod.
	pods []gang.Assignment
}

// backfillOn reports whether backfill reservations are kept (the default).
// Unset, backfill is on except in Kueue-exact mode: Kueue keeps no
// reservations.
func (s *Snapshot) backfillOn() bool {
	if s.options.Backfill == nil {
		return !s.kueueExact()
	}
	return *s.options.Backfill
}

// kueueExact reports whether the snapshot gives Kueue's answer where
// allot's additions would change it (Options.Semantics "kueue").
func (s *Snapshot) kueueExact() bool { return s.options.Semantics == SemanticsKueue }

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
	// prior is an earlier version's plan, handed on by the scheduling
	// loop (carryPlan): what it learnt of each workload ahead is asked
	// again only where this version differs (aheadAnswer).
	prior atomic.Pointer[backfillPlan]
}

// backfillPlan is one extent of a snapshot's plan, never changed once
// published; a longer one extends it, sharing what they have in common.
type backfillPlan struct {
	// answers are the first maxBackfillTest pending workloads, in order,
	// and what was learnt of the first next of them (the rest carry the
	// workload alone).
	answers []aheadAnswer
	next    int
	rs      []reservation
	// held[k] is the snapshot's state with the GPUs of rs[:k+1] taken
	// (base with none): what the next blocked workload is planned on, and
	// what a request is placed again on around the reservations.
	held []*topology.State
	base *topology.State
	// reserved are the GPUs of rs, one entry per node, sorted by node: a
	// running workload that leaves does not free them for the next
	// blocked workload.
	reserved []gang.Assignment
	// ends are the running workloads expected to leave, in order, listed
	// once per plan.
	ends []fairness.Leaving
	// fixed, config and ten are the configuration the answers were
	// learnt on: another version reuses them only on the same one.
	fixed  *fixed
	config *config
	ten    *tenancy
	// sets holds the answers' pod sets, appended to as the plan extends.
	sets []gang.PodSet
	// lowerOnly: a reservation holds back only workloads of lower
	// priority (Options.BackfillHolds).
	lowerOnly bool
}

// aheadAnswer is whether a workload ahead waits for capacity
// (waitsForCapacity) with what the answer rests on, so that a later
// version of the same configuration asks again only what may differ:
// whether it may enter rests on the configuration alone, its nomination
// on the usage of its queue's path in the cohort tree (nomination.holds),
// the placement on the free capacity, which every version checks again.
type aheadAnswer struct {
	w *Workload
	// enters: it validates, enters its queue and the queue is not on
	// hold; q is that queue.
	enters bool
	q      int32
	// nom is its nomination (nil when it does not enter), shared by the
	// versions it holds on.
	nom *nomination
	// waits is the answer.
	waits bool
}

// nomination is a workload's flavor assignment by quota (nominate) as the
// plan keeps it: whether it fit, on the usage it was made on, and the pod
// sets it puts on flavors with nodes.
type nomination struct {
	usage quota.Usage
	fits  bool
	sets  []gang.PodSet
	// monotone marks the nomination of one pod set by a queue that takes
	// the first flavor whose quota holds it (not whenCanBorrow
	// TryNextFlavor): no flavor before the one taken (none at all, when it
	// did not fit) fits on more usage, and the one taken fits again while
	// need, zeros and fq are within the available quota
	// (quota.WithinAvailable).
	monotone bool
	fq       *quota.FlavorQuota
	need     res.Vec
	zeros    uint16
}

// holds reports whether nomination n of a workload of queue q stands on
// s's usage, without nominating again: every row of q's path holds what
// it held (a row is never written in place: the same row is the same
// usage), or, for a monotone nomination, q's own row does, no other has
// fallen and the flavor taken still has the quota.
func (n *nomination) holds(s *Snapshot, q int32) bool {
	if n == nil || n.usage == nil {
		return false
	}
	grown := false
	for i, m := range s.rtree.Path(q) {
		was, now := n.usage[m], s.usage[m]
		if len(was) > 0 && len(now) > 0 && &was[0] == &now[0] || slices.Equal(was, now) {
			continue
		}
		if i == 0 || !n.monotone || len(was) != len(now) {
			return false
		}
		for k := range was {
			if now[k] < was[k] {
				return false
			}
		}
		grown = true
	}
	return !grown || !n.fits || s.rtree.WithinAvailable(s.usage, q, n.fq, res.Vec{}, n.need, n.zeros)
}

// heldState is the snapshot's state with the GPUs of rs[:k] taken.
func (p *backfillPlan) heldState(k int) *topology.State {
	if k == 0 {
		return p.base
	}
	return p.held[k-1]
}

// holds reports whether a reservation for blocked workload b would hold
// back workload w (Options.BackfillHolds): b is ahead of w in the pending
// order and, when the plan holds back only lower priorities, of a higher
// priority. The pending order is priority first, so the workloads a
// reservation holds back are always the tail of that order.
func (p *backfillPlan) holds(b, w *Workload) bool {
	if p.lowerOnly {
		return b.Priority > w.Priority
	}
	return pendingBefore(b, w)
}

// covers reports whether the plan has examined every blocked workload
// whose reservation could hold w back.
func (p *backfillPlan) covers(w *Workload, depth int) bool {
	return p.next == len(p.answers) || len(p.rs) >= depth || !p.holds(p.answers[p.next].w, w)
}

// aheadOf counts the reservations that hold request w back (the first n
// of the plan's) and finds among them the one of w's own ID, which is not
// in its way (-1 when none is).
func (p *backfillPlan) aheadOf(w *Workload) (n, self int) {
	self = -1
	for n < len(p.rs) && p.holds(p.rs[n].w, w) {
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
// placement fit (fairness.Planner). A workload that could never be planned gets no
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
// request w. What an earlier version's plan handed on (s.bf.prior) learnt
// of a workload ahead is reused where it still holds.
func (s *Snapshot) extendPlan(p *backfillPlan, w *Workload, depth int, work *workspace) *backfillPlan {
	var q backfillPlan
	if p == nil {
		q.base = s.state
		q.answers = make([]aheadAnswer, 0, min(maxBackfillTest, s.queued.Len()))
		s.queued.Scan(func(w *Workload) bool {
			q.answers = append(q.answers, aheadAnswer{w: w})
			return len(q.answers) < maxBackfillTest
		})
		q.fixed, q.config, q.ten = s.fixed, s.config, s.ten
		q.lowerOnly = s.options.BackfillHolds == BackfillHoldsLowerPriority
	} else {
		// Appending and answering must not write into the arrays p shares.
		q = *p
		q.rs, q.held, q.sets = slices.Clip(q.rs), slices.Clip(q.held), slices.Clip(q.sets)
		q.answers = slices.Clone(q.answers)
	}
	var prior []aheadAnswer
	if s.bf != nil {
		if pp := s.bf.prior.Load(); pp != nil && pp.fixed == s.fixed && pp.config == s.config && pp.ten == s.ten {
			prior = pp.answers[:pp.next]
		}
	}
	ownReserved := false
	planner := fairness.Planner{View: view.Sim{Tree: s.rtree, Usage: s.usage, Tokens: s.tokens, Nodes: s.nodeRes}, Now: s.now, Leaving: q.ends, Placer: &work.search, Scratch: work.planned,
		Base: q.base}
	for !q.covers(w, depth) {
		b := q.answers[q.next].w
		// Both lists are in the pending order: what the prior plan knew
		// of b, if anything, is at the first of its answers not before b.
		var was *aheadAnswer
		for len(prior) > 0 && prior[0].w != b && pendingBefore(prior[0].w, b) {
			prior = prior[1:]
		}
		if len(prior) > 0 && prior[0].w == b {
			was, prior = &prior[0], prior[1:]
		}
		a := &q.answers[q.next]
		*a, q.sets = s.waitsForCapacity(b, was, work, q.sets)
		q.next++
		if !a.waits {
			continue // it starts now, or waits for something else
		}
		if q.ends == nil {
			q.ends = s.leavingOrder()
			planner.Leaving = q.ends
		}
		d, ok := s.blocked(b, work)
		if !ok {
			continue
		}
		base := q.heldState(len(q.rs))
		start, pods, ok := planner.Reserve(&d, base, q.reserved)
		if !ok {
			continue
		}
		rv := reservation{w: b, start: start, pods: pods}
		held := base.Fork()
		for _, a := range rv.pods {
			held.BookPod(a.Node, a.GPUs, a.Share, res.Vec{}, 0, 1)
		}
		held.Flush()
		q.rs = append(q.rs, rv)
		q.held = append(q.held, held)
		if !ownReserved {
			// p shares the reserved GPUs: they grow in place once copied.
			q.reserved = append(make([]gang.Assignment, 0, len(q.reserved)+len(rv.pods)), q.reserved...)
			ownReserved = true
		}
		q.reserved = fairness.AddReserved(q.reserved, rv.pods)
	}
	work.planned = planner.Scratch
	return &q
}

// waitsForCapacity reports whether a pending workload is held back only
// by quota or free capacity: a queue on hold, a tenant or a cap keeps it
// waiting whatever is reserved, so such a workload gets no reservation. It
// could start now when its flavor assignment by quota fits (nominate) and
// its pods fit the free capacity of those flavors. was, when not nil, is
// what an earlier version of the same configuration learnt of w: whether
// it enters holds still, its nomination where it holds. The pod sets of a
// new nomination are appended to sets.
func (s *Snapshot) waitsForCapacity(w *Workload, was *aheadAnswer, work *workspace, sets []gang.PodSet) (aheadAnswer, []gang.PodSet) {
	a := aheadAnswer{w: w, q: -1}
	if was != nil {
		a.enters, a.q = was.enters, was.q
	} else if msg, _ := s.validate((*Request)(w)); msg == "" {
		e := s.enter((*Request)(w))
		a.enters, a.q = e.fault == entryOK && !s.quota.Queues[e.q].Hold, e.q
	}
	if !a.enters {
		return a, sets
	}
	if was != nil && was.nom.holds(s, a.q) {
		a.nom = was.nom
	} else {
		a.nom, sets = s.nominateAhead(w, a.q, work, sets)
	}
	switch {
	case !a.nom.fits:
		a.waits = true
	case len(a.nom.sets) > 0: // else quota-only: it can start now
		pl := &work.search
		pl.Reset(s.state)
		a.waits = !pl.Feasible(a.nom.sets)
	}
	return a, sets
}

// nominateAhead nominates workload w of queue q on s's usage, with the
// decision's scratch assigner (this runs for many workloads ahead of every
// request), appending its pod sets to sets.
func (s *Snapshot) nominateAhead(w *Workload, q int32, work *workspace, sets []gang.PodSet) (*nomination, []gang.PodSet) {
	nom := &work.nominee
	n := &nomination{usage: s.usage, fits: s.nominate(w, s.usage, nom)}
	qc := &s.quota.Queues[q]
	if nom.n == 1 && !qc.TryNextWhenBorrowing {
		n.monotone, n.need, n.zeros = true, nom.need[0], nom.zeros[0]
		if f := nom.asg.flavor[0]; n.fits {
			i := slices.IndexFunc(qc.Flavors, func(fq quota.FlavorQuota) bool { return fq.Flavor == f })
			n.fq = &qc.Flavors[i]
		}
	}
	if n.fits {
		from := len(sets)
		sets = s.nominatedSets(nom, sets)
		n.sets = slices.Clip(sets[from:])
	}
	return n, sets
}

// carryPlan hands the plan made on snapshot from (or the one from was
// handed, when it planned nothing) to snapshot to, a later version of the
// same store, for its plan to reuse what still holds (extendPlan). The
// plan handed on, its states included, lives as long as to does: one
// plan, never a chain of them.
func carryPlan(from, to *Snapshot) {
	if from == nil || to == nil || from.bf == nil || to.bf == nil || from == to {
		return
	}
	p := from.bf.plan.Load()
	if p == nil {
		p = from.bf.prior.Load()
	}
	if p != nil {
		to.bf.prior.Store(p)
	}
}

// leavingOrder lists the running workloads expected to end
// (fairness.EndOf), in the order they end: the one place the plan reads
// the running records.
func (s *Snapshot) leavingOrder() []fairness.Leaving {
	n := 0
	s.running.Scan(func(r *running) bool {
		if _, ok := fairness.EndOf(r.AdmittedAt, r.w.ExpectedRuntime); ok {
			n++
		}
		return true
	})
	ends := make([]fairness.Leaving, 0, n)
	s.running.Scan(func(r *running) bool {
		if end, ok := fairness.EndOf(r.AdmittedAt, r.w.ExpectedRuntime); ok {
			ends = append(ends, fairness.Leaving{End: end, B: &r.Booking})
		}
		return true
	})
	fairness.SortLeaving(ends)
	return ends
}

// blocked resolves what blocked workload w asks for on the flavors it is
// planned on: its flavor assignment by quota (nominate; a pod set no
// flavor holds now on the first flavor it allows). A workload with no pod
// set on a flavor with nodes gets no reservation.
func (s *Snapshot) blocked(w *Workload, work *workspace) (fairness.Blocked, bool) {
	nom := &work.nominee
	s.nominate(w, s.usage, nom)
	b := fairness.Blocked{Queue: s.queueIdx[w.Queue]}
	for i := range nom.n {
		f := nom.asg.flavor[i]
		if f < 0 {
			return fairness.Blocked{}, false
		}
		at := slices.IndexFunc(b.Charges, func(c fairness.Charge) bool { return c.Flavor == f })
		if at < 0 {
			b.Charges = append(b.Charges, fairness.Charge{Flavor: f})
			at = len(b.Charges) - 1
		}
		b.Charges[at].Need = b.Charges[at].Need.Add(nom.need[i])
	}
	work.ahead = s.nominatedSets(nom, work.ahead[:0])
	b.Sets = work.ahead
	return b, len(b.Sets) > 0
}

// nominatedSets resolves the pod sets that nomination nom puts on flavors
// with nodes for the placer, appending them to sets.
func (s *Snapshot) nominatedSets(nom *assigner, sets []gang.PodSet) []gang.PodSet {
	for i := range nom.n {
		if f := nom.asg.flavor[i]; f >= 0 && s.flavorHasNodes(f) {
			sets = append(sets, s.gangPodSet(&nom.r.PodSets[i], nom.perPod[i], f))
		}
	}
	return sets
}
