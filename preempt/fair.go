package preempt

import (
	"slices"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/quota"
)

// Kueue's fair-sharing preemption, rule by rule (v0.17).
//
// Candidates are the preemptor's own queue's workloads its withinQueue
// policy allows, and those of every other queue of its tree that borrows on
// a flavor-resource that needs room (reclaimWithinCohort allowing), all in
// Less order; each queue's list is its run of that order.
//
// Every share the search compares counts the request: its usage is added to
// its queue and, as far as it spills, to the cohorts above, before the
// first target is chosen and until the last. Whether the request fits is
// asked without it.
//
// The target, chosen afresh after every eviction: from the root down, at
// each cohort the child of highest dominant share among those that can
// still give a candidate, which are
//   - a queue with candidates left that borrows on any resource, or the
//     preemptor's own queue with candidates left, borrowing or not;
//   - a cohort that borrows on any resource, or one on the preemptor's
//     path, borrowing or not, when a target lies below it.
//
// Between children of equal share a cohort goes before a queue (its
// subtree may hold a queue more over its share than the queue beside it);
// two queues go in the order of their first candidates. Kueue leaves two
// cohorts of equal share in a set's unspecified order; allot orders them by
// the first candidates of the queues they lead to, as it does queues.
//
// The first pass, on each target:
//   - the own queue gives its first candidate (InClusterQueue);
//   - while the preemptor, request counted, did not borrow on what needs
//     room when the search began (Kueue's FairSharingPreemptWithinNominal,
//     on by default), another queue gives its first candidate without
//     shares being weighed (InCohortReclamation);
//   - otherwise the shares weighed are those of the two children of the
//     lowest cohort common to the preemptor and the target, each on its own
//     side, taken once per visit. The target's candidates are looked at in
//     order until the first strategy allows one, which is taken
//     (InCohortFairSharing); the ones before it are kept for the second
//     pass. LessThanOrEqualToFinalShare allows a candidate when the
//     preemptor's share is not above the target side's once the candidate
//     is gone, LessThanInitialShare when it is below the target side's as it
//     is.
//
// The second pass, when LessThanInitialShare is the second strategy, runs
// over the kept candidates with targets chosen the same way: a target whose
// side's share is above the preemptor's gives its first kept candidate,
// and either way is done.
//
// The search stops as soon as the request fits, and the victims are then
// filled back as the classical search's are.

// startFair decides, once per queue before looking at any workload, which
// queues may lose workloads: the preemptor's own, and other queues only
// when reclaiming is allowed, they share the preemptor's tree and they
// borrow. It reports whether any queue may.
func (s *search) startFair() bool {
	t := s.Tree
	l := &s.Policies
	s.queues = make([]list, len(s.Debt))
	anyQueue := l.WithinQueue != Never
	s.addQueue(&s.queues[s.Queue], s.Queue, l.WithinQueue)
	for q := range int32(len(s.Debt)) {
		if q != s.Queue && l.Reclaim != Never && t.Root(q) == t.Root(s.Queue) && s.queueBorrows(s.Usage, q) {
			anyQueue = true
			s.addQueue(&s.queues[q], q, l.Reclaim)
		}
	}
	return anyQueue
}

// queueBorrows reports whether queue q uses more than its nominal quota on
// a flavor-resource the preemptor needs.
func (s *search) queueBorrows(u quota.Usage, q int32) bool {
	for _, fr := range s.frs {
		if u.At(q, fr) > s.Tree.Nominal(q, fr) {
			return true
		}
	}
	return false
}

// fairSearch is the fair-sharing search's state beside the search's own.
type fairSearch struct {
	*search
	// looked[q] is how many of queue q's candidates the search has looked
	// at, and kept[q] those of them the first strategy passed over.
	looked []int
	kept   [][]int32
	// request[k*FRs:(k+1)*FRs] is what the request adds to the usage of
	// path[k], per flavor-resource, on the view as it is.
	request []int64
	// drop is a candidate's usage change as it reaches a target side.
	drop []int64
}

// fair takes the collected candidates as Kueue's fair-sharing strategies
// allow, until the request fits.
func (s *search) fair() ([]*Victim, bool) {
	t := s.Tree
	f := fairSearch{search: s, looked: make([]int, len(s.queues)), kept: make([][]int32, len(s.queues))}
	found := false
	for q := range s.queues {
		_, ok := s.at(&s.queues[q], 0)
		found = found || ok
	}
	if !found {
		return nil, false
	}
	F := t.FRs()
	buf := make([]int64, (len(s.path)+1)*F)
	f.request, f.drop = buf[:len(s.path)*F], buf[len(s.path)*F:]
	s.begin()
	f.countRequest()

	var targets []*Victim
	// take evicts candidate i as variant v and reports whether the request
	// fits now.
	take := func(i int32, v Variant) bool {
		c := &s.cands[i]
		c.Variant = v
		s.m.Evict(c.Booking)
		targets = append(targets, c)
		if s.fits(true) {
			return true
		}
		f.countRequest()
		return false
	}
	withinNominal := !s.preemptorBorrows()
	first := s.Fair.Strategies[0]
	for tq := f.nextTarget(false); tq >= 0; tq = f.nextTarget(false) {
		if tq == s.Queue || withinNominal {
			v := ReclaimWithoutBorrowing
			if tq == s.Queue {
				v = WithinQueue
			}
			i, _ := f.head(tq, false)
			f.looked[tq]++
			if take(i, v) {
				return s.fillBack(targets, true), true
			}
			continue
		}
		pre, before, side := f.shares(tq)
		for {
			i, more := f.head(tq, false)
			if !more {
				break
			}
			f.looked[tq]++
			var ok bool
			if first == LessThanInitialShare {
				ok = pre.Less(before)
			} else {
				ok = !f.shareWithout(tq, side, i).Less(pre)
			}
			if !ok {
				f.kept[tq] = append(f.kept[tq], i)
				continue
			}
			if take(i, FairSharing) {
				return s.fillBack(targets, true), true
			}
			break
		}
	}
	if s.Fair.Strategies[1] == LessThanInitialShare {
		for tq := f.nextTarget(true); tq >= 0; tq = f.nextTarget(true) {
			if pre, before, _ := f.shares(tq); pre.Less(before) && take(f.kept[tq][0], FairSharing) {
				return s.fillBack(targets, true), true
			}
			f.kept[tq] = nil
		}
	}
	return nil, false
}

// countRequest works out what the request adds to each node on the
// preemptor's path in the view as it is.
func (f *fairSearch) countRequest() {
	t := f.Tree
	F, R := t.FRs(), t.Resources()
	d := f.request[:F]
	clear(d)
	for fl, fq := range f.Quota {
		if fq != nil {
			for r := range R {
				d[fl*R+r] = f.Need[fl][r]
			}
		}
	}
	for k := 1; k < len(f.path); k++ {
		up := f.request[k*F : (k+1)*F]
		copy(up, f.request[(k-1)*F:k*F])
		f.passUp(f.path[k-1], up)
	}
}

// passUp turns d, a change of node n's usage per flavor-resource, into the
// change it makes to n's parent's: a cohort uses what its children use
// beyond their local quota (Kueue's addUsage and removeUsage keep it so),
// so the part of the change below n's local quota stays in n.
func (f *fairSearch) passUp(n int32, d []int64) {
	u := f.m.Usage
	for fr, x := range d {
		if x != 0 {
			used, local := u.At(n, fr), f.Tree.LocalQuota(n, fr)
			d[fr] = max(0, quota.SubAmount(used+x, local)) - max(0, quota.SubAmount(used, local))
		}
	}
}

// share is node c's dominant share in the view, the request counted when c
// is path[k] (k < 0 off the preemptor's path).
func (f *fairSearch) share(c int32, k int) fairness.Share {
	var extra []int64
	if k >= 0 {
		F := f.Tree.FRs()
		extra = f.request[k*F : (k+1)*F]
	}
	return fairness.DominantShare(f.Tree, f.m.Usage, c, extra, f.weight(c))
}

// shares are the preemptor's share (the request counted) and the target
// queue's, each at its side's child of their lowest common cohort, and
// that target side.
func (f *fairSearch) shares(tq int32) (preemptor, target fairness.Share, side int32) {
	k, side := f.almostLCA(tq)
	return f.share(f.path[k], k), f.share(side, -1), side
}

// shareWithout is the target side's share once candidate i of queue tq is
// gone: its usage leaves tq and, as far as it was spilled, the cohorts up
// to the side. The view stays as it is.
func (f *fairSearch) shareWithout(tq, side, i int32) fairness.Share {
	t := f.Tree
	R := t.Resources()
	d := f.drop
	clear(d)
	b := f.cands[i].Booking
	for j := range b.Sets {
		need, base := b.Need(j, f.Tokens), int(b.Sets[j].Flavor)*R
		for r := range R {
			d[base+r] -= need[r]
		}
	}
	for n := tq; n != side; n = t.Parent(n) {
		f.passUp(n, d)
	}
	return fairness.DominantShare(t, f.m.Usage, side, d, f.weight(side))
}

// almostLCA finds, for target queue tq, the children of the lowest common
// cohort on the preemptor's and the target's paths: the preemptor's as its
// index in path, the target's as a node.
func (s *search) almostLCA(tq int32) (preemptorSide int, targetSide int32) {
	tp := s.Tree.Path(tq)
	for i, a := range s.path {
		if j := slices.Index(tp, a); j >= 0 {
			return max(i-1, 0), tp[max(j-1, 0)]
		}
	}
	return 0, tq
}

// weight is a node's fair-sharing weight.
func (s *search) weight(n int32) float64 { return s.Fair.Weights[n] }

// head is the first of queue q's candidates left: those not looked at
// yet, or with kept those the first strategy passed over; false when none
// is left.
func (f *fairSearch) head(q int32, kept bool) (int32, bool) {
	if kept {
		if len(f.kept[q]) == 0 {
			return -1, false
		}
		return f.kept[q][0], true
	}
	return f.at(&f.queues[q], f.looked[q])
}

// nextTarget is the queue to take from next, given each queue's candidates
// left (head's, with kept); -1 when none is.
func (f *fairSearch) nextTarget(kept bool) int32 {
	root := f.path[len(f.path)-1]
	if f.Tree.IsQueue(root) {
		if _, ok := f.head(root, kept); ok {
			return root
		}
		return -1
	}
	return f.pick(root, kept)
}

// pick is nextTarget below cohort n.
func (f *fairSearch) pick(n int32, kept bool) int32 {
	t := f.Tree
	best, bestCohort := int32(-1), false
	var bestShare fairness.Share
	for c := range int32(t.Len()) {
		if t.Parent(c) != n {
			continue
		}
		cohort := !t.IsQueue(c)
		if !cohort {
			if _, ok := f.head(c, kept); !ok {
				continue
			}
		}
		k := slices.Index(f.path, c)
		sh, q := f.share(c, k), int32(-1)
		switch {
		case !cohort && (sh.Borrowing || c == f.Queue):
			q = c
		case cohort && (sh.Borrowing || k >= 0):
			q = f.pick(c, kept)
		}
		if q >= 0 && (best < 0 || f.ahead(kept, sh, cohort, q, bestShare, bestCohort, best)) {
			best, bestCohort, bestShare = q, cohort, sh
		}
	}
	return best
}

// ahead reports whether a child of share sh (a cohort or a queue) leading
// to target queue q goes before the best one so far, of share bestShare
// leading to best.
func (f *fairSearch) ahead(kept bool, sh fairness.Share, cohort bool, q int32, bestShare fairness.Share, bestCohort bool, best int32) bool {
	switch {
	case bestShare.Less(sh):
		return true
	case sh.Less(bestShare):
		return false
	case cohort != bestCohort:
		return cohort
	}
	a, _ := f.head(q, kept)
	b, _ := f.head(best, kept)
	return f.candLess(a, b)
}
