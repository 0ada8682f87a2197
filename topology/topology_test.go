package topology

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

func TestNodeIndexFindsEveryNodeAndNoOther(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 20; trial++ {
		top := testTopology(t, rng)
		for i := range top.NumNodes() {
			if n, ok := top.NodeIndex(top.NodeName(int32(i))); !ok || n != int32(i) {
				t.Fatalf("NodeIndex(%q) = %d, %t; want %d", top.NodeName(int32(i)), n, ok, i)
			}
		}
		for _, name := range []string{"", "n", "n999", "N00", "n00 "} {
			if n, ok := top.NodeIndex(name); ok {
				t.Fatalf("NodeIndex(%q) found node %d", name, n)
			}
		}
	}
	// A table full of probes: thousands of names in a table twice their
	// size, every one found where it is.
	var specs []NodeSpec
	for i := 0; i < 5000; i++ {
		specs = append(specs, NodeSpec{Name: fmt.Sprintf("gpu-node-%d", i), Labels: []string{"b", "r"}, Capacity: res.Vec{8}})
	}
	top, err := New([]string{"block", "rack"}, 1, 0, 1, specs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range top.NumNodes() {
		if n, ok := top.NodeIndex(top.NodeName(int32(i))); !ok || n != int32(i) {
			t.Fatalf("NodeIndex(%q) = %d, %t; want %d", top.NodeName(int32(i)), n, ok, i)
		}
	}
	if _, ok := top.NodeIndex("gpu-node-5000"); ok {
		t.Fatal("found a node that does not exist")
	}
	var empty Topology
	if _, ok := empty.NodeIndex("x"); ok {
		t.Fatal("an empty topology found a node")
	}
}

// TestNamesFindAsNodeIndex checks NewNamed's names against the
// topology's own index: every node found where NodeIndex finds it, in
// clusters with and without vacant slots, and no name the topology lacks.
func TestNamesFindAsNodeIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 40 {
		var specs []NodeSpec
		for i := range 1 + rng.IntN(300) {
			specs = append(specs, NodeSpec{Name: fmt.Sprintf("node-%d", rng.IntN(1000)*1000+i), Flavor: int32(rng.IntN(2)),
				Labels: []string{fmt.Sprintf("b%d", rng.IntN(4)), fmt.Sprintf("r%d", rng.IntN(9))}, Capacity: res.Vec{8}})
		}
		if trial%2 == 1 {
			specs = WithRoom(specs, 1+rng.IntN(3))
		}
		top, names, err := NewNamed([]string{"block", "rack"}, 1, 0, 2, specs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range specs {
			want, wok := top.NodeIndex(specs[i].Name)
			got, ok := names.Find(specs[i].Name)
			if specs[i].Name == "" {
				continue // a vacant slot
			}
			if !wok || !ok || got != want || top.NodeName(got) != specs[i].Name {
				t.Fatalf("trial %d: Find(%q) = %d, %t; NodeIndex gives %d, %t", trial, specs[i].Name, got, ok, want, wok)
			}
		}
		for _, name := range []string{"", "node", "node-1000000000", "Node-0"} {
			if n, ok := names.Find(name); ok {
				t.Fatalf("trial %d: Find(%q) found node %d", trial, name, n)
			}
		}
	}
}

// TestSpecsOrderEqualsCompareSpecs checks New's sort of the nodes against
// a stable sort by compareSpecs on random specs: vacant slots, names that
// share long prefixes and names given twice, with labels that fit the
// sort's one-word keys and with levels too many to fit.
func TestSpecsOrderEqualsCompareSpecs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 60 {
		L, values := 2, 1+rng.IntN(12)
		if trial%3 == 2 {
			L, values = 9, 300 // 9 levels of 9 bits: past one word
		}
		var specs []NodeSpec
		for range rng.IntN(400) {
			labels := make([]string, L)
			for l := range labels {
				labels[l] = fmt.Sprintf("v%d", rng.IntN(values))
			}
			name := fmt.Sprintf("gpu-node-%d", rng.IntN(500))
			if rng.IntN(4) == 0 {
				name = name[:len(name)-1]
			}
			sp := NodeSpec{Name: name, Flavor: int32(rng.IntN(3)), Labels: labels}
			if rng.IntN(8) == 0 {
				sp = Vacancy(sp.Flavor, labels)
			}
			specs = append(specs, sp)
		}
		want := make([]int, len(specs))
		for i := range want {
			want[i] = i
		}
		slices.SortStableFunc(want, func(a, b int) int { return compareSpecs(&specs[a], &specs[b]) })
		got, sum, err := specsOrder(specs, L)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("trial %d (%d levels): order %v, %v; want %v", trial, L, got, err, want)
		}
		bytes := 0
		for i := range specs {
			bytes += len(specs[i].Name)
		}
		if vacant := slices.ContainsFunc(specs, func(sp NodeSpec) bool { return sp.vacant }); sum.vacant != vacant || sum.nameBytes != bytes {
			t.Fatalf("trial %d: vacant %t, %d name bytes; want %t, %d", trial, sum.vacant, sum.nameBytes, vacant, bytes)
		}
		for i := range specs {
			for l := range L {
				if got := sum.labels.values[l][sum.labels.ranks[i*L+l]]; got != specs[i].Labels[l] {
					t.Fatalf("trial %d: spec %d's label %d ranked as %q, is %q", trial, i, l, got, specs[i].Labels[l])
				}
			}
		}
		for l := range L {
			if !slices.IsSorted(sum.labels.values[l]) || len(slices.Compact(slices.Clone(sum.labels.values[l]))) != len(sum.labels.values[l]) {
				t.Fatalf("trial %d: level %d's values %q are not distinct and sorted", trial, l, sum.labels.values[l])
			}
		}
	}
}
