package allot

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-sched/allot/fairness"
)

// fillingWorld is a random world for progressive filling's memory: queues
// of one, two or three flavors (some quota-only, some borrowing), in flat
// and nested cohorts, with pending workloads of one or two pod sets.
func fillingWorld(rng *rand.Rand) Builder {
	flavors := []string{"f0", "f1", "f2"}
	b := Builder{Resources: []string{"gpu", "cpu"}, Now: 100, FairSharing: FairSharing{Enabled: true},
		Cohorts: []Cohort{{Name: "root"}, {Name: "left", Parent: "root"}, {Name: "flat"}}}
	for _, f := range flavors {
		b.Flavors = append(b.Flavors, Flavor{Name: f})
	}
	for q := range 6 {
		queue := Queue{Name: fmt.Sprintf("q%d", q), Cohort: []string{"root", "left", "flat"}[rng.IntN(3)]}
		for _, f := range flavors[:1+rng.IntN(3)] {
			queue.Quota = append(queue.Quota, FlavorQuota{Flavor: f, Resources: []ResourceQuota{
				{Name: "gpu", Nominal: rng.Int64N(6)}, {Name: "cpu", Nominal: rng.Int64N(6)}}})
		}
		w := float64(1 + rng.IntN(3))
		queue.FairSharing = &QueueFairSharing{Weight: &w}
		b.Queues = append(b.Queues, queue)
		for k := range rng.IntN(8) {
			ps := []PodSet{{Name: "a", Count: int32(1 + rng.IntN(2)), PerPod: Resources{"gpu": 1 + rng.Int64N(2), "cpu": rng.Int64N(3)}}}
			if rng.IntN(3) == 0 {
				ps = append(ps, PodSet{Name: "b", Count: 1, PerPod: Resources{"cpu": 1 + rng.Int64N(2)}})
			}
			b.Pending = append(b.Pending, Workload{ID: fmt.Sprintf("w%d-%d", q, k), Queue: queue.Name,
				Priority: int32(rng.IntN(2)), SubmittedAt: int64(rng.IntN(20)), PodSets: ps})
		}
	}
	return b
}

// What progressive filling keeps from round to round (heads, keys, the
// standings) gives the order that finding every head and key afresh in
// every round gives: an admission forgets all it may change.
func TestFillingKeepsOnlyWhatHolds(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 11))
	for world := range 200 {
		s, err := func() (*Snapshot, error) { b := fillingWorld(rng); return b.Build() }()
		if err != nil {
			t.Fatalf("world %d: %v", world, err)
		}
		order := func(fresh bool) []string {
			byQueue := make([][]*Workload, len(s.queues))
			s.byQueue.Scan(func(w *Workload) bool {
				byQueue[s.queueIdx[w.Queue]] = append(byQueue[s.queueIdx[w.Queue]], w)
				return true
			})
			u := s.usage.Clone()
			f := newFilling(s)
			var out []string
			for {
				if fresh {
					f.forgetAll()
				}
				q, ok := f.pick(s, u, func(q int32) *Workload {
					if len(byQueue[q]) == 0 {
						return nil
					}
					return byQueue[q][0]
				})
				if !ok {
					return out
				}
				out = append(out, byQueue[q][0].ID)
				fairness.Account(s.rtree, u, q, f.key[q].Charges)
				byQueue[q] = byQueue[q][1:]
				f.admitted(q)
			}
		}
		kept, fresh := order(false), order(true)
		if !slices.Equal(kept, fresh) {
			t.Fatalf("world %d: order with what is kept %v, found afresh %v", world, kept, fresh)
		}
		if got := Order(s); !slices.Equal(got, kept) {
			t.Fatalf("world %d: Order %v, the filling's %v", world, got, kept)
		}
	}
}
