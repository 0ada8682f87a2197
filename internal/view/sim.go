package view

import (
	"cmp"
	"slices"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

// Sim is a private view of the cluster with some admitted workloads taken
// out: quota usage over the cohort tree and free capacity, both
// copy-on-write over the snapshot's. Its owner starts it on a clone of the
// usage and a fork of the state.
type Sim struct {
	Tree  *quota.ResourceTree
	Usage quota.Usage
	// State is the free capacity; nil when only quota matters.
	State *topology.State
	// Tokens is the tokens resource's index (-1 when undeclared) and Nodes
	// the resources each flavor's nodes hold: what a booking charges and
	// books follows from them.
	Tokens int
	Nodes  NodeRes
	// Reserved are GPUs that stay taken when the workload on them leaves
	// (backfill reservations, held from now on), one entry per node,
	// sorted by node.
	Reserved []Pod
}

// Evict and Restore move one workload out of and back into the view.
func (m *Sim) Evict(b *Booking)   { m.move(b, 1) }
func (m *Sim) Restore(b *Booking) { m.move(b, -1) }

func (m *Sim) move(b *Booking, sign int) {
	m.MoveUsage(b, sign)
	if m.State == nil {
		return
	}
	m.movePods(b, sign)
	m.State.Flush()
}

// FreeAll takes the pods of bs off the view's state as Evict does, one
// booking after the other, leaving their quota usage and the state
// unflushed: the caller flushes it once, before reading it. The whole-GPU
// pods on one node are released together (their GPUs are distinct and
// what they book adds up), one change of the node rather than one a pod.
func (m *Sim) FreeAll(bs []*Booking) {
	var nodes []freed
	for _, b := range bs {
		k := 0
		for i := range b.Sets {
			for range b.Sets[i].Count {
				pa := b.Pods[k]
				k++
				if pa.Node < 0 {
					continue
				}
				gpus, share := m.podGPUs(pa)
				if pa.Share > 0 {
					m.State.BookPod(pa.Node, gpus, share, b.Book(i, m.Nodes), 1, -1)
					continue
				}
				j := slices.IndexFunc(nodes, func(f freed) bool { return f.node == pa.Node })
				if j < 0 {
					j = len(nodes)
					nodes = append(nodes, freed{node: pa.Node})
				}
				f := &nodes[j]
				f.gpus |= gpus
				f.r = f.r.Add(b.Book(i, m.Nodes))
				f.pods++
			}
		}
	}
	for _, f := range nodes {
		m.State.BookPod(f.node, f.gpus, 0, f.r, f.pods, -1)
	}
}

// freed is what FreeAll releases on one node at once.
type freed struct {
	node int32
	gpus uint64
	r    res.Vec
	pods int32
}

// movePods takes b's pods off the state (sign 1) or puts them back (-1),
// without flushing it.
func (m *Sim) movePods(b *Booking, sign int) {
	k := 0
	for i := range b.Sets {
		for range b.Sets[i].Count {
			if pa := b.Pods[k]; pa.Node >= 0 {
				gpus, share := m.podGPUs(pa)
				m.State.BookPod(pa.Node, gpus, share, b.Book(i, m.Nodes), 1, -sign)
			}
			k++
		}
	}
}

// MoveUsage takes a workload's quota usage out of the view (sign 1) or
// puts it back (-1), leaving its placement.
func (m *Sim) MoveUsage(b *Booking, sign int) {
	for i := range b.Sets {
		m.Tree.AddVec(m.Usage, b.Queue, int(b.Sets[i].Flavor), b.Need(i, m.Tokens), -sign)
	}
}

// podGPUs are the GPUs pod pa books and gives back, and its share of one:
// its own but those reserved, which stay taken (a share on a reserved GPU
// gives back none).
func (m *Sim) podGPUs(pa Pod) (gpus uint64, share int32) {
	gpus, share = pa.GPUs&^m.reservedOn(pa.Node), pa.Share
	if share > 0 && gpus == 0 {
		share = 0
	}
	return gpus, share
}

// reservedOn is the mask of node n's reserved GPUs.
func (m *Sim) reservedOn(n int32) uint64 {
	if len(m.Reserved) == 0 {
		return 0
	}
	i, ok := slices.BinarySearchFunc(m.Reserved, n, func(a Pod, n int32) int { return cmp.Compare(a.Node, n) })
	if !ok {
		return 0
	}
	return m.Reserved[i].GPUs
}
