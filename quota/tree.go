package quota

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/allot-sched/allot/internal/res"
)

// Errors returned by NewResourceTree, besides ErrUnknownCohort (a parent
// index out of range) and ErrCohortCycle.
var (
	ErrTreeShape           = errors.New("quota: flavors or resources out of range")
	ErrQuotaShape          = errors.New("quota: quota list is not one entry per flavor-resource")
	ErrParentIsQueue       = errors.New("quota: a queue cannot be a parent")
	ErrNegativeQuota       = errors.New("quota: negative quota")
	ErrLendingAboveNominal = errors.New("quota: lending limit above nominal quota")
	ErrLimitWithoutParent  = errors.New("quota: borrowing or lending limit on a node without a parent")
)

// ResourceQuota is one node's static quota on one flavor-resource, Kueue's
// ResourceQuota. A nil limit, or one equal to Unlimited, is no limit.
type ResourceQuota struct {
	// Nominal is the node's own capacity; on a cohort it is extra capacity
	// shared by its subtree. Unlimited is allowed.
	Nominal int64
	// BorrowingLimit caps how much the node's subtree may take from its
	// parent beyond what it stores there; nil is unlimited.
	BorrowingLimit *int64
	// LendingLimit caps how much of the node's subtree quota its parent may
	// see; nil lends everything. On a queue it must not exceed Nominal.
	LendingLimit *int64
}

// NodeSpec is one node of a ResourceTree: a cohort (inner node) or a queue
// (leaf). Nodes are named by their index in the list given to
// NewResourceTree.
type NodeSpec struct {
	Name   string
	Parent int32 // index of the parent cohort; -1 at a root
	Queue  bool  // a queue (Kueue's ClusterQueue); false for a cohort
	// Quotas is indexed by flavor-resource fr = flavor*resources + resource
	// and has flavors*resources entries; nil means zero nominal quota and
	// no limits everywhere.
	Quotas []ResourceQuota
}

// ResourceTree is Kueue's resource-node tree with every static quantity
// precomputed: per node and flavor-resource the nominal quota, limits,
// SubtreeQuota, localQuota and PotentialAvailable, plus each node's height
// and its path to the root. It is immutable after NewResourceTree and safe
// for concurrent readers; usage lives apart from it, in Usage.
type ResourceTree struct {
	flavors, resources, frs int

	names  []string
	parent []int32
	queue  []bool
	height []int32
	// pathNodes[pathOff[n]:pathOff[n]+depth[n]+1] is n, its parent, …,
	// its root (see linkPaths).
	pathOff   []int32
	pathNodes []int32
	depth     []int32
	// bottomUp lists every node after all of its descendants.
	bottomUp []int32

	// Indexed n*frs + fr. An absent limit is stored as Unlimited, which
	// every formula treats exactly as "not set".
	nominal, borrowing, lending []int64
	subtree, local, potential   []int64
}

// NewResourceTree validates nodes and precomputes the tree. Each node's
// Quotas has flavors*resources entries (or none); resources is at most
// res.Max. It checks that parents exist and are cohorts, that there is no
// cycle, that quotas and limits are not negative, that limits appear only on
// nodes with a parent, and that a queue lends no more than its nominal quota
// (Kueue checks that on ClusterQueues only: a cohort's lending limit bounds
// its whole subtree, so it may exceed the cohort's own nominal quota).
func NewResourceTree(flavors, resources int, nodes []NodeSpec) (*ResourceTree, error) {
	if flavors < 1 || resources < 1 || resources > res.Max || flavors > math.MaxInt32/res.Max {
		return nil, fmt.Errorf("%w: %d flavors × %d resources (at most %d resources)", ErrTreeShape, flavors, resources, res.Max)
	}
	if len(nodes) > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d nodes", ErrTreeShape, len(nodes))
	}
	n, frs := len(nodes), flavors*resources
	t := &ResourceTree{
		flavors: flavors, resources: resources, frs: frs,
		names:     make([]string, n),
		parent:    make([]int32, n),
		queue:     make([]bool, n),
		height:    make([]int32, n),
		nominal:   make([]int64, n*frs),
		borrowing: make([]int64, n*frs),
		lending:   make([]int64, n*frs),
		subtree:   make([]int64, n*frs),
		local:     make([]int64, n*frs),
		potential: make([]int64, n*frs),
	}
	for i, s := range nodes {
		t.names[i], t.parent[i], t.queue[i] = s.Name, s.Parent, s.Queue
		if s.Parent < -1 || int(s.Parent) >= n {
			return nil, fmt.Errorf("%w: node %q names parent %d of %d nodes", ErrUnknownCohort, s.Name, s.Parent, n)
		}
		if s.Parent >= 0 && nodes[s.Parent].Queue {
			return nil, fmt.Errorf("%w: node %q names queue %q as its parent", ErrParentIsQueue, s.Name, nodes[s.Parent].Name)
		}
		if len(s.Quotas) != 0 && len(s.Quotas) != frs {
			return nil, fmt.Errorf("%w: node %q has %d, want %d", ErrQuotaShape, s.Name, len(s.Quotas), frs)
		}
		for fr := range frs {
			k := i*frs + fr
			t.borrowing[k], t.lending[k] = Unlimited, Unlimited
			if len(s.Quotas) == 0 {
				continue
			}
			if err := t.setQuota(k, s, fr); err != nil {
				return nil, err
			}
		}
	}
	if err := t.link(); err != nil {
		return nil, err
	}
	t.accumulate()
	return t, nil
}

// setQuota validates and stores node s's quota on fr at flat index i.
func (t *ResourceTree) setQuota(i int, s NodeSpec, fr int) error {
	q := s.Quotas[fr]
	where := func() string {
		return fmt.Sprintf("node %q flavor %d resource %d", s.Name, fr/t.resources, fr%t.resources)
	}
	t.nominal[i] = q.Nominal
	if q.Nominal < 0 {
		return fmt.Errorf("%w: %s: nominal %d", ErrNegativeQuota, where(), q.Nominal)
	}
	for _, l := range [...]struct {
		p    *int64
		dst  *int64
		name string
	}{{q.BorrowingLimit, &t.borrowing[i], "borrowing"}, {q.LendingLimit, &t.lending[i], "lending"}} {
		if l.p == nil || *l.p == Unlimited {
			continue
		}
		if *l.p < 0 {
			return fmt.Errorf("%w: %s: %s limit %d", ErrNegativeQuota, where(), l.name, *l.p)
		}
		if s.Parent < 0 {
			return fmt.Errorf("%w: %s: %s limit %d", ErrLimitWithoutParent, where(), l.name, *l.p)
		}
		*l.dst = *l.p
	}
	if s.Queue && t.lending[i] != Unlimited && t.lending[i] > q.Nominal {
		return fmt.Errorf("%w: %s: lending limit %d > nominal %d", ErrLendingAboveNominal, where(), t.lending[i], q.Nominal)
	}
	return nil
}

// link checks for cycles and computes the bottom-up order, heights and
// paths.
func (t *ResourceTree) link() error {
	n := len(t.parent)
	// Depths, each node's once: walk up to a node whose depth is known,
	// then number the walk back down. A walk that meets itself is a cycle
	// (re-checked here although Parents rejects cycles: this tree may be
	// built from any node list).
	depth := make([]int32, n)
	const unknown, walking = -1, -2
	for i := range depth {
		depth[i] = unknown
	}
	var walk []int32
	maxDepth := int32(0)
	for i := range n {
		walk = walk[:0]
		m := int32(i)
		for m >= 0 && depth[m] == unknown {
			depth[m] = walking
			walk = append(walk, m)
			m = t.parent[m]
		}
		if m >= 0 && depth[m] == walking {
			return fmt.Errorf("%w: through node %q", ErrCohortCycle, t.names[i])
		}
		d := int32(-1)
		if m >= 0 {
			d = depth[m]
		}
		for k := len(walk) - 1; k >= 0; k-- {
			d++
			depth[walk[k]] = d
		}
		maxDepth = max(maxDepth, depth[i])
	}
	// Counting sort by depth, deepest first, index order within a depth, so
	// every node comes after all of its descendants.
	count := make([]int32, maxDepth+2)
	for _, d := range depth {
		count[maxDepth-d+1]++
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	t.bottomUp = make([]int32, n)
	for i, d := range depth {
		t.bottomUp[count[maxDepth-d]] = int32(i)
		count[maxDepth-d]++
	}
	// Kueue's height: max(min(#children, 1), max over child cohorts of
	// height+1). Queues have height 0, so this is the usual height, with a
	// childless cohort at 0.
	for _, i := range t.bottomUp {
		if p := t.parent[i]; p >= 0 {
			t.height[p] = max(t.height[p], t.height[i]+1)
		}
	}
	t.depth = depth
	t.linkPaths()
	return nil
}

// linkPaths lays every node's path to its root out in one array, so that a
// node's path is the node followed by its parent's: visited depth first
// from the roots, each cohort's tallest child written just before its
// parent's path shares it, and only the other children copy it. A chain of
// cohorts then takes one entry a node instead of its depth.
func (t *ResourceTree) linkPaths() {
	n := len(t.parent)
	// Children, by parent, in index order; the tallest first.
	first := make([]int32, n+1)
	for _, p := range t.parent {
		if p >= 0 {
			first[p+1]++
		}
	}
	for i := range n {
		first[i+1] += first[i]
	}
	kids := make([]int32, first[n])
	at := slices.Clone(first[:n])
	for i, p := range t.parent {
		if p >= 0 {
			kids[at[p]] = int32(i)
			at[p]++
		}
	}
	for p := range n {
		ks := kids[first[p]:first[p+1]]
		if len(ks) > 1 {
			tall := 0
			for k := range ks {
				if t.height[ks[k]] > t.height[ks[tall]] {
					tall = k
				}
			}
			ks[0], ks[tall] = ks[tall], ks[0]
			slices.Sort(ks[1:])
		}
	}
	// Size: one entry for a root or a tallest child, its depth + 1 for any
	// other.
	size := 0
	for i, p := range t.parent {
		if p < 0 || kids[first[p]] == int32(i) {
			size++
		} else {
			size += int(t.depth[i]) + 1
		}
	}
	// Written back to front: a node's path starts just before its
	// parent's when it shares it.
	t.pathNodes = make([]int32, size)
	t.pathOff = make([]int32, n)
	front := size
	var stack []int32
	for r := range n {
		if t.parent[r] >= 0 {
			continue
		}
		stack = append(stack[:0], int32(r))
		for len(stack) > 0 {
			m := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			p := t.parent[m]
			switch {
			case p < 0:
			case kids[first[p]] == m && t.pathOff[p] == int32(front):
				// shares its parent's path, written just now
			default:
				d := int(t.depth[p]) + 1
				front -= d
				copy(t.pathNodes[front:], t.pathNodes[t.pathOff[p]:int(t.pathOff[p])+d])
			}
			front--
			t.pathNodes[front] = m
			t.pathOff[m] = int32(front)
			// The tallest child is visited right after its parent.
			for k := first[m+1] - 1; k >= first[m]; k-- {
				stack = append(stack, kids[k])
			}
		}
	}
}

// accumulate computes SubtreeQuota and localQuota bottom-up, then
// PotentialAvailable top-down.
//
//	SubtreeQuota(queue)  = Nominal(queue)
//	SubtreeQuota(cohort) = Nominal(cohort) + Σ_children SubtreeQuota(child) − localQuota(child)
//	localQuota(n)        = max(0, SubtreeQuota(n) − LL(n)) with LL set, else 0
func (t *ResourceTree) accumulate() {
	copy(t.subtree, t.nominal)
	for _, n := range t.bottomUp {
		row := int(n) * t.frs
		for fr := range t.frs {
			i := row + fr
			if ll := t.lending[i]; ll != Unlimited {
				t.local[i] = max(0, SubAmount(t.subtree[i], ll))
			}
		}
		if p := t.parent[n]; p >= 0 {
			prow := int(p) * t.frs
			for fr := range t.frs {
				i := row + fr
				t.subtree[prow+fr] = AddAmount(t.subtree[prow+fr], SubAmount(t.subtree[i], t.local[i]))
			}
		}
	}
	// potentialAvailable(root) = SubtreeQuota(root);
	// potentialAvailable(n) = localQuota(n) + potentialAvailable(parent),
	// capped at SubtreeQuota(n) + BL(n) with BL set.
	for k := len(t.bottomUp) - 1; k >= 0; k-- {
		n := t.bottomUp[k]
		row, p := int(n)*t.frs, t.parent[n]
		for fr := range t.frs {
			i := row + fr
			if p < 0 {
				t.potential[i] = t.subtree[i]
				continue
			}
			pa := AddAmount(t.local[i], t.potential[int(p)*t.frs+fr])
			if bl := t.borrowing[i]; bl != Unlimited {
				pa = min(pa, AddAmount(t.subtree[i], bl))
			}
			t.potential[i] = pa
		}
	}
}

// Len is the number of nodes.
func (t *ResourceTree) Len() int { return len(t.parent) }

// Flavors is the number of flavors.
func (t *ResourceTree) Flavors() int { return t.flavors }

// Resources is the number of resources per flavor.
func (t *ResourceTree) Resources() int { return t.resources }

// FRs is the number of flavor-resources, Flavors()*Resources().
func (t *ResourceTree) FRs() int { return t.frs }

// FR is the flavor-resource index of resource r on flavor f.
func (t *ResourceTree) FR(f, r int) int { return f*t.resources + r }

// Name is node n's name.
func (t *ResourceTree) Name(n int32) string { return t.names[n] }

// Parent is node n's parent, or -1 at a root.
func (t *ResourceTree) Parent(n int32) int32 { return t.parent[n] }

// IsQueue reports whether node n is a queue (a leaf).
func (t *ResourceTree) IsQueue(n int32) bool { return t.queue[n] }

// Height is Kueue's height of node n: 0 for a queue (or a cohort without
// children), 1 for a cohort whose children are all queues, and one more
// than its highest child cohort otherwise.
func (t *ResourceTree) Height(n int32) int { return int(t.height[n]) }

// Path is n, its parent, and so on up to its root. The slice is shared and
// must not be mutated.
func (t *ResourceTree) Path(n int32) []int32 {
	a := t.pathOff[n]
	b := a + t.depth[n] + 1
	return t.pathNodes[a:b:b]
}

// Root is the root of n's tree.
func (t *ResourceTree) Root(n int32) int32 { return t.pathNodes[t.pathOff[n]+t.depth[n]] }

// Nominal is node n's own nominal quota on fr.
func (t *ResourceTree) Nominal(n int32, fr int) int64 { return t.nominal[int(n)*t.frs+fr] }

// BorrowingLimit is node n's borrowing limit on fr, if it has one.
func (t *ResourceTree) BorrowingLimit(n int32, fr int) (int64, bool) {
	l := t.borrowing[int(n)*t.frs+fr]
	return l, l != Unlimited
}

// LendingLimit is node n's lending limit on fr, if it has one.
func (t *ResourceTree) LendingLimit(n int32, fr int) (int64, bool) {
	l := t.lending[int(n)*t.frs+fr]
	return l, l != Unlimited
}

// SubtreeQuota is the capacity of n's subtree on fr: its nominal quota plus
// what each child lends (its SubtreeQuota less its localQuota).
func (t *ResourceTree) SubtreeQuota(n int32, fr int) int64 { return t.subtree[int(n)*t.frs+fr] }

// LocalQuota is the part of n's SubtreeQuota on fr that its lending limit
// keeps from its parent: max(0, SubtreeQuota − LendingLimit), or 0 without
// a lending limit.
func (t *ResourceTree) LocalQuota(n int32, fr int) int64 { return t.local[int(n)*t.frs+fr] }

// PotentialAvailable is the largest amount of fr that node n could ever get,
// whatever the usage: SubtreeQuota at a root, else localQuota plus the
// parent's PotentialAvailable, capped at SubtreeQuota + BorrowingLimit.
func (t *ResourceTree) PotentialAvailable(n int32, fr int) int64 {
	return t.potential[int(n)*t.frs+fr]
}
