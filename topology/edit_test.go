package topology

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/res"
)

// sameNodes reports whether topologies a and b have the same nodes.
func sameNodes(a, b *Topology) bool {
	if a.NumNodes() != b.NumNodes() {
		return false
	}
	for n := range int32(a.NumNodes()) {
		if *a.Node(n) != *b.Node(n) {
			return false
		}
	}
	return true
}

// sameTopology reports whether topologies a and b are alike in every
// field, their nodes by value.
func sameTopology(a, b *Topology) bool {
	x, y := *a, *b
	x.nodes, y.nodes = cow.Slice[Node]{}, cow.Slice[Node]{}
	x.byName.slots, y.byName.slots = cow.Slice[int32]{}, cow.Slice[int32]{}
	for h := range int(a.byName.mask + 1) {
		if h > int(b.byName.mask) || a.byName.slots.At(h) != b.byName.slots.At(h) {
			return false
		}
	}
	return sameNodes(a, b) && reflect.DeepEqual(x, y)
}

func randomSpec(rng *rand.Rand, name string) NodeSpec {
	gpus := []int{0, 2, 4, 8, 8, 16}[rng.IntN(6)]
	var groups []int
	if gpus == 8 && rng.IntN(2) == 0 {
		groups = []int{2, 6}
	}
	return NodeSpec{
		Name:     name,
		Flavor:   int32(rng.IntN(3)),
		Labels:   []string{fmt.Sprintf("b%d", rng.IntN(3)), fmt.Sprintf("r%d", rng.IntN(4))},
		Capacity: res.Vec{int64(gpus), int64(1000 * rng.IntN(64))},
		Groups:   groups,
		MaxPods:  int32(rng.IntN(3) * 4),
	}
}

// TestEditEqualsNew edits topologies at random, taking nodes out and
// putting new ones in, and compares each result with the topology New
// builds from the same node list: a naive rebuild.
func TestEditEqualsNew(t *testing.T) {
	levels := []string{"block", "rack"}
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 17))
		var specs []NodeSpec
		next := 0
		for range rng.IntN(40) {
			specs = append(specs, randomSpec(rng, fmt.Sprintf("n%d", next)))
			next++
		}
		top, err := New(levels, 2, 0, 3, specs)
		if err != nil {
			t.Fatal(err)
		}
		for step := range 25 {
			var remove []int32
			var gone []string
			for n := range top.NumNodes() {
				if rng.IntN(8) == 0 {
					remove = append(remove, int32(n))
					gone = append(gone, top.NodeName(int32(n)))
				}
			}
			var add []NodeSpec
			for range rng.IntN(4) {
				add = append(add, randomSpec(rng, fmt.Sprintf("n%d", next)))
				next++
			}
			specs = slices.DeleteFunc(specs, func(sp NodeSpec) bool { return slices.Contains(gone, sp.Name) })
			specs = append(specs, add...)
			got, moved, err := top.Edit(remove, add, 0)
			if err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			want, err := New(levels, 2, 0, 3, specs)
			if err != nil {
				t.Fatal(err)
			}
			if !sameTopology(got, want) {
				t.Fatalf("seed %d step %d: Edit's topology differs from New's", seed, step)
			}
			for n := range top.NumNodes() {
				name := top.NodeName(int32(n))
				switch m := moved[n]; {
				case slices.Contains(gone, name):
					if m != -1 {
						t.Fatalf("seed %d step %d: removed node %q moved to %d", seed, step, name, m)
					}
				case got.NodeName(m) != name:
					t.Fatalf("seed %d step %d: node %q moved to %d, which is %q", seed, step, name, m, got.NodeName(m))
				}
			}
			top = got
		}
	}
}

func TestEditRefusesMissingLabels(t *testing.T) {
	top, err := New([]string{"block"}, 1, 0, 1, []NodeSpec{{Name: "a", Labels: []string{"b0"}, Capacity: res.Vec{8}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := top.Edit(nil, []NodeSpec{{Name: "b", Capacity: res.Vec{8}}}, 0); err == nil {
		t.Fatal("a node without labels was put in")
	}
	if _, _, err := top.Edit(nil, []NodeSpec{{Name: "b", Labels: []string{"b0"}, Capacity: res.Vec{8}, Groups: []int{3, 3}}}, 0); err == nil {
		t.Fatal("a node whose GPU groups do not sum to its GPUs was put in")
	}
}

// TestRestateCarriesNodeStates: a state restated from another's node
// states has the counters the other kept incrementally.
func TestRestateCarriesNodeStates(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	top := testTopology(t, rng)
	s := NewState(top, 10)
	for n := range top.NumNodes() {
		node := top.Node(int32(n))
		if g := rng.IntN(int(node.GPUs) + 1); g > 0 {
			s.Allocate(int32(n), node.TakeGPUs(s.FreeMask(int32(n)), g), res.Vec{int64(g), 0}, 1)
		}
		if rng.IntN(5) == 0 {
			s.SetCondition(int32(n), rng.IntN(2) == 0, rng.IntN(2) == 0, int64(rng.IntN(20)))
		}
	}
	s.Flush()
	r := Restate(top, 10, func(n int32) NodeState { return *s.Node(n) })
	if r.FreeGPUs() != s.FreeGPUs() || !slices.Equal(r.Cooling(), s.Cooling()) {
		t.Fatalf("free GPUs %d, cooling %v; kept %d, %v", r.FreeGPUs(), r.Cooling(), s.FreeGPUs(), s.Cooling())
	}
	checkAgainstRebuild(t, s, 0)
	for d := range top.Domains {
		for g := 1; g <= top.G; g++ {
			if r.Fits(int32(d), g) != s.Fits(int32(d), g) {
				t.Fatalf("domain %d g=%d: restated fits %d, kept %d", d, g, r.Fits(int32(d), g), s.Fits(int32(d), g))
			}
		}
		if *r.Agg(int32(d)) != *s.Agg(int32(d)) {
			t.Fatalf("domain %d: restated aggregates %+v, kept %+v", d, *r.Agg(int32(d)), *s.Agg(int32(d)))
		}
	}
}

// busyTopology builds the topology of specs, a state of it at time now in
// which about one node in share holds some of its GPUs (and, with
// conditions, one in five is cordoned or cooling down), and its capacity.
func busyTopology(t *testing.T, rng *rand.Rand, levels []string, specs []NodeSpec, now int64, share int, conditions bool) (*Topology, *State, *State) {
	t.Helper()
	top, err := New(levels, 2, 0, 3, specs)
	if err != nil {
		t.Fatal(err)
	}
	s, capacity := NewState(top, now), NewCapacity(top)
	for n := range top.NumNodes() {
		node := top.Node(int32(n))
		if g := rng.IntN(int(node.GPUs) + 1); g > 0 && rng.IntN(share) == 0 {
			s.Allocate(int32(n), node.TakeGPUs(s.FreeMask(int32(n)), g), res.Vec{int64(g), 0}, 1)
		}
		if conditions && rng.IntN(5) == 0 {
			s.SetCondition(int32(n), rng.IntN(2) == 0, false, now+int64(rng.IntN(40))-20)
		}
	}
	s.Flush()
	return top, s, capacity
}

// sameDomainCounters fails when a and b, states of topologies with the
// same domains and flavors, differ in any domain's or flavor's counter.
func sameDomainCounters(t *testing.T, label string, a, b *State) {
	t.Helper()
	top := a.T
	for d := range top.Domains {
		for g := 1; g <= top.G; g++ {
			if a.Fits(int32(d), g) != b.Fits(int32(d), g) {
				t.Fatalf("%s: domain %q level %d g=%d: fits %d, want %d", label, top.Domains[d].Path, top.Domains[d].Level, g, a.Fits(int32(d), g), b.Fits(int32(d), g))
			}
		}
		if *a.Agg(int32(d)) != *b.Agg(int32(d)) {
			t.Fatalf("%s: domain %q: aggregates %+v, want %+v", label, top.Domains[d].Path, *a.Agg(int32(d)), *b.Agg(int32(d)))
		}
	}
	for f := range top.Flavors {
		if a.FlavorFree(int32(f)) != b.FlavorFree(int32(f)) {
			t.Fatalf("%s: flavor %d free %v, want %v", label, f, a.FlavorFree(int32(f)), b.FlavorFree(int32(f)))
		}
		for l := range len(top.Levels) + 2 {
			for g := 1; g <= top.G; g++ {
				x, okA := a.LevelMax(int32(f), l, g)
				y, okB := b.LevelMax(int32(f), l, g)
				if x != y || okA != okB {
					t.Fatalf("%s: flavor %d level %d g=%d: level max %d %v, want %d %v", label, f, l, g, x, okA, y, okB)
				}
			}
		}
	}
}

// sameCounters fails when a and b, states of one topology, differ in any
// node state or counter.
func sameCounters(t *testing.T, label string, a, b *State) {
	t.Helper()
	top := a.T
	if a.FreeGPUs() != b.FreeGPUs() || !slices.Equal(a.Cooling(), b.Cooling()) {
		t.Fatalf("%s: free GPUs %d, cooling %v; want %d, %v", label, a.FreeGPUs(), a.Cooling(), b.FreeGPUs(), b.Cooling())
	}
	for n := range top.NumNodes() {
		if *a.Node(int32(n)) != *b.Node(int32(n)) {
			t.Fatalf("%s: node %s: %+v, want %+v", label, top.NodeName(int32(n)), *a.Node(int32(n)), *b.Node(int32(n)))
		}
	}
	sameDomainCounters(t, label, a, b)
}

// TestReshapeEqualsRestate edits topologies at random, carrying the
// nodes that stay over and starting some of them afresh, and compares
// Reshape's state with Restate's from the same node states, and
// ReshapeCapacity's with NewCapacity's.
func TestReshapeEqualsRestate(t *testing.T) {
	levels := []string{"block", "rack"}
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 23))
		var specs []NodeSpec
		next := 0
		for range 1 + rng.IntN(40) {
			specs = append(specs, randomSpec(rng, fmt.Sprintf("n%d", next)))
			next++
		}
		top, err := New(levels, 2, 0, 3, specs)
		if err != nil {
			t.Fatal(err)
		}
		now := int64(50)
		s, capacity := NewState(top, now), NewCapacity(top)
		busy := func(s *State) {
			for n := range s.T.NumNodes() {
				node := s.T.Node(int32(n))
				if g := rng.IntN(int(node.GPUs) + 1); g > 0 && rng.IntN(2) == 0 {
					if mask := node.TakeGPUs(s.FreeMask(int32(n)), g); mask != 0 {
						s.Allocate(int32(n), mask, res.Vec{int64(g), 0}, 1)
					}
				}
				if rng.IntN(5) == 0 {
					s.SetCondition(int32(n), rng.IntN(2) == 0, rng.IntN(3) == 0, now+int64(rng.IntN(40))-20)
				}
			}
			s.Flush()
		}
		busy(s)
		for step := range 15 {
			label := fmt.Sprintf("seed %d step %d", seed, step)
			var remove []int32
			for n := range top.NumNodes() {
				if rng.IntN(6) == 0 {
					remove = append(remove, int32(n))
				}
			}
			var add []NodeSpec
			for range rng.IntN(4) {
				add = append(add, randomSpec(rng, fmt.Sprintf("n%d", next)))
				next++
			}
			nt, moved, err := top.Edit(remove, add, 0)
			if err != nil {
				t.Fatal(err)
			}
			// Some nodes that stay start afresh: their bookings change.
			restart := map[int32]bool{}
			for m := range nt.NumNodes() {
				if rng.IntN(7) == 0 {
					restart[int32(m)] = true
				}
			}
			from := map[int32]int32{}
			for o, m := range moved {
				if m >= 0 {
					from[m] = int32(o)
				}
			}
			state := func(m int32) (NodeState, bool) {
				o, kept := from[m]
				if kept && !restart[m] {
					return *s.Node(o), false
				}
				node := nt.Node(m)
				return NodeState{Free: node.Capacity, FreeGPUs: node.AllGPUs(), Down: m%3 == 0, CooldownUntil: now + int64(m%5)}, true
			}
			got := s.Reshape(nt, moved, state)
			want := Restate(nt, now, func(m int32) NodeState { ns, _ := state(m); return ns })
			sameCounters(t, label, got, want)
			gotCap := capacity.ReshapeCapacity(nt, moved, func(m int32) bool { _, kept := from[m]; return !kept })
			sameCounters(t, label+" capacity", gotCap, NewCapacity(nt))
			// The reshaped state takes writes as any.
			busy(got)
			checkAgainstRebuild(t, got, step)
			top, s, capacity = nt, got, gotCap
		}
	}
}

// TestRenodedEqualsRestate describes nodes anew in place at random — new
// capacity, GPU count, islands and pod limit — on topologies whose racks
// are indexed, and compares Renode's topology with New's from the same
// nodes, Renoded's state with Restate's from the same node states, and
// the capacity state Renoded keeps with NewCapacity's: a naive rebuild
// after every change. A change Renode declines must be one that moves the
// node or changes what the topology is laid out by.
func TestRenodedEqualsRestate(t *testing.T) {
	defer func(m int32) { indexMinDomains = m }(indexMinDomains)
	indexMinDomains = 2
	levels := []string{"block", "rack"}
	var renoded, declined int
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 29))
		var specs []NodeSpec
		for i := range 8 + rng.IntN(60) {
			sp := randomSpec(rng, fmt.Sprintf("n%02d", i))
			sp.Labels[1] = fmt.Sprintf("r%d", rng.IntN(12))
			specs = append(specs, sp)
		}
		now := int64(50)
		top, s, capacity := busyTopology(t, rng, levels, specs, now, 2, false)
		for step := range 40 {
			label := fmt.Sprintf("seed %d step %d", seed, step)
			n := rng.Int32N(int32(top.NumNodes()))
			sp := top.spec(n, make([]string, len(levels)))
			gpus := []int64{0, 2, 4, 7, 8, 8, 16}[rng.IntN(7)]
			sp.Capacity = res.Vec{gpus, int64(1000 * rng.IntN(64))}
			sp.Groups = nil
			if gpus == 8 && rng.IntN(2) == 0 {
				sp.Groups = [][]int{{2, 6}, {4, 4}}[rng.IntN(2)]
			}
			sp.MaxPods = int32(rng.IntN(3) * 4)
			nt, ok := top.Renode(n, &sp, nil)
			i := slices.IndexFunc(specs, func(x NodeSpec) bool { return x.Name == sp.Name })
			next := slices.Clone(specs)
			next[i] = sp
			want, err := New(levels, 2, 0, 3, next)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				declined++
				if m, _ := want.NodeIndex(sp.Name); m == n && want.G == top.G && (want.Node(n).Islands > 1) == (top.Node(n).Islands > 1) {
					t.Fatalf("%s: Renode declined %+v, which keeps the node's place and the layout", label, sp)
				}
				continue
			}
			renoded++
			if !sameNodes(nt, want) || nt.TotalGPUs != want.TotalGPUs || nt.G != want.G || !reflect.DeepEqual(nt.Domains, want.Domains) {
				t.Fatalf("%s: Renode's topology differs from New's", label)
			}
			// The node's pods stay where they are if the node still has
			// their GPUs; otherwise it starts afresh.
			node := nt.Node(n)
			was := s.Node(n)
			ns := NodeState{Free: node.Capacity, FreeGPUs: node.AllGPUs(), Cordoned: rng.IntN(4) == 0, CooldownUntil: now + int64(rng.IntN(40)) - 20}
			if used := top.Node(n).AllGPUs() &^ was.FreeGPUs; used&^node.AllGPUs() == 0 {
				ns.FreeGPUs &^= used
				ns.Free[0] -= int64(bits.OnesCount64(used))
				ns.Pods = was.Pods
			}
			got, ok := s.Renoded(nt, n, ns, nil)
			gotCap, okCap := capacity.Renoded(nt, n, NodeState{Free: node.Capacity, FreeGPUs: node.AllGPUs()}, &Spares{})
			if !ok || !okCap {
				// The node outgrew the index laid out for it: Reshape.
				declined++
				continue
			}
			restated := Restate(nt, now, func(m int32) NodeState {
				if m == n {
					return ns
				}
				return *s.Node(m)
			})
			sameCounters(t, label, got, restated)
			sameCounters(t, label+" capacity", gotCap, NewCapacity(nt))
			checkIndex(t, got, rng, step)
			checkIndex(t, gotCap, rng, step)
			top, s, capacity, specs = nt, got, gotCap, next
		}
	}
	t.Logf("%d renoded, %d declined", renoded, declined)
	if renoded < 300 || declined < 30 {
		t.Fatalf("%d renoded, %d declined: the changes do not cover both", renoded, declined)
	}
}
