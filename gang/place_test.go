package gang_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/topology"
)

// tnode describes a node of a table test's cluster.
type tnode struct {
	name   string
	labels []string // one per level, broad to narrow
	gpus   int
	// busy lists node-local GPU indices already booked.
	busy    []int
	groups  []int
	cpu     int64 // capacity in millicores; 0 means 64 cores
	maxPods int32
	// cordoned nodes take nothing.
	cordoned bool
	flavor   int32
}

// tcluster builds a state from node descriptions; nodes of flavor f are
// counted for len(flavors) = 1 + the largest flavor used.
func tcluster(t *testing.T, levels []string, nodes []tnode) *topology.State {
	t.Helper()
	flavors := int32(1)
	specs := make([]topology.NodeSpec, len(nodes))
	for i, n := range nodes {
		cpu := n.cpu
		if cpu == 0 {
			cpu = 64000
		}
		specs[i] = topology.NodeSpec{Name: n.name, Flavor: n.flavor, Labels: n.labels, Groups: n.groups, MaxPods: n.maxPods,
			Capacity: res.Vec{resGPU: int64(n.gpus), resCPU: cpu}}
		flavors = max(flavors, n.flavor+1)
	}
	topo, err := topology.New(levels, nRes, resGPU, int(flavors), specs)
	if err != nil {
		t.Fatal(err)
	}
	st := topology.NewState(topo, 0)
	for _, n := range nodes {
		i, _ := topo.NodeIndex(n.name)
		if len(n.busy) > 0 {
			var mask uint64
			for _, g := range n.busy {
				mask |= 1 << g
			}
			st.Allocate(i, mask, res.Vec{resGPU: int64(len(n.busy))}, 1)
		}
		if n.cordoned {
			st.SetCondition(i, true, false, 0)
		}
	}
	st.Flush()
	return st
}

// podsPerNode renders assignments as "n0:3 n1:3 n3:1", nodes in path order.
func podsPerNode(st *topology.State, asg []gang.Assignment) string {
	counts := map[int32]int{}
	var order []int32
	for _, a := range asg {
		if counts[a.Node] == 0 {
			order = append(order, a.Node)
		}
		counts[a.Node]++
	}
	slices.Sort(order)
	parts := make([]string, len(order))
	for i, n := range order {
		parts[i] = fmt.Sprintf("%s:%d", st.T.NodeName(int32(n)), counts[n])
	}
	return strings.Join(parts, " ")
}

// gpuPod is a pod set of count pods of g GPUs each, no cpu.
func gpuPod(count int64, g int, mode gang.Mode, level int, policy gang.Policy) gang.PodSet {
	return gang.PodSet{Count: count, GPUs: g, Res: res.Vec{resGPU: int64(g)}, Mode: mode, Level: level, Policy: policy}
}

// nodesOf makes count nodes named prefix+i with the given free GPU counts
// (capacity 8, the rest busy) under the labels.
func nodesWithFree(prefix string, labels []string, free ...int) []tnode {
	out := make([]tnode, len(free))
	for i, f := range free {
		var busy []int
		for g := f; g < 8; g++ {
			busy = append(busy, g)
		}
		out[i] = tnode{name: fmt.Sprintf("%s%d", prefix, i), labels: labels, gpus: 8, busy: busy}
	}
	return out
}

func TestPlaceBestFit(t *testing.T) {
	// Levels block, rack: tree levels 1 and 2, nodes at 3.
	levels := []string{"block", "rack"}
	var cluster []tnode
	cluster = append(cluster, nodesWithFree("a", []string{"b0", "r0"}, 8, 8)...) // r0: 16 free
	cluster = append(cluster, nodesWithFree("b", []string{"b0", "r1"}, 4, 2)...) // r1: 6 free
	cluster = append(cluster, nodesWithFree("c", []string{"b1", "r2"}, 3, 3)...) // r2: 6 free
	cluster = append(cluster, nodesWithFree("d", []string{"b1", "r3"}, 8, 1)...) // r3: 9 free
	// KEP §1.4: node capacities 3, 3, 2, 1 in one rack.
	kep := nodesWithFree("k", []string{"b0", "r0"}, 3, 3, 2, 1)

	tests := []struct {
		name  string
		nodes []tnode
		ps    gang.PodSet
		want  string
	}{
		{
			// r1 and r2 both hold exactly 6: the tightest wins, ties by
			// path (b0/r1 before b1/r2). Inside r1, greedy: 4 then 2.
			name: "required rack, tightest domain, ties by path", nodes: cluster,
			ps: gpuPod(6, 1, gang.Required, 2, gang.Pack), want: "b0:4 b1:2",
		},
		{
			// 7 fits only r3 (9) and r0 (16): the tighter one.
			name: "required rack, tightest that holds it", nodes: cluster,
			ps: gpuPod(7, 1, gang.Required, 2, gang.Pack), want: "d0:7",
		},
		{
			// Blocks: b0 holds 22, b1 holds 15: b1 is the tightest that
			// holds 10. Inside it the children are pooled and taken from
			// the largest (r3's d0: 8), the last by best fit: the node with
			// exactly 2... none; the tightest ≥ 2 is c0 (3, first by path).
			name: "required block, best fit inside", nodes: cluster,
			ps: gpuPod(10, 1, gang.Required, 1, gang.Pack), want: "c0:2 d0:8",
		},
		{
			name: "required node, tightest node", nodes: cluster,
			ps: gpuPod(3, 1, gang.Required, 3, gang.Pack), want: "c0:3",
		},
		{
			// KEP §1.4 BestFit: 7 pods on nodes of 3, 3, 2, 1 ⇒ 3 + 3 + 1,
			// the exact-fit node last, not 3 + 3 + 2.
			name: "KEP 3,3,2,1 preferred rack", nodes: kep,
			ps: gpuPod(7, 1, gang.Preferred, 2, gang.Pack), want: "k0:3 k1:3 k3:1",
		},
		{
			name: "KEP 3,3,2,1 required block", nodes: kep,
			ps: gpuPod(7, 1, gang.Required, 1, gang.Pack), want: "k0:3 k1:3 k3:1",
		},
		{
			// Unconstrained fills the least free nodes first: 1, 2, then 1
			// of a 3 (Kueue's LeastFreeCapacity).
			name: "KEP 3,3,2,1 unconstrained", nodes: kep,
			ps: gpuPod(4, 1, gang.Unconstrained, 0, gang.Pack), want: "k0:1 k2:2 k3:1",
		},
		{
			// No rack holds 17: preferred degrades to the block, then the
			// whole cluster (b0 22 ≥ 17, b1 15).
			name: "preferred rack degrades to block", nodes: cluster,
			ps: gpuPod(17, 1, gang.Preferred, 2, gang.Pack), want: "a0:8 a1:8 b1:1",
		},
		{
			name: "preferred rack degrades to the cluster", nodes: cluster,
			ps: gpuPod(30, 1, gang.Preferred, 2, gang.Pack), want: "a0:8 a1:8 b0:4 b1:2 d0:8",
		},
		{
			// One pod per node: r0 has 2 nodes, r1 2, r3 2: the first by path.
			name: "spread required rack", nodes: cluster,
			ps: gpuPod(2, 1, gang.Required, 2, gang.Spread), want: "a0:1 a1:1",
		},
		{
			// 3 pods of 2 GPUs one per node: 3 nodes of b1 hold a 2-GPU pod
			// (c0, c1, d0; d1 has 1 free), the tightest block.
			name: "spread required block", nodes: cluster,
			ps: gpuPod(3, 2, gang.Required, 1, gang.Spread), want: "c0:1 c1:1 d0:1",
		},
	}
	// Every case twice: as small clusters are placed, and with the
	// counter-guided search for one-pod nodes that large ones take.
	for _, everywhere := range []bool{false, true} {
		if everywhere {
			defer gang.SearchOnesEverywhere()()
		}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/onesSearch=%t", tt.name, everywhere), func(t *testing.T) {
				st := tcluster(t, levels, tt.nodes)
				var p gang.Placer
				p.Reset(st)
				ps := tt.ps
				asg, fail, ok := p.Place([]gang.PodSet{ps}, nil)
				if !ok {
					t.Fatalf("not placed: %+v", fail)
				}
				if err := checkAssignments(st, &ps, asg); err != nil {
					t.Fatal(err)
				}
				if got := podsPerNode(st, asg); got != tt.want {
					t.Errorf("got %s, want %s", got, tt.want)
				}
			})
		}
	}
}

func TestPlaceRequiredFailure(t *testing.T) {
	levels := []string{"rack"}
	nodes := append(nodesWithFree("a", []string{"r0"}, 4, 3), nodesWithFree("b", []string{"r1"}, 8)...)
	st := tcluster(t, levels, nodes)
	var p gang.Placer
	p.Reset(st)
	_, fail, ok := p.Place([]gang.PodSet{gpuPod(9, 1, gang.Required, 1, gang.Pack)}, nil)
	if ok {
		t.Fatal("placed 9 pods in a rack of at most 8")
	}
	if want := (gang.Failure{PodSet: 0, Level: 1, Fit: 8, Need: 9}); fail != want {
		t.Errorf("failure %+v, want %+v", fail, want)
	}
	// The second pod set fails: its index is reported, with the most any
	// node holds.
	p.Reset(st)
	_, fail, ok = p.Place([]gang.PodSet{gpuPod(1, 1, gang.Unconstrained, 0, gang.Pack), gpuPod(3, 4, gang.Required, 2, gang.Pack)}, nil)
	if want := (gang.Failure{PodSet: 1, Level: 2, Fit: 2, Need: 3}); ok || fail != want {
		t.Errorf("ok %v, failure %+v; want %+v", ok, fail, want)
	}
}

// sliceDomains checks that every size consecutive pods sit in one domain of
// tree level l and returns each slice's domain.
func sliceDomains(t *testing.T, st *topology.State, asg []gang.Assignment, l int, size int) []string {
	t.Helper()
	var out []string
	for i := 0; i < len(asg); i += size {
		d := domainOf(st.T, asg[i].Node, l)
		for _, a := range asg[i:min(i+size, len(asg))] {
			if got := domainOf(st.T, a.Node, l); got != d {
				t.Errorf("slice of pods %d..%d spans %s and %s", i, i+size-1, d, got)
			}
		}
		out = append(out, d)
	}
	return out
}

func TestPlaceSlices(t *testing.T) {
	t.Run("rack slices stay whole", func(t *testing.T) {
		// Racks of 6, 6 and 4 free GPUs; 12 pods in rack slices of 4. A
		// split that ignores slices would take 6 + 6; each rack must get
		// one whole slice, its own pods split among its own nodes.
		nodes := append(nodesWithFree("a", []string{"r0"}, 3, 3), nodesWithFree("b", []string{"r1"}, 6)...)
		nodes = append(nodes, nodesWithFree("c", []string{"r2"}, 4)...)
		st := tcluster(t, []string{"rack"}, nodes)
		ps := gpuPod(12, 1, gang.Unconstrained, 0, gang.Pack)
		ps.Slices = []gang.SliceSpec{{Level: 1, Size: 4}}
		var p gang.Placer
		p.Reset(st)
		asg, fail, ok := p.Place([]gang.PodSet{ps}, nil)
		if !ok {
			t.Fatalf("not placed: %+v", fail)
		}
		if err := checkAssignments(st, &ps, asg); err != nil {
			t.Fatal(err)
		}
		got := sliceDomains(t, st, asg, 1, 4)
		if want := []string{"r0", "r1", "r2"}; !slices.Equal(got, want) {
			t.Errorf("slices in %v, want %v (%s)", got, want, podsPerNode(st, asg))
		}
	})
	t.Run("slices across two racks, nodes pooled", func(t *testing.T) {
		// 8 pods in rack slices of 4 on r0 (nodes of 3 and 3 free: one
		// slice) and r1 (6 and 1: one slice). Each rack must get exactly
		// 4 pods: below the slice level the descent splits each rack's
		// pods among its own nodes, where taking nodes from both racks as
		// one pool would give r1's node 6 and r0 2, splitting a slice.
		nodes := append(nodesWithFree("a", []string{"r0"}, 3, 3), nodesWithFree("b", []string{"r1"}, 6, 1)...)
		st := tcluster(t, []string{"rack"}, nodes)
		ps := gpuPod(8, 1, gang.Unconstrained, 0, gang.Pack)
		ps.Slices = []gang.SliceSpec{{Level: 1, Size: 4}}
		var p gang.Placer
		p.Reset(st)
		asg, fail, ok := p.Place([]gang.PodSet{ps}, nil)
		if !ok {
			t.Fatalf("not placed: %+v", fail)
		}
		got := sliceDomains(t, st, asg, 1, 4)
		if want := []string{"r0", "r1"}; !slices.Equal(got, want) {
			t.Errorf("slices in %v, want %v (%s)", got, want, podsPerNode(st, asg))
		}
	})
	t.Run("KEP multi-layer 64 pods, block 32, rack 16", func(t *testing.T) {
		// KEP §1.8: blocks of 2 racks × 4 hosts × 8 pods; 64 pods with
		// block slices of 32 and rack slices of 16 ⇒ one block, 32 per
		// rack, 8 per host. Block b0 has a busy GPU, so it holds only 32:
		// the pods go to b1.
		var nodes []tnode
		for b := range 2 {
			for r := range 2 {
				for h := range 4 {
					n := tnode{name: fmt.Sprintf("b%dr%dh%d", b, r, h), labels: []string{fmt.Sprintf("b%d", b), fmt.Sprintf("r%d", r)}, gpus: 8}
					if b == 0 && r == 1 && h == 2 {
						n.busy = []int{0}
					}
					nodes = append(nodes, n)
				}
			}
		}
		st := tcluster(t, []string{"block", "rack"}, nodes)
		ps := gpuPod(64, 1, gang.Required, 1, gang.Pack)
		ps.Slices = []gang.SliceSpec{{Level: 1, Size: 32}, {Level: 2, Size: 16}}
		var p gang.Placer
		p.Reset(st)
		asg, fail, ok := p.Place([]gang.PodSet{ps}, nil)
		if !ok {
			t.Fatalf("not placed: %+v", fail)
		}
		want := "b1r0h0:8 b1r0h1:8 b1r0h2:8 b1r0h3:8 b1r1h0:8 b1r1h1:8 b1r1h2:8 b1r1h3:8"
		if got := podsPerNode(st, asg); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
		sliceDomains(t, st, asg, 1, 32)
		sliceDomains(t, st, asg, 2, 16)
	})
	t.Run("KEP host slices of 2, best fit", func(t *testing.T) {
		// KEP §1.8 ("Two-level"): a rack whose hosts hold 6, 5, 4, 3 and 2
		// pods, host slices of 2, 12 pods. Among hosts with equal slice
		// counts BestFit prefers fewer leftover pods ⇒ 6, –, 4, –, 2: the
		// descent ranks hosts by their counts before rounding down to
		// whole slices, as Kueue does.
		st := tcluster(t, []string{"rack"}, nodesWithFree("h", []string{"r0"}, 6, 5, 4, 3, 2))
		ps := gpuPod(12, 1, gang.Required, 1, gang.Pack)
		ps.Slices = []gang.SliceSpec{{Level: 2, Size: 2}}
		var p gang.Placer
		p.Reset(st)
		asg, fail, ok := p.Place([]gang.PodSet{ps}, nil)
		if !ok {
			t.Fatalf("not placed: %+v", fail)
		}
		if got, want := podsPerNode(st, asg), "h0:6 h2:4 h4:2"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("host slices hold whole slices only", func(t *testing.T) {
		// Hosts of 3 free: one slice of 2 each; 6 pods need 3 hosts.
		st := tcluster(t, []string{"rack"}, nodesWithFree("h", []string{"r0"}, 3, 3, 3, 1))
		ps := gpuPod(6, 1, gang.Required, 1, gang.Pack)
		ps.Slices = []gang.SliceSpec{{Level: 2, Size: 2}}
		var p gang.Placer
		p.Reset(st)
		asg, fail, ok := p.Place([]gang.PodSet{ps}, nil)
		if !ok {
			t.Fatalf("not placed: %+v", fail)
		}
		if got, want := podsPerNode(st, asg), "h0:2 h1:2 h2:2"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
		// 8 pods do not fit: the rack holds 3 slices.
		p.Reset(st)
		ps.Count = 8
		if _, fail, ok := p.Place([]gang.PodSet{ps}, nil); ok || fail.Fit != 6 {
			t.Errorf("8 pods: ok %v, failure %+v; want fit 6", ok, fail)
		}
	})
}

func TestPlaceBalanced(t *testing.T) {
	// KEP §1.7: racks [[15],[15]], 25 pods preferred at the rack level ⇒
	// 13 and 12.
	nodes := []tnode{
		{name: "h0", labels: []string{"b0", "r0"}, gpus: 15},
		{name: "h1", labels: []string{"b0", "r1"}, gpus: 15},
	}
	st := tcluster(t, []string{"block", "rack"}, nodes)
	ps := gpuPod(25, 1, gang.Preferred, 2, gang.Balanced)
	var p gang.Placer
	p.Reset(st)
	asg, fail, ok := p.Place([]gang.PodSet{ps}, nil)
	if !ok {
		t.Fatalf("not placed: %+v", fail)
	}
	if err := checkAssignments(st, &ps, asg); err != nil {
		t.Fatal(err)
	}
	if got, want := podsPerNode(st, asg), "h0:13 h1:12"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// Pack on the same cluster fills one rack first.
	p.Reset(st)
	ps.Policy = gang.Pack
	asg, _, _ = p.Place([]gang.PodSet{ps}, nil)
	if got, want := podsPerNode(st, asg), "h0:15 h1:10"; got != want {
		t.Errorf("pack: got %s, want %s", got, want)
	}
	// KEP: [[20,10],[15,15]], 20 pods ⇒ all on the 20 host.
	st = tcluster(t, []string{"block", "rack"}, []tnode{
		{name: "a0", labels: []string{"b0", "r0"}, gpus: 20}, {name: "a1", labels: []string{"b0", "r0"}, gpus: 10},
		{name: "c0", labels: []string{"b0", "r1"}, gpus: 15}, {name: "c1", labels: []string{"b0", "r1"}, gpus: 15},
	})
	p.Reset(st)
	ps = gpuPod(20, 1, gang.Preferred, 2, gang.Balanced)
	asg, fail, ok = p.Place([]gang.PodSet{ps}, nil)
	if !ok {
		t.Fatalf("not placed: %+v", fail)
	}
	if got, want := podsPerNode(st, asg), "a0:20"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestPlaceGroups(t *testing.T) {
	// A leader (1 pod, 1 GPU, no constraint of its own) and 4 workers (2
	// GPUs each, required rack) share a rack. r0 holds the workers (8 GPUs)
	// but not the leader as well; r1 holds both.
	nodes := []tnode{
		{name: "a0", labels: []string{"r0"}, gpus: 8},
		{name: "b0", labels: []string{"r1"}, gpus: 8},
		{name: "b1", labels: []string{"r1"}, gpus: 8, busy: []int{0, 1, 2, 3, 4, 5, 6}},
	}
	st := tcluster(t, []string{"rack"}, nodes)
	leader := gpuPod(1, 1, gang.Unconstrained, 0, gang.Pack)
	leader.Group = 1
	workers := gpuPod(4, 2, gang.Required, 1, gang.Pack)
	workers.Group = 1
	var p gang.Placer
	p.Reset(st)
	asg, fail, ok := p.Place([]gang.PodSet{leader, workers}, nil)
	if !ok {
		t.Fatalf("not placed: %+v", fail)
	}
	if len(asg) != 5 {
		t.Fatalf("%d assignments, want 5", len(asg))
	}
	// Request order: the leader first, then the workers, all in r1.
	for i, a := range asg {
		if d := domainOf(st.T, a.Node, 1); d != "r1" {
			t.Errorf("pod %d in %s, want r1 (%s)", i, d, podsPerNode(st, asg))
		}
	}
	if err := checkAssignments(st, &leader, asg[:1]); err != nil {
		t.Errorf("leader: %v", err)
	}
	if err := checkAssignments(st, &workers, asg[1:]); err != nil {
		t.Errorf("workers: %v", err)
	}
	if asg[0].GPUs&asg[1].GPUs != 0 && asg[0].Node == asg[1].Node {
		t.Errorf("leader and worker share GPUs")
	}

	// Without the group, the leader takes the least free node (b1, in r1)
	// and the workers the first rack that holds them (r0).
	leader.Group, workers.Group = 0, 0
	p.Reset(st)
	asg, _, ok = p.Place([]gang.PodSet{leader, workers}, nil)
	if got, want := podsPerNode(st, asg), "a0:4 b1:1"; !ok || got != want {
		t.Errorf("ungrouped: ok %v, %s; want %s", ok, got, want)
	}

	// A group that fits nowhere fails, whole.
	workers.Count, workers.Group, leader.Group = 5, 1, 1
	p.Reset(st)
	asg, fail, ok = p.Place([]gang.PodSet{leader, workers}, nil)
	if ok || len(asg) != 0 {
		t.Errorf("oversized group: ok %v, %d assignments", ok, len(asg))
	}
	if fail.PodSet != 1 || fail.Need != 5 {
		t.Errorf("oversized group: failure %+v, want pod set 1 needing 5", fail)
	}
}

func TestMeasureDemand(t *testing.T) {
	// n0: 1 free GPU. n1: islands 4+4 with 2 and 1 free. n2: 8 free.
	// n3: cordoned, 8 free (not counted). n4: flavor 1, 8 free.
	nodes := []tnode{
		{name: "n0", labels: []string{"r0"}, gpus: 8, busy: []int{1, 2, 3, 4, 5, 6, 7}},
		{name: "n1", labels: []string{"r0"}, gpus: 8, groups: []int{4, 4}, busy: []int{0, 1, 4, 5, 6}},
		{name: "n2", labels: []string{"r0"}, gpus: 8},
		{name: "n3", labels: []string{"r0"}, gpus: 8, cordoned: true},
		{name: "n4", labels: []string{"r1"}, gpus: 8, flavor: 1},
	}
	st := tcluster(t, []string{"rack"}, nodes)
	// The mix: 1 pod of 2 GPUs and 3 pods of 3 GPUs, both on flavor 0.
	mix := []gang.Demand{
		{Count: 1, GPUs: 2, Res: res.Vec{resGPU: 2}, Flavors: 1},
		{Count: 3, GPUs: 3, Res: res.Vec{resGPU: 3}, Flavors: 1},
	}
	got := gang.MeasureDemand(st, mix)
	// n0: nothing fits (4 of 4 pods stranded). n1: the 2-GPU pod fits the
	// first island, a 3-GPU pod fits no island (3 of 4). n2: everything
	// fits. n4: wrong flavor, everything stranded (4 of 4).
	want := gang.Fragmentation{
		NodesWithFree:    4,
		StrandedNodes:    2,
		NodeShare:        0.5,
		FreeGPUs:         1 + 3 + 8 + 8,
		ExpectedStranded: 1*4.0/4 + 3*3.0/4 + 8*4.0/4,
	}
	want.StrandedShare = want.ExpectedStranded / float64(want.FreeGPUs)
	if !closeFrag(got, want) {
		t.Errorf("MeasureDemand:\n got %+v\nwant %+v", got, want)
	}
	// Its cost is counting, not allocating: what it allocates does not
	// grow with the nodes times the shapes (it put a pod set on the heap
	// for each pair, which a simulator's samples paid for in collection).
	long := slices.Repeat(mix, 50)
	few := testing.AllocsPerRun(20, func() { gang.MeasureDemand(st, mix) })
	if many := testing.AllocsPerRun(20, func() { gang.MeasureDemand(st, long) }); many > few {
		t.Errorf("MeasureDemand allocates %v times for 100 shapes, %v for 2", many, few)
	}
	// An empty mix strands nothing.
	if got := gang.MeasureDemand(st, nil); got.StrandedNodes != 0 || got.ExpectedStranded != 0 || got.NodesWithFree != 4 || got.FreeGPUs != 20 {
		t.Errorf("empty mix: %+v", got)
	}
	// A full cluster has nothing to strand.
	full := tcluster(t, []string{"rack"}, []tnode{{name: "x", labels: []string{"r0"}, gpus: 2, busy: []int{0, 1}}})
	if got := gang.MeasureDemand(full, mix); got != (gang.Fragmentation{}) {
		t.Errorf("full cluster: %+v", got)
	}
}

func closeFrag(a, b gang.Fragmentation) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return a.NodesWithFree == b.NodesWithFree && a.StrandedNodes == b.StrandedNodes && a.FreeGPUs == b.FreeGPUs &&
		near(a.NodeShare, b.NodeShare) && near(a.ExpectedStranded, b.ExpectedStranded) && near(a.StrandedShare, b.StrandedShare)
}

func TestPlaceLargerThanEveryIsland(t *testing.T) {
	// A node of 5 GPUs in islands of 2 and 3, GPU 4 busy: free 0-1 and 2-3.
	// A 4-GPU pod is larger than every island, so it may take GPUs
	// anywhere: it fits (GPUFits says 1). The domain counters must agree,
	// counting every GPU count on a node and not stopping at the first
	// that fits nowhere (3 here).
	st := tcluster(t, []string{"rack"}, []tnode{{name: "n0", labels: []string{"r0"}, gpus: 5, groups: []int{2, 3}, busy: []int{4}}})
	node := st.T.Node(0)
	if got := node.GPUFits(st.FreeMask(0), 4); got != 1 {
		t.Fatalf("GPUFits = %d, want 1", got)
	}
	ps := gpuPod(1, 4, gang.Required, 1, gang.Pack)
	var p gang.Placer
	p.Reset(st)
	asg, fail, ok := p.Place([]gang.PodSet{ps}, nil)
	if !ok {
		t.Fatalf("not placed: %+v (State.Fits(rack, 4) = %d)", fail, st.Fits(st.T.NodeDomains(0)[1], 4))
	}
	if err := checkAssignments(st, &ps, asg); err != nil {
		t.Fatal(err)
	}
}

func TestPlaceRemembersEarlierCalls(t *testing.T) {
	// Reset "forgets earlier pod sets": until then, a pod set placed by one
	// Place call is in the overlay for the next call. allot's decider
	// relies on it, placing a request's pod sets one call at a time: the
	// second call must not book the first one's GPUs again.
	st := tcluster(t, []string{"rack"}, []tnode{{name: "n0", labels: []string{"r0"}, gpus: 8}})
	var p gang.Placer
	p.Reset(st)
	first, _, ok := p.Place([]gang.PodSet{gpuPod(1, 8, gang.Unconstrained, 0, gang.Pack)}, nil)
	if !ok {
		t.Fatal("the first pod set does not fit")
	}
	second, _, ok := p.Place([]gang.PodSet{gpuPod(1, 8, gang.Unconstrained, 0, gang.Pack)}, nil)
	if ok {
		t.Errorf("the second call placed %v on the GPUs of the first, %v", second, first)
	}
}

func TestUnconstrainedSeesIslands(t *testing.T) {
	// Rack r0 holds two nodes of islands 4 and 4. n0 has GPUs 0-2 and 7
	// free: four free GPUs, but a 2-GPU pod fits once (two in the first
	// island, none in the second); n1 is empty. Rack r1 holds n2, without
	// islands, with two GPUs free: it also fits the pod once. Least free
	// first, ties by path, the pod goes to n0, although r0's fewest free
	// GPUs (four) would make two pods on a node without islands: r0's
	// counters must not rule n0 out.
	nodes := []tnode{
		{name: "n0", labels: []string{"r0"}, gpus: 8, groups: []int{4, 4}, busy: []int{3, 4, 5, 6}},
		{name: "n1", labels: []string{"r0"}, gpus: 8, groups: []int{4, 4}},
		{name: "n2", labels: []string{"r1"}, gpus: 8, busy: []int{0, 1, 2, 3, 4, 5}},
	}
	// Full nodes in a third rack make the cluster large enough for the
	// counter-guided search.
	for i := range 300 {
		nodes = append(nodes, tnode{name: fmt.Sprintf("x%03d", i), labels: []string{"r2"}, gpus: 8, busy: []int{0, 1, 2, 3, 4, 5, 6, 7}})
	}
	st := tcluster(t, []string{"rack"}, nodes)
	if got := st.T.Node(0).GPUFits(st.FreeMask(0), 2); got != 1 {
		t.Fatalf("GPUFits(n0) = %d, want 1", got)
	}
	ps := gpuPod(1, 2, gang.Unconstrained, 0, gang.Pack)
	var p gang.Placer
	p.Reset(st)
	asg, fail, ok := p.Place([]gang.PodSet{ps}, nil)
	if !ok || len(asg) != 1 {
		t.Fatalf("not placed: %+v", fail)
	}
	if name := st.T.NodeName(asg[0].Node); name != "n0" {
		t.Fatalf("placed on %s, want n0 (least free, first in path order)", name)
	}
}

// TestSlicesOnDeepTopologies: slice sizes hold at every level however many
// levels the topology has; a slice of two pods at the node level of a
// ten-level tree keeps both pods on one node.
func TestSlicesOnDeepTopologies(t *testing.T) {
	levels := make([]string, 10)
	for i := range levels {
		levels[i] = fmt.Sprintf("l%d", i)
	}
	var nodes []tnode
	for i := 0; i < 4; i++ {
		labels := make([]string, len(levels))
		for l := range labels {
			labels[l] = fmt.Sprintf("v%d", i/2)
		}
		nodes = append(nodes, tnode{name: fmt.Sprintf("n%d", i), labels: labels, gpus: 8})
	}
	st := tcluster(t, levels, nodes)
	slice := []gang.SliceSpec{{Level: st.T.NodeLevel(), Size: 2}}
	var p gang.Placer
	p.Reset(st)
	ps := gang.PodSet{Count: 4, GPUs: 1, Res: res.Vec{resGPU: 1}, Mode: gang.Preferred, Level: 1, Policy: gang.Pack, Slices: slice}
	asg, fail, ok := p.Place([]gang.PodSet{ps}, nil)
	if !ok {
		t.Fatalf("not placed: %+v", fail)
	}
	if err := checkAssignments(st, &ps, asg); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(asg); i += 2 {
		if asg[i].Node != asg[i+1].Node {
			t.Fatalf("slice of pods %d..%d on nodes %d and %d", i, i+1, asg[i].Node, asg[i+1].Node)
		}
	}
	// Spread allows one pod a node, a node-level slice asks two: never.
	p.Reset(st)
	spread := ps
	spread.Policy = gang.Spread
	if asg, _, ok := p.Place([]gang.PodSet{spread}, nil); ok {
		t.Fatalf("spread pods in node slices of two placed: %v", asg)
	}
}
