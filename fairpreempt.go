package allot

import (
	"math"
	"slices"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/preempt"
	"github.com/allot-sched/allot/quota"
)

// Fair-sharing preemption strategies (Kueue's names).
const (
	lessThanOrEqualToFinalShare = "LessThanOrEqualToFinalShare"
	lessThanInitialShare        = "LessThanInitialShare"
)

// strategies are the configured fair-sharing preemption strategies, in
// order; by default both.
func (s *Snapshot) strategies() []string {
	if len(s.fairSharing.PreemptionStrategies) == 0 {
		return []string{lessThanOrEqualToFinalShare, lessThanInitialShare}
	}
	return s.fairSharing.PreemptionStrategies
}

// fairSearch is Kueue's fair-sharing preemption: candidates are the
// preemptor's own queue's workloads its withinQueue policy allows, and
// those of every queue of the tree that borrows on what the preemptor
// needs (reclaimWithinCohort allowing); the target queue is chosen from
// the root by highest dominant share, shares compared just below the
// common ancestor with the incoming workload counted; a target's
// candidate is taken when the preemptor's new share would not exceed the
// target's share after the eviction (LessThanOrEqualToFinalShare), and in
// a second pass when it is below the target's share before it
// (LessThanInitialShare). The victims are then filled back like the
// classical search's.
func (p *preemption) fairSearch() ([]*candidate, bool) {
	s := p.s
	t := s.rtree
	l := &s.limits[p.q]
	r := p.req
	// Other queues may lose workloads only when reclaiming is allowed,
	// they share the preemptor's tree and they borrow: decided once per
	// queue, before looking at any workload.
	reclaimFrom := make([]bool, len(s.queues))
	anyQueue := l.withinQueue != preempt.Never
	for q := range reclaimFrom {
		if int32(q) != p.q && l.reclaim != preempt.Never && t.Root(int32(q)) == t.Root(p.q) && p.queueBorrows(s.usage, int32(q)) {
			reclaimFrom[q], anyQueue = true, true
		}
	}
	if !anyQueue {
		return nil, false
	}
	// Candidates per queue, in Kueue's order.
	p.cands = p.cands[:0]
	s.running.Scan(func(w *running) bool {
		c := candidate{r: w, variant: preempt.ReclaimWithoutBorrowing}
		if w.Queue == p.q {
			if !l.withinQueue.Allows(r.Priority, w.Priority, r.SubmittedAt, w.SubmittedAt) {
				return true
			}
			c.variant = preempt.WithinQueue
		} else if !reclaimFrom[w.Queue] || !l.reclaim.Allows(r.Priority, w.Priority, r.SubmittedAt, w.SubmittedAt) {
			return true
		}
		if !p.usesNeeded(w) || w.Pinned {
			return true
		}
		p.cands = append(p.cands, c)
		return true
	})
	if len(p.cands) == 0 {
		return nil, false
	}
	// Each queue's candidates in Kueue's order: keys computed once (the
	// sort compares them many times), a stable sort by queue and key.
	keys := make([]preempt.Candidate, len(p.cands))
	order := make([]int32, len(p.cands))
	for i := range p.cands {
		keys[i], order[i] = p.key(&p.cands[i]), int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		if qa, qb := p.cands[a].r.Queue, p.cands[b].r.Queue; qa != qb {
			return int(qa) - int(qb)
		}
		switch {
		case preempt.Less(&keys[a], &keys[b]):
			return -1
		case preempt.Less(&keys[b], &keys[a]):
			return 1
		}
		return 0
	})
	perQueue := make([][]*candidate, t.Len())
	for _, i := range order {
		c := &p.cands[i]
		perQueue[c.r.Queue] = append(perQueue[c.r.Queue], c)
	}
	p.m = view.Sim{Tree: t, Usage: s.usage.Clone(), Tokens: s.tokens, Nodes: s.nodeRes}
	if p.sets != nil {
		p.m.State = s.state.Fork()
	}
	var targets []*candidate
	var retry [][]*candidate = make([][]*candidate, t.Len())
	strategies := s.strategies()
	fits := func() bool { return p.fits(true) }
	take := func(c *candidate, reason preempt.Variant) {
		c.variant = reason
		p.m.Evict(&c.r.Booking)
		targets = append(targets, c)
	}
	// The first pass runs the first configured strategy on each candidate;
	// a second pass, when configured, runs LessThanInitialShare on what the
	// first left over.
	first := strategies[0]
	{
		for {
			tq := p.nextTarget(perQueue)
			if tq < 0 {
				break
			}
			cs := perQueue[tq]
			switch {
			case tq == p.q:
				take(cs[0], preempt.WithinQueue)
				perQueue[tq] = cs[1:]
				if fits() {
					return p.fillBack(targets, true), true
				}
				continue
			case !p.preemptorBorrows():
				take(cs[0], preempt.ReclaimWithoutBorrowing)
				perQueue[tq] = cs[1:]
				if fits() {
					return p.fillBack(targets, true), true
				}
				continue
			}
			pre, _ := p.shares(tq)
			if math.IsInf(pre.Weighted, 1) {
				retry[tq] = append(retry[tq], cs...)
				perQueue[tq] = nil
				continue
			}
			c := cs[0]
			perQueue[tq] = cs[1:]
			var ok bool
			if first == lessThanInitialShare {
				_, target := p.shares(tq)
				ok = pre.Less(target) // preemptor's new share < target's initial share
			} else {
				// Shares read quota usage only: no placement to move.
				p.m.MoveUsage(&c.r.Booking, 1)
				_, after := p.shares(tq)
				p.m.MoveUsage(&c.r.Booking, -1)
				ok = !after.Less(pre) // preemptor's new share ≤ target's final share
			}
			if ok {
				take(c, preempt.FairSharing)
				if fits() {
					return p.fillBack(targets, true), true
				}
			} else {
				retry[tq] = append(retry[tq], c)
			}
		}
	}
	if len(strategies) > 1 && strategies[1] == lessThanInitialShare {
		for {
			tq := p.nextTarget(retry)
			if tq < 0 {
				break
			}
			pre, target := p.shares(tq)
			if pre.Less(target) {
				take(retry[tq][0], preempt.FairSharing)
				if fits() {
					return p.fillBack(targets, true), true
				}
			}
			retry[tq] = nil
		}
	}
	return nil, false
}

// key is a candidate's ordering key for fair-sharing preemption.
func (p *preemption) key(c *candidate) preempt.Candidate {
	s := p.s
	return preempt.Candidate{OwnQueue: c.r.Queue == p.q, Priority: c.r.Priority, AdmittedAt: c.r.AdmittedAt,
		LostWork: s.lostWork(c.r), Debt: s.debt[c.r.Queue].Now(s.now, s.history.HalfLife)}
}

// queueBorrows reports whether queue q uses more than its nominal quota on
// a flavor-resource the preemptor needs.
func (p *preemption) queueBorrows(u quota.Usage, q int32) bool {
	for _, fr := range p.frs {
		if u.At(q, fr) > p.s.rtree.Nominal(q, fr) {
			return true
		}
	}
	return false
}

// preemptorBorrows reports whether the preemptor's queue would borrow on
// what it needs once the request is counted, in the current view.
func (p *preemption) preemptorBorrows() bool {
	for _, fr := range p.frs {
		if p.s.rtree.BorrowingWith(p.m.Usage, p.q, fr, p.needAt(fr)) {
			return true
		}
	}
	return false
}

// shares are the preemptor's share (the incoming workload counted) and the
// target queue's, each at its node just below their lowest common cohort.
func (p *preemption) shares(tq int32) (preemptor, target fairness.Share) {
	s := p.s
	t := s.rtree
	// A scratch copy of the view's rows table: AddVec replaces the rows it
	// writes, so the view itself stays as it was.
	p.scratch = append(p.scratch[:0], p.m.Usage...)
	u := p.scratch
	for f, fq := range p.fqs {
		if fq != nil {
			t.AddVec(u, p.q, f, p.need[f], 1)
		}
	}
	pa, ta := p.almostLCA(tq)
	return fairness.DominantShare(t, u, pa, nil, p.weight(pa)), fairness.DominantShare(t, u, ta, nil, p.weight(ta))
}

// almostLCA finds, for target queue tq, the children of the lowest common
// cohort on the preemptor's and the target's paths.
func (p *preemption) almostLCA(tq int32) (preemptorSide, targetSide int32) {
	t := p.s.rtree
	tp := t.Path(tq)
	for i, a := range p.path {
		if j := slices.Index(tp, a); j >= 0 {
			preemptorSide, targetSide = p.path[max(i-1, 0)], tp[max(j-1, 0)]
			return
		}
	}
	return p.q, tq
}

// weight is a node's fair-sharing weight.
func (p *preemption) weight(n int32) float64 { return p.s.weightOf(n) }

// nextTarget picks, from the root of the preemptor's tree down, the child
// with the highest dominant share among those with candidates left (a
// queue other than the preemptor's only while it borrows); -1 when none.
func (p *preemption) nextTarget(cands [][]*candidate) int32 {
	t := p.s.rtree
	root := p.path[len(p.path)-1]
	var pick func(n int32) int32
	pick = func(n int32) int32 {
		best, bestShare := int32(-1), fairness.Share{}
		for c := int32(0); c < int32(t.Len()); c++ {
			if t.Parent(c) != n {
				continue
			}
			var cand int32 = -1
			if t.IsQueue(c) {
				if len(cands[c]) > 0 && (c == p.q || p.queueBorrows(p.m.Usage, c)) {
					cand = c
				}
			} else if onPath := slices.Contains(p.path, c); onPath || !t.IsWithinNominal(p.m.Usage, c, p.frs) {
				cand = pick(c)
			}
			if cand < 0 {
				continue
			}
			sh := fairness.DominantShare(t, p.m.Usage, c, nil, p.weight(c))
			if best < 0 || bestShare.Less(sh) {
				best, bestShare = cand, sh
			}
		}
		return best
	}
	if t.IsQueue(root) {
		if len(cands[root]) > 0 {
			return root
		}
		return -1
	}
	return pick(root)
}
