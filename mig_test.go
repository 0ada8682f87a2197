package allot_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/allot-sched/allot"
)

// migCluster is one node of 4 GPUs, GPU 0 split into 7 instances of
// 1g.10gb, GPU 1 into 3 of 2g.20gb and 1 of 1g.10gb.
func migCluster() allot.Builder {
	return allot.Builder{
		Resources:   []string{"nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-2g.20gb", "gpu-milli"},
		GPUResource: "nvidia.com/gpu", GPUShareResource: "gpu-milli",
		Flavors: []allot.Flavor{{Name: "a100"}},
		Nodes: []allot.Node{{Name: "n0", Flavor: "a100", Capacity: allot.Resources{"nvidia.com/gpu": 4}, ShareableGPUs: allot.GPUSetOf(3),
			MIG: []allot.MIGPartition{
				{GPU: 0, Profiles: allot.Resources{"nvidia.com/mig-1g.10gb": 7}},
				{GPU: 1, Profiles: allot.Resources{"nvidia.com/mig-2g.20gb": 3, "nvidia.com/mig-1g.10gb": 1}},
			}}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "a100", Resources: []allot.ResourceQuota{
			{Name: "nvidia.com/gpu", Nominal: 4}, {Name: "nvidia.com/mig-1g.10gb", Nominal: 8}, {Name: "nvidia.com/mig-2g.20gb", Nominal: 3},
			{Name: "gpu-milli", Nominal: 1000}}}}}},
	}
}

func TestMIG(t *testing.T) {
	b := migCluster()
	snap, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := snap.NodeStatus("n0")
	want := allot.Resources{"nvidia.com/gpu": 2, "nvidia.com/mig-1g.10gb": 8, "nvidia.com/mig-2g.20gb": 3}
	if !reflect.DeepEqual(ns.Free, want) || ns.FreeGPUs != allot.GPUSetOf(2, 3) {
		t.Fatalf("free %v %v, want %v [2 3]", ns.Free, ns.FreeGPUs, want)
	}
	// The node is described as given: 4 GPUs, its partitions apart.
	if got, _ := snap.Node("n0"); got.Capacity["nvidia.com/gpu"] != 4 || !reflect.DeepEqual(got.MIG, b.Nodes[0].MIG) || len(got.Capacity) != 1 {
		t.Fatalf("described %+v", got)
	}
	again, err := func() (*allot.Snapshot, error) { b2 := snap.Builder(); return b2.Build() }()
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := again.NodeStatus("n0"); !reflect.DeepEqual(a, ns) {
		t.Fatalf("rebuilt %+v, want %+v", a, ns)
	}
	// A fraction takes the shareable whole GPU, never a partitioned one;
	// a whole pod then the one GPU left.
	st := allot.NewStore(snap)
	for _, c := range []struct {
		req  allot.Request
		gpus []int
	}{
		{allot.Request{ID: "frac", Queue: "q", PodSets: []allot.PodSet{{Name: "p", Count: 1, PerPod: allot.Resources{"gpu-milli": 500}}}}, []int{3}},
		{allot.Request{ID: "whole", Queue: "q", PodSets: []allot.PodSet{{Name: "p", Count: 1, PerPod: allot.Resources{"nvidia.com/gpu": 1}}}}, []int{2}},
		{allot.Request{ID: "mig", Queue: "q", PodSets: []allot.PodSet{{Name: "p", Count: 8, PerPod: allot.Resources{"nvidia.com/mig-1g.10gb": 1}}}}, []int{}},
	} {
		d := allot.Decide(st.Load(), c.req)
		if d.Verdict != allot.VerdictAdmit || !reflect.DeepEqual(d.Placement[0].GPUs.Indices(), c.gpus) {
			t.Fatalf("%s: %v %v %s, want GPUs %v", c.req.ID, d.Verdict, d.Placement, d.Message, c.gpus)
		}
		if _, err := st.Commit(d); err != nil {
			t.Fatal(err)
		}
	}
	if d := allot.Decide(st.Load(), allot.Request{ID: "x", Queue: "q", PodSets: []allot.PodSet{{Name: "p", Count: 1,
		PerPod: allot.Resources{"nvidia.com/gpu": 1}}}}); d.Verdict == allot.VerdictAdmit {
		t.Fatalf("a whole GPU admitted with the partitioned ones left: %v", d.Placement)
	}
}

func TestMIGRefused(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(n *allot.Node)
		err   error
		field string
	}{
		{"GPU beyond the node's", func(n *allot.Node) { n.MIG[1].GPU = 4 }, allot.ErrInvalid, "nodes[0].mig[1].gpu"},
		{"GPU twice", func(n *allot.Node) { n.MIG[1].GPU = 0 }, allot.ErrInvalid, "nodes[0].mig[1].gpu"},
		{"partitioned and shareable", func(n *allot.Node) { n.ShareableGPUs = allot.GPUSetOf(1) }, allot.ErrInvalid, "nodes[0].mig[1].gpu"},
		{"unknown profile", func(n *allot.Node) { n.MIG[0].Profiles = allot.Resources{"nvidia.com/mig-3g.40gb": 2} }, allot.ErrUnknownResource,
			"nodes[0].mig[0].profiles.nvidia.com/mig-3g.40gb"},
		{"the GPU as a profile", func(n *allot.Node) { n.MIG[0].Profiles = allot.Resources{"nvidia.com/gpu": 1} }, allot.ErrInvalid,
			"nodes[0].mig[0].profiles.nvidia.com/gpu"},
		{"no instance", func(n *allot.Node) { n.MIG[0].Profiles = allot.Resources{"nvidia.com/mig-1g.10gb": 0} }, allot.ErrInvalid,
			"nodes[0].mig[0].profiles.nvidia.com/mig-1g.10gb"},
		{"a profile listed as capacity too", func(n *allot.Node) { n.Capacity["nvidia.com/mig-2g.20gb"] = 3 }, allot.ErrGPUResource,
			"nodes[0].capacity.nvidia.com/mig-2g.20gb"},
	}
	for _, c := range cases {
		b := migCluster()
		c.edit(&b.Nodes[0])
		_, err := b.Build()
		var be *allot.BuildError
		if !errors.As(err, &be) || !errors.Is(err, c.err) || be.Path != c.field {
			t.Errorf("%s: %v, want %v at %s", c.name, err, c.err, c.field)
		}
	}
}
