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

// Tournament orders a cycle's heads as Kueue's fair-sharing iterator does
// when every head is admitted: the winner of a Bracket on u is taken, its
// charges added to u, and the tournament run again on the heads left. u
// is a private usage the function changes; heads are one per queue. It
// returns the heads' indices in order, appended to out.
func Tournament(t *quota.ResourceTree, u quota.Usage, heads []Head, weight []float64, out []int) []int {
	var b Bracket
	left := make([]int, len(heads))
	for i := range left {
		left[i] = i
	}
	for len(left) > 0 {
		w := b.Winner(t, u, heads, left, weight)
		out = append(out, w)
		Account(t, u, heads[w].Key.Queue, heads[w].Charges)
		left = slices.DeleteFunc(left, func(i int) bool { return i == w })
	}
	return out
}

// Bracket is one round of Kueue's fair-sharing tournament; its memory
// serves the next round.
type Bracket struct {
	t        *quota.ResourceTree
	children [][]int32
	entries  []entry
	// byQueue holds, during a round, the entry of each queue in play.
	byQueue []*entry
	roots   []int32
}

// entry is one head in a round with its shares.
type entry struct {
	h *Head
	i int
	// share[k] is the share of the k-th node on the queue's path once
	// the head's charges are added, Borrowing on what the head asks for.
	share     []Share
	requested []int64
}

// Winner is the head, an index into heads, that Kueue's fair-sharing
// tournament on usage u picks first among heads[i] for i in left (one head
// per queue). From each cohort tree's root down, at every cohort the
// winners of its child cohorts and the heads of its child queues compete
// by whether their node at that level (the child of the cohort on their
// path) would borrow a flavor-resource the head asks for once the head is
// admitted, then by that node's dominant share after admission (weight[n]
// is node n's weight), then priority, submission and queue name. Winners
// of different trees compete by priority, submission and queue name. u is
// not changed.
func (b *Bracket) Winner(t *quota.ResourceTree, u quota.Usage, heads []Head, left []int, weight []float64) int {
	b.init(t)
	b.entries = slices.Grow(b.entries[:0], len(left))[:len(left)]
	clear(b.byQueue)
	b.roots = b.roots[:0]
	for k, i := range left {
		e := &b.entries[k]
		e.h, e.i = &heads[i], i
		b.shares(e, u, weight)
		b.byQueue[e.h.Key.Queue] = e
		b.roots = append(b.roots, t.Root(e.h.Key.Queue))
	}
	slices.Sort(b.roots)
	b.roots = slices.Compact(b.roots)
	var best *entry
	for _, r := range b.roots {
		if e := b.win(r); e != nil && (best == nil || e.h.Key.before(&best.h.Key)) {
			best = e
		}
	}
	return best.i
}

// init sizes the bracket for tree t.
func (b *Bracket) init(t *quota.ResourceTree) {
	if b.t == t {
		return
	}
	b.t = t
	b.children = make([][]int32, t.Len())
	for n := int32(0); n < int32(t.Len()); n++ {
		if p := t.Parent(n); p >= 0 {
			b.children[p] = append(b.children[p], n)
		}
	}
	b.byQueue = make([]*entry, t.Len())
}

// shares fills in e's shares along its queue's path with its charges
// added to a copy of u.
func (b *Bracket) shares(e *entry, u quota.Usage, weight []float64) {
	t := b.t
	v := u.Clone()
	Account(t, v, e.h.Key.Queue, e.h.Charges)
	if cap(e.requested) < t.FRs() {
		e.requested = make([]int64, t.FRs())
	}
	e.requested = e.requested[:t.FRs()]
	clear(e.requested)
	charged(t, e.h.Charges, e.requested)
	e.share = e.share[:0]
	for _, n := range t.Path(e.h.Key.Queue) {
		e.share = append(e.share, shareOn(t, v, n, nil, e.requested, weight[n]))
	}
}

// win is the winner below node n, nil when no head there is in play.
func (b *Bracket) win(n int32) *entry {
	if b.t.IsQueue(n) {
		return b.byQueue[n]
	}
	var best *entry
	for _, c := range b.children[n] {
		if e := b.win(c); e != nil && (best == nil || b.less(e, best, n)) {
			best = e
		}
	}
	return best
}

// less orders two entries competing at cohort n.
func (b *Bracket) less(x, y *entry, n int32) bool {
	sx, sy := b.at(x, n), b.at(y, n)
	if sx.Borrowing != sy.Borrowing {
		return !sx.Borrowing
	}
	if sx.Less(sy) || sy.Less(sx) {
		return sx.Less(sy)
	}
	return x.h.Key.before(&y.h.Key)
}

// at is an entry's share at the node just below cohort n on its path.
func (b *Bracket) at(e *entry, n int32) Share {
	i := slices.Index(b.t.Path(e.h.Key.Queue), n)
	return e.share[max(i-1, 0)]
}
