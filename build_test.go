package allot_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/allot-sched/allot"
)

func baseBuilder() allot.Builder {
	return allot.Builder{
		Resources: []string{"gpu", "cpu"},
		Levels:    []string{"rack"},
		Flavors:   []allot.Flavor{{Name: "h100"}},
		Nodes: []allot.Node{
			{Name: "n0", Flavor: "h100", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8, "cpu": 32_000}, GPUGroups: []int{4, 4}},
			{Name: "n1", Flavor: "h100", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8, "cpu": 32_000}},
		},
		Cohorts: []allot.Cohort{{Name: "root"}, {Name: "ai", Parent: "root"}},
		Queues: []allot.Queue{{Name: "q", Cohort: "ai", Quota: []allot.FlavorQuota{{Flavor: "h100",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 16}}}}}},
	}
}

func running(id, node string, gpus int64, indices ...int) allot.Workload {
	ps := allot.PodSet{Name: "m", Count: 1, Flavor: "h100", Nodes: []string{node}, PerPod: allot.Resources{"gpu": gpus}}
	if len(indices) > 0 {
		ps.GPUIndices = [][]int{indices}
	}
	return allot.Workload{ID: id, Queue: "q", PodSets: []allot.PodSet{ps}}
}

func TestBuildRefusesInvalidState(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*allot.Builder)
		want   error
		path   string
	}{
		{"duplicate node", func(b *allot.Builder) { b.Nodes[1].Name = "n0" }, allot.ErrDuplicateID, "nodes[1].name"},
		// The first error in the nodes' order is the one given.
		{"duplicate node before a bad one", func(b *allot.Builder) {
			b.Nodes = append(b.Nodes, b.Nodes[0], allot.Node{Name: "bad", Flavor: "h100", Capacity: allot.Resources{"gpu": -1}})
		}, allot.ErrDuplicateID, "nodes[2].name"},
		{"bad node before a duplicate", func(b *allot.Builder) {
			b.Nodes = append(b.Nodes, allot.Node{Name: "bad", Flavor: "h100", Capacity: allot.Resources{"gpu": -1}}, b.Nodes[0])
		}, allot.ErrMissingLabel, "nodes[2].labels.rack"},
		{"duplicate node before an empty name", func(b *allot.Builder) {
			b.Nodes = append(b.Nodes, b.Nodes[1], allot.Node{Flavor: "h100", Capacity: allot.Resources{"gpu": 8}})
		}, allot.ErrDuplicateID, "nodes[2].name"},
		{"duplicate node before bad GPU groups", func(b *allot.Builder) {
			bad := b.Nodes[0]
			bad.Name, bad.GPUGroups = "groups", []int{3}
			b.Nodes = append(b.Nodes, b.Nodes[1], bad)
		}, allot.ErrDuplicateID, "nodes[2].name"},
		{"duplicate workload", func(b *allot.Builder) {
			b.Running = []allot.Workload{running("w", "n0", 1)}
			b.Pending = []allot.Workload{{ID: "w", Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 1}}}}
		}, allot.ErrDuplicateID, "pending[0].id"},
		{"duplicate queue", func(b *allot.Builder) { b.Queues = append(b.Queues, allot.Queue{Name: "q"}) }, allot.ErrDuplicateID, "queues[1].name"},
		{"unknown flavor on node", func(b *allot.Builder) { b.Nodes[0].Flavor = "a100" }, allot.ErrUnknownFlavor, "nodes[0].flavor"},
		{"unknown flavor in quota", func(b *allot.Builder) { b.Queues[0].Quota[0].Flavor = "a100" }, allot.ErrUnknownFlavor, "queues[0].quota[0].flavor"},
		{"unknown queue", func(b *allot.Builder) { b.Running = []allot.Workload{{ID: "w", Queue: "nope"}} }, allot.ErrUnknownQueue, "running[0].queue"},
		{"missing label", func(b *allot.Builder) { delete(b.Nodes[1].Labels, "rack") }, allot.ErrMissingLabel, "nodes[1].labels.rack"},
		{"unknown resource", func(b *allot.Builder) { b.Nodes[0].Capacity["rdma"] = 1 }, allot.ErrUnknownResource, "nodes[0].capacity.rdma"},
		{"running on unknown node", func(b *allot.Builder) { b.Running = []allot.Workload{running("w", "n9", 1)} }, allot.ErrUnknownNode, "running[0].podSets[0].nodes[0]"},
		{"beyond capacity", func(b *allot.Builder) { b.Running = []allot.Workload{running("a", "n1", 6), running("b", "n1", 4)} }, allot.ErrOverCapacity, "running[1].podSets[0].nodes[0]"},
		{"GPU booked twice", func(b *allot.Builder) {
			b.Running = []allot.Workload{running("a", "n0", 1, 3), running("b", "n0", 1, 3)}
		}, allot.ErrOverCapacity, "running[1].podSets[0].gpuIndices[0]"},
		{"unknown backfill holds", func(b *allot.Builder) { b.Options.BackfillHolds = "Lower" }, allot.ErrInvalid, "options.backfillHolds"},
		{"cohort cycle", func(b *allot.Builder) { b.Cohorts[0].Parent = "ai" }, allot.ErrCohortCycle, "cohorts"},
		{"unknown parent cohort", func(b *allot.Builder) { b.Cohorts[1].Parent = "nope" }, allot.ErrUnknownCohort, "cohorts"},
		{"queue in unknown cohort", func(b *allot.Builder) { b.Queues[0].Cohort = "nope" }, allot.ErrUnknownCohort, "cohorts"},
		{"groups do not sum", func(b *allot.Builder) { b.Nodes[0].GPUGroups = []int{4, 2} }, allot.ErrInvalid, "nodes"},
		{"too many GPUs", func(b *allot.Builder) { b.Nodes[0].Capacity["gpu"] = 65; b.Nodes[0].GPUGroups = nil }, allot.ErrInvalid, "nodes[0].capacity.gpu"},
		{"admitted in the future", func(b *allot.Builder) {
			w := running("w", "n0", 1)
			w.AdmittedAt = 5
			b.Running = []allot.Workload{w}
		}, allot.ErrInvalid, "running[0].admittedAt"},
		{"negative quantity", func(b *allot.Builder) { b.Nodes[0].Capacity["cpu"] = -1 }, allot.ErrInvalid, "nodes[0].capacity.cpu"},
		{"unknown fair-sharing strategy", func(b *allot.Builder) {
			b.FairSharing.PreemptionStrategies = []string{"LessThanInitialShare", "LessThanOrEqualToFinalShare"}
		}, allot.ErrInvalid, "fairSharing.preemptionStrategies"},
		{"bad preemption policy", func(b *allot.Builder) {
			b.Queues[0].Preemption.ReclaimWithinCohort = "LowerOrNewerEqualPriority"
		}, allot.ErrInvalid, "queues[0].preemption.reclaimWithinCohort"},
		{"soft above hard", func(b *allot.Builder) {
			soft, hard := int64(12), int64(10)
			b.Queues[0].Quota[0].Resources[0].Soft, b.Queues[0].Quota[0].Resources[0].Hard = &soft, &hard
		}, allot.ErrInvalid, "queues[0].quota[0].resources[0].soft"},
		{"lending limit without a cohort", func(b *allot.Builder) {
			ll := int64(2)
			b.Queues[0].Cohort = ""
			b.Queues[0].Quota[0].Resources[0].LendingLimit = &ll
		}, allot.ErrInvalid, "queues[0].quota[0].resources[0].lendingLimit"},
		{"unknown queueing strategy", func(b *allot.Builder) { b.Queues[0].QueueingStrategy = "LIFO" }, allot.ErrInvalid, "queues[0].queueingStrategy"},
		{"negative queue weight", func(b *allot.Builder) {
			w := -1.0
			b.Queues[0].FairSharing = &allot.QueueFairSharing{Weight: &w}
		}, allot.ErrInvalid, "queues[0].fairSharing.weight"},
		{"infinite cohort weight", func(b *allot.Builder) {
			w := math.Inf(1)
			b.Cohorts[1].FairSharing = &allot.QueueFairSharing{Weight: &w}
		}, allot.ErrInvalid, "cohorts[1].fairSharing.weight"},
		{"lending limit above nominal", func(b *allot.Builder) {
			ll := int64(20)
			b.Queues[0].Quota[0].Resources[0].LendingLimit = &ll
		}, allot.ErrInvalid, "queues[0].quota[0].resources[0].lendingLimit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := baseBuilder()
			c.mutate(&b)
			s, err := b.Build()
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v (snapshot %v), want %v", err, s != nil, c.want)
			}
			var be *allot.BuildError
			if !errors.As(err, &be) || be.Path != c.path {
				t.Fatalf("error %v: want path %q", err, c.path)
			}
		})
	}
	b := baseBuilder()
	if _, err := b.Build(); err != nil {
		t.Fatalf("the base is valid: %v", err)
	}
}

func TestBuildGPUIndicesAndGroups(t *testing.T) {
	b := baseBuilder()
	b.Running = []allot.Workload{running("a", "n0", 2, 0, 5)}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	w, ok := s.Running("a")
	if !ok || fmt.Sprint(w.PodSets[0].GPUIndices) != "[[0 5]]" || fmt.Sprint(w.PodSets[0].Nodes) != "[n0]" {
		t.Fatalf("running workload lost its GPUs: %+v", w.PodSets)
	}
	// n0 has 3 free in each island: a 4-GPU pod cannot use it.
	d := allot.Decide(s, allot.Request{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 2, PerPod: allot.Resources{"gpu": 4}}}})
	if d.Verdict != allot.VerdictAdmit || d.Placement[0].Node != "n1" || d.Placement[1].Node != "n1" {
		t.Fatalf("4-GPU pods must go to n1: %+v", d.Placement)
	}
	if g := d.Placement[0].GPUs; g.Len() != 4 || g&allot.GPUSetOf(0, 1, 2, 3) != g && g&allot.GPUSetOf(4, 5, 6, 7) != g {
		t.Fatalf("a 4-GPU pod straddles islands: %v", g)
	}
}
