package preempt

import (
	"math"
	"slices"
	"strings"

	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/view"
)

// Index holds the admitted workloads in the order the search reads its
// candidates in: by queue, then in runs (groups) of one priority, one size
// (what Cost.Lost multiplies the seconds by) and one kind (whether a
// checkpoint, not the admission, starts the work an eviction loses), each
// run by that start descending, then admission time descending, then ID.
//
// Within a run the lost work at any time only grows, so a run's next
// workload bounds all the rest of it in Less order, and a search merges
// the runs of the queues it may take from lazily, reading as many
// workloads as it looks at. For a run whose lost work starts at admission
// the bound is exact under both orders (Kueue's and allot's); for a
// checkpointed run it is the lost work alone, and ties are read together.
//
// An Index is copy-on-write like the set of bookings it mirrors: its
// owner inserts a booking when it is admitted and deletes it when it
// leaves or is replaced, and clones it with the rest of a version.
type Index struct {
	t    cow.Buffered[entry]
	cost Cost // only its resources are read: what a booking's size is
}

// entry is a booking with its order keys.
type entry struct {
	b               *view.Booking // nil in a pivot: before every ID
	since, admitted int64
	size            int64
	queue, priority int32
	fromCheckpoint  bool
}

// NewIndex returns an empty index that sizes bookings as c does.
func NewIndex(c Cost) Index {
	c.Now = 0
	return Index{t: cow.NewBuffered(entryLess), cost: c}
}

func (e *entry) id() string {
	if e.b == nil {
		return ""
	}
	return e.b.ID
}

// entryLess is the index's order (Index).
func entryLess(a, b entry) bool {
	if a.queue != b.queue {
		return a.queue < b.queue
	}
	if a.priority != b.priority {
		return a.priority < b.priority
	}
	if a.size != b.size {
		return a.size < b.size
	}
	if a.fromCheckpoint != b.fromCheckpoint {
		return !a.fromCheckpoint
	}
	if a.since != b.since {
		return a.since > b.since
	}
	if a.admitted != b.admitted {
		return a.admitted > b.admitted
	}
	return a.id() < b.id()
}

// IndexOf returns an index of bookings, none twice, sizing them as c
// does: sorted first, then written into the tree in order, which copies
// nothing and allocates only the tree's nodes.
func IndexOf(c Cost, bookings []*view.Booking) Index {
	x := NewIndex(c)
	entries := make([]entry, len(bookings))
	for i, b := range bookings {
		entries[i] = x.entry(b)
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if entryLess(a, b) {
			return -1
		}
		return 1 // no two entries are equal: IDs differ
	})
	for _, e := range entries {
		x.t.Tree.Set(e) // the buffer is empty
	}
	return x
}

// entry is b's entry.
func (x *Index) entry(b *view.Booking) entry {
	since, ck := b.AdmittedAt, b.Checkpointable && b.LastCheckpoint > b.AdmittedAt
	if ck {
		since = b.LastCheckpoint
	}
	return entry{b: b, since: since, admitted: b.AdmittedAt, size: x.cost.size(b), queue: b.Queue, priority: b.Priority, fromCheckpoint: ck}
}

// Insert adds b, which must not be in the index.
func (x *Index) Insert(b *view.Booking) { x.t.Insert(x.entry(b)) }

// Delete removes b, as it was inserted (its keys unchanged since), and
// reports whether it was there.
func (x *Index) Delete(b *view.Booking) bool {
	_, ok := x.t.Delete(x.entry(b))
	return ok
}

// Len is the number of bookings.
func (x *Index) Len() int { return x.t.Len() }

// Settle is cow.Buffered's Settle: for an index read far more than
// written.
func (x *Index) Settle() { x.t.Settle() }

// CloneAs is cow.Buffered's CloneAs.
func (x *Index) CloneAs(child, parent cow.Owner) Index {
	return Index{t: x.t.CloneAs(child, parent), cost: x.cost}
}

// Fork is cow.Buffered's Fork.
func (x *Index) Fork() Index { return Index{t: x.t.Fork(), cost: x.cost} }

// Scan calls fn on every booking in the index's order until fn returns
// false.
func (x *Index) Scan(fn func(*view.Booking) bool) {
	x.t.Scan(func(e entry) bool { return fn(e.b) })
}

// group is a run of the index: one queue, priority, size and kind.
type group struct {
	queue, priority int32
	size            int64
	fromCheckpoint  bool
}

func (e *entry) group() group {
	return group{queue: e.queue, priority: e.priority, size: e.size, fromCheckpoint: e.fromCheckpoint}
}

// start is a pivot before every entry of g.
func (g group) start() entry {
	return entry{queue: g.queue, priority: g.priority, size: g.size, fromCheckpoint: g.fromCheckpoint, since: math.MaxInt64, admitted: math.MaxInt64}
}

// next is the first possible group after g in the same queue; false past
// the last.
func (g group) next() (group, bool) {
	switch {
	case !g.fromCheckpoint:
		g.fromCheckpoint = true
	case g.size < math.MaxInt64:
		g.size, g.fromCheckpoint = g.size+1, false
	case g.priority < math.MaxInt32:
		g.priority, g.size, g.fromCheckpoint = g.priority+1, math.MinInt64, false
	default:
		return g, false
	}
	return g, true
}

// firstGroup is the first group of queue q at or after from (from's queue
// is q), false when q has none.
func (x *Index) firstGroup(from group) (group, bool) {
	var found entry
	ok := false
	x.t.Ascend(from.start(), func(e entry) bool {
		found, ok = e, e.queue == from.queue
		return false
	})
	if !ok {
		return group{}, false
	}
	return found.group(), true
}

// read fills buf with the entries of g after last (from g's start when
// last is nil) and returns how many it filled.
func (x *Index) read(g group, last *entry, buf []entry) int {
	pivot := g.start()
	if last != nil {
		pivot = *last
	}
	n := 0
	x.t.Ascend(pivot, func(e entry) bool {
		if e.group() != g {
			return false
		}
		if last != nil && e.b == last.b {
			return true
		}
		buf[n] = e
		n++
		return n < len(buf)
	})
	return n
}

// compareKeys is Less without its last tie-break, the ID rank: the
// index's merge compares IDs instead.
func compareKeys(a, b *Candidate) int {
	if a.OwnQueue != b.OwnQueue {
		if !a.OwnQueue {
			return -1
		}
		return 1
	}
	if a.Priority != b.Priority {
		return cmpInt(a.Priority, b.Priority)
	}
	if a.Debt != b.Debt {
		if a.Debt < b.Debt {
			return -1
		}
		return 1
	}
	if a.LostWork != b.LostWork {
		return cmpInt(a.LostWork, b.LostWork)
	}
	if a.AdmittedAt != b.AdmittedAt {
		return -cmpInt(a.AdmittedAt, b.AdmittedAt)
	}
	return 0
}

func cmpInt[T int32 | int64](a, b T) int {
	if a < b {
		return -1
	}
	return 1
}

// keyed is a candidate's key with its ID, the last tie-break.
type keyed struct {
	Candidate
	id string
}

func keyedLess(a, b *keyed) bool {
	if c := compareKeys(&a.Candidate, &b.Candidate); c != 0 {
		return c < 0
	}
	return strings.Compare(a.id, b.id) < 0
}
