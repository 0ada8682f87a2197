package allot_test

// Schedule must not evict r for s and s for r again and again in one call:
// S (queue qb) evicted R (queue qa) to get a placement on flavor b, taking
// R as a cohort victim because qa borrows on flavor a (R itself holds only
// b); then R evicted S to reclaim qa's nominal quota on b. Reproduction:
// ../shared/repro/pingpong_test.go.

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
)

func pingPongGPU(n int64) allot.Resources { return allot.Resources{"gpu": n} }

// pingPongBuilder is the reproduction's world: qa borrows on flavor a
// (through x) and holds nb0 within its nominal quota on b (through r); s
// needs a placement on b.
func pingPongBuilder() allot.Builder {
	gpu := pingPongGPU
	quota := func(a, b int64) []allot.FlavorQuota {
		return []allot.FlavorQuota{
			{Flavor: "a", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: a}}},
			{Flavor: "b", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: b}}}}
	}
	return allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "a"}, {Name: "b"}},
		Nodes: []allot.Node{
			{Name: "na0", Flavor: "a", Capacity: gpu(8)},
			{Name: "nb0", Flavor: "b", Capacity: gpu(8)},
		},
		Cohorts: []allot.Cohort{{Name: "ml"}},
		Queues: []allot.Queue{
			{Name: "qa", Cohort: "ml", Quota: quota(0, 16),
				Preemption: allot.QueuePreemption{ReclaimWithinCohort: "Any"}},
			{Name: "qb", Cohort: "ml", Quota: quota(16, 0),
				Preemption: allot.QueuePreemption{ReclaimWithinCohort: "LowerPriority",
					BorrowWithinCohort: allot.BorrowWithinCohort{Policy: "LowerPriority"}}},
		},
		Running: []allot.Workload{
			// qa borrows on flavor a (nominal 0) ...
			{ID: "x", Queue: "qa", Priority: 5, PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: gpu(4), Flavor: "a", Nodes: []string{"na0"}}}},
			// ... while r holds nb0 within qa's nominal on b.
			{ID: "r", Queue: "qa", Priority: 1, PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: gpu(8), Flavor: "b", Nodes: []string{"nb0"}}}},
		},
		Pending: []allot.Workload{
			{ID: "s", Queue: "qb", Priority: 3, PodSets: []allot.PodSet{
				{Name: "small", Count: 1, PerPod: gpu(4)},
				{Name: "big", Count: 1, PerPod: gpu(8)}}},
		},
	}
}

func TestSchedulePingPong(t *testing.T) {
	bld := pingPongBuilder()
	snap, err := bld.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(snap)
	n := 0
	allot.ScheduleFunc(st, func(d *allot.Decision) {
		n++
		if n <= 4 {
			var v []string
			for _, x := range d.Victims {
				v = append(v, x.ID+" ("+x.Reason+")")
			}
			t.Logf("decision %d: %s %v %v flavors=%v victims=%v", n, d.Workload, d.Verdict, d.Reason, d.Flavors, v)
		}
	})
	ev := st.Load().Evictions()
	per := map[string]int{}
	for _, e := range ev {
		per[e.ID]++
	}
	t.Logf("one Schedule call: %d decisions, %d evictions %v; running=%v pending=%v", n, len(ev), per, st.Load().RunningIDs(), st.Load().PendingIDs())
	if per["r"] > 1 || per["s"] > 1 {
		t.Errorf("preemption ping-pong: r evicted %d times, s %d times in one Schedule call", per["r"], per["s"])
	}
}

// TestScheduleEvictsNoWorkloadTwice runs one Schedule call over the
// ping-pong world and variations of it (fair sharing, priorities, the
// preemptor's shape, the lender's reclaim policy): no workload may be
// evicted twice, which is what a preemption cycle between two queues looks
// like from outside.
func TestScheduleEvictsNoWorkloadTwice(t *testing.T) {
	gpu := pingPongGPU
	shapes := map[string][]allot.PodSet{
		"small+big": {{Name: "small", Count: 1, PerPod: gpu(4)}, {Name: "big", Count: 1, PerPod: gpu(8)}},
		"big":       {{Name: "big", Count: 1, PerPod: gpu(8)}},
		"big+big":   {{Name: "small", Count: 1, PerPod: gpu(8)}, {Name: "big", Count: 1, PerPod: gpu(8)}},
		"4x2":       {{Name: "w", Count: 4, PerPod: gpu(2)}},
	}
	worlds := 0
	for _, fair := range []bool{false, true} {
		for _, sPrio := range []int32{0, 3, 6} {
			for _, xPrio := range []int32{0, 5} {
				for shape, sets := range shapes {
					for _, reclaim := range []string{"Any", "LowerPriority"} {
						b := pingPongBuilder()
						b.FairSharing.Enabled = fair
						b.Pending[0].Priority = sPrio
						b.Pending[0].PodSets = sets
						b.Running[0].Priority = xPrio
						b.Queues[0].Preemption.ReclaimWithinCohort = reclaim
						name := fmt.Sprintf("fair=%v/s=%d/x=%d/shape=%s/reclaim=%s", fair, sPrio, xPrio, shape, reclaim)
						snap, err := b.Build()
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						st := allot.NewStore(snap)
						allot.Schedule(st)
						worlds++
						per := map[string]int{}
						for _, e := range st.Load().Evictions() {
							if per[e.ID]++; per[e.ID] == 2 {
								t.Errorf("%s: %s evicted twice in one Schedule call (evictions %v)", name, e.ID, st.Load().Evictions())
							}
						}
					}
				}
			}
		}
	}
	if worlds != 96 {
		t.Fatalf("ran %d worlds", worlds)
	}
}
