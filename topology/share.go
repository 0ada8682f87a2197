// Fractional GPUs: pods that each hold thousandths of one shareable GPU,
// packed onto it beside the node's whole free GPUs.

package topology

import (
	"math/bits"

	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/res"
)

// MilliGPU is one whole GPU in the thousandths fractional pods ask for.
const MilliGPU = 1000

// A shareable GPU is in one of three conditions: free whole (in the node's
// FreeGPUs, no thousandth held), shared (fractional pods hold some of it;
// out of FreeGPUs, so that no whole-GPU pod lands there) or held whole by
// a whole-GPU pod (out of FreeGPUs, nothing held as shares). A GPU leaves
// FreeGPUs, and the node's free GPU count, when its first fractional pod
// lands and comes back when its last one leaves.

// makeShared sizes the per-GPU shares for the state's topology, all zero.
func (s *State) makeShared() {
	if s.T.ShareSlots > 0 {
		s.shared = cow.Make[uint16](int(s.T.ShareSlots))
	}
}

// slot is where GPU gi of node n sits among the shares, -1 for a GPU that
// is not shareable.
func (t *Topology) slot(n int32, gi int) int {
	node := t.Node(n)
	if gi < 0 || gi >= 64 || node.Shareable&(1<<gi) == 0 {
		return -1
	}
	return int(node.shareBase) + bits.OnesCount64(node.Shareable&(1<<gi-1))
}

// ShareHeld is the thousandths of GPU gi of node n that fractional pods
// hold (0 for a GPU that is not shareable).
func (s *State) ShareHeld(n int32, gi int) int32 {
	if i := s.T.slot(n, gi); i >= 0 {
		return int32(s.shared.At(i))
	}
	return 0
}

// ShareRoom is the thousandths of GPU gi of node n one more fractional pod
// may take: what the shares leave of a shared GPU, a whole one of a free
// shareable GPU, none of a GPU that is not shareable or is held whole.
// Every booking of a fractional pod (placement, a running workload, a
// commit) asks this one rule.
func (s *State) ShareRoom(n int32, gi int) int32 {
	i := s.T.slot(n, gi)
	if i < 0 {
		return 0
	}
	if held := int32(s.shared.At(i)); held > 0 {
		return MilliGPU - held
	}
	if s.nodes.Ptr(int(n)).FreeGPUs&(1<<gi) != 0 {
		return MilliGPU
	}
	return 0
}

// SharedMask is node n's GPUs that fractional pods hold part of.
func (s *State) SharedMask(n int32) uint64 {
	node := s.T.Node(n)
	var out uint64
	for m := node.Shareable; m != 0; m &= m - 1 {
		gi := bits.TrailingZeros64(m)
		if s.shared.At(s.T.slot(n, gi)) > 0 {
			out |= 1 << gi
		}
	}
	return out
}

// AllocateShare books a fractional pod on GPU gi of node n: milli
// thousandths of the GPU (0 < milli < MilliGPU), resources r (no GPUs) and
// pods pods (one, or none for a reservation). The caller has checked that ShareRoom holds milli and that the
// node holds r.
func (s *State) AllocateShare(n int32, gi int, milli int32, r res.Vec, pods int32) {
	i := s.T.slot(n, gi)
	if i < 0 || milli <= 0 {
		return // not a shareable GPU: nothing to book, as the caller checked
	}
	first := s.shared.At(i) == 0
	s.shared.Set(i, s.shared.At(i)+uint16(milli))
	s.change(n, func(ns *NodeState) {
		ns.Free = ns.Free.Sub(r)
		ns.Pods += pods
		if first {
			ns.FreeGPUs &^= 1 << gi
			ns.Free[s.T.GPU]--
		}
	})
	if first {
		s.freeGPUs--
	}
}

// ReleaseShare returns what AllocateShare booked. A release of more than
// the GPU's shares hold (a caller's bug) frees the GPU whole rather than
// leaving a negative share.
func (s *State) ReleaseShare(n int32, gi int, milli int32, r res.Vec, pods int32) {
	i := s.T.slot(n, gi)
	if i < 0 {
		return
	}
	held := int32(s.shared.At(i))
	if held == 0 {
		return
	}
	left := max(held-milli, 0)
	s.shared.Set(i, uint16(left))
	s.change(n, func(ns *NodeState) {
		ns.Free = ns.Free.Add(r)
		ns.Pods -= pods
		if left == 0 {
			ns.FreeGPUs |= 1 << gi
			ns.Free[s.T.GPU]++
		}
	})
	if left == 0 {
		s.freeGPUs++
	}
}

// BookPod books (sign 1) or releases (sign -1) pods pods on node n: a
// fractional pod (milli > 0) on the one GPU of gpus, or whole-GPU pods on
// every GPU of gpus, with resources r.
func (s *State) BookPod(n int32, gpus uint64, milli int32, r res.Vec, pods int32, sign int) {
	switch {
	case milli > 0 && sign > 0:
		s.AllocateShare(n, bits.TrailingZeros64(gpus), milli, r, pods)
	case milli > 0:
		s.ReleaseShare(n, bits.TrailingZeros64(gpus), milli, r, pods)
	case sign > 0:
		s.Allocate(n, gpus, r, pods)
	default:
		s.Release(n, gpus, r, pods)
	}
}

// carryShares copies node o of old's shares to node n of s, the same node
// after an Edit.
func (s *State) carryShares(n int32, old *State, o int32) {
	node := s.T.Node(n)
	for m := node.Shareable; m != 0; m &= m - 1 {
		gi := bits.TrailingZeros64(m)
		if v := old.ShareHeld(o, gi); v > 0 {
			s.shared.Set(s.T.slot(n, gi), uint16(v))
		}
	}
}

// ShareRooms is ShareRoom for every shareable GPU of node n at once,
// written to rooms[gi] (the others left as they are); it returns the
// shareable GPUs free whole. One read of the node's shares, for placement's
// scans.
func (s *State) ShareRooms(n int32, rooms *[MaxNodeGPUs]int32) uint64 {
	node := s.T.Node(n)
	m := node.Shareable
	if m == 0 {
		return 0
	}
	free := s.nodes.Ptr(int(n)).FreeGPUs
	i, left := int(node.shareBase), bits.OnesCount64(m)
	var whole uint64
	for left > 0 {
		span := s.shared.Span(i, left)
		for _, held := range span {
			gi := bits.TrailingZeros64(m)
			m &= m - 1
			switch {
			case held > 0:
				rooms[gi] = MilliGPU - int32(held)
			case free&(1<<gi) != 0:
				rooms[gi] = MilliGPU
				whole |= 1 << gi
			default:
				rooms[gi] = 0
			}
		}
		i, left = i+len(span), left-len(span)
	}
	return whole
}
