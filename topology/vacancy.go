// Nodes taken out and put in place: a node's slot left vacant where it
// was, in its narrowest domain, and a vacant slot of the domain filled
// again, so that a node's coming or going moves at most the nodes of its
// domain between its place and the nearest vacant slot, rather than
// renumbering the cluster.

package topology

import (
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/allot-sched/allot/internal/cow"
)

// Shift is how Vacate or Fill changed a topology's slots. Vacate leaves
// slot At vacant and moves nothing (By 0). Fill puts a node in at At: in
// a vacant slot there (By 0), or, with no vacant slot where its name
// sorts, after the nodes [First, End) move one slot (By +1: down, At ==
// First, into the vacant slot End; By −1: up, At == End−1, from the
// vacant slot First−1).
type Shift struct {
	At, First, End, By int32
	Fill               bool
}

// Moved is where node o of the topology shifted went: -1 for the node
// Vacate took out.
func (sh Shift) Moved(o int32) int32 {
	if !sh.Fill && o == sh.At {
		return -1
	}
	if o >= sh.First && o < sh.End {
		return o + sh.By
	}
	return o
}

// Span bounds the slots the shift wrote, [lo, hi): every node in it may
// be another one now.
func (sh Shift) Span() (lo, hi int32) {
	switch {
	case sh.By > 0:
		return sh.First, sh.End + 1
	case sh.By < 0:
		return sh.First - 1, sh.End
	}
	return sh.At, sh.At + 1
}

// Vacant reports whether slot n holds no node: a node taken out in place
// (Vacate), or room left for one (Vacancy), for a node put in its domain
// (Fill). A vacant slot has no name, capacity or GPUs, is in no flavor's
// figures, and its state is down, so nothing is ever placed there.
func (t *Topology) Vacant(n int32) bool { return t.Node(n).vacant }

// Nodes counts the topology's nodes, its vacant slots left out.
func (t *Topology) Nodes() int { return t.numNodes - t.vacant }

// holes counts domain d's vacant slots and its nodes.
func (t *Topology) holes(d int32) (vacant, nodes int32) {
	dom := &t.Domains[d]
	for n := dom.First; n < dom.End; n++ {
		if t.Node(n).vacant {
			vacant++
		}
	}
	return vacant, dom.End - dom.First - vacant
}

// Vacate returns t with node n taken out in place: its slot is left
// vacant, for a node Fill puts in later, and no other node moves. It
// costs the pages of nodes and of the name index the node sits in. ok is
// false, t unchanged, for what the in-place path does not cover: the
// last node of its narrowest domain, a node with shareable GPUs or MIG
// slices, a domain with nodes of several GPU islands, and the last node
// of t's largest GPU count. Edit then. sp, when not nil, is where the new
// topology's copies come from (Spares).
func (t *Topology) Vacate(n int32, sp *Spares) (nt *Topology, sh Shift, ok bool) {
	node := t.Node(n)
	if node.vacant || node.Shareable != 0 || node.Partitioned != 0 || node.mig[0] != node.mig[1] || node.Islands > 1 {
		return nil, Shift{}, false
	}
	leaf := t.NodeDomains(n)[len(t.Levels)]
	if _, nodes := t.holes(leaf); nodes <= 1 || t.Islands(leaf) {
		return nil, Shift{}, false
	}
	if int(node.GPUs) == t.G && !t.Another(n, func(m *Node) bool { return int(m.GPUs) == t.G }) {
		return nil, Shift{}, false
	}
	c := *t
	nodes, slots, _ := sp.topology()
	c.nodes, c.byName.slots = t.nodes.ForkSpared(nodes), t.byName.slots.ForkSpared(slots)
	defer c.dropSpares()
	c.byName.remove(t.NodeName(n), n)
	c.nodes.Set(int(n), vacancy(node.Flavor))
	c.TotalGPUs -= int(node.GPUs)
	c.vacant++
	return &c, Shift{At: n, First: n, End: n}, true
}

// dropSpares forgets the spare blocks a node event's fork of t took its
// copies from (Spares), before it is published.
func (t *Topology) dropSpares() {
	t.nodes.DropSpare()
	t.byName.slots.DropSpare()
	t.added.DropSpare()
}

// vacancy is a vacant slot of flavor f.
func vacancy(f int32) Node { return Node{Flavor: f, Islands: 1, islandStarts: 1, vacant: true} }

// Empty is the node's state with nothing on it, usable: every resource
// and GPU free. A vacant slot's is down and free of nothing.
func (n *Node) Empty() NodeState {
	if n.vacant {
		return NodeState{Down: true}
	}
	return NodeState{Free: n.Capacity, FreeGPUs: n.AllGPUs()}
}

// Fill returns t with the node sp describes put in place, in a vacant slot
// of the narrowest domain its labels name, so that the domain's nodes stay
// in the order New gives them (by name): in a vacant slot where its name
// sorts, or else, the nodes between moving one slot, in the nearest one
// before or after, of the two the one that moves fewer nodes busy says
// so of (nil: none is), then fewer nodes. It costs what Vacate costs, the
// slots it moves, and the node's name copied beside those of its
// domain's nodes put in before it (addName); a name table the nodes gone
// have filled is laid out anew, O(nodes) once in so many new names.
// spares, when not nil, is where the new topology's copies come from (a
// store's master's blocks). ok is false, t unchanged, when the domain does not
// exist or has no vacant slot, sp is not a valid node (Edit says why), or
// it is what Vacate does not cover (shareable GPUs, MIG slices, several
// GPU islands, more GPUs than t's largest count): Edit then. The caller
// sees to it that names stay unique.
func (t *Topology) Fill(sp *NodeSpec, busy func(n int32) bool, spares *Spares) (nt *Topology, sh Shift, ok bool) {
	if len(sp.Labels) != len(t.Levels) || sp.Shareable != 0 || len(sp.MIG) != 0 || sp.Flavor < 0 || int(sp.Flavor) >= len(t.Flavors) || sp.Name == "" {
		return nil, Shift{}, false
	}
	node, err := newNode(sp, t.Resource, t.GPU)
	if err != nil || node.Islands > 1 || int(node.GPUs) > t.G {
		return nil, Shift{}, false
	}
	leaf, found := t.leafOf(sp.Flavor, sp.Labels)
	if !found || t.Islands(leaf) {
		return nil, Shift{}, false
	}
	dom := &t.Domains[leaf]
	// The node goes after the nodes whose names sort before it (the last
	// of them at a−1) and before the others (the first at b).
	a, b := dom.First, dom.End
	for n := dom.First; n < dom.End; n++ {
		if t.Node(n).vacant {
			continue
		}
		if t.NodeName(n) < sp.Name {
			a = n + 1
		} else if b == dom.End {
			b = n
		}
	}
	sh, found = Shift{}, false
	for n := a; n < b && !found; n++ { // a vacant slot where it sorts
		if t.Node(n).vacant {
			sh, found = Shift{At: n, First: n, End: n}, true
		}
	}
	before, after := a-1, b // the nearest vacant slots on either side
	for before >= dom.First && !t.Node(before).vacant {
		before--
	}
	for after < dom.End && !t.Node(after).vacant {
		after++
	}
	cost := func(from, to int32) [2]int32 { // busy nodes, then nodes, in [from, to)
		c := [2]int32{0, to - from}
		for n := from; n < to && busy != nil; n++ {
			if busy(n) {
				c[0]++
			}
		}
		return c
	}
	up, down := cost(before+1, a), cost(b, after)
	switch {
	case found:
	case before >= dom.First && (after == dom.End || up[0] < down[0] || (up[0] == down[0] && up[1] <= down[1])):
		sh = Shift{At: a - 1, First: before + 1, End: a, By: -1}
	case after < dom.End:
		sh = Shift{At: b, First: b, End: after, By: 1}
	default:
		return nil, Shift{}, false
	}
	c := *t
	nodes, slots, _ := spares.topology()
	c.nodes = t.nodes.ForkSpared(nodes)
	if t.byName.full() {
		// The slots of the nodes taken out fill the table: lay it out
		// anew, O(nodes) once every so many nodes put in under new names,
		// where a merge would cost the whole topology.
		c.byName = t.reindexed()
	} else {
		c.byName.slots = t.byName.slots.ForkSpared(slots)
	}
	defer c.dropSpares()
	// In an order where no node is indexed as the slot it moves to until
	// it moves there.
	if sh.By > 0 {
		for i := sh.End; i > sh.First; i-- {
			c.nodes.Set(int(i), *t.Node(i - 1))
			c.byName.moveTo(t.NodeName(i-1), i-1, i)
		}
	} else if sh.By < 0 {
		for i := sh.First - 1; i < sh.End-1; i++ {
			c.nodes.Set(int(i), *t.Node(i + 1))
			c.byName.moveTo(t.NodeName(i+1), i+1, i)
		}
	}
	node.name = c.addName(leaf, sh.At, sp.Name, spares)
	c.nodes.Set(int(sh.At), node)
	if !c.byName.add(&c, sh.At) {
		return nil, Shift{}, false
	}
	c.TotalGPUs += int(node.GPUs)
	c.vacant--
	sh.Fill = true
	return &c, sh, true
}

// addName puts name among the added names of narrowest domain leaf for
// the node Fill puts in at slot at, and returns the node's name bounds
// (Node.name; a negative start marks an added name, addedName). The
// domain's names are copied with it, so they are rewritten without the
// names of the nodes no longer there once those are as many bytes as the
// names that are, and a domain's names stay within twice what its nodes'
// names take (and a few bytes), however many nodes come and go.
func (t *Topology) addName(leaf, at int32, name string, sp *Spares) [2]int32 {
	if t.added.Empty() {
		t.added = cow.Make[string](len(t.Domains))
	} else {
		_, _, added := sp.topology()
		t.added = t.added.ForkSpared(added)
	}
	cur := t.added.At(int(leaf))
	dom := &t.Domains[leaf]
	live := 0
	for n := dom.First; n < dom.End; n++ {
		if b := t.Node(n).name; b[0] < 0 && n != at {
			live += int(b[1]) + int(b[0]) + 1
		}
	}
	if len(cur) > 2*live+64 {
		var b strings.Builder
		b.Grow(live + len(name))
		for n := dom.First; n < dom.End; n++ {
			node := t.Node(n)
			if node.name[0] >= 0 || n == at {
				continue
			}
			was := cur[-node.name[0]-1 : node.name[1]]
			moved := *node
			moved.name = [2]int32{-int32(b.Len()) - 1, int32(b.Len() + len(was))}
			b.WriteString(was)
			t.nodes.Set(int(n), moved)
		}
		cur = b.String()
	}
	bounds := [2]int32{-int32(len(cur)) - 1, int32(len(cur) + len(name))}
	t.added.Set(int(leaf), cur+name)
	return bounds
}

// leafOf finds the narrowest domain of flavor f whose nodes carry labels,
// one value per level: the level's domains are in the order of their
// labels, so a binary search.
func (t *Topology) leafOf(f int32, labels []string) (int32, bool) {
	rng := t.Flavors[f].Levels[len(t.Levels)]
	cmp := func(d int32) int {
		first := t.Domains[d].First
		for l, v := range labels {
			if w := t.NodeLabel(first, l); w != v {
				if w < v {
					return -1
				}
				return 1
			}
		}
		return 0
	}
	i := rng[0] + int32(sort.Search(int(rng[1]-rng[0]), func(i int) bool { return cmp(rng[0]+int32(i)) >= 0 }))
	if i < rng[1] && cmp(i) == 0 {
		return i, true
	}
	return 0, false
}

// Shift moves s onto t, a topology Vacate or Fill made from s.T as sh
// says: the node states move with their nodes, and only the counters of
// the domains of the node taken out or put in change, as Renode changes
// them. The node Fill put in starts as ns; a vacant slot is down and
// free of everything (ns is not read). It reports false, changing
// nothing, when the node Vacate takes out still holds pods, or, as
// Renode, when a domain would hold more pods than t's fit index has room
// for: Reshape then.
func (s *State) Shift(t *Topology, sh Shift, ns NodeState) bool {
	var before, after contrib
	n := sh.At
	if sh.Fill {
		after = s.contribFor(t.Node(n), &ns)
		f := t.Node(n).Flavor
		for l, d := range t.NodeDomains(n) {
			for g := 1; g <= t.G; g++ {
				if x := t.index(f, l, g); x != nil && s.indexed && s.Fits(d, g)+after.fits[g-1] > x.maxV {
					return false
				}
			}
		}
	} else {
		if s.Node(n).Pods != 0 {
			return false
		}
		before = s.contribOf(n)
		s.freeGPUs -= int64(bits.OnesCount64(s.Node(n).FreeGPUs))
		ns = t.Node(n).Empty()
	}
	s.T = t
	if sh.By > 0 {
		for i := sh.End; i > sh.First; i-- {
			*s.nodes.Mut(int(i)) = *s.nodes.Ptr(int(i - 1))
		}
	} else if sh.By < 0 {
		for i := sh.First - 1; i < sh.End-1; i++ {
			*s.nodes.Mut(int(i)) = *s.nodes.Ptr(int(i + 1))
		}
	}
	*s.nodes.Mut(int(n)) = ns
	s.freeGPUs += int64(bits.OnesCount64(ns.FreeGPUs))
	s.applyDelta(n, &before, &after)
	s.markDirty(n)
	s.shiftCooling(sh)
	s.cool(n, ns.CooldownUntil)
	if s.levelMax != nil {
		s.renodeLevelMax(n, &before, &after)
	}
	return true
}

// shiftCooling moves the cooling list's nodes as sh moves them.
func (s *State) shiftCooling(sh Shift) {
	cooling := s.Cooling()
	lo, hi := sh.Span()
	i, _ := sortSearch32(cooling, lo)
	if i == len(cooling) || cooling[i] >= hi {
		return
	}
	out := make([]int32, 0, len(cooling))
	for _, c := range cooling {
		if m := sh.Moved(c); m >= 0 {
			out = append(out, m)
		}
	}
	s.setCooling(out) // a shift within one domain keeps the order
}

// sortSearch32 is the first index of sorted xs at or past v.
func sortSearch32(xs []int32, v int32) (int, bool) {
	i := sort.Search(len(xs), func(i int) bool { return xs[i] >= v })
	return i, i < len(xs) && xs[i] == v
}

// Shifted is Shift on a copy, for a capacity state (NewCapacity): s must
// be flushed and does not change; the node Fill puts in starts at full
// capacity, and the copy keeps each level's largest domain.
func (s *State) Shifted(t *Topology, sh Shift, sp *Spares) (c *State, ok bool) {
	c = s.forkSpared(sp)
	defer c.dropSpares()
	c.levelMax = s.levelMax
	var ns NodeState
	if sh.Fill {
		ns = t.Node(sh.At).Empty()
	}
	if !c.Shift(t, sh, ns) {
		return nil, false
	}
	c.Flush()
	return c, true
}

// WithRoom is specs with room vacant slots (Vacancy) for each narrowest
// domain their nodes name, for New.
func WithRoom(specs []NodeSpec, room int) []NodeSpec {
	if room <= 0 {
		return specs
	}
	seen := make(map[string]bool)
	out := slices.Clip(specs)
	for i := range specs {
		sp := &specs[i]
		key := leafKey(sp)
		if sp.vacant || seen[key] {
			continue
		}
		seen[key] = true
		for range room {
			out = append(out, Vacancy(sp.Flavor, sp.Labels))
		}
	}
	return out
}

// leafKey names the narrowest domain of a node's spec: its flavor and
// labels.
func leafKey(sp *NodeSpec) string {
	return strconv.Itoa(int(sp.Flavor)) + "\x00" + strings.Join(sp.Labels, "\x00")
}

// RoomFor is the vacant slots (Vacancy) that, put in with the nodes of
// add (Edit), leave room vacant slots in each narrowest domain those
// nodes go to, counting the domain's vacant slots in t.
func (t *Topology) RoomFor(add []NodeSpec, room int) []NodeSpec {
	if room <= 0 {
		return nil
	}
	var out []NodeSpec
	seen := make(map[string]bool)
	for i := range add {
		sp := &add[i]
		key := leafKey(sp)
		if sp.vacant || len(sp.Labels) != len(t.Levels) || sp.Flavor < 0 || int(sp.Flavor) >= len(t.Flavors) || seen[key] {
			continue
		}
		seen[key] = true
		have := int32(0)
		if d, ok := t.leafOf(sp.Flavor, sp.Labels); ok {
			have, _ = t.holes(d)
		}
		for range room - int(have) {
			out = append(out, Vacancy(sp.Flavor, sp.Labels))
		}
	}
	return out
}
