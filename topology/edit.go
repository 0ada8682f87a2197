// Changing the cluster's shape: a topology with nodes taken out and put
// in, and a state for it that carries over what the nodes that stayed
// hold.

package topology

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/allot-sched/allot/internal/cow"
)

// Edit returns t with the nodes remove lists (indices into t.Nodes) taken
// out and the nodes of add put in, each with a label per level, and moved:
// moved[n] is where node n of t went, -1 for a node taken out. The caller
// sees to it that names stay unique. t does not change.
//
// t's nodes are in order already, so the new ones are merged in rather
// than everything sorted again: an edit costs O(nodes × levels), and the
// result is the topology New builds from the same nodes.
func (t *Topology) Edit(remove []int32, add []NodeSpec) (*Topology, []int32, error) {
	L := len(t.Levels)
	for i := range add {
		if len(add[i].Labels) != L {
			return nil, nil, fmt.Errorf("%w: node %q has %d of %d levels", ErrMissingLabel, add[i].Name, len(add[i].Labels), L)
		}
	}
	add = slices.Clone(add)
	slices.SortFunc(add, func(a, b NodeSpec) int { return compareSpecs(&a, &b) })
	moved := make([]int32, len(t.Nodes))
	for _, n := range remove {
		moved[n] = -1
	}
	kept := len(t.Nodes)
	for _, m := range moved {
		if m < 0 {
			kept--
		}
	}
	out := make([]NodeSpec, 0, kept+len(add))
	// The nodes that stay share one array of labels, their values the
	// topology's own strings.
	labels := make([]string, kept*L)
	j := 0
	for n := range t.Nodes {
		if moved[n] < 0 {
			continue
		}
		sp := t.spec(int32(n), labels[:L:L])
		labels = labels[L:]
		for j < len(add) && compareSpecs(&add[j], &sp) < 0 {
			out = append(out, add[j])
			j++
		}
		moved[n] = int32(len(out))
		out = append(out, sp)
	}
	out = append(out, add[j:]...)
	nt, err := build(t.Levels, t.Resource, t.GPU, len(t.Flavors), out)
	if err != nil {
		return nil, nil, err
	}
	return nt, moved, nil
}

// spec is node n described as New takes it, its labels written into
// labels (one entry per level).
func (t *Topology) spec(n int32, labels []string) NodeSpec {
	node := &t.Nodes[n]
	for l := range labels {
		labels[l] = t.NodeLabel(n, l)
	}
	return NodeSpec{Name: t.NodeName(n), Flavor: node.Flavor, Labels: labels, Capacity: node.Capacity,
		Groups: node.GroupSizes(), MaxPods: node.MaxPods}
}

// GroupSizes are the sizes of the node's GPU islands, in GPU order; nil
// for a node of one island.
func (n *Node) GroupSizes() []int {
	if n.Islands <= 1 {
		return nil
	}
	sizes := make([]int, 0, n.Islands)
	for _, gm := range n.Groups(make([]uint64, 0, n.Islands)) {
		sizes = append(sizes, bits.OnesCount64(gm))
	}
	return sizes
}

// Restate returns a state of t at time now whose node n is as node(n)
// gives it (free resources and GPUs, pods, condition), every counter
// computed from them: after an Edit, the nodes that stayed carry their
// state over and the others start as their description says. It costs
// what NewState costs.
func Restate(t *Topology, now int64, node func(n int32) NodeState) *State {
	s := &State{T: t, now: now}
	s.nodes = cow.Make[NodeState](len(t.Nodes))
	for i := range t.Nodes {
		ns := s.nodes.Mut(i)
		*ns = node(int32(i))
		s.freeGPUs += int64(bits.OnesCount64(ns.FreeGPUs))
	}
	s.fits = cow.Make[int32](len(t.Domains) * t.G)
	s.aggs = cow.Make[DomainAgg](len(t.Domains))
	s.Rebuild()
	return s
}

// AllGPUs is the mask of all of the node's GPUs.
func (n *Node) AllGPUs() uint64 { return maskBits(int(n.GPUs)) }
