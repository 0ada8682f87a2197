// Nodes taken out and put in place: a slot left vacant at the end of its
// narrowest domain, and filled again, so that a node's coming or going
// moves only the nodes of its domain rather than renumbering the cluster.

package topology

import (
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Shift is how Vacate or Fill moved a topology's nodes. Vacate takes node
// At out: the nodes [First, End) of its narrowest domain move up one (By
// −1) and the domain's last slot, End−1, is left vacant. Fill puts a node
// in at At: the nodes [First, End) move down one (By +1), the last of
// them into the domain's first vacant slot.
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
	if sh.Fill {
		return sh.At, sh.End + 1
	}
	return sh.At, sh.End
}

// Vacant reports whether slot n holds no node: a node taken out in place
// (Vacate), its slot kept for one put in its domain (Fill). A vacant slot
// has no name, capacity or GPUs, is in no flavor's figures, and its state
// is down, so nothing is ever placed there.
func (t *Topology) Vacant(n int32) bool { return t.Node(n).vacant }

// Nodes counts the topology's nodes, its vacant slots left out.
func (t *Topology) Nodes() int { return t.numNodes - t.vacant }

// liveEnd is where domain d's vacant slots start: its nodes are [First,
// liveEnd), its vacant slots [liveEnd, End).
func (t *Topology) liveEnd(d int32) int32 {
	dom := &t.Domains[d]
	e := dom.End
	for e > dom.First && t.Node(e-1).vacant {
		e--
	}
	return e
}

// Vacate returns t with node n taken out in place: the nodes after it in
// its narrowest domain move up one slot and the domain's last is left
// vacant, for a node Fill puts in later. It costs the slots it moves and
// the pages of nodes and of the name index they sit in, O(domain size).
// ok is false, t unchanged, for what the in-place path does not cover:
// the domain's last node, a node with shareable GPUs or MIG slices, a
// domain with nodes of several GPU islands, and the last node of t's
// largest GPU count. Edit then.
func (t *Topology) Vacate(n int32) (nt *Topology, sh Shift, ok bool) {
	node := t.Node(n)
	if node.vacant || node.Shareable != 0 || node.Partitioned != 0 || node.mig[0] != node.mig[1] || node.Islands > 1 {
		return nil, Shift{}, false
	}
	leaf := t.NodeDomains(n)[len(t.Levels)]
	e := t.liveEnd(leaf)
	if e-t.Domains[leaf].First <= 1 || t.Islands(leaf) {
		return nil, Shift{}, false
	}
	if int(node.GPUs) == t.G && !t.Another(n, func(m *Node) bool { return int(m.GPUs) == t.G }) {
		return nil, Shift{}, false
	}
	c := *t
	c.nodes = t.nodes.Fork()
	c.byName.slots = t.byName.slots.Fork()
	c.byName.remove(t.NodeName(n), n)
	// In the slots' order: no node is indexed as the slot it moves to
	// until it moves there.
	for i := n; i < e-1; i++ {
		c.nodes.Set(int(i), *t.Node(i + 1))
		c.byName.moveTo(t.NodeName(i+1), i+1, i)
	}
	c.nodes.Set(int(e-1), vacancy(node.Flavor))
	c.TotalGPUs -= int(node.GPUs)
	c.vacant++
	return &c, Shift{At: n, First: n + 1, End: e, By: -1}, true
}

// Empty is the node's state with nothing on it, usable: every resource
// and GPU free. A vacant slot's is down and free of nothing.
func (n *Node) Empty() NodeState {
	if n.vacant {
		return NodeState{Down: true}
	}
	return NodeState{Free: n.Capacity, FreeGPUs: n.AllGPUs()}
}

// vacancy is a vacant slot of flavor f.
func vacancy(f int32) Node { return Node{Flavor: f, Islands: 1, islandStarts: 1, vacant: true} }

// Fill returns t with the node sp describes put in place, in a vacant slot
// of the narrowest domain its labels name: the nodes of the domain whose
// names sort after it move down one slot, so that the domain's nodes stay
// in the order New gives them. It costs what Vacate costs, and the node's
// name copied beside those of the nodes put in before it. ok is false, t
// unchanged, when the domain does not exist or has no vacant slot, sp is
// not a valid node (Edit says why), or it is what Vacate does not cover
// (shareable GPUs, MIG slices, several GPU islands, more GPUs than t's
// largest count): Edit then. The caller sees to it that names stay
// unique.
func (t *Topology) Fill(sp *NodeSpec) (nt *Topology, sh Shift, ok bool) {
	if len(sp.Labels) != len(t.Levels) || sp.Shareable != 0 || len(sp.MIG) != 0 || sp.Flavor < 0 || int(sp.Flavor) >= len(t.Flavors) || sp.Name == "" {
		return nil, Shift{}, false
	}
	node, err := newNode(sp, t.Resource, t.GPU)
	if err != nil || node.Islands > 1 || int(node.GPUs) > t.G || t.byName.full() {
		return nil, Shift{}, false
	}
	leaf, found := t.leafOf(sp.Flavor, sp.Labels)
	if !found || t.Islands(leaf) {
		return nil, Shift{}, false
	}
	dom := &t.Domains[leaf]
	e := t.liveEnd(leaf)
	if e == dom.End {
		return nil, Shift{}, false
	}
	p := dom.First + int32(sort.Search(int(e-dom.First), func(i int) bool { return t.NodeName(dom.First+int32(i)) > sp.Name }))
	c := *t
	c.nodes = t.nodes.Fork()
	c.byName.slots = t.byName.slots.Fork()
	for i := e; i > p; i-- {
		c.nodes.Set(int(i), *t.Node(i - 1))
		c.byName.moveTo(t.NodeName(i-1), i-1, i)
	}
	k := int32(len(t.names) + len(t.added))
	c.added = t.added + sp.Name
	node.name = [2]int32{k, k + int32(len(sp.Name))}
	c.nodes.Set(int(p), node)
	if !c.byName.add(&c, p) {
		return nil, Shift{}, false
	}
	c.TotalGPUs += int(node.GPUs)
	c.vacant--
	return &c, Shift{At: p, First: p, End: e, By: 1, Fill: true}, true
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
		ns = NodeState{Down: true}
	}
	s.T = t
	if sh.Fill {
		for i := sh.End; i > n; i-- {
			*s.nodes.Mut(int(i)) = *s.nodes.Ptr(int(i - 1))
		}
		s.freeGPUs += int64(bits.OnesCount64(ns.FreeGPUs))
	} else {
		for i := n; i < sh.End-1; i++ {
			*s.nodes.Mut(int(i)) = *s.nodes.Ptr(int(i + 1))
		}
	}
	last := n
	if !sh.Fill {
		last = sh.End - 1
	}
	*s.nodes.Mut(int(last)) = ns
	s.applyDelta(n, &before, &after)
	s.markDirty(n)
	s.shiftCooling(sh)
	if sh.Fill {
		s.cool(n, ns.CooldownUntil)
	}
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
func (s *State) Shifted(t *Topology, sh Shift) (c *State, ok bool) {
	c = s.Fork()
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
		have := 0
		if d, ok := t.leafOf(sp.Flavor, sp.Labels); ok {
			have = int(t.Domains[d].End - t.liveEnd(d))
		}
		for range room - have {
			out = append(out, Vacancy(sp.Flavor, sp.Labels))
		}
	}
	return out
}
