package allot_test

// Reproduction of a defect (../shared/repro/mutated_request_test.go): Commit
// did not validate the request it carries; Apply(nil) panicked.

import (
	"testing"

	"github.com/allot-sched/allot"
)

func mutatedStore(t *testing.T) *allot.Store {
	t.Helper()
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Nodes:     []allot.Node{{Name: "n0", Flavor: "f", Capacity: allot.Resources{"gpu": 8}}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}}},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return allot.NewStore(s)
}

// A request changed after Decide (the docs forbid it) is validated again
// by Commit: count -1 panicked, count 0 committed a pod-less workload.
func TestCommitMutatedRequest(t *testing.T) {
	for _, count := range []int32{-1, 0} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("count -> %d: PANIC: %v", count, p)
				}
			}()
			st := mutatedStore(t)
			r := allot.Request{ID: "m", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 2, PerPod: allot.Resources{}}}}
			d := allot.Decide(st.Load(), r)
			r.PodSets[0].Count = count // shares the decision's pod set slice
			_, err := st.Commit(d)
			t.Logf("count -> %d: Commit err=%v, running=%v", count, err, st.Load().RunningIDs())
			st.Load().Running("m")
		}()
	}
}

func TestApplyNil(t *testing.T) {
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("Apply(nil): PANIC: %v", p)
		}
	}()
	st := mutatedStore(t)
	_, err := st.Apply(nil)
	t.Logf("Apply(nil): %v", err)
}
