package fairness

import (
	"slices"

	"github.com/allot-sched/allot/quota"
)

// Nested reports whether any head's queue sits below a cohort that is not
// the root of its tree: only then does Tournament differ from comparing
// the queues' own shares.
func Nested(t *quota.ResourceTree, heads []Head) bool {
	for i := range heads {
		if len(t.Path(heads[i].Key.Queue)) > 2 {
			return true
		}
	}
	return false
}

// Tournament orders a cycle's heads as Kueue's fair-sharing iterator does:
// a tournament from each cohort tree's root, where at every cohort the
// winners of its child cohorts and the heads of its child queues compete by
// whether their node at that level (the child of the cohort on their path)
// would borrow after admitting them, then by that node's dominant share
// after admission (weight[n] is node n's weight), then priority,
// submission and queue. The winner is taken, its charges added to u, and
// the tournament run again. u is a private usage the function changes;
// heads are one per queue. It returns the heads' indices in order,
// appended to out.
func Tournament(t *quota.ResourceTree, u quota.Usage, heads []Head, weight []float64, out []int) []int {
	children := make([][]int32, t.Len())
	for n := int32(0); n < int32(t.Len()); n++ {
		if p := t.Parent(n); p >= 0 {
			children[p] = append(children[p], n)
		}
	}
	type entry struct {
		h *Head
		i int
		// share[i] is the share of the i-th node on the queue's path with
		// the head's charges added.
		share []Share
	}
	left := make([]*entry, 0, len(heads))
	for i := range heads {
		left = append(left, &entry{h: &heads[i], i: i})
	}
	shares := func(e *entry) {
		v := u.Clone()
		Account(t, v, e.h.Key.Queue, e.h.Charges)
		e.share = e.share[:0]
		for _, n := range t.Path(e.h.Key.Queue) {
			e.share = append(e.share, DominantShare(t, v, n, nil, weight[n]))
		}
	}
	// at returns an entry's share at the node just below cohort n.
	at := func(e *entry, n int32) Share {
		i := slices.Index(t.Path(e.h.Key.Queue), n)
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
		return a.h.Key.before(&b.h.Key)
	}
	// byQueue holds, during a round, the entry of each queue still left.
	byQueue := make([]*entry, t.Len())
	var win func(n int32) *entry
	win = func(n int32) *entry {
		if t.IsQueue(n) {
			return byQueue[n]
		}
		var best *entry
		for _, c := range children[n] {
			if e := win(c); e != nil && (best == nil || less(e, best, n)) {
				best = e
			}
		}
		return best
	}
	roots := make([]int32, 0, len(heads))
	for len(left) > 0 {
		clear(byQueue)
		roots = roots[:0]
		for _, e := range left {
			shares(e)
			byQueue[e.h.Key.Queue] = e
			roots = append(roots, t.Root(e.h.Key.Queue))
		}
		slices.Sort(roots)
		roots = slices.Compact(roots)
		var best *entry
		for _, r := range roots {
			if e := win(r); e != nil && (best == nil || e.h.Key.before(&best.h.Key)) {
				best = e
			}
		}
		out = append(out, best.i)
		Account(t, u, best.h.Key.Queue, best.h.Charges)
		left = slices.DeleteFunc(left, func(e *entry) bool { return e == best })
	}
	return out
}
