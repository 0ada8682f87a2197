package preempt

import (
	"math"
	"slices"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/quota"
)

// Kueue's fair-sharing preemption: candidates are the preemptor's own
// queue's workloads its withinQueue policy allows, and those of every queue
// of the tree that borrows on what the preemptor needs (reclaimWithinCohort
// allowing); the target queue is chosen from the root by highest dominant
// share, shares compared just below the common ancestor with the incoming
// workload counted; a target's candidate is taken when the preemptor's new
// share would not exceed the target's share after the eviction
// (LessThanOrEqualToFinalShare), and in a second pass when it is below the
// target's share before it (LessThanInitialShare). The victims are then
// filled back like the classical search's.

// startFair decides, once per queue before looking at any workload, which
// queues may lose workloads: other queues only when reclaiming is allowed,
// they share the preemptor's tree and they borrow. It reports whether any
// queue may.
func (s *search) startFair() bool {
	t := s.Tree
	l := &s.Policies
	s.reclaimFrom = make([]bool, len(s.Debt))
	anyQueue := l.WithinQueue != Never
	for q := range s.reclaimFrom {
		if int32(q) != s.Queue && l.Reclaim != Never && t.Root(int32(q)) == t.Root(s.Queue) && s.queueBorrows(s.Usage, int32(q)) {
			s.reclaimFrom[q], anyQueue = true, true
		}
	}
	s.cands = s.cands[:0]
	return anyQueue
}

// collectFair keeps an admitted workload, in ID order, when it may be a
// fair-sharing victim.
func (s *search) collectFair(b *view.Booking) {
	l := &s.Policies
	c := Victim{Booking: b, Variant: ReclaimWithoutBorrowing}
	if b.Queue == s.Queue {
		if !l.WithinQueue.Allows(s.Priority, b.Priority, s.SubmittedAt, b.SubmittedAt) {
			return
		}
		c.Variant = WithinQueue
	} else if !s.reclaimFrom[b.Queue] || !l.Reclaim.Allows(s.Priority, b.Priority, s.SubmittedAt, b.SubmittedAt) {
		return
	}
	if !s.usesNeeded(b) || b.Pinned {
		return
	}
	s.cands = append(s.cands, c)
}

// fair takes the collected candidates queue by queue, as the strategies
// allow, until the request fits.
func (s *search) fair() ([]*Victim, bool) {
	t := s.Tree
	if len(s.cands) == 0 {
		return nil, false
	}
	// Each queue's candidates in Kueue's order: keys computed once (the
	// sort compares them many times), a stable sort by queue and key.
	keys := make([]Candidate, len(s.cands))
	order := make([]int32, len(s.cands))
	for i := range s.cands {
		keys[i], order[i] = s.key(&s.cands[i]), int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		if qa, qb := s.cands[a].Queue, s.cands[b].Queue; qa != qb {
			return int(qa) - int(qb)
		}
		switch {
		case Less(&keys[a], &keys[b]):
			return -1
		case Less(&keys[b], &keys[a]):
			return 1
		}
		return 0
	})
	perQueue := make([][]*Victim, t.Len())
	for _, i := range order {
		c := &s.cands[i]
		perQueue[c.Queue] = append(perQueue[c.Queue], c)
	}
	s.begin()
	var targets []*Victim
	var retry [][]*Victim = make([][]*Victim, t.Len())
	fits := func() bool { return s.fits(true) }
	take := func(c *Victim, reason Variant) {
		c.Variant = reason
		s.m.Evict(c.Booking)
		targets = append(targets, c)
	}
	// The first pass runs the first configured strategy on each candidate;
	// a second pass, when configured, runs LessThanInitialShare on what the
	// first left over.
	first := s.Fair.Strategies[0]
	{
		for {
			tq := s.nextTarget(perQueue)
			if tq < 0 {
				break
			}
			cs := perQueue[tq]
			switch {
			case tq == s.Queue:
				take(cs[0], WithinQueue)
				perQueue[tq] = cs[1:]
				if fits() {
					return s.fillBack(targets, true), true
				}
				continue
			case !s.preemptorBorrows():
				take(cs[0], ReclaimWithoutBorrowing)
				perQueue[tq] = cs[1:]
				if fits() {
					return s.fillBack(targets, true), true
				}
				continue
			}
			pre, _ := s.shares(tq)
			if math.IsInf(pre.Weighted, 1) {
				retry[tq] = append(retry[tq], cs...)
				perQueue[tq] = nil
				continue
			}
			c := cs[0]
			perQueue[tq] = cs[1:]
			var ok bool
			if first == LessThanInitialShare {
				_, target := s.shares(tq)
				ok = pre.Less(target) // preemptor's new share < target's initial share
			} else {
				// Shares read quota usage only: no placement to move.
				s.m.MoveUsage(c.Booking, 1)
				_, after := s.shares(tq)
				s.m.MoveUsage(c.Booking, -1)
				ok = !after.Less(pre) // preemptor's new share ≤ target's final share
			}
			if ok {
				take(c, FairSharing)
				if fits() {
					return s.fillBack(targets, true), true
				}
			} else {
				retry[tq] = append(retry[tq], c)
			}
		}
	}
	if s.Fair.Strategies[1] == LessThanInitialShare {
		for {
			tq := s.nextTarget(retry)
			if tq < 0 {
				break
			}
			pre, target := s.shares(tq)
			if pre.Less(target) {
				take(retry[tq][0], FairSharing)
				if fits() {
					return s.fillBack(targets, true), true
				}
			}
			retry[tq] = nil
		}
	}
	return nil, false
}

// key is a candidate's ordering key for fair-sharing preemption.
func (s *search) key(c *Victim) Candidate {
	k := Candidate{OwnQueue: c.Queue == s.Queue, Priority: c.Priority, AdmittedAt: c.AdmittedAt}
	k.LostWork, k.Debt = s.allotKeys(c.Booking)
	return k
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

// shares are the preemptor's share (the incoming workload counted) and the
// target queue's, each at its node just below their lowest common cohort.
func (s *search) shares(tq int32) (preemptor, target fairness.Share) {
	t := s.Tree
	// A scratch copy of the view's rows table: AddVec replaces the rows it
	// writes, so the view itself stays as it was.
	s.scratch = append(s.scratch[:0], s.m.Usage...)
	u := s.scratch
	for f, fq := range s.Quota {
		if fq != nil {
			t.AddVec(u, s.Queue, f, s.Need[f], 1)
		}
	}
	pa, ta := s.almostLCA(tq)
	return fairness.DominantShare(t, u, pa, nil, s.weight(pa)), fairness.DominantShare(t, u, ta, nil, s.weight(ta))
}

// almostLCA finds, for target queue tq, the children of the lowest common
// cohort on the preemptor's and the target's paths.
func (s *search) almostLCA(tq int32) (preemptorSide, targetSide int32) {
	tp := s.Tree.Path(tq)
	for i, a := range s.path {
		if j := slices.Index(tp, a); j >= 0 {
			preemptorSide, targetSide = s.path[max(i-1, 0)], tp[max(j-1, 0)]
			return
		}
	}
	return s.Queue, tq
}

// weight is a node's fair-sharing weight.
func (s *search) weight(n int32) float64 { return s.Fair.Weights[n] }

// nextTarget picks, from the root of the preemptor's tree down, the child
// with the highest dominant share among those with candidates left (a
// queue other than the preemptor's only while it borrows); -1 when none.
func (s *search) nextTarget(cands [][]*Victim) int32 {
	root := s.path[len(s.path)-1]
	if s.Tree.IsQueue(root) {
		if len(cands[root]) > 0 {
			return root
		}
		return -1
	}
	return s.pick(root, cands)
}

// pick is nextTarget below cohort n.
func (s *search) pick(n int32, cands [][]*Victim) int32 {
	t := s.Tree
	best, bestShare := int32(-1), fairness.Share{}
	for c := int32(0); c < int32(t.Len()); c++ {
		if t.Parent(c) != n {
			continue
		}
		var cand int32 = -1
		if t.IsQueue(c) {
			if len(cands[c]) > 0 && (c == s.Queue || s.queueBorrows(s.m.Usage, c)) {
				cand = c
			}
		} else if onPath := slices.Contains(s.path, c); onPath || !t.IsWithinNominal(s.m.Usage, c, s.frs) {
			cand = s.pick(c, cands)
		}
		if cand < 0 {
			continue
		}
		sh := fairness.DominantShare(t, s.m.Usage, c, nil, s.weight(c))
		if best < 0 || bestShare.Less(sh) {
			best, bestShare = cand, sh
		}
	}
	return best
}
