package topology

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/allot-sched/allot/internal/res"
)

// Errors returned by New.
var (
	ErrMissingLabel = errors.New("topology: node misses a topology label")
	ErrBadGroups    = errors.New("topology: bad gpu groups")
	ErrTooManyGPUs  = errors.New("topology: more than 64 GPUs on a node")
)

// MaxNodeGPUs is the most GPUs one node may have (a node's GPUs are one uint64
// mask).
const MaxNodeGPUs = 64

// NodeSpec describes one node to New.
type NodeSpec struct {
	Name     string
	Flavor   int32
	Labels   []string // one value per level, broad to narrow
	Capacity res.Vec
	// Groups are the sizes of the node's GPU islands; empty means one.
	Groups  []int
	MaxPods int32
}

// Node is a node of the built topology.
type Node struct {
	Name     string
	Flavor   int32
	Labels   []string
	Capacity res.Vec
	GPUs     int32
	// GPUBase is the cluster-wide index of the node's first GPU.
	GPUBase int32
	// Groups are node-local GPU masks, one per island; always at least one.
	Groups []uint64
	// MaxGroup is the size of the largest island.
	MaxGroup int32
	MaxPods  int32
	// Domains is the node's domain index (into Topology.Domains) at each
	// level of its flavor's tree, level 0 (the flavor root) first.
	Domains []int32
}

// Domain is a set of nodes sharing a topology path prefix: a contiguous node
// range.
type Domain struct {
	// Name is the label value at the domain's level ("" for a flavor root).
	Name string
	// Path is the label values from the broadest level down, joined by "/".
	Path   string
	Level  int32
	Flavor int32
	// First and End bound the domain's nodes: [First, End).
	First, End int32
	// ChildFirst and ChildEnd bound the domain's children one level down:
	// domain indices, or node indices at the narrowest level.
	ChildFirst, ChildEnd int32
	Parent               int32
}

// FlavorTree is one flavor's domains, level by level.
type FlavorTree struct {
	// First and End bound the flavor's nodes.
	First, End int32
	// Levels[l] bounds the domain indices of level l: [Levels[l][0],
	// Levels[l][1]). Level 0 is the root; len(Levels) == len(levels)+1.
	Levels [][2]int32
}

// Topology is the static shape of a cluster. It is immutable once built.
type Topology struct {
	Levels   []string
	Resource int // number of resources
	GPU      int // index of the gpu resource, -1 if none
	Nodes    []Node
	Domains  []Domain
	Flavors  []FlavorTree
	// G is the largest GPU count of any node; per-domain counters have G
	// entries.
	G         int
	TotalGPUs int
	byName    nameIndex
	// islands[n] counts the nodes before node n with more than one GPU
	// island (see Islands).
	islands []int32
}

// Islands reports whether any node of domain d has more than one GPU
// island: there a node's pod count is not its free GPUs over the pod's.
func (t *Topology) Islands(d int32) bool {
	dom := &t.Domains[d]
	return t.islands[dom.End] > t.islands[dom.First]
}

// New sorts the nodes by flavor and path and builds the domain trees.
// flavors is the number of flavors; nodes name their flavor by index.
func New(levels []string, resources, gpu, flavors int, specs []NodeSpec) (*Topology, error) {
	t := &Topology{Levels: slices.Clone(levels), Resource: resources, GPU: gpu, byName: newNameIndex(len(specs))}
	order := make([]int, len(specs))
	for i := range order {
		order[i] = i
	}
	for i := range specs {
		if len(specs[i].Labels) != len(levels) {
			return nil, fmt.Errorf("%w: node %q has %d of %d levels", ErrMissingLabel, specs[i].Name, len(specs[i].Labels), len(levels))
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, y := &specs[a], &specs[b]
		if x.Flavor != y.Flavor {
			return int(x.Flavor) - int(y.Flavor)
		}
		for l := range x.Labels {
			if c := strings.Compare(x.Labels[l], y.Labels[l]); c != 0 {
				return c
			}
		}
		return strings.Compare(x.Name, y.Name)
	})
	t.Nodes = make([]Node, len(specs))
	// Every node's name, labels, domains and GPU groups live in a few
	// shared arrays rather than in small objects of their own, and equal
	// label values are kept once: a large cluster is a few dozen objects
	// for the collector to trace, not tens of thousands.
	var names strings.Builder
	for i := range specs {
		names.WriteString(specs[i].Name)
	}
	arena := names.String()
	labels := make([]string, 0, len(specs)*len(levels))
	interned := make(map[string]string)
	domains := make([]int32, len(specs)*(len(levels)+1))
	groupArena := make([]uint64, 0, len(specs))
	at := make([]int, len(specs)+1) // where each spec's name starts in arena
	for i := range specs {
		at[i+1] = at[i] + len(specs[i].Name)
	}
	base := int32(0)
	for i, o := range order {
		sp := &specs[o]
		gpus := int64(0)
		if gpu >= 0 {
			gpus = sp.Capacity[gpu]
		}
		if gpus > MaxNodeGPUs {
			return nil, fmt.Errorf("%w: node %q has %d", ErrTooManyGPUs, sp.Name, gpus)
		}
		g0 := len(groupArena)
		var maxGroup int32
		var err error
		groupArena, maxGroup, err = groupMasks(groupArena, sp.Groups, int(gpus))
		if err != nil {
			return nil, fmt.Errorf("%w: node %q: %v", ErrBadGroups, sp.Name, err)
		}
		l0 := len(labels)
		for _, v := range sp.Labels {
			if iv, ok := interned[v]; ok {
				v = iv
			} else {
				interned[v] = v
			}
			labels = append(labels, v)
		}
		d0 := i * (len(levels) + 1)
		name := arena[at[o]:at[o+1]]
		t.Nodes[i] = Node{Name: name, Flavor: sp.Flavor, Labels: labels[l0:len(labels):len(labels)], Capacity: sp.Capacity,
			GPUs: int32(gpus), GPUBase: base, Groups: groupArena[g0:len(groupArena):len(groupArena)], MaxGroup: maxGroup,
			MaxPods: sp.MaxPods, Domains: domains[d0 : d0+len(levels)+1 : d0+len(levels)+1]}
		base += int32(gpus)
		t.byName.add(t.Nodes, int32(i))
		if int(gpus) > t.G {
			t.G = int(gpus)
		}
	}
	t.TotalGPUs = int(base)
	t.islands = make([]int32, len(t.Nodes)+1)
	for i := range t.Nodes {
		t.islands[i+1] = t.islands[i]
		if len(t.Nodes[i].Groups) > 1 {
			t.islands[i+1]++
		}
	}
	t.buildDomains(flavors)
	return t, nil
}

func groupMasks(out []uint64, sizes []int, gpus int) ([]uint64, int32, error) {
	if len(sizes) == 0 {
		return append(out, maskOf(0, gpus)), int32(gpus), nil
	}
	sum, maxG := 0, 0
	for _, s := range sizes {
		if s <= 0 {
			return nil, 0, fmt.Errorf("group of %d GPUs", s)
		}
		out = append(out, maskOf(sum, s))
		sum += s
		maxG = max(maxG, s)
	}
	if sum != gpus {
		return nil, 0, fmt.Errorf("groups sum to %d, the node has %d GPUs", sum, gpus)
	}
	return out, int32(maxG), nil
}

func maskOf(from, n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return ((uint64(1) << n) - 1) << from
}

func (t *Topology) buildDomains(flavors int) {
	L := len(t.Levels)
	t.Flavors = make([]FlavorTree, flavors)
	for f := range t.Flavors {
		ft := &t.Flavors[f]
		first := int32(slices.IndexFunc(t.Nodes, func(n Node) bool { return n.Flavor == int32(f) }))
		if first < 0 {
			first = int32(len(t.Nodes))
		}
		end := first
		for end < int32(len(t.Nodes)) && t.Nodes[end].Flavor == int32(f) {
			end++
		}
		ft.First, ft.End = first, end
		ft.Levels = make([][2]int32, L+1)
		// Level 0: the flavor's root.
		root := int32(len(t.Domains))
		t.Domains = append(t.Domains, Domain{Path: "", Level: 0, Flavor: int32(f), First: first, End: end, Parent: -1})
		ft.Levels[0] = [2]int32{root, root + 1}
		for n := first; n < end; n++ {
			t.Nodes[n].Domains[0] = root
		}
		for l := 1; l <= L; l++ {
			start := int32(len(t.Domains))
			for n := first; n < end; {
				m := n + 1
				for m < end && slices.Equal(t.Nodes[m].Labels[:l], t.Nodes[n].Labels[:l]) {
					m++
				}
				id := int32(len(t.Domains))
				t.Domains = append(t.Domains, Domain{Name: t.Nodes[n].Labels[l-1], Path: strings.Join(t.Nodes[n].Labels[:l], "/"),
					Level: int32(l), Flavor: int32(f), First: n, End: m, Parent: t.Nodes[n].Domains[l-1]})
				for k := n; k < m; k++ {
					t.Nodes[k].Domains[l] = id
				}
				n = m
			}
			ft.Levels[l] = [2]int32{start, int32(len(t.Domains))}
		}
		// Children: the next level's domains, or nodes below the narrowest.
		for l := 0; l <= L; l++ {
			for d := ft.Levels[l][0]; d < ft.Levels[l][1]; d++ {
				dom := &t.Domains[d]
				if l == L {
					dom.ChildFirst, dom.ChildEnd = dom.First, dom.End
					continue
				}
				next := ft.Levels[l+1]
				dom.ChildFirst = t.domainAtOrAfter(next, dom.First)
				dom.ChildEnd = t.domainAtOrAfter(next, dom.End)
			}
		}
	}
}

// domainAtOrAfter finds the first domain in rng whose first node is ≥ node.
func (t *Topology) domainAtOrAfter(rng [2]int32, node int32) int32 {
	lo, hi := rng[0], rng[1]
	for lo < hi {
		mid := (lo + hi) / 2
		if t.Domains[mid].First < node {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// DomainsWithin returns the index range of level-l domains of flavor f that
// lie inside the node range [first, end).
func (t *Topology) DomainsWithin(f int32, l int, first, end int32) (int32, int32) {
	rng := t.Flavors[f].Levels[l]
	return t.domainAtOrAfter(rng, first), t.domainAtOrAfter(rng, end)
}

// NodeIndex finds a node by name.
func (t *Topology) NodeIndex(name string) (int32, bool) { return t.byName.find(t.Nodes, name) }

// nameIndex finds a node by name: an open-addressing table of node indices
// (-1 for an empty slot) keyed by an FNV-1a hash of the name, probed
// linearly, at most half full. Unlike a map of strings it holds no
// pointer, so the garbage collector never walks it.
type nameIndex struct {
	slots []int32
	mask  uint32
}

func newNameIndex(n int) nameIndex {
	size := 8
	for size < 2*n {
		size *= 2
	}
	x := nameIndex{slots: make([]int32, size), mask: uint32(size - 1)}
	for i := range x.slots {
		x.slots[i] = -1
	}
	return x
}

func hashName(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// add indexes node i; names are unique (the builder checks).
func (x *nameIndex) add(nodes []Node, i int32) {
	for h := hashName(nodes[i].Name) & x.mask; ; h = (h + 1) & x.mask {
		if x.slots[h] < 0 {
			x.slots[h] = i
			return
		}
	}
}

func (x *nameIndex) find(nodes []Node, name string) (int32, bool) {
	if len(x.slots) == 0 {
		return 0, false
	}
	for h := hashName(name) & x.mask; ; h = (h + 1) & x.mask {
		i := x.slots[h]
		if i < 0 {
			return 0, false
		}
		if nodes[i].Name == name {
			return i, true
		}
	}
}

// LevelIndex returns the tree level of a level name: 1 for the broadest
// declared level, len(Levels) for the narrowest, len(Levels)+1 for "node";
// 0 and false for an unknown name.
func (t *Topology) LevelIndex(name string) (int, bool) {
	if name == "node" {
		return len(t.Levels) + 1, true
	}
	for i, l := range t.Levels {
		if l == name {
			return i + 1, true
		}
	}
	return 0, false
}

// LevelName is the inverse of LevelIndex; level 0 is "cluster".
func (t *Topology) LevelName(l int) string {
	switch {
	case l == 0:
		return "cluster"
	case l <= len(t.Levels):
		return t.Levels[l-1]
	}
	return "node"
}

// NodeLevel is the tree level of nodes.
func (t *Topology) NodeLevel() int { return len(t.Levels) + 1 }

// GPUFits is how many pods of g GPUs fit on node n when mask holds its free
// GPUs. A pod smaller than the node sits inside one GPU island when an island
// can hold it; a pod larger than every island takes free GPUs anywhere on
// the node.
func (n *Node) GPUFits(mask uint64, g int) int {
	if g <= 0 {
		return 0
	}
	if len(n.Groups) == 1 || g > int(n.MaxGroup) {
		return bits.OnesCount64(mask) / g
	}
	c := 0
	for _, gm := range n.Groups {
		c += bits.OnesCount64(mask&gm) / g
	}
	return c
}

// TakeGPUs picks g free GPUs of mask for one pod: inside the island with the
// fewest free GPUs that still holds g (fragmentation-averse), lowest indices
// first; anywhere for pods larger than every island. It returns 0 when the
// pod does not fit.
func (n *Node) TakeGPUs(mask uint64, g int) uint64 {
	if g <= 0 || bits.OnesCount64(mask) < g {
		return 0
	}
	from := mask
	if len(n.Groups) > 1 && g <= int(n.MaxGroup) {
		best, bestFree := -1, 65
		for i, gm := range n.Groups {
			f := bits.OnesCount64(mask & gm)
			if f >= g && f < bestFree {
				best, bestFree = i, f
			}
		}
		if best < 0 {
			return 0
		}
		from = mask & n.Groups[best]
	}
	if bits.OnesCount64(from) == g {
		return from
	}
	var out uint64
	for range g {
		low := from & -from
		out |= low
		from &^= low
	}
	return out
}
