// Which resource is the GPU: a node's capacity read against the snapshot's
// declaration, and the rule for names that look like a GPU.

package allot

import (
	"slices"
	"strings"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

// capacityVector reads node n's capacity (at path p): its GPUs must be
// under the declared GPU resource, and at most topology.MaxNodeGPUs.
func (s *fixed) capacityVector(n *Node, p string) (res.Vec, error) {
	capacity, ok := s.declaredCapacity(n)
	if !ok {
		for name := range n.Capacity {
			if s.gpuUndeclared(n, name) {
				return res.Vec{}, s.undeclaredGPU(n, p)
			}
		}
		var err error
		if capacity, _, err = s.podVector(n.Capacity, p+".capacity"); err != nil {
			return capacity, err
		}
	}
	if s.share >= 0 && capacity[s.share] != 0 {
		name := s.resources[s.share]
		return capacity, buildErr(ErrInvalid, p+".capacity."+name, "node %q lists %s, which its shareableGpus give: list the GPUs fractional pods may share", n.Name, name)
	}
	if s.gpu >= 0 && capacity[s.gpu] > topology.MaxNodeGPUs {
		return capacity, buildErr(ErrInvalid, p+".capacity."+s.resources[s.gpu], "%d GPUs, at most %d per node", capacity[s.gpu], topology.MaxNodeGPUs)
	}
	return capacity, nil
}

// declaredCapacity reads node n's capacity when it names declared
// resources only, each in range and none that names a GPU but is not the
// GPU resource: the common case, one look-up a resource. ok is false
// otherwise, and capacityVector then finds what is wrong name by name.
func (s *fixed) declaredCapacity(n *Node) (v res.Vec, ok bool) {
	found := 0
	for i, name := range s.resources {
		q, has := n.Capacity[name]
		if !has {
			continue
		}
		if q < 0 || q > quota.MaxQuantity || (q > 0 && s.gpuNamed&(1<<i) != 0) {
			return v, false
		}
		v[i] = q
		found++
	}
	return v, found == len(n.Capacity)
}

// gpuUndeclared reports whether node n has some of resource name, which
// looks like a GPU but is neither the declared GPU resource nor ignored.
func (s *fixed) gpuUndeclared(n *Node, name string) bool {
	return n.Capacity[name] > 0 && !s.isGPU(name) && gpuLike(name) && !slices.Contains(s.ignored, name)
}

// undeclaredGPU is the error of node n's first resource, in name order,
// that gpuUndeclared finds.
func (s *fixed) undeclaredGPU(n *Node, p string) error {
	for _, name := range sortedKeys(n.Capacity) {
		if !s.gpuUndeclared(n, name) {
			continue
		}
		if _, declared := s.resIdx[name]; declared && migLike(name) {
			return buildErr(ErrGPUResource, p+".capacity."+name, "node %q lists %d %s, which names a GPU: list a MIG profile's instances under mig, GPU by GPU",
				n.Name, n.Capacity[name], name)
		}
		return buildErr(ErrGPUResource, p+".capacity."+name, "node %q has %d %s, which names a GPU, but %s: set gpuResource to %q, or ignore it",
			n.Name, n.Capacity[name], name, s.gpuDeclared(), name)
	}
	return nil
}

// isGPU reports whether name is the declared GPU resource.
func (s *fixed) isGPU(name string) bool { return s.gpu >= 0 && s.resources[s.gpu] == name }

// gpuDeclared says what the snapshot declares as its GPU, for messages.
func (s *fixed) gpuDeclared() string {
	if s.gpu < 0 {
		return "the snapshot has no GPU resource"
	}
	return "the snapshot's GPU resource is " + s.resources[s.gpu]
}

// gpuLike reports whether a resource name looks like a GPU's, the rule
// Builder.GPUResource documents: "gpu" or a name whose part after the last
// "/" is "gpu" or begins with "gpu." or "mig-", or whose domain begins with
// "gpu.", in any case.
func gpuLike(name string) bool {
	name = strings.ToLower(name)
	domain, local := "", name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		domain, local = name[:i], name[i+1:]
	}
	return local == "gpu" || strings.HasPrefix(local, "gpu.") || strings.HasPrefix(local, "mig-") ||
		strings.HasPrefix(domain, "gpu.")
}

// migLike reports whether a resource name is a MIG profile's, the part
// after its last "/" beginning with "mig-" (nvidia.com/mig-1g.10gb).
func migLike(name string) bool {
	return strings.HasPrefix(strings.ToLower(name[strings.LastIndexByte(name, '/')+1:]), "mig-")
}
