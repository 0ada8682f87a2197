// MIG: a node's GPUs split into instances of MIG profiles, each profile a
// declared resource that pods ask for by count.

package allot

import (
	"fmt"
	"math/bits"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

// migSlices validates node n's MIG partitions (at path p), with gpus
// GPUs of which shareable may be shared, adds their instances to the
// node's capacity and returns them for topology.New: a GPU of the node's,
// partitioned once, not shareable; profiles among the declared
// resources, not the GPU's, the share's or the token budgets', each with
// at least one instance, none also listed in the node's capacity.
func (s *fixed) migSlices(n *Node, gpus int64, shareable uint64, capacity *res.Vec, p string) ([]topology.MIGSlice, error) {
	if len(n.MIG) == 0 {
		return nil, nil
	}
	listed := *capacity
	var seen uint64
	var out []topology.MIGSlice
	for k, part := range n.MIG {
		pk := fmt.Sprintf("%s.mig[%d]", p, k)
		switch {
		case part.GPU < 0 || int64(part.GPU) >= gpus:
			return nil, buildErr(ErrInvalid, pk+".gpu", "GPU %d on node %q with %d GPUs", part.GPU, n.Name, gpus)
		case seen&(1<<part.GPU) != 0:
			return nil, buildErr(ErrInvalid, pk+".gpu", "GPU %d of node %q partitioned twice", part.GPU, n.Name)
		case shareable&(1<<part.GPU) != 0:
			return nil, buildErr(ErrInvalid, pk+".gpu", "GPU %d of node %q is partitioned and shareable: MIG instances are not shared", part.GPU, n.Name)
		case len(part.Profiles) == 0:
			return nil, buildErr(ErrInvalid, pk+".profiles", "GPU %d of node %q is partitioned into no instance", part.GPU, n.Name)
		}
		seen |= 1 << part.GPU
		for _, name := range sortedKeys(part.Profiles) {
			pp := pk + ".profiles." + name
			r, ok := s.resIdx[name]
			switch count := part.Profiles[name]; {
			case !ok:
				return nil, buildErr(ErrUnknownResource, pp, "MIG profile %q is not a declared resource", name)
			case r == s.gpu || r == s.share || r == s.tokens:
				return nil, buildErr(ErrInvalid, pp, "%q is not a MIG profile: it counts whole GPUs, shares or tokens", name)
			case listed[r] != 0:
				return nil, buildErr(ErrInvalid, p+".capacity."+name, "node %q lists %s, which its mig gives: list the GPUs partitioned into it", n.Name, name)
			case count < 1 || count > 64:
				return nil, buildErr(ErrInvalid, pp, "%d instances, 1 to 64 a GPU", count)
			default:
				out = append(out, topology.MIGSlice{GPU: int32(part.GPU), Resource: int32(r), Count: int32(count)})
				capacity[r] += count
			}
		}
	}
	for r := range capacity {
		if capacity[r] > quota.MaxQuantity {
			return nil, buildErr(ErrInvalid, p+".mig", "%d %s, more than 2^56", capacity[r], s.resources[r])
		}
	}
	return out, nil
}

// migOf describes node n's MIG partitions as a Builder takes them, GPU by
// GPU, and takes their instances off capacity (which it returns).
func (s *Snapshot) migOf(n int32, capacity res.Vec) ([]MIGPartition, res.Vec) {
	parts := s.topo.MIGOf(n)
	if len(parts) == 0 {
		return nil, capacity
	}
	var out []MIGPartition
	for _, sl := range parts {
		if len(out) == 0 || out[len(out)-1].GPU != int(sl.GPU) {
			out = append(out, MIGPartition{GPU: int(sl.GPU), Profiles: Resources{}})
		}
		out[len(out)-1].Profiles[s.resources[sl.Resource]] = int64(sl.Count)
		capacity[sl.Resource] -= int64(sl.Count)
	}
	if s.gpu >= 0 {
		capacity[s.gpu] += int64(bits.OnesCount64(s.topo.Node(n).Partitioned))
	}
	return out, capacity
}
