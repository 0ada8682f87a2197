package allot_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/allot-sched/allot"
)

// exampleCluster is one node of 8 GPUs; a low-priority training job holds
// half of it, and the queue lets higher priorities preempt lower ones.
func exampleCluster(twoPhase bool) *allot.Snapshot {
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "h100"}},
		Nodes:     []allot.Node{{Name: "n0", Flavor: "h100", Capacity: allot.Resources{"gpu": 8}}},
		Queues: []allot.Queue{{Name: "team-a", Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"},
			Quota: []allot.FlavorQuota{{Flavor: "h100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}}},
		Running: []allot.Workload{{ID: "train", Queue: "team-a", PodSets: []allot.PodSet{{Name: "w", Count: 1, Flavor: "h100",
			PerPod: allot.Resources{"gpu": 4}, Nodes: []string{"n0"}, GPUIndices: [][]int{{0, 1, 2, 3}}}}}},
		Options: allot.Options{TwoPhasePreemption: twoPhase},
		Now:     600,
	}
	s, err := b.Build()
	if err != nil {
		panic(err)
	}
	return s
}

// A webhook decides and sends the decision as JSON; a controller with a
// store of its own decodes and commits it. A decision changed on the way
// is refused.
func ExampleDecision_MarshalJSON() {
	webhook := allot.NewStore(exampleCluster(false))
	d := allot.Decide(webhook.Load(), allot.Request{ID: "serve", Queue: "team-a",
		PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 4}}}})
	wire, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}

	controller := allot.NewStore(exampleCluster(false))
	var got allot.Decision
	if err := json.Unmarshal(wire, &got); err != nil {
		panic(err)
	}
	fmt.Println(got.Request().ID, got.Verdict, got.Placement[0].Node, got.Placement[0].GPUs)
	tampered := got.Clone()
	tampered.Placement[0].GPUs = 0b1111 // GPUs train holds
	_, err = controller.Commit(tampered)
	fmt.Println(errors.Is(err, allot.ErrConflict))
	s, err := controller.Commit(got)
	fmt.Println(err, s.RunningIDs())
	// Output:
	// serve Admit n0 [4 5 6 7]
	// true
	// <nil> [serve train]
}

// Two-phase preemption: the victim evicts, its GPUs still booked, and the
// preemptor holds its room until the victim has terminated; the audit log
// tells the story.
func ExampleTerminated() {
	store := allot.NewStore(exampleCluster(true))
	d := allot.Decide(store.Load(), allot.Request{ID: "urgent", Queue: "team-a", Priority: 10,
		PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 8}}}})
	s, err := store.Commit(d)
	if err != nil {
		panic(err)
	}
	h, _ := s.Held("urgent")
	preemptor, _, _ := s.Evicting("train")
	fmt.Println("holding", h.Victims, "evicting for", preemptor, "free GPUs", s.FreeGPUs())

	store.Apply(allot.AdvanceTime{Seconds: 30})
	s, _ = store.Apply(allot.Terminated{ID: "train"})
	fmt.Println("running", s.RunningIDs(), "pending", s.PendingIDs())
	for _, r := range store.DrainAudit(nil) {
		fmt.Println(r.At, r.Kind, r.Workload, r.Preemptor, r.Reason, r.LostGPUSeconds)
	}
	// Output:
	// holding [train] evicting for urgent free GPUs 0
	// running [urgent] pending [train]
	// 600 evicted train urgent InClusterQueue 2400
	// 600 held urgent   0
	// 630 terminated train  Terminated 0
	// 630 admitted urgent   0
}
