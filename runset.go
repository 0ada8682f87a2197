// The admitted workloads' set: by ID, and beside it the preemption index,
// kept in step by every write once a preemption search has asked for it.

package allot

import (
	"sync/atomic"

	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/preempt"
)

// runningSet is the admitted workloads by ID with the preemption search's
// index of them (preempt.Index). Every write to the set goes through the
// methods here, which write the index too while it is kept, so that no
// event can leave the two apart. Reads go to the set by ID.
//
// A built snapshot keeps the index. A store's master starts without it, so
// that a store that never preempts pays nothing for it (a commit's
// allocations, a finish's three path copies): the first search on one of
// its versions builds an index for itself and raises want, which all the
// store's versions share, and the master builds its own at its next write
// and keeps it from then on.
type runningSet struct {
	cow.Buffered[*running]
	victims preempt.Index // while kept
	kept    bool
	want    *atomic.Bool
	cost    preempt.Cost // what sizes a booking in the index
}

func newRunningSet(c preempt.Cost) runningSet {
	return runningSet{Buffered: cow.NewBuffered(func(a, b *running) bool { return a.ID < b.ID }),
		victims: preempt.NewIndex(c), kept: true, want: new(atomic.Bool), cost: c}
}

// unkeep drops the index until a search wants it (a store's master).
func (rs *runningSet) unkeep() {
	rs.victims, rs.kept, rs.want = preempt.Index{}, false, new(atomic.Bool)
}

// index is the index for a search: the kept one, or else one built now
// for this search alone, which asks the master to keep one.
func (rs *runningSet) index() *preempt.Index {
	if rs.kept {
		return &rs.victims
	}
	rs.want.Store(true)
	x := rs.build()
	return &x
}

// build indexes the set as it is.
func (rs *runningSet) build() preempt.Index {
	x := preempt.NewIndex(rs.cost)
	rs.Buffered.Scan(func(r *running) bool {
		x.Insert(&r.Booking)
		return true
	})
	x.Settle()
	return x
}

// catchUp starts keeping the index, before a write, once a search wanted
// it.
func (rs *runningSet) catchUp() {
	if !rs.kept && rs.want.Load() {
		rs.victims, rs.kept = rs.build(), true
	}
}

// Insert adds r, which the caller knows is not in the set.
func (rs *runningSet) Insert(r *running) {
	rs.catchUp()
	rs.Buffered.Insert(r)
	if rs.kept {
		rs.victims.Insert(&r.Booking)
	}
}

// Set inserts r or replaces the record of its ID, and returns that one.
func (rs *runningSet) Set(r *running) (*running, bool) {
	rs.catchUp()
	old, replaced := rs.Buffered.Set(r)
	if rs.kept {
		if replaced {
			rs.victims.Delete(&old.Booking)
		}
		rs.victims.Insert(&r.Booking)
	}
	return old, replaced
}

// Delete removes the record of r's ID and returns it.
func (rs *runningSet) Delete(r *running) (*running, bool) {
	rs.catchUp()
	old, ok := rs.Buffered.Delete(r)
	if ok && rs.kept {
		rs.victims.Delete(&old.Booking)
	}
	return old, ok
}

// Update is cow.Buffered's Update; the index follows each record fn
// replaces.
func (rs *runningSet) Update(fn func(*running) (*running, bool)) {
	rs.catchUp()
	rs.Buffered.Update(func(r *running) (*running, bool) {
		c, changed := fn(r)
		if changed && rs.kept {
			rs.victims.Delete(&r.Booking)
			rs.victims.Insert(&c.Booking)
		}
		return c, changed
	})
}

// Settle settles the set and the index: a built snapshot is read more
// than written.
func (rs *runningSet) Settle() {
	rs.Buffered.Settle()
	if rs.kept {
		rs.victims.Settle()
	}
}

// CloneAs and Fork are cow.Buffered's, for the set and the index.
func (rs *runningSet) CloneAs(child, parent cow.Owner) runningSet {
	c := *rs
	c.Buffered = rs.Buffered.CloneAs(child, parent)
	if rs.kept {
		c.victims = rs.victims.CloneAs(child, parent)
	}
	return c
}

func (rs *runningSet) Fork() runningSet {
	c := *rs
	c.Buffered = rs.Buffered.Fork()
	if rs.kept {
		c.victims = rs.victims.Fork()
	}
	return c
}
