package health_test

import (
	"fmt"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/health"
)

// Two 8-GPU nodes, one half used; a 6-GPU pod waits for its node since
// 100 s: neither node's free GPUs can take it.
func ExampleMeasure() {
	node := func(name string) allot.Node {
		return allot.Node{Name: name, Flavor: "h100", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8}}
	}
	b := allot.Builder{
		Now: 500, Resources: []string{"gpu"}, Levels: []string{"rack"}, Flavors: []allot.Flavor{{Name: "h100"}},
		Nodes: []allot.Node{node("n0"), node("n1")},
		Queues: []allot.Queue{{Name: "train", Quota: []allot.FlavorQuota{{Flavor: "h100",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 16}}}}}},
		Running: []allot.Workload{{ID: "a", Queue: "train", PodSets: []allot.PodSet{
			{Name: "main", Count: 2, PerPod: allot.Resources{"gpu": 4}, Flavor: "h100", Nodes: []string{"n0", "n1"}}}}},
		Pending: []allot.Workload{{ID: "b", Queue: "train", PriorityClass: "batch", SubmittedAt: 400,
			PodSets: []allot.PodSet{{Name: "main", Count: 1, PerPod: allot.Resources{"gpu": 6}}}}},
	}
	snap, err := b.Build()
	if err != nil {
		panic(err)
	}
	f := health.Measure(snap)
	fmt.Printf("%s %.2f\n", health.GPUUtilization, f.GPUUtilization)
	fmt.Printf("%s %v\n", health.FragmentationNodeShare, f.Fragmentation.NodeShare)
	fmt.Printf("%s %v\n", health.FragmentationStrandedShare, f.Fragmentation.StrandedShare)
	for _, w := range f.Waits {
		fmt.Printf("%s{%s=%q} median %v\n", health.QueueWait, health.LabelPriorityClass, w.Class, w.Median)
	}
	for _, q := range f.Queues {
		fmt.Printf("%s: admitted %d, pending %d\n", q.Queue, q.Admitted, q.Pending)
	}
	// Output:
	// allot_gpu_utilization 0.50
	// allot_fragmentation_node_share 1
	// allot_fragmentation_stranded_share 1
	// allot_queue_wait_seconds{priority_class="batch"} median 100
	// train: admitted 1, pending 1
}
