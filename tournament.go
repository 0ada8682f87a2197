package allot

import (
	"slices"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/quota"
)

// fairOrder orders a cycle's heads as Kueue's fair-sharing iterator does:
// a tournament from each cohort tree's root, where at every cohort the
// winners of its child cohorts and the heads of its child queues compete by
// whether their node at that level (the child of the cohort on their path)
// would borrow after admitting them, then by that node's dominant share
// after admission, then priority and submission. The winner is taken, its
// usage counted, and the tournament run again. u is a private usage the
// function may change.
func (s *Snapshot) fairOrder(heads []*Workload, u quota.Usage) []*Workload {
	t := s.rtree
	children := make([][]int32, t.Len())
	for n := int32(0); n < int32(t.Len()); n++ {
		if p := t.Parent(n); p >= 0 {
			children[p] = append(children[p], n)
		}
	}
	type entry struct {
		w *Workload
		q int32
		// share[i] is the share of the i-th node on the queue's path with
		// the workload's usage added.
		share []fairness.Share
	}
	left := make([]*entry, 0, len(heads))
	for _, w := range heads {
		left = append(left, &entry{w: w, q: s.queueIdx[w.Queue]})
	}
	shares := func(e *entry) {
		v := u.Clone()
		s.accountIn(v, e.w)
		path := t.Path(e.q)
		e.share = e.share[:0]
		for _, n := range path {
			e.share = append(e.share, fairness.DominantShare(t, v, n, nil, s.weightOf(n)))
		}
	}
	// at returns an entry's share at the node just below cohort n.
	at := func(e *entry, n int32) fairness.Share {
		path := t.Path(e.q)
		i := slices.Index(path, n)
		return e.share[max(i-1, 0)]
	}
	less := func(a, b *entry, n int32) bool {
		sa, sb := at(a, n), at(b, n)
		if sa.Borrowing != sb.Borrowing {
			return !sa.Borrowing
		}
		if sa.Less(sb) || sb.Less(sa) {
			return sa.Less(sb)
		}
		return pendingBeforeAcross(a.w, b.w)
	}
	var win func(n int32, byQueue map[int32]*entry) *entry
	win = func(n int32, byQueue map[int32]*entry) *entry {
		if t.IsQueue(n) {
			return byQueue[n]
		}
		var best *entry
		for _, c := range children[n] {
			if e := win(c, byQueue); e != nil && (best == nil || less(e, best, n)) {
				best = e
			}
		}
		return best
	}
	out := make([]*Workload, 0, len(heads))
	for len(left) > 0 {
		byQueue := make(map[int32]*entry, len(left))
		roots := map[int32]bool{}
		for _, e := range left {
			shares(e)
			byQueue[e.q] = e
			roots[t.Root(e.q)] = true
		}
		var best *entry
		for _, r := range sortedRoots(roots) {
			if e := win(r, byQueue); e != nil && (best == nil || pendingBeforeAcross(e.w, best.w)) {
				best = e
			}
		}
		out = append(out, best.w)
		s.accountIn(u, best.w)
		left = slices.DeleteFunc(left, func(e *entry) bool { return e == best })
	}
	return out
}

func sortedRoots(m map[int32]bool) []int32 {
	out := make([]int32, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// weightOf is a resource-tree node's fair-sharing weight, a queue's or a
// cohort's (the tree numbers queues first, then cohorts).
func (s *Snapshot) weightOf(n int32) float64 {
	if int(n) < len(s.limits) {
		return s.limits[n].weight
	}
	if c := int(n) - len(s.limits); c < len(s.cohortWeight) {
		return s.cohortWeight[c]
	}
	return 1
}

// nestedCohorts reports whether any queue of heads sits below a cohort
// that is not the root of its tree: only then does the tournament differ
// from comparing the queues' own shares.
func (s *Snapshot) nestedCohorts(heads []*Workload) bool {
	for _, w := range heads {
		if len(s.rtree.Path(s.queueIdx[w.Queue])) > 2 {
			return true
		}
	}
	return false
}
