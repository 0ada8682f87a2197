package allot_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/allot-sched/allot"
)

// storeExample is two 8-GPU nodes in a rack and one queue of 16 GPUs
// whose higher priorities may preempt lower ones; a checkpointable
// training job of priority 0 has run on n0 since t=0, and it is now
// t=3600.
func storeExample() *allot.Snapshot {
	b := allot.Builder{
		Now:       3600,
		Resources: []string{"gpu"},
		Levels:    []string{"rack"},
		Flavors:   []allot.Flavor{{Name: "h100"}},
		Nodes: []allot.Node{
			{Name: "n0", Flavor: "h100", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8}},
			{Name: "n1", Flavor: "h100", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8}},
		},
		Queues: []allot.Queue{{Name: "team-a", Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"},
			Quota: []allot.FlavorQuota{{Flavor: "h100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 16}}}}}},
		Running: []allot.Workload{{ID: "train", Queue: "team-a", Preemption: allot.PreemptionSpec{Class: allot.Checkpointable},
			PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 8}, Flavor: "h100", Nodes: []string{"n0"}}}}},
	}
	snap, err := b.Build()
	if err != nil {
		panic(err)
	}
	return snap
}

// Events change the cluster one version at a time: a checkpoint, the
// clock, a node failing, an eviction (which records the work lost since
// the checkpoint), a workload submitted and finished. An event the store
// refuses changes nothing.
func ExampleStore_Apply() {
	store := allot.NewStore(storeExample())
	show := func(what string, s *allot.Snapshot) {
		fmt.Printf("%-14s v%d t=%d running %v pending %v free %d\n", what, s.Version(), s.Now(), s.RunningIDs(), s.PendingIDs(), s.FreeGPUs())
	}
	apply := func(what string, ev allot.Event) {
		s, err := store.Apply(ev)
		if err != nil {
			fmt.Printf("%-14s refused: %v\n", what, err)
			return
		}
		show(what, s)
	}
	apply("checkpoint", allot.Checkpoint{ID: "train"})
	apply("advance", allot.AdvanceTime{Seconds: 600})
	apply("node down", allot.NodeDown{Node: "n0"})
	apply("evict", allot.Evict{ID: "train"})
	ev := store.Load().Evictions()[0]
	fmt.Printf("evicted %s at t=%d, losing %d GPU-seconds (10 minutes of 8 GPUs)\n", ev.ID, ev.At, ev.LostGPUSeconds)
	apply("finish", allot.Finish{ID: "train"})
	apply("submit", allot.Submit{Workload: allot.Workload{ID: "eval", Queue: "team-a", SubmittedAt: 4200,
		PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 2}}}}})
	apply("node up", allot.NodeUp{Node: "n0"})
	// Output:
	// checkpoint     v1 t=3600 running [train] pending [] free 8
	// advance        v2 t=4200 running [train] pending [] free 8
	// node down      v3 t=4200 running [train] pending [] free 8
	// evict          v4 t=4200 running [] pending [train] free 16
	// evicted train at t=4200, losing 4800 GPU-seconds (10 minutes of 8 GPUs)
	// finish         refused: allot: unknown workload: "train" is not running
	// submit         v5 t=4200 running [] pending [eval train] free 16
	// node up        v6 t=4200 running [] pending [eval train] free 16
}

// A higher-priority request preempts: the decision names each victim with
// the policy that allowed it and the work it loses, and Commit evicts them
// and admits the request. A decision the store has moved past is refused
// with a *ConflictError, never double-booked.
func ExampleStore_Commit() {
	store := allot.NewStore(storeExample())
	urgent := allot.Request{ID: "urgent", Queue: "team-a", Priority: 10,
		PodSets: []allot.PodSet{{Name: "w", Count: 2, PerPod: allot.Resources{"gpu": 8}, Topology: allot.TopologyRequest{Required: "rack"}}}}
	d := allot.Decide(store.Load(), urgent)
	fmt.Println(d.Verdict, d.Reason, d.Message)
	for _, v := range d.Victims {
		fmt.Printf("victim %s (%s, %s): loses %d GPU-seconds\n", v.ID, v.Reason, v.Policy, v.LostGPUSeconds)
	}

	// A decision made on the same version, to be committed after this one.
	late := allot.Decide(store.Load(), allot.Request{ID: "late", Queue: "team-a",
		PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 4}}}})

	s, err := store.Commit(d)
	if err != nil {
		panic(err)
	}
	fmt.Println("running", s.RunningIDs(), "pending", s.PendingIDs(), "evictions", len(s.Evictions()))

	_, err = store.Commit(late)
	var conflict *allot.ConflictError
	fmt.Println(errors.Is(err, allot.ErrConflict), errors.As(err, &conflict), conflict.DecidedOn, conflict.Current)
	// Output:
	// Preempt PriorityPreemption evicting 1 workload (train) lets the request fit on h100; they lose 28800 GPU-seconds of work
	// victim train (InClusterQueue, withinQueue: LowerPriority): loses 28800 GPU-seconds
	// running [urgent] pending [train] evictions 1
	// true true 0 1
}

// The scheduling loop decides the pending workloads in turn and commits
// what it admits; ScheduleFunc hands over each decision as it is made. The
// trail of the one that waits lists what passed (its quota) before what
// did not (the nodes).
func ExampleScheduleFunc() {
	b := storeExample().Builder()
	b.Pending = []allot.Workload{
		{ID: "big", Queue: "team-a", SubmittedAt: 100, PodSets: []allot.PodSet{{Name: "w", Count: 2, PerPod: allot.Resources{"gpu": 8}}}},
		{ID: "small", Queue: "team-a", SubmittedAt: 200, PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 4}}}},
	}
	b.Queues[0].Quota[0].Resources[0].Nominal = 32
	b.Options.Backfill = new(bool) // no reservation for big: small may start
	snap, err := b.Build()
	if err != nil {
		panic(err)
	}
	store := allot.NewStore(snap)
	fmt.Println("order", allot.Order(snap))
	allot.ScheduleFunc(store, func(d *allot.Decision) {
		var trail []string
		for _, c := range d.Trail {
			mark := "-"
			if c.Passed {
				mark = "+"
			}
			trail = append(trail, c.Stage.String()+mark)
		}
		fmt.Printf("%s: %v %v [%s]\n", d.Workload, d.Verdict, d.Reason, strings.Join(trail, " "))
		if d.Verdict == allot.VerdictQueue {
			for _, c := range d.Trail[3:] {
				fmt.Printf("  %s: %s\n", c.Stage, c.Detail)
			}
		}
	})
	fmt.Println("running", store.Load().RunningIDs(), "pending", store.Load().PendingIDs())
	// Output:
	// order [big small]
	// big: Queue InsufficientCapacity [validate+ authorize+ hold+ quota+ placement-]
	//   quota: h100: gpu 24/32 of nominal after admission
	//   placement: h100 has 8 gpu free on usable nodes, the request needs 16
	// small: Admit Fits [validate+ authorize+ hold+ quota+ placement+]
	// running [small train] pending [big]
}

// Resources read Kubernetes quantity strings from JSON beside numbers in
// base units: cpu in millicores, memory in bytes, GPUs whole.
func ExampleResources_UnmarshalJSON() {
	var perPod allot.Resources
	err := perPod.UnmarshalJSON([]byte(`{"nvidia.com/gpu": "8", "cpu": "1500m", "memory": "16Gi", "ephemeral-storage": 1000}`))
	fmt.Println(perPod["nvidia.com/gpu"], perPod["cpu"], perPod["memory"], perPod["ephemeral-storage"], err)
	err = perPod.UnmarshalJSON([]byte(`{"nvidia.com/gpu": "0.5"}`))
	fmt.Println(err)
	// Output:
	// 8 1500 17179869184 1000 <nil>
	// allot: resource "nvidia.com/gpu": quantity: not a whole number: "0.5": nvidia.com/gpu must be whole
}
