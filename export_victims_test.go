package allot

import (
	"fmt"
	"math"

	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/preempt"
)

// VictimIndex reports whether s keeps the preemption index and, when it
// does, how it differs from one built from s's admitted workloads now (""
// when it does not).
func VictimIndex(s *Snapshot) (kept bool, diff string) {
	if !s.running.kept {
		return false, ""
	}
	var got, want []*view.Booking
	s.running.victims.Scan(func(b *view.Booking) bool { got = append(got, b); return true })
	fresh := s.running.build()
	fresh.Scan(func(b *view.Booking) bool { want = append(want, b); return true })
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return true, fmt.Sprintf("entry %d: missing %s", i, want[i].ID)
		case i >= len(want):
			return true, fmt.Sprintf("entry %d: %s is gone", i, got[i].ID)
		case got[i] != want[i]:
			return true, fmt.Sprintf("entry %d: %s (%+v), want %s (%+v)", i, got[i].ID, *got[i], want[i].ID, *want[i])
		}
	}
	return true, ""
}

// SetVictimIndexFrom makes the searches on s, and on the versions a store
// of s publishes, ask for the preemption index from n admitted workloads
// on, where they ask from preempt.IndexFrom: small worlds then reach it.
// s must not be shared yet.
func SetVictimIndexFrom(s *Snapshot, n int) { s.running.indexFrom = n }

// DecideReading decides r on a private copy of s whose search reads the
// admitted workloads as told: scanned without an index, or from the index
// (kept, or built for the copy alone), scanned after readBound reads (0:
// preempt's default).
func DecideReading(s *Snapshot, r Request, scan bool, readBound int) Decision {
	c := s.private()
	rs := &c.running
	if scan {
		rs.kept, rs.indexFrom = false, math.MaxInt
	} else if rs.indexFrom = 0; !rs.kept {
		rs.lazy = new(lazyIndex)
	}
	rs.readBound = readBound
	return Decide(c, r)
}

// Takeable is how many admitted workloads of s the running set counts as
// takeable by a preemption search, and how many a recount finds.
func Takeable(s *Snapshot) (counted, recounted int) {
	s.running.Scan(func(r *running) bool {
		if preempt.Takeable(&r.Booking) {
			recounted++
		}
		return true
	})
	return s.running.takeable, recounted
}
