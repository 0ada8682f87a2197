// Changing the cluster's shape: a topology with nodes taken out and put
// in, and a state for it that carries over what the nodes that stayed
// hold.

package topology

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/res"
)

// Edit returns t with the nodes remove lists (indices into t.Nodes) taken
// out and the nodes of add put in, each with a label per level, and moved:
// moved[n] is where node n of t went, -1 for a node taken out and for a
// vacant slot (Vacate, Vacancy). A domain keeps its vacant slots, and the
// vacancies of add, up to room of them, after its nodes; a domain left
// with no node keeps none. The caller sees to it that names stay unique.
// t does not change.
//
// t's nodes are in order already, so the new ones are merged in rather
// than everything sorted again: an edit costs O(nodes × levels), and the
// result is the topology New builds from the same nodes.
func (t *Topology) Edit(remove []int32, add []NodeSpec, room int) (*Topology, []int32, error) {
	L := len(t.Levels)
	for i := range add {
		if len(add[i].Labels) != L {
			return nil, nil, fmt.Errorf("%w: node %q has %d of %d levels", ErrMissingLabel, add[i].Name, len(add[i].Labels), L)
		}
	}
	moved := make([]int32, t.NumNodes())
	for _, n := range remove {
		moved[n] = -1
	}
	// Vacant slots go to the end of their domain, after its nodes, as New
	// puts them: they are put in anew, with the nodes of add.
	add = slices.Clone(add)
	for n := range t.NumNodes() {
		if moved[n] >= 0 && t.Node(int32(n)).vacant {
			moved[n] = -1
			add = append(add, t.spec(int32(n), make([]string, L)))
		}
	}
	slices.SortFunc(add, func(a, b NodeSpec) int { return compareSpecs(&a, &b) })
	kept := t.NumNodes()
	for _, m := range moved {
		if m < 0 {
			kept--
		}
	}
	out := make([]NodeSpec, 0, kept+len(add))
	// The nodes that stay share one array of labels, their values the
	// topology's own strings.
	labels := make([]string, kept*L)
	j := 0
	for n := range t.NumNodes() {
		if moved[n] < 0 {
			continue
		}
		sp := t.spec(int32(n), labels[:L:L])
		labels = labels[L:]
		for j < len(add) && compareSpecs(&add[j], &sp) < 0 {
			out = append(out, add[j])
			j++
		}
		moved[n] = int32(len(out))
		out = append(out, sp)
	}
	out = append(out, add[j:]...)
	out, at := keepRoom(out, room)
	for n, m := range moved {
		if m >= 0 {
			moved[n] = at[m]
		}
	}
	nt, _, err := build(t.Levels, t.Resource, t.GPU, len(t.Flavors), out, nil, -1, nil)
	if err != nil {
		return nil, nil, err
	}
	return nt, moved, nil
}

// keepRoom drops from specs, in the nodes' order, the vacant slots of a
// domain left with no node and those past the first most of a domain
// (most < 0: none), and says where each spec went (-1: dropped).
func keepRoom(specs []NodeSpec, most int) ([]NodeSpec, []int32) {
	at := make([]int32, len(specs))
	out := specs[:0]
	live, kept := -1, 0 // the last node's spec, in out; vacant slots after it
	for i := range specs {
		sp := specs[i]
		if sp.vacant && (live < 0 || out[live].Flavor != sp.Flavor || !slices.Equal(out[live].Labels, sp.Labels) || (most >= 0 && kept >= most)) {
			at[i] = -1
			continue
		}
		if sp.vacant {
			kept++
		} else {
			live, kept = len(out), 0
		}
		at[i] = int32(len(out))
		out = append(out, sp)
	}
	return out, at
}

// spec is node n described as New takes it, its labels written into
// labels (one entry per level).
func (t *Topology) spec(n int32, labels []string) NodeSpec {
	node := t.Node(n)
	for l := range labels {
		labels[l] = t.NodeLabel(n, l)
	}
	if node.vacant {
		return Vacancy(node.Flavor, labels)
	}
	capacity := node.Capacity
	if t.GPU >= 0 {
		capacity[t.GPU] += int64(bits.OnesCount64(node.Partitioned))
	}
	return NodeSpec{Name: t.NodeName(n), Flavor: node.Flavor, Labels: labels, Capacity: capacity,
		Groups: node.GroupSizes(), MaxPods: node.MaxPods, Shareable: node.Shareable, MIG: t.MIGOf(n)}
}

// GroupSizes are the sizes of the node's GPU islands, in GPU order; nil
// for a node of one island.
func (n *Node) GroupSizes() []int {
	if n.Islands <= 1 {
		return nil
	}
	sizes := make([]int, 0, n.Islands)
	for _, gm := range n.Groups(make([]uint64, 0, n.Islands)) {
		sizes = append(sizes, bits.OnesCount64(gm))
	}
	return sizes
}

// Restate returns a state of t at time now whose node n is as node(n)
// gives it (free resources and GPUs, pods, condition), every counter
// computed from them: after an Edit, the nodes that stayed carry their
// state over and the others start as their description says. It costs
// what NewState costs.
func Restate(t *Topology, now int64, node func(n int32) NodeState) *State {
	return restate(t, now, func(first int, span []NodeState, _ []Node) {
		for k := range span {
			span[k] = node(int32(first + k))
		}
	})
}

// restate is Restate with fill writing the states of a page of nodes at
// a time: of nodes first, first+1 … into span, nodes describing them.
func restate(t *Topology, now int64, fill func(first int, span []NodeState, nodes []Node)) *State {
	s := &State{T: t, now: now}
	s.nodes = cow.Make[NodeState](t.NumNodes())
	for i := 0; i < t.NumNodes(); {
		span := s.nodes.MutSpan(i, len(s.nodes.Span(i, t.NumNodes()-i)))
		fill(i, span, t.nodes.Span(i, len(span)))
		for k := range span {
			s.freeGPUs += int64(bits.OnesCount64(span[k].FreeGPUs))
		}
		i += len(span)
	}
	s.fits = cow.Make[int32](len(t.Domains) * t.G)
	s.aggs = cow.Make[DomainAgg](len(t.Domains))
	s.makeShared()
	s.Rebuild()
	return s
}

// AllGPUs is the mask of all of the node's GPUs.
func (n *Node) AllGPUs() uint64 { return maskBits(int(n.GPUs)) &^ n.Partitioned }

// Reshape is Restate for t, a topology Edit made from s.T (moved[o] is
// where node o of s went, -1 for one taken out), at s's time, carrying
// over what it can: node m starts as fresh(m) gives it when fresh says so
// (it must for a node put in; say so too for one described anew or whose
// bookings change), and every other node carries its state over from the
// node of s it was. The counters of a domain are carried over from the
// domain of s in the same place and only the contributions of the nodes
// that came, went or changed are taken out and put in, and only the
// aggregates of the domains those touch are worked out again: O(nodes +
// domains × G + changed nodes × levels × G), where Restate works every
// node's contribution out, O(nodes × levels × G). s must be flushed; it
// does not change.
func (s *State) Reshape(t *Topology, moved []int32, fresh func(m int32) (NodeState, bool)) *State {
	old := s.T
	L := len(t.Levels)
	from := make([]int32, t.NumNodes())
	for m := range from {
		from[m] = -1
	}
	for o, m := range moved {
		if m >= 0 {
			from[m] = int32(o)
		}
	}
	ns := &State{T: t, now: s.now}
	ns.nodes = cow.Make[NodeState](t.NumNodes())
	ns.setFree(make([]res.Vec, len(t.Flavors)))
	changed := make([]bool, t.NumNodes())
	var cooling []int32
	for m := range t.NumNodes() {
		st, f := fresh(int32(m))
		if !f && from[m] >= 0 {
			st = *s.Node(from[m])
		} else {
			changed[m] = true
		}
		*ns.nodes.Mut(m) = st
		ns.freeGPUs += int64(bits.OnesCount64(st.FreeGPUs))
		if st.CooldownUntil > ns.now {
			cooling = append(cooling, int32(m))
		}
		if st.Usable(ns.now) {
			ns.moveFree(t.Node(int32(m)).Flavor, res.Vec{}, st.Free)
		}
	}
	ns.setCooling(cooling)
	ns.makeShared()
	for m := range t.NumNodes() {
		if o := from[m]; !changed[m] && o >= 0 {
			ns.carryShares(int32(m), s, o)
		}
	}
	// The domain of s in the same place as each domain of t: the one its
	// nodes that were in s sat in, where they keep their flavor and
	// labels down to the domain's level.
	dmap := make([]int32, len(t.Domains))
	odmap := make([]int32, len(old.Domains))
	for i := range odmap {
		odmap[i] = -1
	}
	for d := range t.Domains {
		dmap[d] = -1
		dom := &t.Domains[d]
		for m := dom.First; m < dom.End; m++ {
			if o := from[m]; o >= 0 && old.Node(o).Flavor == t.Node(m).Flavor && samePrefix(old, o, t, m, int(dom.Level)) {
				dmap[d] = old.NodeDomains(o)[dom.Level]
				odmap[dmap[d]] = int32(d)
				break
			}
		}
	}
	G, oldG := t.G, old.G
	ns.fits = cow.Make[int32](len(t.Domains) * G)
	ns.aggs = cow.Make[DomainAgg](len(t.Domains))
	for d, od := range dmap {
		if od < 0 {
			continue
		}
		for g := range min(G, oldG) {
			if v := s.fits.At(int(od)*oldG + g); v != 0 {
				ns.fits.Set(d*G+g, v)
			}
		}
		ns.aggs.Set(d, *s.Agg(od))
	}
	// The nodes that went or changed leave their domains; the nodes that
	// came or changed join theirs. Their narrowest domains, the domains
	// with no counterpart in s, and the parents of the domains that went
	// need their aggregates again.
	affected := make([]bool, len(t.Domains))
	for d, od := range dmap {
		affected[d] = od < 0 // new, or a flavor's empty root
	}
	domains := make([]int32, L+1)
	for o := range old.NumNodes() {
		if m := moved[o]; m >= 0 && !changed[m] {
			continue
		}
		for l, od := range old.NodeDomains(int32(o)) {
			domains[l] = odmap[od]
		}
		c := s.contribOf(int32(o))
		ns.addFitsAt(domains, &c, -1)
		if leaf := domains[L]; leaf >= 0 {
			affected[leaf] = true
		}
	}
	for m := range t.NumNodes() {
		if !changed[m] {
			continue
		}
		c := ns.contribOf(int32(m))
		ns.addFitsAt(t.NodeDomains(int32(m)), &c, 1)
		affected[t.NodeDomains(int32(m))[L]] = true
	}
	for od := range old.Domains {
		if p := old.Domains[od].Parent; odmap[od] < 0 && p >= 0 && odmap[p] >= 0 {
			affected[odmap[p]] = true
		}
	}
	for l := L; l >= 0; l-- {
		for f := range t.Flavors {
			rng := t.Flavors[f].Levels[l]
			for d := rng[0]; d < rng[1]; d++ {
				if affected[d] {
					ns.recomputeAgg(d)
					if p := t.Domains[d].Parent; p >= 0 {
						affected[p] = true
					}
				}
			}
		}
	}
	return ns
}

// ReshapeCapacity is Reshape for a state made by NewCapacity: the nodes
// changed says so of (put in or described anew) start at full capacity,
// and each level's largest domain is worked out again. It returns what
// NewCapacity(t) returns.
func (s *State) ReshapeCapacity(t *Topology, moved []int32, changed func(m int32) bool) *State {
	c := s.Reshape(t, moved, func(m int32) (NodeState, bool) {
		node := t.Node(m)
		return node.Empty(), changed(m)
	})
	c.setLevelMax()
	c.Flush()
	return c
}

// samePrefix reports whether node a of s and node b of t have the same
// labels on the broadest l levels.
func samePrefix(s *Topology, a int32, t *Topology, b int32, l int) bool {
	for i := range l {
		if s.NodeLabel(a, i) != t.NodeLabel(b, i) {
			return false
		}
	}
	return true
}

// addFitsAt adds (sign 1) or takes out (-1) contribution c in the fits of
// domains (-1 for none), up to the state's G.
func (s *State) addFitsAt(domains []int32, c *contrib, sign int32) {
	G := s.T.G
	for _, d := range domains {
		if d < 0 {
			continue
		}
		for g := range G {
			if v := c.fits[g]; v != 0 {
				*s.fits.Mut(int(d)*G + g) += sign * v
			}
		}
	}
}

// Renode returns t with node n described anew by sp (t itself when that
// changes nothing of the node), for a node that keeps its place and
// changes nothing the other nodes' figures are laid out by: the same name,
// flavor and labels, the same shareable GPUs and MIG slices, one GPU
// island or several as before, and the topology's largest GPU count G the
// same. The result shares everything with t but node n's page of nodes
// and the directories above it, which are copied (the list of them is
// nodes/512 long); nothing is worked out again. ok is false when any of
// that would change, or sp is not a valid node (Edit says why): Edit it
// then. t does not change. spares, when not nil, is where the copies come
// from (Spares).
func (t *Topology) Renode(n int32, sp *NodeSpec, spares *Spares) (nt *Topology, ok bool) {
	old := t.Node(n)
	if sp.Flavor != old.Flavor || sp.Name != t.NodeName(n) || sp.Shareable != old.Shareable ||
		len(sp.Labels) != len(t.Levels) || !slices.Equal(sp.MIG, t.MIGOf(n)) {
		return nil, false
	}
	for l, v := range sp.Labels {
		if v != t.NodeLabel(n, l) {
			return nil, false
		}
	}
	node, err := newNode(sp, t.Resource, t.GPU)
	if err != nil || (node.Islands > 1) != (old.Islands > 1) || int(node.GPUs) > t.G {
		return nil, false
	}
	if int(old.GPUs) == t.G && node.GPUs < old.GPUs && !t.Another(n, func(m *Node) bool { return int(m.GPUs) == t.G }) {
		return nil, false
	}
	node.shareBase, node.mig, node.name = old.shareBase, old.mig, old.name
	if node == *old {
		return t, true
	}
	c := *t
	nodes, _, _ := spares.topology()
	c.nodes = t.nodes.ForkSpared(nodes)
	c.nodes.Set(int(n), node)
	c.nodes.DropSpare()
	c.TotalGPUs += int(node.GPUs - old.GPUs)
	return &c, true
}

// Another reports whether a node of t other than n is as ok says, looking
// no further than the first such node.
func (t *Topology) Another(n int32, ok func(m *Node) bool) bool {
	for m := range t.NumNodes() {
		if int32(m) != n && ok(t.Node(int32(m))) {
			return true
		}
	}
	return false
}

// Renoded returns s moved onto t, a topology Renode made from s.T with
// node n described anew, node n's state now ns, as Renode moves it, on a
// copy: s must be flushed, and does not change; on a capacity state the
// copy keeps each level's largest domain.
func (s *State) Renoded(t *Topology, n int32, ns NodeState, sp *Spares) (c *State, ok bool) {
	c = s.forkSpared(sp)
	defer c.dropSpares()
	c.levelMax = s.levelMax
	if !c.Renode(t, n, ns) {
		return nil, false
	}
	c.Flush()
	return c, true
}

// Renode moves s onto t, a topology Renode made from s.T with node n
// described anew, node n's state now ns: only the counters of n's domains
// change (and, on a capacity state, each level's largest domain, looked
// for again only where n's domain was the largest and shrinks). It
// reports false, changing nothing, when a domain would hold more pods
// than t's fit index has room for, the node grown past what the topology
// was laid out for: Reshape then.
func (s *State) Renode(t *Topology, n int32, ns NodeState) bool {
	before, after := s.contribOf(n), s.contribFor(t.Node(n), &ns)
	f := t.Node(n).Flavor
	for l, d := range t.NodeDomains(n) {
		for g := 1; g <= t.G; g++ {
			if x := t.index(f, l, g); x != nil && s.indexed && s.Fits(d, g)+after.fits[g-1]-before.fits[g-1] > x.maxV {
				return false
			}
		}
	}
	was := *s.nodes.Ptr(int(n))
	s.T = t
	*s.nodes.Mut(int(n)) = ns
	s.applyDelta(n, &before, &after)
	s.markDirty(n)
	s.freeGPUs += int64(bits.OnesCount64(ns.FreeGPUs) - bits.OnesCount64(was.FreeGPUs))
	s.cool(n, ns.CooldownUntil)
	if s.levelMax != nil {
		s.renodeLevelMax(n, &before, &after)
	}
	return true
}

// levelMaxScan is how many of a level's members renodeLevelMax reads
// for one as large as the largest that shrank before it asks the fit
// index: most levels have one among the first few, and the index costs a
// few word reads where a member costs one.
const levelMaxScan = 8

// renodeLevelMax keeps a capacity state's largest domain per level, and
// node, through node n's change from before to after (its domains'
// fits already moved), copying the rows of the table it writes.
func (s *State) renodeLevelMax(n int32, before, after *contrib) {
	t := s.T
	f := t.Node(n).Flavor
	ft := &t.Flavors[f]
	lm := *s.levelMax
	var copied uint64 // bit l: row l is this state's own
	set := func(l, g int, v int32) {
		if lm[f][l][g-1] == v {
			return
		}
		if copied == 0 {
			lm = slices.Clone(lm)
			lm[f] = slices.Clone(lm[f])
			s.levelMax = &lm
		}
		if copied&(1<<l) == 0 {
			lm[f][l] = slices.Clone(lm[f][l])
			copied |= 1 << l
		}
		lm[f][l][g-1] = v
	}
	doms := t.NodeDomains(n)
	for l := range lm[f] {
		for g := 1; g <= t.G; g++ {
			was, now := before.fits[g-1], after.fits[g-1]
			domains := l < len(doms) // else the level of nodes
			first, end := ft.First, ft.End
			if domains {
				d := doms[l]
				now, was = s.Fits(d, g), s.Fits(d, g)-now+was
				first, end = ft.Levels[l][0], ft.Levels[l][1]
			}
			switch top := lm[f][l][g-1]; {
			case now >= top:
				set(l, g, now)
			case was == top:
				// The largest shrank: the first member as large ends the
				// search; without one, the largest is the level's new one.
				// Past a few members an indexed level's fit index, which
				// the node's change has moved already, knows it.
				indexed := domains && s.indexed && t.index(f, l, g) != nil
				most := now
				for m := first; m < end && most < top; m++ {
					if indexed && m-first == levelMaxScan {
						most = int32(s.Largest(f, l, g, nil))
						break
					}
					if domains {
						most = max(most, s.Fits(m, g))
					} else {
						node := t.Node(m)
						most = max(most, int32(node.GPUFits(node.AllGPUs(), g)))
					}
				}
				set(l, g, most)
			}
		}
	}
}
