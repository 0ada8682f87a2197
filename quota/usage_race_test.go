package quota

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

// One writer changes the master Usage and publishes clones; readers query
// and Recompute their clones at the same time. Under -race this shows that
// writes never touch a published row, and every published version is
// consistent (its cohort rows are the from-scratch ones).
func TestUsageSnapshotsAreIndependent(t *testing.T) {
	tr := hierarchy(t)
	queues := []int32{hA1, hA2, hB1, hB2}
	var published atomic.Pointer[Usage]
	master := tr.NewUsage()
	first := master.Clone()
	published.Store(&first)

	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for range 2 {
		wg.Add(1) // not wg.Go: the module's Go floor is 1.24
		go func() {
			defer wg.Done()
			for !done.Load() {
				snap := *published.Load()
				for _, q := range queues {
					if a, p := tr.Available(snap, q, 0), tr.PotentialAvailable(q, 0); a > p {
						errs <- "Available above PotentialAvailable"
						return
					}
				}
				fresh := snap.Clone()
				if err := tr.Recompute(fresh); err != nil {
					errs <- err.Error()
					return
				}
				for n := range fresh {
					if !slices.Equal(fresh[n], snap[n]) {
						errs <- "a published version is inconsistent"
						return
					}
				}
			}
		}()
	}
	rng := rand.New(rand.NewPCG(7, 7))
	var live []admitted
	for range 3000 {
		if len(live) > 0 && rng.IntN(2) == 0 {
			i := rng.IntN(len(live))
			a := live[i]
			live = slices.Delete(live, i, i+1)
			tr.AddVec(master, a.q, 0, a.vec, -1)
		} else {
			a := admitted{q: queues[rng.IntN(len(queues))], vec: res.Vec{rng.Int64N(6)}}
			live = append(live, a)
			tr.AddVec(master, a.q, 0, a.vec, 1)
		}
		snap := master.Clone()
		published.Store(&snap)
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
