package topology

import (
	"fmt"
	"math/rand/v2"
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
