package allot_test

// Reproduction of a defect (../shared/repro/stale_preempt_test.go): a stale
// Preempt decision evicted victims no longer needed.

import (
	"testing"

	"github.com/allot-sched/allot"
)

// A Preempt decision committed after the room it needed came free anyway
// must not evict its victims.
func TestStalePreempt(t *testing.T) {
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Nodes: []allot.Node{
			{Name: "n0", Flavor: "f", Capacity: allot.Resources{"gpu": 8}},
			{Name: "n1", Flavor: "f", Capacity: allot.Resources{"gpu": 8}},
		},
		Queues: []allot.Queue{{Name: "q", Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"},
			Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 16}}}}}},
		Running: []allot.Workload{
			{ID: "v", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 8}, Flavor: "f", Nodes: []string{"n0"}}}},
			{ID: "x", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 8}, Flavor: "f", Nodes: []string{"n1"}}}},
		},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(s)
	p := allot.Request{ID: "p", Queue: "q", Priority: 10, PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 8}}}}
	d := allot.Decide(st.Load(), p) // Preempt, victim v
	t.Logf("v0: %v %v victims=%v placement=%v", d.Verdict, d.Reason, d.Victims, d.Placement)
	st.Apply(allot.Finish{ID: "x"}) // n1 is now idle
	t.Logf("after Finish x a fresh Decide says: %v %v", allot.Decide(st.Load(), p).Verdict, allot.Decide(st.Load(), p).Reason)
	_, err = st.Commit(d)
	t.Logf("stale Preempt commit: err=%v evictions=%v running=%v free GPUs=%d", err, st.Load().Evictions(), st.Load().RunningIDs(), st.Load().FreeGPUs())
	if err == nil && len(st.Load().Evictions()) > 0 {
		t.Errorf("v was evicted though p fits on idle n1")
	}
}
