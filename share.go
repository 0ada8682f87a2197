// Fractional GPUs: the resource a pod asks for a share of one GPU by, and
// the rules every booking of such a pod follows.

package allot

import (
	"fmt"
	"math/bits"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/topology"
)

// buildShare resolves Builder.GPUShareResource: a declared resource, not
// the GPU's nor the token budgets', of a snapshot that has GPUs.
func buildShare(s *Snapshot, name string) error {
	s.share = -1
	if name == "" {
		return nil
	}
	i, ok := s.resIdx[name]
	switch {
	case !ok:
		return buildErr(ErrUnknownResource, "gpuShareResource", "%q is not among the resources %v", name, s.resources)
	case s.gpu < 0:
		return buildErr(ErrInvalid, "gpuShareResource", "%q shares a GPU, but %s", name, s.gpuDeclared())
	case i == s.gpu || i == s.tokens:
		return buildErr(ErrInvalid, "gpuShareResource", "%q counts whole GPUs or tokens, not thousandths of a GPU", name)
	}
	s.share = i
	return nil
}

// GPUShareResource is the resource fractional pods ask for thousandths of
// one GPU by (Builder.GPUShareResource), "" when the snapshot has none.
func (s *Snapshot) GPUShareResource() string {
	if s.share < 0 {
		return ""
	}
	return s.resources[s.share]
}

// shareRule says what is wrong with a pod asking for gpus whole GPUs and
// share thousandths of one, "" when nothing is: a share is 1 to 999
// thousandths, of a pod that asks for no whole GPU.
func (s *fixed) shareRule(gpus, share int64) string {
	switch {
	case share == 0:
		return ""
	case share >= topology.MilliGPU:
		return fmt.Sprintf("%d thousandths of a GPU: a share is 1 to 999, a whole GPU is asked for as %s", share, s.resources[s.gpu])
	case gpus > 0:
		return fmt.Sprintf("a pod asks for whole GPUs (%d %s) or a share of one, not both", gpus, s.resources[s.gpu])
	}
	return ""
}

// checkShare is shareRule for a pod set's vector per, at path p.
func (s *fixed) checkShare(per res.Vec, p string) error {
	if s.share < 0 {
		return nil
	}
	if msg := s.shareRule(per[s.gpu], per[s.share]); msg != "" {
		return buildErr(ErrInvalid, p+".perPod."+s.resources[s.share], "%s", msg)
	}
	return nil
}

// shareOf is the thousandths of one GPU each pod of vector per takes (0
// for whole GPUs).
func (s *fixed) shareOf(per res.Vec) int32 {
	if s.share < 0 {
		return 0
	}
	return int32(per[s.share])
}

// shareableMask is node n's shareable GPUs as its description gives them,
// refused at path p without a share resource or beyond the node's GPUs.
func (s *fixed) shareableMask(n *Node, gpus int64, p string) (uint64, error) {
	if n.ShareableGPUs == 0 {
		return 0, nil
	}
	if s.share < 0 {
		return 0, buildErr(ErrInvalid, p+".shareableGpus", "node %q shares GPUs, but the snapshot has no gpuShareResource", n.Name)
	}
	if extra := uint64(n.ShareableGPUs) &^ (1<<gpus - 1); gpus < 64 && extra != 0 {
		return 0, buildErr(ErrInvalid, p+".shareableGpus", "GPU %d on node %q with %d GPUs", bits.TrailingZeros64(extra), n.Name, gpus)
	}
	return uint64(n.ShareableGPUs), nil
}

// holdShare books one running fractional pod of share thousandths on node
// n, at path p: on the GPU indices names (one), or else where the placer
// would put it (gang.ShareGPU), refusing a GPU that is not shareable or
// has too little room left, and a node short of what else the pod books.
func holdShare(s *Snapshot, n int32, indices []int, share int32, book res.Vec, p string) (uint64, error) {
	name := s.topo.NodeName(n)
	gi := -1
	switch {
	case indices == nil:
		if gi = gang.ShareGPU(s.state, n, share); gi < 0 {
			return 0, buildErr(ErrOverCapacity, p, "no shareable GPU of node %q has %d thousandths free", name, share)
		}
	case len(indices) != 1:
		return 0, buildErr(ErrInvalid, p, "%d GPUs listed, a fractional pod shares one", len(indices))
	default:
		gi = indices[0]
		if err := gpuTaken(s, n, gi, 0, p); err != nil {
			return 0, err
		}
		if room := s.state.ShareRoom(n, gi); room < share {
			return 0, buildErr(ErrOverCapacity, p, "GPU %d of node %q has %d thousandths free to share, the pod needs %d", gi, name, room, share)
		}
	}
	node, ns := s.topo.Node(n), s.state.Node(n)
	if !book.LessEq(ns.Free) {
		return 0, buildErr(ErrOverCapacity, p, "node %q cannot hold the pod: free %s, pod %s", name, s.fmtVec(ns.Free), s.fmtVec(book))
	}
	if node.MaxPods > 0 && ns.Pods >= node.MaxPods {
		return 0, buildErr(ErrOverCapacity, p, "node %q already holds its %d pods", name, node.MaxPods)
	}
	s.state.AllocateShare(n, gi, share, book, 1)
	return 1 << gi, nil
}

// checkSharePod is checkPod's test of a fractional pod of share
// thousandths on the GPUs mask of node n, with the workload's whole-GPU
// pods of run (on n) still to be booked: one GPU, with room for it.
func checkSharePod(s *Snapshot, n int32, mask uint64, share int32, run *podRun, shape, conflict func(string, ...any) error) error {
	if bits.OnesCount64(mask) != 1 {
		return shape("a fractional pod shares one GPU, node %q gives it %v", s.topo.NodeName(n), GPUSet(mask))
	}
	gi := bits.TrailingZeros64(mask)
	if s.topo.Node(n).Shareable&mask == 0 {
		return shape("GPU %d of node %q is not shareable", gi, s.topo.NodeName(n))
	}
	room := s.state.ShareRoom(n, gi)
	if run.node == n && run.gpus&mask != 0 {
		room = 0
	}
	if room < share {
		return conflict("GPU %d of node %q has %d thousandths free to share, the pod needs %d", gi, s.topo.NodeName(n), room, share)
	}
	return nil
}
