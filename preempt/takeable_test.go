package preempt

import (
	"math/rand/v2"
	"testing"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/view"
)

// TestNoneTakeableFindsNone: on random worlds (randomSearch) whose
// workloads are all pinned, or most or half of them, the full search, by
// every way of reading the workloads, finds no victim wherever no
// workload is Takeable; and Find and Simulate told NoneTakeable, set
// exactly when none is, answer what they answer untold.
func TestNoneTakeableFindsNone(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(2026, 33))
	none, found := 0, 0
	for c := range n {
		w, idx, p, pol := randomSearch(t, rng, []float64{1, 1, 0.9, 0.5}[rng.IntN(4)])
		noneTakeable := true
		idx.Scan(func(b *view.Booking) bool {
			noneTakeable = noneTakeable && !Takeable(b)
			return true
		})
		if noneTakeable && idx.Len() > 0 {
			none++
		}
		fr := w.Tree.FR(0, gpu)
		for _, way := range readWays(&idx) {
			full, fullOK := Find(w, p, new(gang.Placer), way.Admitted)
			if noneTakeable && fullOK {
				t.Fatalf("case %d, %s: every workload pinned, yet the search found %s", c, way.name, renderResult(full, fullOK))
			}
			if fullOK {
				found++
			}
			told := way.Admitted
			told.NoneTakeable = noneTakeable
			got, ok := Find(w, p, new(gang.Placer), told)
			if g, f := renderResult(got, ok), renderResult(full, fullOK); g != f {
				t.Fatalf("case %d, %s (policies %+v, fair %v): told NoneTakeable %v: %s, the full search: %s", c, way.name, pol, w.Fair.Enabled, noneTakeable, g, f)
			}
			fullPoss, fullLevel := Simulate(w, p, fr, p.Need[0][gpu], new(gang.Placer), way.Admitted)
			poss, level := Simulate(w, p, fr, p.Need[0][gpu], new(gang.Placer), told)
			if poss != fullPoss || level != fullLevel {
				t.Fatalf("case %d, %s: Simulate told NoneTakeable %v: %d level %d, untold: %d level %d", c, way.name, noneTakeable, poss, level, fullPoss, fullLevel)
			}
		}
	}
	t.Logf("%d worlds, %d with workloads and none takeable, %d searches with victims", n, none, found)
	if none < n/4 || found < n/10 {
		t.Errorf("%d worlds with none takeable and %d searches with victims of %d worlds: the test reaches too little", none, found, n)
	}
}
