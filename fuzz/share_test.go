package fuzz

import (
	"fmt"
	"reflect"
	"testing"

	gofuzz "github.com/google/gofuzz"

	"github.com/allot-sched/allot"
)

// shareInput drives FuzzShare: the cluster's nodes and the steps run on a
// store of it, as small numbers the target reads modulo what it needs.
type shareInput struct {
	Nodes []uint16
	Steps []shareStep
}

// shareStep is one step: Kind picks decide-and-commit, SetRunning,
// Finish or SetNode; A, B and C its figures.
type shareStep struct {
	Kind    uint8
	A, B, C uint16
}

// FuzzShare runs fractional and whole-GPU workloads on a cluster of
// shareable GPUs: requests decided and committed, workloads found
// running (SetRunning, on GPUs named or not, some of them clashing),
// finished, and nodes described anew with other shareable GPUs, some
// GPUs split into MIG instances that pods ask for by count. After every
// step: no fractional pod holds two GPUs or a GPU that is not shareable,
// no GPU's shares pass a whole one or meet a whole-GPU pod, a shared GPU
// is never free, a partitioned GPU is never free, shared nor held whole,
// no resource of a node is booked past its capacity, each GPU's share as the node reports it is
// what its running pods hold, a refused event leaves the store as it was,
// and the snapshot's Builder builds the same nodes again.
func FuzzShare(f *testing.F) {
	for _, seed := range shareSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in shareInput
		gofuzz.NewFromGoFuzz(data).NilChance(0).NumElements(1, 16).Fuzz(&in)
		checkShareWorld(t, in, false)
	})
}

// FuzzShareTwoPhase is FuzzShare on a store that preempts in two phases,
// victims evicting over several steps (a holding preemptor may finish
// first, its victims then orphans that book their own pods again): no
// GPU's shares ever pass a whole one nor is a shared GPU free; once the
// victims have terminated, every check of FuzzShare holds.
func FuzzShareTwoPhase(f *testing.F) {
	for _, seed := range shareSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in shareInput
		gofuzz.NewFromGoFuzz(data).NilChance(0).NumElements(1, 16).Fuzz(&in)
		checkShareWorld(t, in, true)
	})
}

// shareSeeds are the seeds of both share targets.
var shareSeeds = [][]byte{
	{},
	[]byte("fractions and whole GPUs on shareable nodes"),
	{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4, 3, 3, 8, 3, 2, 7, 9, 5},
	{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{255, 254, 253, 252, 251, 250, 249, 248, 247, 246, 245, 244, 243, 242, 241, 240, 239, 238},
}

// shareNode is node i of a FuzzShare cluster as figure v describes it:
// 1 to 4 GPUs, some shareable, and now and then its last GPU, when not
// shareable, split into MIG instances.
func shareNode(i int, v uint16) allot.Node {
	gpus := 1 + int(v%4)
	n := allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: "f", Labels: map[string]string{"rack": fmt.Sprintf("r%d", i%2)},
		Capacity:      allot.Resources{"gpu": int64(gpus), "cpu": 16_000},
		ShareableGPUs: allot.GPUSet(uint64(v>>3) & (1<<gpus - 1))}
	if last := gpus - 1; v>>12 != 0 && !n.ShareableGPUs.Has(last) {
		n.MIG = []allot.MIGPartition{{GPU: last, Profiles: allot.Resources{"mig-1g": 1 + int64(v>>12)%7}}}
	}
	return n
}

// shareAsk is what one pod of a step asks for: a share of a GPU (rarely
// a malformed one) or whole GPUs.
func shareAsk(a uint16) allot.Resources {
	switch {
	case a%7 == 0:
		return allot.Resources{"gpu": 1 + int64(a/7%3), "cpu": 500}
	case a%5 == 0:
		return allot.Resources{"mig-1g": 1 + int64(a/5%2), "cpu": 250}
	case a%31 == 1:
		return allot.Resources{"gpu-milli": 1000}
	case a%37 == 2:
		return allot.Resources{"gpu": 1, "gpu-milli": 300}
	}
	return allot.Resources{"gpu-milli": 1 + int64(a%999), "cpu": 250}
}

func checkShareWorld(t *testing.T, in shareInput, twoPhase bool) {
	b := allot.Builder{
		Now: genNow, Resources: []string{"gpu", "gpu-milli", "cpu", "mig-1g"}, GPUShareResource: "gpu-milli",
		Levels: []string{"rack"}, Flavors: []allot.Flavor{{Name: "f"}},
		Queues: []allot.Queue{{Name: "q", Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"},
			Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{
				{Name: "gpu", Nominal: 1000}, {Name: "gpu-milli", Nominal: 1_000_000}, {Name: "cpu", Nominal: 1_000_000},
				{Name: "mig-1g", Nominal: 1000}}}}}},
		Options: allot.Options{TwoPhasePreemption: twoPhase},
	}
	for i, v := range in.Nodes[:min(len(in.Nodes), 3)] {
		b.Nodes = append(b.Nodes, shareNode(i, v))
	}
	snap, err := b.Build()
	if err != nil {
		t.Fatalf("the cluster does not build: %v", err)
	}
	st := allot.NewStore(snap)
	ids := []string{}
	for k, s := range in.Steps {
		id := fmt.Sprintf("w%d", k)
		var ev allot.Event
		switch s.Kind % 5 {
		case 0, 1:
			req := allot.Request{ID: id, Queue: "q", Priority: int32(s.C % 3),
				PodSets: []allot.PodSet{{Name: "p", Count: 1 + int32(s.B%3), PerPod: shareAsk(s.A)}}}
			if _, err := st.Apply(allot.Submit{Workload: allot.Workload(req)}); err != nil {
				// A malformed request: refused, and a no when decided.
				if !knownError(err) {
					t.Fatalf("step %d: submit refused with an error callers cannot tell: %v", k, err)
				}
				if d := allot.Decide(st.Load(), req); d.Verdict != allot.VerdictReject {
					t.Fatalf("step %d: submit refused (%v), the decision %v %s", k, err, d.Verdict, d.Message)
				}
				continue
			}
			d := allot.Decide(st.Load(), req)
			checkShareDecision(t, st.Load(), req, d)
			if d.Verdict == allot.VerdictAdmit || d.Verdict == allot.VerdictPreempt {
				if _, err := st.Commit(d); err != nil {
					t.Fatalf("step %d: commit of a fresh decision: %v", k, err)
				}
				ids = append(ids, id)
			}
		case 2:
			nodes := st.Load().Nodes()
			if len(nodes) == 0 {
				continue
			}
			n := nodes[int(s.B)%len(nodes)]
			ps := allot.PodSet{Name: "p", Count: 1, Flavor: "f", PerPod: shareAsk(s.A), Nodes: []string{n.Name}}
			if s.C%2 == 0 {
				ps.GPUIndices = [][]int{{int(s.C/2) % 9}}
			}
			ev = allot.SetRunning{Workload: allot.Workload{ID: id, Queue: "q", AdmittedAt: genNow, PodSets: []allot.PodSet{ps}}}
			ids = append(ids, id)
		case 3:
			if len(ids) == 0 {
				continue
			}
			ev = allot.Finish{ID: ids[int(s.A)%len(ids)]}
		case 4:
			nodes := st.Load().Nodes()
			if len(nodes) == 0 {
				continue
			}
			i := int(s.B) % len(nodes)
			n := shareNode(i, s.A)
			n.Name = nodes[i].Name
			ev = allot.SetNode{Node: n}
		}
		if ev != nil {
			before := st.Load().Builder()
			if _, err := st.Apply(ev); err != nil {
				if !knownError(err) {
					t.Fatalf("step %d: %T refused with an error callers cannot tell: %v", k, ev, err)
				}
				if after := st.Load().Builder(); !reflect.DeepEqual(before, after) {
					t.Fatalf("step %d: a refused %T changed the store (%v)", k, ev, err)
				}
			}
		}
		label := fmt.Sprintf("step %d", k)
		checkNodeShares(t, label, st.Load())
		if s.C%3 != 0 && k < len(in.Steps)-1 {
			// Victims may go on evicting into the next steps.
			continue
		}
		for _, id := range st.Load().EvictingIDs() {
			if _, err := st.Apply(allot.Terminated{ID: id}); err != nil {
				t.Fatalf("%s: Terminated{%q}: %v", label, id, err)
			}
			checkNodeShares(t, label+" terminated "+id, st.Load())
		}
		checkShares(t, label, st.Load())
	}
}

// checkNodeShares checks what holds even while victims evict: no GPU's
// shares pass a whole one, a shared GPU is shareable and never free, and
// the free GPUs' count is their mask's.
func checkNodeShares(t *testing.T, label string, s *allot.Snapshot) {
	for _, n := range s.Nodes() {
		ns, _ := s.NodeStatus(n.Name)
		if ns.SharedGPUs&ns.FreeGPUs != 0 {
			t.Fatalf("%s: %s: GPUs %v shared and free", label, n.Name, ns.SharedGPUs&ns.FreeGPUs)
		}
		if ns.SharedGPUs&^n.ShareableGPUs != 0 {
			t.Fatalf("%s: %s: GPUs %v shared, not shareable (%v)", label, n.Name, ns.SharedGPUs, n.ShareableGPUs)
		}
		for k, h := range ns.ShareHeld {
			if h <= 0 || h > 1000 {
				t.Fatalf("%s: %s GPU %d: %d thousandths held", label, n.Name, ns.SharedGPUs.Indices()[k], h)
			}
		}
		if free := int64(ns.FreeGPUs.Len()); ns.Free["gpu"] != free {
			t.Fatalf("%s: %s: %d GPUs free by count, %d by mask", label, n.Name, ns.Free["gpu"], free)
		}
		for r, q := range ns.Free {
			if q < 0 {
				t.Fatalf("%s: %s: %d %s free", label, n.Name, q, r)
			}
		}
		for _, m := range n.MIG {
			if (ns.FreeGPUs | ns.SharedGPUs).Has(m.GPU) {
				t.Fatalf("%s: %s: partitioned GPU %d free or shared", label, n.Name, m.GPU)
			}
		}
	}
}

// checkShareDecision checks that every pod of an admitted fractional pod
// set holds exactly one GPU.
func checkShareDecision(t *testing.T, s *allot.Snapshot, req allot.Request, d allot.Decision) {
	if d.Verdict != allot.VerdictAdmit && d.Verdict != allot.VerdictPreempt {
		return
	}
	share := req.PodSets[0].PerPod["gpu-milli"]
	for _, pp := range d.Placement {
		if share > 0 && pp.GPUs.Len() != 1 {
			t.Fatalf("%s: a fractional pod placed on GPUs %v of %s", req.ID, pp.GPUs, pp.Node)
		}
	}
}

// checkShares checks the shares of every node of s against its running
// pods, that no whole-GPU pod holds a partitioned GPU, and that its
// Builder builds the same nodes.
func checkShares(t *testing.T, label string, s *allot.Snapshot) {
	type gpu struct {
		node string
		i    int
	}
	held := map[gpu]int64{}
	whole := map[gpu]bool{}
	b := s.Builder()
	for _, w := range b.Running {
		for _, ps := range w.PodSets {
			share := ps.PerPod["gpu-milli"]
			for k, n := range ps.Nodes {
				var idx []int
				if k < len(ps.GPUIndices) {
					idx = ps.GPUIndices[k]
				}
				if share > 0 {
					if len(idx) != 1 {
						t.Fatalf("%s: %s: a fractional pod on GPUs %v", label, w.ID, idx)
					}
					held[gpu{n, idx[0]}] += share
					continue
				}
				for _, i := range idx {
					whole[gpu{n, i}] = true
				}
			}
		}
	}
	checkNodeShares(t, label, s)
	for _, n := range b.Nodes {
		for _, m := range n.MIG {
			if whole[gpu{n.Name, m.GPU}] {
				t.Fatalf("%s: %s: a whole-GPU pod on partitioned GPU %d", label, n.Name, m.GPU)
			}
		}
		ns, _ := s.NodeStatus(n.Name)
		for k, i := range ns.SharedGPUs.Indices() {
			g := gpu{n.Name, i}
			switch {
			case int64(ns.ShareHeld[k]) != held[g]:
				t.Fatalf("%s: %s GPU %d: %d thousandths held, its pods hold %d", label, n.Name, i, ns.ShareHeld[k], held[g])
			case whole[g]:
				t.Fatalf("%s: %s GPU %d: shared and held whole", label, n.Name, i)
			}
			delete(held, g)
		}
	}
	for g, m := range held {
		t.Fatalf("%s: %s GPU %d: its pods hold %d thousandths, the node reports none", label, g.node, g.i, m)
	}
	again, err := b.Build()
	if err != nil {
		t.Fatalf("%s: the Builder does not build: %v", label, err)
	}
	for _, n := range b.Nodes {
		want, _ := s.NodeStatus(n.Name)
		got, _ := again.NodeStatus(n.Name)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("%s: %s rebuilt: %+v, want %+v", label, n.Name, got, want)
		}
	}
}

// TestShareSeeds runs FuzzShare's checks on many generated inputs, so
// that a plain go test covers more than the seed corpus.
func TestShareSeeds(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 50
	}
	for i := range n {
		data := []byte(fmt.Sprintf("share world %d: %d", i, i*7919))
		for j := range i % 40 {
			data = append(data, byte(i*31+j*17))
		}
		var in shareInput
		gofuzz.NewFromGoFuzz(data).NilChance(0).NumElements(1, 16).Fuzz(&in)
		checkShareWorld(t, in, false)
		checkShareWorld(t, in, true)
	}
}
