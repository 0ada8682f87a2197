// The admitted workloads' set: by ID, and beside it the preemption index,
// kept in step by every write once a preemption search has asked for it.

package allot

import (
	"sync/atomic"

	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/preempt"
)

// runningSet is the admitted workloads by ID with the preemption search's
// index of them (preempt.Index). Every write to the set goes through the
// methods here, which write the index too while it is kept, so that no
// event can leave the two apart. Reads go to the set by ID.
//
// A set starts without the index (Build, and a store's master), so that
// a snapshot that is never searched for victims, or holds too few
// admitted workloads for the index to beat a scan, pays nothing for it: not
// Build (sorting and writing a tree of every admitted workload), not a
// commit (a third of an allocation), not a finish (three path copies).
// The first search on a version builds an index of it, which the searches
// on that version share, and asks for one (lazy, which the versions share);
// a store's master, or any copy that writes its set, then builds its own at
// its next write or publish and keeps it from then on.
type runningSet struct {
	cow.Buffered[*running]
	victims preempt.Index // while kept
	kept    bool
	lazy    *lazyIndex
	cost    preempt.Cost // what sizes a booking in the index
	// indexFrom is how many admitted workloads make a search ask for the
	// index (preempt.IndexFrom), readBound the search's (0: preempt's
	// default); tests lower both to reach the index on small worlds.
	indexFrom, readBound int
	// takeable counts the workloads a preemption search may take
	// (preempt.Takeable): with none, every search finds no victim.
	takeable int
}

// lazyIndex is what the versions of a set that keeps no index share: want,
// raised by the first search, and the index last built for a search, with
// the version it indexes (which it keeps in memory until the next one), so
// that the searches on one version build one.
type lazyIndex struct {
	want atomic.Bool
	last atomic.Pointer[builtIndex]
}

type builtIndex struct {
	of *Snapshot
	x  preempt.Index
}

// newRunningSet is Build's empty set.
func newRunningSet(c preempt.Cost) runningSet {
	return runningSet{Buffered: cow.NewBuffered(func(a, b *running) bool { return a.ID < b.ID }), lazy: new(lazyIndex), cost: c,
		indexFrom: preempt.IndexFrom}
}

// booking is what the search reads of an admitted workload.
func (r *running) booking() *view.Booking { return &r.Booking }

// admitted is what a search on s by queue q, whose set rs is, reads: the
// index when rs keeps one or holds enough workloads to want one, else the
// set alone, which the search scans.
func (rs *runningSet) admitted(s *Snapshot, q int32) preempt.Admitted[*running] {
	a := preempt.Admitted[*running]{Set: &rs.Buffered, Booking: (*running).booking, Room: int(s.runCount[q]), ReadBound: rs.readBound,
		NoneTakeable: rs.noneTakeable()}
	if a.NoneTakeable {
		return a // the search reads nothing
	}
	if rs.kept || rs.Len() >= rs.indexFrom {
		a.Index = rs.index(s)
	}
	return a
}

// noneTakeable reports whether no admitted workload may be a victim
// (preempt.Takeable): every one is pinned, or there are none.
func (rs *runningSet) noneTakeable() bool { return rs.takeable == 0 }

// count adds (sign 1) or removes (-1) r from the takeable count.
func (rs *runningSet) count(r *running, sign int) {
	if preempt.Takeable(&r.Booking) {
		rs.takeable += sign
	}
}

// Load fills the empty set with records sorted by ID and distinct
// (cow.Buffered's Load), counting them.
func (rs *runningSet) Load(records []*running) {
	rs.catchUp()
	rs.Buffered.Load(records)
	for _, r := range records {
		rs.count(r, 1)
		if rs.kept {
			rs.victims.Insert(&r.Booking)
		}
	}
}

// unkeep drops the index until a search on one of the versions to come
// wants it (a store's master).
func (rs *runningSet) unkeep() {
	rs.victims, rs.kept, rs.lazy = preempt.Index{}, false, new(lazyIndex)
}

// index is the index for a search on s, whose set rs is: the kept one, or
// else the one last built for s, or one built now, which asks the master
// to keep one. Once want is raised, every version that writes its set
// keeps an index first (catchUp): one that keeps none has not changed
// since, and an index built of it stays right.
func (rs *runningSet) index(s *Snapshot) *preempt.Index {
	if rs.kept {
		return &rs.victims
	}
	rs.lazy.want.Store(true)
	if last := rs.lazy.last.Load(); last != nil && last.of == s {
		return &last.x
	}
	last := &builtIndex{of: s, x: rs.build()}
	rs.lazy.last.Store(last)
	return &last.x
}

// build indexes the set as it is.
func (rs *runningSet) build() preempt.Index {
	bookings := make([]*view.Booking, 0, rs.Len())
	rs.Buffered.Scan(func(r *running) bool {
		bookings = append(bookings, &r.Booking)
		return true
	})
	return preempt.IndexOf(rs.cost, bookings)
}

// catchUp starts keeping the index, before a write, once a search wanted
// it.
func (rs *runningSet) catchUp() {
	if !rs.kept && rs.lazy.want.Load() {
		rs.victims, rs.kept = rs.build(), true
	}
}

// Insert adds r, which the caller knows is not in the set.
func (rs *runningSet) Insert(r *running) {
	rs.catchUp()
	rs.Buffered.Insert(r)
	rs.count(r, 1)
	if rs.kept {
		rs.victims.Insert(&r.Booking)
	}
}

// Set inserts r or replaces the record of its ID, and returns that one.
func (rs *runningSet) Set(r *running) (*running, bool) {
	rs.catchUp()
	old, replaced := rs.Buffered.Set(r)
	if replaced {
		rs.count(old, -1)
	}
	rs.count(r, 1)
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
	if ok {
		rs.count(old, -1)
	}
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
		if changed {
			rs.count(r, -1)
			rs.count(c, 1)
		}
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
