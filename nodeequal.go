package allot

import (
	"maps"
	"slices"
)

// Equal tells whether two node descriptions say the same: every field
// alike, an empty map or list the same as none. An embedder that keeps
// the descriptions it applied (a live cluster's informers) compares with
// it to find the nodes whose change is an event, without reflection.
func (n *Node) Equal(o *Node) bool {
	return n.Name == o.Name && n.Flavor == o.Flavor && maps.Equal(n.Labels, o.Labels) &&
		slices.Equal(n.Taints, o.Taints) && maps.Equal(n.Capacity, o.Capacity) &&
		slices.Equal(n.GPUGroups, o.GPUGroups) && n.ShareableGPUs == o.ShareableGPUs &&
		slices.EqualFunc(n.MIG, o.MIG, func(a, b MIGPartition) bool { return a.GPU == b.GPU && maps.Equal(a.Profiles, b.Profiles) }) &&
		n.MaxPods == o.MaxPods && n.CooldownUntil == o.CooldownUntil && n.Unschedulable == o.Unschedulable && n.Down == o.Down
}

// Equal tells whether two flavor descriptions say the same, as Node.Equal
// does for nodes: a live cluster compares the flavor it applied with the
// one a ResourceFlavor's update gives to find whether the update is an
// event (SetFlavor), nothing, or a new description of the cluster.
func (f *Flavor) Equal(o *Flavor) bool {
	return f.Name == o.Name && f.Spot == o.Spot && maps.Equal(f.NodeLabels, o.NodeLabels) &&
		slices.Equal(f.NodeTaints, o.NodeTaints) && slices.Equal(f.Tolerations, o.Tolerations)
}
