package allot_test

// 200 nodes of cpu 2^56, each within the Builder's bound, hold more than
// MaxInt64 in all: a request that only topology blocks is told
// TopologyUnsatisfiable, not InsufficientCapacity with a negative free cpu
// (as when the per-flavor free total overflowed).

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
)

func TestFlavorFreeOverflow(t *testing.T) {
	b := allot.Builder{
		Resources: []string{"gpu", "cpu"},
		Levels:    []string{"rack"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 1000}, {Name: "cpu", Nominal: 1 << 56}}}}}},
	}
	var busy []string
	for i := range 200 {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: "f",
			Labels: map[string]string{"rack": fmt.Sprintf("r%d", i/10)}, Capacity: allot.Resources{"gpu": 1, "cpu": 1 << 56}})
		if i%2 == 0 {
			busy = append(busy, fmt.Sprintf("n%d", i))
		}
	}
	b.Running = []allot.Workload{{ID: "busy", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 100,
		PerPod: allot.Resources{"gpu": 1}, Flavor: "f", Nodes: busy}}}}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d := allot.Decide(s, allot.Request{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 8,
		PerPod: allot.Resources{"gpu": 1, "cpu": 1}, Topology: allot.TopologyRequest{Required: "rack"}}}})
	t.Logf("%v %v: %s", d.Verdict, d.Reason, d.Message)
	if d.Reason != allot.TopologyUnsatisfiable {
		t.Errorf("want TopologyUnsatisfiable (100 GPUs free, 5 per rack), got %v", d.Reason)
	}
}
