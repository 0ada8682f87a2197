package allot_test

import (
	"fmt"

	"github.com/allot-sched/allot"
)

// A queue with 16 GPUs of nominal quota on two 8-GPU nodes in one rack: a
// 2x4-GPU gang that requires a rack is admitted, committed through the
// store, and a second gang then waits for quota.
func Example() {
	b := allot.Builder{
		Resources: []string{"gpu", "cpu"},
		Levels:    []string{"rack"},
		Flavors:   []allot.Flavor{{Name: "h100"}},
		Nodes: []allot.Node{
			{Name: "n0", Flavor: "h100", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8, "cpu": 64_000}},
			{Name: "n1", Flavor: "h100", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8, "cpu": 64_000}},
		},
		Queues: []allot.Queue{{Name: "team-a", Quota: []allot.FlavorQuota{{Flavor: "h100",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 12}, {Name: "cpu", Nominal: 128_000}}}}}},
	}
	snap, err := b.Build()
	if err != nil {
		panic(err)
	}
	store := allot.NewStore(snap)
	gang := func(id string) allot.Request {
		return allot.Request{ID: id, Queue: "team-a", PodSets: []allot.PodSet{{
			Name: "workers", Count: 2, PerPod: allot.Resources{"gpu": 4, "cpu": 8_000},
			Topology: allot.TopologyRequest{Required: "rack"},
		}}}
	}

	d := allot.Decide(store.Load(), gang("first"))
	fmt.Println(d.Verdict, d.Reason, d.Message)
	for _, p := range d.Placement {
		fmt.Println(p.PodSet, p.Pod, p.Node, p.GPUs)
	}
	if _, err := store.Commit(d); err != nil {
		panic(err)
	}

	d = allot.Decide(store.Load(), gang("second"))
	fmt.Println(d.Verdict, d.Reason, d.Message)
	// Output:
	// Admit Fits admitted on h100: gpu 8/12 of nominal after admission; 2 pods on 1 node n0
	// workers 0 n0 [0 1 2 3]
	// workers 1 n0 [4 5 6 7]
	// Queue QuotaExhausted queue "team-a" uses 8/12 gpu of h100 nominal quota, the request needs 8 and 4 are available
}
