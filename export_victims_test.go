package allot

import (
	"fmt"

	"github.com/allot-sched/allot/internal/view"
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
