package gang_test

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/topology"
)

func TestPlaceUnconstrained(t *testing.T) {
	levels := []string{"block", "rack"}
	// cpuPod is gpuPod asking for cores too.
	cpuPod := func(count int64, g int, cores int64) gang.PodSet {
		ps := gpuPod(count, g, gang.Unconstrained, 0, gang.Pack)
		ps.Res[resCPU] = cores * 1000
		return ps
	}
	tests := []struct {
		name  string
		nodes []tnode
		ps    gang.PodSet
		want  string
	}{
		{
			// n3 (2 free) is the least free node but holds only 2; of the
			// nodes that hold 3 (n0 with 8, n1 with 4, n2 with 3), n2 has
			// the fewest to spare.
			name:  "one node holds it: the least free that does",
			nodes: nodesWithFree("n", []string{"b0", "r0"}, 8, 4, 3, 2),
			ps:    gpuPod(3, 1, gang.Unconstrained, 0, gang.Pack), want: "n2:3",
		},
		{
			// No node holds 6 (3 at most): the least free first, 1, 2, 2,
			// then 1 of the 3.
			name:  "no node holds it: least free first",
			nodes: nodesWithFree("n", []string{"b0", "r0"}, 3, 1, 2, 2),
			ps:    gpuPod(6, 1, gang.Unconstrained, 0, gang.Pack), want: "n0:1 n1:1 n2:2 n3:2",
		},
		{
			// b1 is the tightest block that holds 3 (4 free) and b0 the
			// emptiest, but the choice is among nodes, whatever their
			// domains: a3 in b0 holds exactly 3.
			name: "the choice is among nodes, not domains",
			nodes: append(nodesWithFree("a", []string{"b0", "r0"}, 8, 8, 8, 3),
				nodesWithFree("b", []string{"b1", "r1"}, 4)...),
			ps: gpuPod(3, 1, gang.Unconstrained, 0, gang.Pack), want: "a3:3",
		},
		{
			// a1 and b0 both hold exactly 2: the first by path (b0/r0/a1
			// before b1/r1/b0) takes it, although b1's rack is fuller.
			name: "equally free nodes: the first by path",
			nodes: append(nodesWithFree("a", []string{"b0", "r0"}, 8, 2),
				nodesWithFree("b", []string{"b1", "r1"}, 2, 1)...),
			ps: gpuPod(2, 1, gang.Unconstrained, 0, gang.Pack), want: "a1:2",
		},
		{
			// 2-GPU pods: n0 (5 free GPUs) and n1 (4) both hold exactly 2.
			// They tie, as Kueue counts free capacity in pods of the pod
			// set, not in GPUs: the first by path takes it.
			name:  "free capacity counts in pods of the pod set",
			nodes: nodesWithFree("n", []string{"b0", "r0"}, 5, 4),
			ps:    gpuPod(2, 2, gang.Unconstrained, 0, gang.Pack), want: "n0:2",
		},
		{
			// 1 GPU and 8 cores a pod: n0 has 8 free GPUs but 16 cores, so
			// it holds 2; n1 has 3 free GPUs and 64 cores, so 3. n0 holds 2
			// with none to spare.
			name: "cores limit what a node holds",
			nodes: []tnode{
				{name: "n0", labels: []string{"b0", "r0"}, gpus: 8, cpu: 16000},
				{name: "n1", labels: []string{"b0", "r0"}, gpus: 8, busy: []int{3, 4, 5, 6, 7}},
			},
			ps: cpuPod(2, 1, 8), want: "n0:2",
		},
		{
			// n0 is the tightest holder but takes at most 2 more pods.
			name: "a pod limit limits what a node holds",
			nodes: []tnode{
				{name: "n0", labels: []string{"b0", "r0"}, gpus: 8, busy: []int{0, 1, 2, 3, 4}, maxPods: 2},
				{name: "n1", labels: []string{"b0", "r0"}, gpus: 8, busy: []int{0, 1, 2, 3}},
			},
			ps: gpuPod(3, 1, gang.Unconstrained, 0, gang.Pack), want: "n1:3",
		},
		{
			// A cordoned node that would hold exactly 3 takes nothing.
			name: "a cordoned node holds nothing",
			nodes: []tnode{
				{name: "n0", labels: []string{"b0", "r0"}, gpus: 8, busy: []int{0, 1, 2, 3, 4}, cordoned: true},
				{name: "n1", labels: []string{"b0", "r0"}, gpus: 8},
			},
			ps: gpuPod(3, 1, gang.Unconstrained, 0, gang.Pack), want: "n1:3",
		},
		{
			// n0's islands of 4 hold a 2-GPU pod each in GPUs 0-1 and
			// 4-5, but not one 4-GPU pod: its rack's counters cannot tell
			// that it holds two 2-GPU pods, and must not rule it out.
			// n1 holds 4, with room to spare.
			name: "GPU islands hold the pods the counters cannot see",
			nodes: []tnode{
				{name: "n0", labels: []string{"b0", "r0"}, gpus: 8, groups: []int{4, 4}, busy: []int{2, 3, 6, 7}},
				{name: "n1", labels: []string{"b1", "r1"}, gpus: 8},
			},
			ps: gpuPod(2, 2, gang.Unconstrained, 0, gang.Pack), want: "n0:2",
		},
		{
			// r0's nodes have 3 free each, 18 in all, but none holds 4: the
			// counters rule the rack out; r1's node holds 4 with 1 to
			// spare, r2's with none.
			name: "a rack of thin nodes holds no holder",
			nodes: append(append(nodesWithFree("a", []string{"b0", "r0"}, 3, 3, 3, 3, 3, 3),
				nodesWithFree("b", []string{"b0", "r1"}, 5)...), nodesWithFree("c", []string{"b1", "r2"}, 4)...),
			ps: gpuPod(4, 1, gang.Unconstrained, 0, gang.Pack), want: "c0:4",
		},
		{
			// Spread allows one pod a node, so no node holds 2: one on each
			// of the first two nodes by path.
			name:  "spread never holds more than one pod on a node",
			nodes: nodesWithFree("n", []string{"b0", "r0"}, 8, 2, 4),
			ps:    gpuPod(2, 1, gang.Unconstrained, 0, gang.Spread), want: "n0:1 n1:1",
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

// TestPlaceUnconstrainedAfterEarlierPodSet: the second pod set of a request
// counts what the first took. The first (one 4-GPU pod) takes n1, which
// holds one, over n0, which holds two; n1 then has 2 free GPUs, so the
// second (two 2-GPU pods) goes whole to n0.
func TestPlaceUnconstrainedAfterEarlierPodSet(t *testing.T) {
	st := tcluster(t, []string{"rack"}, nodesWithFree("n", []string{"r0"}, 8, 6))
	sets := []gang.PodSet{gpuPod(1, 4, gang.Unconstrained, 0, gang.Pack), gpuPod(2, 2, gang.Unconstrained, 0, gang.Pack)}
	var p gang.Placer
	p.Reset(st)
	asg, fail, ok := p.Place(sets, nil)
	if !ok {
		t.Fatalf("not placed: %+v", fail)
	}
	if got, want := podsPerNode(st, asg[:1])+" | "+podsPerNode(st, asg[1:]), "n1:1 | n0:2"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestUnconstrainedMatchesLeastFree places unconstrained pod sets on random
// clusters larger than the exhaustive reference can enumerate, racks of
// many nodes among them, and compares every placement with least free
// capacity restated from per-node counts (refPlacer.leastFree).
func TestUnconstrainedMatchesLeastFree(t *testing.T) {
	check := func(t *testing.T) {
		var single, split int
		var avoided int
		for seed := uint64(1); seed <= 1500; seed++ {
			st, ps, desc := genUnconstrained(t, seed)
			// Every other seed with allot's rule among the nodes that
			// hold the whole pod set.
			ps.AvoidStranding = seed%2 == 0
			ref := newRefPlacer(st, &ps)
			var p gang.Placer
			p.Reset(st)
			asg, fail, ok := p.Place([]gang.PodSet{ps}, nil)
			total := int64(0)
			for _, m := range ref.max {
				total += m
			}
			if !ok {
				if total >= ps.Count {
					t.Fatalf("seed %d: not placed (%+v), the nodes hold %d of %d\n%s", seed, fail, total, ps.Count, desc)
				}
				continue
			}
			if err := checkAssignments(st, &ps, asg); err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, desc)
			}
			want := ref.leastFree()
			if got := composition(st.T.NumNodes(), asg); !slices.Equal(got, want) {
				t.Fatalf("seed %d: placed %v, least free capacity gives %v\n%s", seed, got, want, desc)
			}
			if slices.Max(ref.max) >= ps.Count {
				single++
			} else {
				split++
			}
			if ps.AvoidStranding {
				kueue := ps
				kueue.AvoidStranding = false
				if !slices.Equal(want, newRefPlacer(st, &kueue).leastFree()) {
					avoided++
				}
			}
		}
		t.Logf("%d on one node, %d split, %d placed apart from least free by AvoidStranding", single, split, avoided)
		if avoided < 10 {
			t.Errorf("AvoidStranding changed only %d placements: the generator hardly strands GPUs", avoided)
		}
		if single < 300 || split < 300 {
			t.Errorf("the generator is lopsided: %d on one node, %d split", single, split)
		}
	}
	t.Run("onesSearch=false", check)
	defer gang.SearchOnesEverywhere()()
	t.Run("onesSearch=true", check)
}

// genUnconstrained makes a random cluster of 1..48 nodes on one or two
// levels, up to 12 nodes a rack, 1..8 GPUs a node, GPU islands, pod limits
// and thin cpu on some nodes, GPUs and cpu partly booked, some nodes
// cordoned; and one unconstrained pod set of 1..8 pods of 0..4 GPUs.
func genUnconstrained(t *testing.T, seed uint64) (*topology.State, gang.PodSet, string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x5851f42d4c957f2d))
	levels := []string{"rack"}
	if rng.IntN(2) == 0 {
		levels = []string{"block", "rack"}
	}
	n := 1 + rng.IntN(48)
	perRack := 1 + rng.IntN(12)
	specs := make([]topology.NodeSpec, n)
	for i := range specs {
		gpus := 1 + rng.IntN(8)
		var groups []int
		if gpus >= 4 && rng.IntN(4) == 0 {
			groups = []int{gpus / 2, gpus - gpus/2}
		}
		rack := i / perRack
		labels := []string{fmt.Sprintf("r%02d", rack)}
		if len(levels) == 2 {
			labels = []string{fmt.Sprintf("b%d", rack/2), fmt.Sprintf("r%02d", rack)}
		}
		cpu := int64(64000)
		if rng.IntN(4) == 0 {
			cpu = int64(1+rng.IntN(8)) * 1000
		}
		var maxPods int32
		if rng.IntN(6) == 0 {
			maxPods = int32(1 + rng.IntN(6))
		}
		specs[i] = topology.NodeSpec{Name: fmt.Sprintf("n%02d", i), Labels: labels,
			Capacity: res.Vec{resGPU: int64(gpus), resCPU: cpu}, Groups: groups, MaxPods: maxPods}
	}
	topo, err := topology.New(levels, nRes, resGPU, 1, specs)
	if err != nil {
		t.Fatalf("seed %d: topology.New: %v", seed, err)
	}
	st := topology.NewState(topo, propNow)
	var desc strings.Builder
	fmt.Fprintf(&desc, "levels %v\n", levels)
	for i := range topo.NumNodes() {
		node := topo.Node(int32(i))
		var mask uint64
		for g := range int(node.GPUs) {
			if rng.IntN(3) == 0 {
				mask |= 1 << g
			}
		}
		if mask != 0 && (node.MaxPods == 0 || node.MaxPods > 1) {
			st.Allocate(int32(i), mask, res.Vec{resGPU: int64(bits.OnesCount64(mask))}, 1)
		}
		if rng.IntN(15) == 0 {
			st.SetCondition(int32(i), true, false, 0)
		}
		ns := st.Node(int32(i))
		fmt.Fprintf(&desc, "  %s %v gpus=%d groups=%v free=%0*b cpu=%d pods=%d/%d cordoned=%v\n",
			topo.NodeName(int32(i)), nodeLabels(topo, int32(i)), node.GPUs, node.Groups(nil), node.GPUs, st.FreeMask(int32(i)),
			ns.Free[resCPU], ns.Pods, node.MaxPods, ns.Cordoned)
	}
	st.Flush()
	ps := gang.PodSet{Count: int64(1 + rng.IntN(8)), GPUs: rng.IntN(5), Mode: gang.Unconstrained, Policy: gang.Pack}
	if rng.IntN(8) == 0 {
		ps.Policy = gang.Spread
	}
	var cpu int64
	if rng.IntN(3) == 0 {
		cpu = int64(1+rng.IntN(4)) * 1000
	}
	ps.Res = res.Vec{resGPU: int64(ps.GPUs), resCPU: cpu}
	fmt.Fprintf(&desc, "pod set: count=%d gpus=%d cpu=%d policy=%d", ps.Count, ps.GPUs, cpu, ps.Policy)
	return st, ps, desc.String()
}
