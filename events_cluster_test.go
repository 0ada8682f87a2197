package allot_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
)

// churnBuilder is a small cluster with something on every part the churn
// events touch: two blocks of two racks of h100 nodes, two a100 nodes with
// rdma (a resource h100 nodes lack, so quota-only there), a spot flavor
// without nodes; a cohort tree; queues with running workloads across
// nodes, pending ones, caps and a time window.
func churnBuilder() allot.Builder {
	b := allot.Builder{
		Now:       1000,
		Resources: []string{"gpu", "cpu", "rdma"},
		Levels:    []string{"block", "rack"},
		Flavors:   []allot.Flavor{{Name: "h100"}, {Name: "a100"}, {Name: "spot", Spot: true}},
		Cohorts:   []allot.Cohort{{Name: "root"}, {Name: "ai", Parent: "root"}, {Name: "spare", Parent: "root"}},
		History:   allot.History{Preemptions: map[string]float64{"train": 2}, Usage: map[string]allot.Resources{"infer": {"gpu": 3600}}},
	}
	for i := range 8 {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: "h100",
			Labels:   map[string]string{"block": fmt.Sprintf("b%d", i/4), "rack": fmt.Sprintf("r%d", i/2)},
			Capacity: allot.Resources{"gpu": 8, "cpu": 64_000}})
	}
	b.Nodes[3].GPUGroups = []int{4, 4}
	b.Nodes[5].MaxPods = 4
	b.Nodes[6].Unschedulable = true
	for i := range 2 {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("a%d", i), Flavor: "a100",
			Labels:   map[string]string{"block": "b0", "rack": "ra"},
			Capacity: allot.Resources{"gpu": 4, "cpu": 32_000, "rdma": 2}})
	}
	quota := func(flavor string, gpu int64) allot.FlavorQuota {
		return allot.FlavorQuota{Flavor: flavor, Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: gpu}, {Name: "cpu", Nominal: 1 << 30}, {Name: "rdma", Nominal: 16}}}
	}
	b.Queues = []allot.Queue{
		{Name: "idle", Cohort: "ai", Quota: []allot.FlavorQuota{quota("h100", 4)}},
		{Name: "train", Cohort: "ai", Quota: []allot.FlavorQuota{quota("h100", 32), quota("a100", 8), quota("spot", 8)},
			Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority", ReclaimWithinCohort: "Any"}, UserCap: allot.Resources{"gpu": 40}},
		{Name: "infer", Cohort: "ai", Quota: []allot.FlavorQuota{quota("h100", 16)},
			Windows: []allot.Window{{From: "00:00", To: "06:00", Scale: 1.5}}},
		{Name: "batch", Quota: []allot.FlavorQuota{quota("h100", 8)}},
	}
	pod := func(name string, count int32, gpu int64, flavor string, nodes ...string) allot.PodSet {
		return allot.PodSet{Name: name, Count: count, PerPod: allot.Resources{"gpu": gpu, "cpu": 4_000}, Flavor: flavor, Nodes: nodes}
	}
	b.Running = []allot.Workload{
		{ID: "gang", Queue: "train", User: "ana", Priority: 5, AdmittedAt: 100, ExpectedRuntime: 5000,
			PodSets: []allot.PodSet{pod("w", 2, 8, "h100", "n0", "n1")}},
		{ID: "small", Queue: "infer", Priority: 1, AdmittedAt: 200, PodSets: []allot.PodSet{pod("m", 1, 2, "h100", "n3")}},
		{ID: "rdma", Queue: "train", User: "bo", AdmittedAt: 300, Preemption: allot.PreemptionSpec{Class: allot.Checkpointable, LastCheckpointAt: 900},
			PodSets: []allot.PodSet{pod("m", 2, 1, "h100", "n4", "n5")}},
		{ID: "wide", Queue: "train", AdmittedAt: 400, PodSets: []allot.PodSet{pod("m", 1, 4, "a100", "a0")}},
		{ID: "quota-only", Queue: "train", AdmittedAt: 400, PodSets: []allot.PodSet{pod("m", 2, 1, "spot")}},
		{ID: "batch-1", Queue: "batch", AdmittedAt: 500, PodSets: []allot.PodSet{pod("m", 1, 4, "h100", "n7")}},
		{ID: "pair", Queue: "train", AdmittedAt: 600, PodSets: []allot.PodSet{pod("m", 2, 1, "h100", "n6", "n6")}},
	}
	b.Running[2].PodSets[0].PerPod["rdma"] = 1 // quota-only on h100: no h100 node has rdma
	b.Running[1].PodSets[0].GPUIndices = [][]int{{5, 6}}
	b.Pending = []allot.Workload{
		{ID: "wait-idle", Queue: "idle", SubmittedAt: 900, PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 2}}}},
		{ID: "wait-infer", Queue: "infer", Priority: 3, SubmittedAt: 950, PodSets: []allot.PodSet{{Name: "m", Count: 2, PerPod: allot.Resources{"gpu": 8},
			Topology: allot.TopologyRequest{Required: "rack"}}}},
		{ID: "wait-rdma", Queue: "train", SubmittedAt: 960, PodSets: []allot.PodSet{{Name: "m", Count: 1, Flavors: []string{"a100"},
			PerPod: allot.Resources{"gpu": 1, "rdma": 1}}}},
	}
	return b
}

// churnProbes are requests decided on both sides of every comparison.
func churnProbes() []allot.Request {
	req := func(id, queue string, count int32, gpu int64, topo allot.TopologyRequest, prio int32) allot.Request {
		return allot.Request{ID: id, Queue: queue, Priority: prio, PodSets: []allot.PodSet{{Name: "p", Count: count,
			PerPod: allot.Resources{"gpu": gpu, "cpu": 1_000}, Topology: topo}}}
	}
	return []allot.Request{
		req("probe-rack", "train", 2, 8, allot.TopologyRequest{Required: "rack"}, 0),
		req("probe-block", "train", 4, 4, allot.TopologyRequest{Preferred: "block"}, 0),
		req("probe-small", "infer", 1, 1, allot.TopologyRequest{}, 0),
		req("probe-spread", "batch", 3, 1, allot.TopologyRequest{Policy: allot.Spread}, 0),
		req("probe-preempt", "train", 4, 8, allot.TopologyRequest{Required: "block"}, 9),
		req("probe-idle", "idle", 1, 4, allot.TopologyRequest{}, 0),
		{ID: "probe-a100", Queue: "train", PodSets: []allot.PodSet{{Name: "p", Count: 2, Flavors: []string{"a100"},
			PerPod: allot.Resources{"gpu": 2, "rdma": 1}}}},
	}
}

// buildAt builds b as version v.
func buildAt(t testing.TB, b allot.Builder, v uint64) *allot.Snapshot {
	t.Helper()
	b.Version = v
	s, err := b.Build()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return s
}

// applyEqualsBuild applies ev to a store of b and checks the result
// against building want from scratch.
func applyEqualsBuild(t *testing.T, b allot.Builder, ev allot.Event, want allot.Builder) *allot.Snapshot {
	t.Helper()
	st := allot.NewStore(buildAt(t, b, 0))
	got, err := st.Apply(ev)
	if err != nil {
		t.Fatalf("%#v: %v", ev, err)
	}
	sameState(t, fmt.Sprintf("%T", ev), got, buildAt(t, want, 1), churnProbes())
	return got
}

// refused applies ev to a store of b, wants an error that is target, and
// checks that the store published nothing and its next version is what it
// would have been without ev.
func refused(t *testing.T, b allot.Builder, ev allot.Event, target error) error {
	t.Helper()
	st := allot.NewStore(buildAt(t, b, 0))
	before := st.Load()
	_, err := st.Apply(ev)
	if !errors.Is(err, target) {
		t.Fatalf("%#v: error %v, want %v", ev, err, target)
	}
	if st.Load() != before {
		t.Fatalf("%#v refused (%v) but published version %d", ev, err, st.Load().Version())
	}
	after, err2 := st.Apply(allot.AdvanceTime{})
	if err2 != nil {
		t.Fatal(err2)
	}
	sameState(t, fmt.Sprintf("after a refused %T", ev), after, buildAt(t, b, 1), churnProbes())
	return err
}

// without returns xs without the elements drop picks.
func without[T any](xs []T, drop func(T) bool) []T {
	return slices.DeleteFunc(slices.Clone(xs), drop)
}

// evicted is a running workload as an eviction leaves it pending.
func evicted(w allot.Workload) allot.Workload {
	w.AdmittedAt, w.Borrowing = 0, false
	w.PodSets = slices.Clone(w.PodSets)
	for i := range w.PodSets {
		w.PodSets[i].Flavor, w.PodSets[i].Nodes, w.PodSets[i].GPUIndices = "", nil, nil
	}
	return w
}

func TestAddNodeEqualsBuild(t *testing.T) {
	for _, n := range []allot.Node{
		{Name: "n8", Flavor: "h100", Labels: map[string]string{"block": "b0", "rack": "r0"}, Capacity: allot.Resources{"gpu": 8, "cpu": 64_000}},
		{Name: "m0", Flavor: "h100", Labels: map[string]string{"block": "b2", "rack": "r9"}, Capacity: allot.Resources{"gpu": 16, "cpu": 8_000}, GPUGroups: []int{8, 8}},
		{Name: "s0", Flavor: "spot", Labels: map[string]string{"block": "b0", "rack": "r1"}, Capacity: allot.Resources{"gpu": 2}, Down: true},
		{Name: "a2", Flavor: "a100", Labels: map[string]string{"block": "b0", "rack": "ra"}, Capacity: allot.Resources{"gpu": 4, "cpu": 32_000}, CooldownUntil: 2000, MaxPods: 2},
		{Name: "c0", Flavor: "h100", Labels: map[string]string{"block": "b1", "rack": "r2", "zone": "z"}, Capacity: allot.Resources{"cpu": 8_000}},
	} {
		t.Run(n.Name, func(t *testing.T) {
			b := churnBuilder()
			want := churnBuilder()
			want.Nodes = append(want.Nodes, n)
			got := applyEqualsBuild(t, b, allot.AddNode{Node: n}, want)
			if d, _ := got.Node(n.Name); d.Name != n.Name || d.Flavor != n.Flavor {
				t.Fatalf("the new node reads %+v", d)
			}
		})
	}
}

// TestAddNodeRefusedLikeBuild: a node Build refuses in a description,
// AddNode refuses, with the same error at the same field.
func TestAddNodeRefusedLikeBuild(t *testing.T) {
	good := allot.Node{Name: "x", Flavor: "h100", Labels: map[string]string{"block": "b0", "rack": "r0"}, Capacity: allot.Resources{"gpu": 8}}
	for _, c := range []struct {
		name   string
		mutate func(*allot.Node)
	}{
		{"empty name", func(n *allot.Node) { n.Name = "" }},
		{"taken name", func(n *allot.Node) { n.Name = "n3" }},
		{"unknown flavor", func(n *allot.Node) { n.Flavor = "b200" }},
		{"missing label", func(n *allot.Node) { n.Labels = map[string]string{"block": "b0"} }},
		{"empty label", func(n *allot.Node) { n.Labels = map[string]string{"block": "b0", "rack": ""} }},
		{"unknown resource", func(n *allot.Node) { n.Capacity = allot.Resources{"gpu": 8, "tpu": 1} }},
		{"negative capacity", func(n *allot.Node) { n.Capacity = allot.Resources{"cpu": -1} }},
		{"65 GPUs", func(n *allot.Node) { n.Capacity = allot.Resources{"gpu": 65} }},
		{"bad groups", func(n *allot.Node) { n.GPUGroups = []int{4, 2} }},
		{"negative maxPods", func(n *allot.Node) { n.MaxPods = -1 }},
		// The first h100 node with rdma makes rdma booked on h100 nodes,
		// where running pods ask for it and no node has it.
		{"rdma on h100", func(n *allot.Node) { n.Capacity = allot.Resources{"gpu": 8, "rdma": 4} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := good
			n.Labels = map[string]string{"block": "b0", "rack": "r0"}
			c.mutate(&n)
			desc := churnBuilder()
			desc.Nodes = append(desc.Nodes, n)
			_, buildErr := desc.Build()
			var want *allot.BuildError
			if !errors.As(buildErr, &want) {
				t.Fatalf("Build accepts the description: %v", buildErr)
			}
			err := refused(t, churnBuilder(), allot.AddNode{Node: n}, want.Err)
			var got *allot.BuildError
			if !errors.As(err, &got) {
				t.Fatalf("%v is not a *BuildError", err)
			}
			// The same field: nodes[10].x in the description, node.x in
			// the event; a running pod by index there, by ID here.
			wantPath := strings.Replace(want.Path, fmt.Sprintf("nodes[%d]", len(desc.Nodes)-1), "node", 1)
			if wantPath == "nodes" { // what topology.New refuses: groups
				wantPath = "node"
			}
			for i, w := range desc.Running {
				wantPath = strings.Replace(wantPath, fmt.Sprintf("running[%d]", i), fmt.Sprintf("running[%q]", w.ID), 1)
			}
			if got.Path != wantPath || got.Detail != want.Detail {
				t.Fatalf("AddNode: %v\nBuild:   %v", got, want)
			}
		})
	}
}

func TestRemoveNodeEvictsItsWorkloads(t *testing.T) {
	b := churnBuilder()
	want := churnBuilder()
	want.Nodes = without(want.Nodes, func(n allot.Node) bool { return n.Name == "n1" })
	gang := want.Running[0]
	want.Running = want.Running[1:]
	want.Pending = append(want.Pending, evicted(gang))
	got := applyEqualsBuild(t, b, allot.RemoveNode{Node: "n1"}, want)
	ev := got.Evictions()
	if len(ev) != 1 || ev[0].ID != "gang" || ev[0].Queue != "train" || ev[0].Reason != allot.EvictedNodeRemoved || ev[0].At != 1000 ||
		ev[0].LostGPUSeconds != 16*900 || ev[0].Preemptor != "" {
		t.Fatalf("evictions %+v", ev)
	}
	if got.Debt("train") != 2 {
		t.Fatalf("a node's removal counted as a preemption: debt %v", got.Debt("train"))
	}

	// A node without workloads; the last node of a flavor, which leaves
	// it quota-only (the running workload there is evicted).
	want = churnBuilder()
	want.Nodes = without(want.Nodes, func(n allot.Node) bool { return n.Name == "n2" })
	applyEqualsBuild(t, b, allot.RemoveNode{Node: "n2"}, want)

	st := allot.NewStore(buildAt(t, b, 0))
	for _, name := range []string{"a0", "a1"} {
		if _, err := st.Apply(allot.RemoveNode{Node: name}); err != nil {
			t.Fatal(err)
		}
	}
	want = churnBuilder()
	want.Nodes = without(want.Nodes, func(n allot.Node) bool { return n.Flavor == "a100" })
	want.Running = without(want.Running, func(w allot.Workload) bool { return w.ID == "wide" })
	want.Pending = append(want.Pending, evicted(churnBuilder().Running[3]))
	sameState(t, "a100 gone", st.Load(), buildAt(t, want, 2), churnProbes())

	refused(t, b, allot.RemoveNode{Node: "n99"}, allot.ErrUnknownNode)
}

func TestSetNodeEqualsBuild(t *testing.T) {
	node := func(i int) allot.Node { return churnBuilder().Nodes[i] }
	for _, c := range []struct {
		name string
		n    allot.Node
	}{
		{"more GPUs under its pods", func() allot.Node {
			n := node(3)
			n.Capacity = allot.Resources{"gpu": 16, "cpu": 64_000}
			n.GPUGroups = []int{8, 8}
			return n
		}()},
		{"other rack with its pods", func() allot.Node { n := node(0); n.Labels = map[string]string{"block": "b1", "rack": "r3"}; return n }()},
		{"new block", func() allot.Node { n := node(7); n.Labels = map[string]string{"block": "b9", "rack": "r9"}; return n }()},
		{"other flavor, no pods", func() allot.Node { n := node(2); n.Flavor = "spot"; return n }()},
		{"conditions", func() allot.Node {
			n := node(6)
			n.Unschedulable = false
			n.Down = true
			n.CooldownUntil = 5000
			return n
		}()},
		{"fewer pods allowed", func() allot.Node { n := node(5); n.MaxPods = 1; return n }()},
		{"rdma on a100 gone", func() allot.Node {
			n := churnBuilder().Nodes[9]
			n.Capacity = allot.Resources{"gpu": 4, "cpu": 32_000}
			return n
		}()},
		{"rdma on h100 where pods ask none", func() allot.Node { n := node(2); n.Capacity["rdma"] = 8; return n }()},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := churnBuilder()
			for i := range want.Nodes {
				if want.Nodes[i].Name == c.n.Name {
					want.Nodes[i] = c.n
				}
			}
			b := churnBuilder()
			if c.name == "rdma on h100 where pods ask none" {
				// The rdma workload asks rdma of h100 nodes that have none:
				// Build refuses it once rdma is booked on them.
				for _, d := range []*allot.Builder{&b, &want} {
					d.Running[2].PodSets[0].PerPod = allot.Resources{"gpu": 1, "cpu": 4_000}
				}
			}
			got := applyEqualsBuild(t, b, allot.SetNode{Node: c.n}, want)
			if d, _ := got.Node(c.n.Name); !jsonEqual(t, d, c.n) {
				t.Fatalf("Node reads %+v, was set to %+v", d, c.n)
			}
		})
	}
}

// TestSetNodeRefusedLikeBuild: a description under which the node could
// not hold its pods is refused, as Build refuses it.
func TestSetNodeRefusedLikeBuild(t *testing.T) {
	node := func(i int) allot.Node { return churnBuilder().Nodes[i] }
	for _, c := range []struct {
		name string
		n    allot.Node
	}{
		{"GPU in use gone", func() allot.Node {
			n := node(3)
			n.Capacity = allot.Resources{"gpu": 4, "cpu": 64_000}
			n.GPUGroups = nil
			return n
		}()},
		{"cpu below booked", func() allot.Node { n := node(0); n.Capacity = allot.Resources{"gpu": 8, "cpu": 1_000}; return n }()},
		{"pods beyond its limit", func() allot.Node { n := node(6); n.MaxPods = 1; return n }()},
		{"other flavor under pods", func() allot.Node { n := node(7); n.Flavor = "spot"; return n }()},
		{"rdma on h100 under pods that ask it", func() allot.Node { n := node(2); n.Capacity["rdma"] = 8; return n }()},
		{"groups that do not sum", func() allot.Node { n := node(2); n.GPUGroups = []int{3}; return n }()},
		{"missing label", func() allot.Node { n := node(2); n.Labels = map[string]string{"rack": "r1"}; return n }()},
	} {
		t.Run(c.name, func(t *testing.T) {
			desc := churnBuilder()
			for i := range desc.Nodes {
				if desc.Nodes[i].Name == c.n.Name {
					desc.Nodes[i] = c.n
				}
			}
			_, buildErr := desc.Build()
			var want *allot.BuildError
			if !errors.As(buildErr, &want) {
				t.Fatalf("Build accepts the description: %v", buildErr)
			}
			err := refused(t, churnBuilder(), allot.SetNode{Node: c.n}, want.Err)
			var got *allot.BuildError
			if !errors.As(err, &got) || got.Detail != want.Detail {
				t.Fatalf("SetNode: %v\nBuild:   %v", err, want)
			}
		})
	}
	refused(t, churnBuilder(), allot.SetNode{Node: allot.Node{Name: "n99", Flavor: "h100"}}, allot.ErrUnknownNode)
}

func TestRemoveQueue(t *testing.T) {
	// idle holds no workload, one waits in it; every queue after it moves
	// down one index.
	want := churnBuilder()
	want.Queues = want.Queues[1:]
	want.Pending = want.Pending[1:]
	got := applyEqualsBuild(t, churnBuilder(), allot.RemoveQueue{Queue: "idle"}, want)
	if _, ok := got.Pending("wait-idle"); ok {
		t.Fatal("the removed queue's pending workload is still pending")
	}

	err := refused(t, churnBuilder(), allot.RemoveQueue{Queue: "train"}, allot.ErrInUse)
	var in *allot.InUseError
	if !errors.As(err, &in) || in.Queue != "train" || !slices.Equal(in.Running, []string{"gang", "pair", "quota-only", "rdma", "wide"}) {
		t.Fatalf("%v: %+v", err, in)
	}
	refused(t, churnBuilder(), allot.RemoveQueue{Queue: "nope"}, allot.ErrUnknownQueue)

	// Once its workload is gone, batch goes; its history goes with it.
	b := churnBuilder()
	b.History.Usage["batch"] = allot.Resources{"gpu": 7}
	st := allot.NewStore(buildAt(t, b, 0))
	for _, ev := range []allot.Event{allot.Finish{ID: "batch-1"}, allot.RemoveQueue{Queue: "batch"}} {
		if _, err := st.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	want = churnBuilder()
	want.Queues = want.Queues[:3]
	want.Running = without(want.Running, func(w allot.Workload) bool { return w.Queue == "batch" })
	sameState(t, "batch gone", st.Load(), buildAt(t, want, 2), churnProbes())

	// A queue added back starts afresh.
	if _, err := st.Apply(allot.SetQueue{Queue: churnBuilder().Queues[3]}); err != nil {
		t.Fatal(err)
	}
	if st.Load().HistoricalUsage("batch") != 0 {
		t.Fatalf("a queue added again inherits history %v", st.Load().HistoricalUsage("batch"))
	}
}

func TestRemoveCohort(t *testing.T) {
	want := churnBuilder()
	want.Cohorts = without(want.Cohorts, func(c allot.Cohort) bool { return c.Name == "spare" })
	applyEqualsBuild(t, churnBuilder(), allot.RemoveCohort{Cohort: "spare"}, want)

	err := refused(t, churnBuilder(), allot.RemoveCohort{Cohort: "ai"}, allot.ErrInUse)
	var in *allot.InUseError
	if !errors.As(err, &in) || in.Cohort != "ai" || !slices.Equal(in.Queues, []string{"idle", "infer", "train"}) || in.Cohorts != nil {
		t.Fatalf("%v: %+v", err, in)
	}
	err = refused(t, churnBuilder(), allot.RemoveCohort{Cohort: "root"}, allot.ErrInUse)
	if !errors.As(err, &in) || !slices.Equal(in.Cohorts, []string{"ai", "spare"}) || in.Queues != nil {
		t.Fatalf("%v: %+v", err, in)
	}
	refused(t, churnBuilder(), allot.RemoveCohort{Cohort: "nope"}, allot.ErrUnknownCohort)
}

// TestNodeResourcesChangeThePendingShapes: once no a100 node has rdma, the
// pending pods that ask it of a100 nodes ask it of quota only, and the
// fragmentation measure counts them so.
func TestNodeResourcesChangeThePendingShapes(t *testing.T) {
	st := allot.NewStore(buildAt(t, churnBuilder(), 0))
	want := churnBuilder()
	for _, name := range []string{"a0", "a1"} {
		n, _ := st.Load().Node(name)
		delete(n.Capacity, "rdma")
		if _, err := st.Apply(allot.SetNode{Node: n}); err != nil {
			t.Fatal(err)
		}
		want.Nodes[slices.IndexFunc(want.Nodes, func(m allot.Node) bool { return m.Name == name })] = n
	}
	sameState(t, "no rdma on a100", st.Load(), buildAt(t, want, 2), churnProbes())
}

// TestStaleDecisionAfterNodeChurn: a decision made before a node went or
// changed is a conflict at commit, not a malformed decision; one made
// before a node came commits where it was placed.
func TestStaleDecisionAfterNodeChurn(t *testing.T) {
	req := allot.Request{ID: "late", Queue: "train", PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 8}}}}
	for _, c := range []struct {
		name string
		ev   func(node allot.Node) allot.Event
	}{
		{"removed", func(n allot.Node) allot.Event { return allot.RemoveNode{Node: n.Name} }},
		{"fewer GPUs", func(n allot.Node) allot.Event {
			n.Capacity = allot.Resources{"gpu": 4, "cpu": 64_000}
			return allot.SetNode{Node: n}
		}},
		{"other flavor", func(n allot.Node) allot.Event { n.Flavor = "spot"; return allot.SetNode{Node: n} }},
	} {
		st := allot.NewStore(buildAt(t, churnBuilder(), 0))
		d := allot.Decide(st.Load(), req)
		if d.Verdict != allot.VerdictAdmit {
			t.Fatalf("test premise: %v %s", d.Reason, d.Message)
		}
		node, _ := st.Load().Node(d.Placement[0].Node)
		if _, err := st.Apply(c.ev(node)); err != nil {
			t.Fatal(err)
		}
		var ce *allot.ConflictError
		if _, err := st.Commit(d); !errors.As(err, &ce) {
			t.Fatalf("%s: commit gives %v, want a *ConflictError", c.name, err)
		}
	}
	st := allot.NewStore(buildAt(t, churnBuilder(), 0))
	d := allot.Decide(st.Load(), req)
	if _, err := st.Apply(allot.AddNode{Node: allot.Node{Name: "a-first", Flavor: "h100", Labels: map[string]string{"block": "a", "rack": "a"},
		Capacity: allot.Resources{"gpu": 8}}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Commit(d)
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := got.Running("late"); w.PodSets[0].Nodes[0] != d.Placement[0].Node {
		t.Fatalf("placed on %v, decided on %s", w.PodSets[0].Nodes, d.Placement[0].Node)
	}
}

// TestSetFlavor: a flavor made spot makes the never-preempted workloads on
// it victims and frees its queue's non-preemptible cap, and back; its
// taints keep the pod sets that do not tolerate them off it, its
// tolerations let them back; every step is the snapshot Build makes of
// the edited description. Node labels its nodes lack (the snapshot kept
// no pool label), and an unknown flavor, are refused.
func TestSetFlavor(t *testing.T) {
	b := churnBuilder()
	b.Queues[1].NonPreemptibleCap = allot.Resources{"gpu": 24}
	b.Running = append(b.Running, allot.Workload{ID: "keep", Queue: "train", AdmittedAt: 700, Preemption: allot.PreemptionSpec{Class: allot.Never},
		PodSets: []allot.PodSet{{Name: "m", Count: 1, Flavor: "a100", Nodes: []string{"a1"}, PerPod: allot.Resources{"gpu": 4}}}})
	hero := allot.Request{ID: "hero", Queue: "train", Priority: 9, PodSets: []allot.PodSet{{Name: "m", Count: 2, Flavors: []string{"a100"}, PerPod: allot.Resources{"gpu": 4}}}}
	victims := func(s *allot.Snapshot) []string {
		d := allot.Decide(s, hero)
		var ids []string
		for _, v := range d.Victims {
			ids = append(ids, v.ID)
		}
		slices.Sort(ids)
		return ids
	}
	if got := victims(buildAt(t, b, 0)); slices.Contains(got, "keep") {
		t.Fatalf("victims %v before the flavor is spot", got)
	}

	spot := deepCopy(t, b)
	spot.Flavors[1].Spot = true
	s := applyEqualsBuild(t, b, allot.SetFlavor{Flavor: spot.Flavors[1]}, spot)
	if got := victims(s); !slices.Contains(got, "keep") {
		t.Fatalf("victims %v once the flavor is spot", got)
	}
	back := applyEqualsBuild(t, spot, allot.SetFlavor{Flavor: b.Flavors[1]}, b)
	if got := victims(back); slices.Contains(got, "keep") {
		t.Fatalf("victims %v once the flavor is no longer spot", got)
	}

	tainted := deepCopy(t, b)
	tainted.Flavors[1].NodeTaints = []allot.Taint{{Key: "dedicated", Value: "gpu", Effect: allot.TaintNoSchedule}}
	s = applyEqualsBuild(t, b, allot.SetFlavor{Flavor: tainted.Flavors[1]}, tainted)
	if d := allot.Decide(s, hero); d.Verdict == allot.VerdictAdmit || d.Verdict == allot.VerdictPreempt {
		t.Fatalf("a pod set not tolerating the flavor's taint: %v %s", d.Verdict, d.Message)
	}
	tolerated := deepCopy(t, tainted)
	tolerated.Flavors[1].Tolerations = []allot.Toleration{{Key: "dedicated", Operator: allot.TolerationExists}}
	applyEqualsBuild(t, tainted, allot.SetFlavor{Flavor: tolerated.Flavors[1]}, tolerated)

	relabelled := deepCopy(t, b).Flavors[1]
	relabelled.NodeLabels = map[string]string{"pool": "a100"}
	err := refused(t, b, allot.SetFlavor{Flavor: relabelled}, allot.ErrInvalid)
	if be := (*allot.BuildError)(nil); !errors.As(err, &be) || be.Path != "nodes[8].labels.pool" {
		t.Fatalf("node labels changed: %v", err)
	}
	bad := deepCopy(t, b).Flavors[1]
	bad.Tolerations = []allot.Toleration{{Key: "x", Operator: "Sometimes"}}
	refused(t, b, allot.SetFlavor{Flavor: bad}, allot.ErrInvalid)
	refused(t, b, allot.SetFlavor{Flavor: allot.Flavor{Name: "nope"}}, allot.ErrUnknownFlavor)
}
