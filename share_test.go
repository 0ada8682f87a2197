package allot_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/allot-sched/allot"
)

// shareCluster is two nodes of two GPUs, every GPU of n0 shareable and
// GPU 1 of n1, with GPU shares declared as gpu-milli.
func shareCluster() allot.Builder {
	return allot.Builder{
		Resources:        []string{"gpu", "gpu-milli", "cpu"},
		GPUShareResource: "gpu-milli",
		Flavors:          []allot.Flavor{{Name: "f"}},
		Nodes: []allot.Node{
			{Name: "n0", Flavor: "f", Capacity: allot.Resources{"gpu": 2, "cpu": 8000}, ShareableGPUs: allot.GPUSetOf(0, 1)},
			{Name: "n1", Flavor: "f", Capacity: allot.Resources{"gpu": 2, "cpu": 8000}, ShareableGPUs: allot.GPUSetOf(1)},
		},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{
			{Name: "gpu", Nominal: 4}, {Name: "gpu-milli", Nominal: 4000}, {Name: "cpu", Nominal: 16000}}}}}},
	}
}

func sharePod(id string, milli int64) allot.Request {
	return allot.Request{ID: id, Queue: "q", PodSets: []allot.PodSet{{Name: "p", Count: 1, PerPod: allot.Resources{"gpu-milli": milli}}}}
}

func wholePod(id string, gpus int64) allot.Request {
	return allot.Request{ID: id, Queue: "q", PodSets: []allot.PodSet{{Name: "p", Count: 1, PerPod: allot.Resources{"gpu": gpus}}}}
}

type placed struct {
	node string
	gpus []int
}

// TestSharePacking admits a sequence one by one and checks where each
// pod lands: fractions pack onto the tightest shared GPU, break a whole
// GPU only when no shared one holds them, on the node with the fewest
// whole GPUs left, and whole-GPU pods never land on a shared GPU.
func TestSharePacking(t *testing.T) {
	b := shareCluster()
	snap, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(snap)
	steps := []struct {
		req  allot.Request
		want *placed // nil: not admitted
	}{
		// n1 has one shareable GPU, n0 two: break a GPU where fewer whole
		// shareable ones are left.
		{sharePod("a", 600), &placed{"n1", []int{1}}},
		// 400 fits n1's GPU 1 exactly: best fit.
		{sharePod("b", 400), &placed{"n1", []int{1}}},
		{sharePod("c", 300), &placed{"n0", []int{0}}},
		{sharePod("d", 500), &placed{"n0", []int{0}}},
		// 300 does not fit n0/0's 200 left: a new GPU.
		{sharePod("e", 300), &placed{"n0", []int{1}}},
		// A whole GPU: only n1's GPU 0 is free whole.
		{wholePod("f", 1), &placed{"n1", []int{0}}},
		// No whole GPU is left, though 900 thousandths are free.
		{wholePod("g", 1), nil},
		{sharePod("h", 200), &placed{"n0", []int{0}}},
	}
	for _, s := range steps {
		if _, err := st.Apply(allot.Submit{Workload: allot.Workload(s.req)}); err != nil {
			t.Fatal(err)
		}
		d := allot.Decide(st.Load(), s.req)
		if s.want == nil {
			if d.Verdict == allot.VerdictAdmit {
				t.Fatalf("%s: admitted on %v, want no room", s.req.ID, d.Placement)
			}
			continue
		}
		if d.Verdict != allot.VerdictAdmit {
			t.Fatalf("%s: %v %s", s.req.ID, d.Verdict, d.Message)
		}
		got := placed{d.Placement[0].Node, d.Placement[0].GPUs.Indices()}
		if !reflect.DeepEqual(got, *s.want) {
			t.Fatalf("%s: placed on %v, want %v", s.req.ID, got, *s.want)
		}
		if _, err := st.Commit(d); err != nil {
			t.Fatalf("%s: commit: %v", s.req.ID, err)
		}
	}
	// The description builds the same cluster again: same free GPUs, and
	// the next fraction lands where it lands here.
	b2 := st.Load().Builder()
	again, err := b2.Build()
	if err != nil {
		t.Fatal(err)
	}
	if a, b := again.FreeGPUs(), st.Load().FreeGPUs(); a != b {
		t.Fatalf("round trip: %d free GPUs, want %d", a, b)
	}
	next := sharePod("i", 100)
	d1, d2 := allot.Decide(st.Load(), next), allot.Decide(again, next)
	if !reflect.DeepEqual(d1.Placement, d2.Placement) || d1.Verdict != d2.Verdict {
		t.Fatalf("round trip: %v %v, want %v %v", d2.Verdict, d2.Placement, d1.Verdict, d1.Placement)
	}
	// Finishing every fraction of n0 gives its GPUs back whole.
	for _, id := range []string{"c", "d", "e", "h"} {
		if _, err := st.Apply(allot.Finish{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if free, _ := st.Load().NodeFreeGPUs("n0"); free != allot.GPUSetOf(0, 1) {
		t.Fatalf("n0 free after its fractions finished: %v, want [0 1]", free)
	}
}

// TestShareRefused checks the typed errors of malformed fractions, each
// naming its field, and that a refused SetRunning leaves the store as it
// was.
func TestShareRefused(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(b *allot.Builder)
		field string
	}{
		{"share of a whole GPU", func(b *allot.Builder) {
			b.Running = []allot.Workload{{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "p", Count: 1, Flavor: "f",
				PerPod: allot.Resources{"gpu-milli": 1000}, Nodes: []string{"n0"}}}}}
		}, "running[0].podSets[0].perPod.gpu-milli"},
		{"share beside whole GPUs", func(b *allot.Builder) {
			b.Running = []allot.Workload{{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "p", Count: 1, Flavor: "f",
				PerPod: allot.Resources{"gpu": 1, "gpu-milli": 500}, Nodes: []string{"n0"}}}}}
		}, "running[0].podSets[0].perPod.gpu-milli"},
		{"GPU not shareable", func(b *allot.Builder) {
			b.Running = []allot.Workload{{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "p", Count: 1, Flavor: "f",
				PerPod: allot.Resources{"gpu-milli": 500}, Nodes: []string{"n1"}, GPUIndices: [][]int{{0}}}}}}
		}, "running[0].podSets[0].gpuIndices[0]"},
		{"a fraction across two GPUs", func(b *allot.Builder) {
			b.Running = []allot.Workload{{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "p", Count: 1, Flavor: "f",
				PerPod: allot.Resources{"gpu-milli": 500}, Nodes: []string{"n0"}, GPUIndices: [][]int{{0, 1}}}}}}
		}, "running[0].podSets[0].gpuIndices[0]"},
		{"a GPU shared past a whole", func(b *allot.Builder) {
			b.Running = []allot.Workload{{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "p", Count: 3, Flavor: "f",
				PerPod: allot.Resources{"gpu-milli": 400}, Nodes: []string{"n1", "n1", "n1"}}}}}
		}, "running[0].podSets[0].gpuIndices[2]"},
		{"shareable beyond the node's GPUs", func(b *allot.Builder) { b.Nodes[1].ShareableGPUs = allot.GPUSetOf(2) }, "nodes[1].shareableGpus"},
		{"shareable without a share resource", func(b *allot.Builder) { b.GPUShareResource = ""; b.Resources = []string{"gpu", "cpu"} }, "nodes[0].shareableGpus"},
		{"a node lists the share resource", func(b *allot.Builder) { b.Nodes[0].Capacity["gpu-milli"] = 2000 }, "nodes[0].capacity.gpu-milli"},
		{"share resource undeclared", func(b *allot.Builder) { b.GPUShareResource = "milli" }, "gpuShareResource"},
		{"share resource is the GPU", func(b *allot.Builder) { b.GPUShareResource = "gpu" }, "gpuShareResource"},
	}
	for _, c := range cases {
		b := shareCluster()
		c.edit(&b)
		_, err := b.Build()
		var be *allot.BuildError
		if !errors.As(err, &be) {
			t.Fatalf("%s: %v, want a *BuildError", c.name, err)
		}
		if be.Path != c.field {
			t.Errorf("%s: field %q, want %q (%v)", c.name, be.Path, c.field, err)
		}
	}
	// A request asking for a whole GPU's worth as a share is invalid.
	b := shareCluster()
	snap, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if d := allot.Decide(snap, sharePod("x", 1000)); d.Verdict != allot.VerdictReject {
		t.Fatalf("share of 1000: %v %s, want a rejection", d.Verdict, d.Message)
	}
	// A refused SetRunning changes nothing.
	st := allot.NewStore(snap)
	before := st.Load().Builder()
	_, err = st.Apply(allot.SetRunning{Workload: allot.Workload{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "p", Count: 3, Flavor: "f",
		PerPod: allot.Resources{"gpu-milli": 400}, Nodes: []string{"n1", "n1", "n1"}}}}})
	if err == nil {
		t.Fatal("SetRunning of 1200 thousandths on one shareable GPU: no error")
	}
	if after := st.Load().Builder(); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused SetRunning changed the store")
	}
}

// TestShareCommitConflict commits a fractional decision made on an older
// version after another fraction has taken its GPU's room: a conflict,
// which changes nothing; decided again it lands elsewhere.
func TestShareCommitConflict(t *testing.T) {
	b := shareCluster()
	snap, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(snap)
	first := allot.Decide(st.Load(), sharePod("a", 600))
	if _, err := st.Commit(first); err != nil {
		t.Fatal(err)
	}
	stale := allot.Decide(st.Load(), sharePod("b", 400)) // n1's GPU 1, exactly
	if got := stale.Placement[0]; got.Node != "n1" || got.GPUs != allot.GPUSetOf(1) {
		t.Fatalf("b placed on %v, want n1 [1]", got)
	}
	if _, err := st.Commit(allot.Decide(st.Load(), sharePod("c", 300))); err != nil {
		t.Fatal(err)
	}
	before := st.Load().Builder()
	_, err = st.Commit(stale)
	var ce *allot.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("stale commit: %v, want a *ConflictError", err)
	}
	if after := st.Load().Builder(); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused commit changed the store")
	}
	again := allot.Decide(st.Load(), sharePod("b", 400))
	if again.Verdict != allot.VerdictAdmit || again.Placement[0].Node != "n0" {
		t.Fatalf("b decided again: %v %v", again.Verdict, again.Placement)
	}
}

// TestShareDecideAllocs pins what deciding one fractional pod allocates
// with a reused decision: nothing.
func TestShareDecideAllocs(t *testing.T) {
	b := shareCluster()
	snap, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	req := sharePod("a", 250)
	var d allot.Decision
	allot.DecideInto(snap, req, &d)
	if got := testing.AllocsPerRun(50, func() { allot.DecideInto(snap, req, &d) }); got > 0 {
		t.Fatalf("DecideInto of a fractional pod: %v allocations, want 0", got)
	}
	if d.Verdict != allot.VerdictAdmit {
		t.Fatalf("%v %s", d.Verdict, d.Message)
	}
}
