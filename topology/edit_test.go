package topology

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

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
			for n := range top.Nodes {
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
			got, moved, err := top.Edit(remove, add)
			if err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			want, err := New(levels, 2, 0, 3, specs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d step %d: Edit's topology differs from New's", seed, step)
			}
			for n := range top.Nodes {
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
	if _, _, err := top.Edit(nil, []NodeSpec{{Name: "b", Capacity: res.Vec{8}}}); err == nil {
		t.Fatal("a node without labels was put in")
	}
	if _, _, err := top.Edit(nil, []NodeSpec{{Name: "b", Labels: []string{"b0"}, Capacity: res.Vec{8}, Groups: []int{3, 3}}}); err == nil {
		t.Fatal("a node whose GPU groups do not sum to its GPUs was put in")
	}
}

// TestRestateCarriesNodeStates: a state restated from another's node
// states has the counters the other kept incrementally.
func TestRestateCarriesNodeStates(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	top := testTopology(t, rng)
	s := NewState(top, 10)
	for n := range top.Nodes {
		node := &top.Nodes[n]
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
