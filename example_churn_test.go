package allot_test

import (
	"errors"
	"fmt"

	"github.com/allot-sched/allot"
)

// churnExample is two 8-GPU nodes in a rack, one running a 4-GPU
// workload admitted an hour ago.
func churnExample() *allot.Snapshot {
	b := allot.Builder{
		Now:       3600,
		Resources: []string{"gpu"},
		Levels:    []string{"rack"},
		Flavors:   []allot.Flavor{{Name: "h100"}},
		Nodes: []allot.Node{
			{Name: "n0", Flavor: "h100", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8}},
			{Name: "n1", Flavor: "h100", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8}},
		},
		Queues: []allot.Queue{{Name: "team-a", Quota: []allot.FlavorQuota{{Flavor: "h100",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 16}}}}}},
		Running: []allot.Workload{{ID: "train", Queue: "team-a", PodSets: []allot.PodSet{{
			Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 4}, Flavor: "h100", Nodes: []string{"n0"}}}}},
	}
	snap, err := b.Build()
	if err != nil {
		panic(err)
	}
	return snap
}

// A node leaves the cluster for good and another loses half its GPUs: the
// workload on the first is evicted and waits again, the eviction recorded
// with the work it lost; the second is described anew from what Node
// reads. A queue goes once it runs nothing, its waiting workloads with it.
func ExampleRemoveNode() {
	store := allot.NewStore(churnExample())
	_, err := store.Apply(allot.RemoveQueue{Queue: "team-a"})
	var inUse *allot.InUseError
	fmt.Println(errors.As(err, &inUse), inUse.Running)

	snap, err := store.Apply(allot.RemoveNode{Node: "n0"})
	if err != nil {
		panic(err)
	}
	ev := snap.Evictions()[0]
	fmt.Println(snap.PendingIDs(), ev.ID, ev.Reason, ev.LostGPUSeconds)

	n1, _ := snap.Node("n1")
	n1.Capacity["gpu"] = 4
	if snap, err = store.Apply(allot.SetNode{Node: n1}); err != nil {
		panic(err)
	}
	st, _ := snap.NodeStatus("n1")
	fmt.Println(snap.FreeGPUs(), st.FreeGPUs, st.Usable)

	if snap, err = store.Apply(allot.RemoveQueue{Queue: "team-a"}); err != nil {
		panic(err)
	}
	fmt.Println(len(snap.Queues()), snap.NumPending())
	// Output:
	// true [train]
	// [train] train NodeRemoved 14400
	// 4 [0 1 2 3] true
	// 0 0
}

// A snapshot saved as its Builder builds again to a snapshot that decides
// as it does.
func ExampleSnapshot_Builder() {
	snap := churnExample()
	saved := snap.Builder()
	again, err := saved.Build()
	if err != nil {
		panic(err)
	}
	req := allot.Request{ID: "eval", Queue: "team-a", PodSets: []allot.PodSet{{Name: "w", Count: 2, PerPod: allot.Resources{"gpu": 4}}}}
	a, b := allot.Decide(snap, req), allot.Decide(again, req)
	fmt.Println(a.Message)
	fmt.Println(b.Message == a.Message, saved.Running[0].PodSets[0].GPUIndices)
	q, _ := again.QueueStatus("team-a")
	fmt.Println(q.Quota[0].Flavor, q.Quota[0].Resources[0].Used, q.Quota[0].Resources[0].Available)
	// Output:
	// admitted on h100: gpu 12/16 of nominal after admission; 2 pods on 1 node n1
	// true [[0 1 2 3]]
	// h100 4 12
}
