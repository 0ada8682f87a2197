package examples_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/audit"
)

// The cluster's objects as allot reads them: nvidia.com/gpu is the GPU,
// quantity strings are read by Kubernetes' rules into base units (cpu in
// millicores, memory in bytes), ephemeral-storage is ignored; a gang that
// must share a rack is placed pod by pod, GPU by GPU.
func Example_kubernetes() {
	c := theCluster()
	b, err := c.builder(0)
	if err != nil {
		panic(err)
	}
	snap, err := b.Build()
	if err != nil {
		panic(err)
	}
	req, err := c.request(job("train", 0, 2, 8, rackLabel))
	if err != nil {
		panic(err)
	}
	fmt.Println(req.ID, "on", req.Queue, "asks per pod for", req.PodSets[0].PerPod)
	d := allot.Decide(snap, req)
	fmt.Println(d.Verdict, d.Message)
	for _, p := range d.Placement {
		fmt.Println(p.PodSet, p.Pod, p.Node, p.GPUs)
	}
	// Output:
	// ml/train on team-a asks per pod for map[cpu:24500 ephemeral-storage:107374182400 memory:215285235712 nvidia.com/gpu:8]
	// Admit admitted on h100: nvidia.com/gpu 16/32 of nominal after admission; 2 pods on 2 nodes in topology.example.com/rack r0
	// workers 0 gpu-0 [0 1 2 3 4 5 6 7]
	// workers 1 gpu-1 [0 1 2 3 4 5 6 7]
}

// A webhook decides; the decision travels as JSON, with its request, to
// the controller that owns the store, which commits it. With two-phase
// preemption the victim evicts with its GPUs still booked while the
// preemptor holds its room; Terminated says it is gone. The audit log,
// drained, is written as JSON Lines.
func Example_twoPhasePreemption() {
	c := theCluster()
	b, _ := c.builder(0)
	b.Options.TwoPhasePreemption = true
	snap, err := b.Build()
	if err != nil {
		panic(err)
	}
	store := allot.NewStore(snap)
	train, _ := c.request(job("train", 0, 3, 8, ""))
	if _, err := store.Commit(allot.Decide(store.Load(), train)); err != nil {
		panic(err)
	}
	store.Apply(allot.AdvanceTime{Seconds: 600})

	urgent, _ := c.request(job("urgent", 100, 1, 8, ""))
	wire, _ := json.Marshal(allot.Decide(store.Load(), urgent)) // the webhook's answer
	var d allot.Decision
	if err := json.Unmarshal(wire, &d); err != nil {
		panic(err)
	}
	s, err := store.Commit(d)
	if err != nil {
		panic(err)
	}
	h, _ := s.Held(urgent.ID)
	fmt.Println(d.Verdict, d.Request().ID, "holds", h.Workload.PodSets[0].Nodes, "waiting for", h.Victims, "free GPUs", s.FreeGPUs())

	store.Apply(allot.AdvanceTime{Seconds: 45})
	s, _ = store.Apply(allot.Terminated{ID: train.ID})
	fmt.Println("running", s.RunningIDs(), "pending", s.PendingIDs(), "free GPUs", s.FreeGPUs())

	if _, err := audit.NewWriter(os.Stdout).Drain(store); err != nil {
		panic(err)
	}
	// Output:
	// Preempt ml/urgent holds [gpu-0] waiting for [ml/train] free GPUs 0
	// running [ml/urgent] pending [ml/train] free GPUs 16
	// {"seq":1,"kind":"admitted","version":1,"at":0,"workload":"ml/train","queue":"team-a","priority":0}
	// {"seq":2,"kind":"evicted","version":3,"at":600,"workload":"ml/train","queue":"team-a","priority":0,"preemptor":"ml/urgent","reason":"InClusterQueue","policy":"withinQueue: LowerPriority","lostGpuSeconds":14400}
	// {"seq":3,"kind":"held","version":3,"at":600,"workload":"ml/urgent","queue":"team-a","priority":100,"victims":["ml/train"]}
	// {"seq":4,"kind":"terminated","version":5,"at":645,"workload":"ml/train","queue":"team-a","priority":0,"reason":"Terminated"}
	// {"seq":5,"kind":"admitted","version":5,"at":645,"workload":"ml/urgent","queue":"team-a","priority":100,"victims":["ml/train"]}
}
