package fairness

import (
	"cmp"
	"math"
	"slices"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
)

// Turn is what orders pending workloads once every fairness key ties:
// higher priority, then earlier submission, then ID. It is the order of
// each queue and of all pending workloads by priority. Three fields keep it
// within what the compiler holds in registers, so comparing two costs no
// more than comparing the workloads' fields.
type Turn struct {
	Priority    int32
	SubmittedAt int64
	ID          string
}

// Before reports whether a comes before b.
func (a Turn) Before(b Turn) bool {
	if before, decided := a.ahead(b); decided {
		return before
	}
	return a.ID < b.ID
}

// ahead reports whether priority and submission put a before b, and
// whether they decide at all.
func (a Turn) ahead(b Turn) (before, decided bool) {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority, true
	}
	if a.SubmittedAt != b.SubmittedAt {
		return a.SubmittedAt < b.SubmittedAt, true
	}
	return false, false
}

// Key is one head of a scheduling cycle with the keys it is ordered by. The
// caller fills it in per head: Level without fair sharing, Share with it,
// Debt and Usage when Order asks for them.
type Key struct {
	// Queue is the head's queue, its node in the resource tree, and
	// QueueName its name, which breaks ties between queues.
	Queue     int32
	QueueName string
	Turn      Turn
	// Level is the borrowing level the head's admission would have.
	Level int
	// Share is the queue's dominant share once the head is admitted.
	Share Share
	// Debt is the queue's fairness debt now, Usage its decayed usage per
	// weight (PerWeight).
	Debt, Usage float64
}

// before orders heads of different queues: higher priority, earlier
// submission, then queue name and ID.
func (a *Key) before(b *Key) bool {
	if before, decided := a.Turn.ahead(b.Turn); decided {
		return before
	}
	if a.QueueName != b.QueueName {
		return a.QueueName < b.QueueName
	}
	return a.Turn.ID < b.Turn.ID
}

// Order says which keys order a cycle's heads.
type Order struct {
	// FairSharing orders by Share, otherwise by Level.
	FairSharing bool
	// ByDebt puts higher debt first, ByUsage lower usage per weight, after
	// the share or level and the priority, before submission: they order
	// the heads of one priority, never a lower class before a higher.
	ByDebt, ByUsage bool
}

// Compare orders two heads of one cycle as Kueue orders a cycle's entries:
// with fair sharing, heads that do not borrow first, then the lower share;
// without, the lower borrowing level; then priority, then the history
// keys, then submission and queue. It never returns 0: distinct heads
// never tie.
func (o Order) Compare(a, b *Key) int {
	if o.FairSharing {
		if a.Share.Borrowing != b.Share.Borrowing {
			if !a.Share.Borrowing {
				return -1
			}
			return 1
		}
		if a.Share.Less(b.Share) {
			return -1
		}
		if b.Share.Less(a.Share) {
			return 1
		}
	} else if c := cmp.Compare(a.Level, b.Level); c != 0 {
		return c
	}
	if a.Turn.Priority != b.Turn.Priority {
		return cmp.Compare(b.Turn.Priority, a.Turn.Priority)
	}
	if c := o.history(a, b); c != 0 {
		return c
	}
	if a.before(b) {
		return -1
	}
	return 1
}

// history compares two heads by the history keys that are on: higher
// debt first, then lower usage per weight; 0 for heads of one queue.
func (o Order) history(a, b *Key) int {
	if a.Queue == b.Queue {
		return 0
	}
	if o.ByDebt {
		if c := cmp.Compare(b.Debt, a.Debt); c != 0 {
			return c
		}
	}
	if o.ByUsage {
		if c := cmp.Compare(a.Usage, b.Usage); c != 0 {
			return c
		}
	}
	return 0
}

// Sort orders a cycle's heads by Compare, stably: it returns their indices
// in order, in out's memory.
func (o Order) Sort(heads []Head, out []int) []int {
	out = out[:0]
	for i := range heads {
		out = append(out, i)
	}
	slices.SortStableFunc(out, func(i, j int) int { return o.Compare(&heads[i].Key, &heads[j].Key) })
	return out
}

// PerWeight is a queue's decayed usage over its weight: a queue of weight 0
// comes last (+Inf).
func PerWeight(usage, weight float64) float64 {
	if weight > 0 {
		return usage / weight
	}
	return math.Inf(1)
}

// Charge is what one pod set charges to quota on one flavor.
type Charge struct {
	Flavor int32
	Need   res.Vec
}

// Head is one head of a cycle: its keys and what its admission charges.
type Head struct {
	Key     Key
	Charges []Charge
}

// ShareAfter is the dominant share of queue q, of weight weight, once
// charges are added to its usage in u; it is Borrowing when the queue then
// borrows a flavor-resource the charges ask for.
func ShareAfter(t *quota.ResourceTree, u quota.Usage, q int32, charges []Charge, weight float64) Share {
	extra := charged(t, charges, make([]int64, t.FRs()))
	return shareOn(t, u, q, extra, extra, weight)
}

// charged is what charges ask for per flavor-resource, in into (of
// t.FRs() zeros).
func charged(t *quota.ResourceTree, charges []Charge, into []int64) []int64 {
	for i := range charges {
		c := &charges[i]
		for r := range t.Resources() {
			into[t.FR(int(c.Flavor), r)] += c.Need[r]
		}
	}
	return into
}

// Account adds charges to queue q's usage in u.
func Account(t *quota.ResourceTree, u quota.Usage, q int32, charges []Charge) {
	for i := range charges {
		t.AddVec(u, q, int(charges[i].Flavor), charges[i].Need, 1)
	}
}
