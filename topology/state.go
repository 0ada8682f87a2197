package topology

import (
	"math"
	"math/bits"
	"slices"

	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/res"
)

// NodeState is a node's free capacity and condition.
type NodeState struct {
	// Free is what is left of every resource, GPUs as a count.
	Free res.Vec
	// FreeGPUs is the node's free GPUs as a node-local mask (bit i for
	// GPU i), kept beside the node's other figures so that placement reads
	// one record per node.
	FreeGPUs      uint64
	Pods          int32
	Cordoned      bool
	Down          bool
	CooldownUntil int64
}

// Usable reports whether new pods may land on the node at time now.
func (s *NodeState) Usable(now int64) bool {
	return !s.Cordoned && !s.Down && s.CooldownUntil <= now
}

// DomainAgg is what a domain's counters hold besides the per-GPU-count fits.
type DomainAgg struct {
	// MinFree is the smallest free amount of each resource over the domain's
	// usable nodes that have a free GPU (MaxInt64 when there are none).
	MinFree res.Vec
	// MinPodsLeft is the smallest room for more pods over the same nodes.
	MinPodsLeft int32
}

// State is the free capacity of a cluster at one moment.
type State struct {
	T   *Topology
	now int64
	// freeGPUs counts the free GPUs of every node, usable or not.
	freeGPUs int64
	nodes    cow.Slice[NodeState]
	// fits[d*G+g-1] is how many pods of g GPUs the usable nodes of domain d
	// can hold, GPU islands respected.
	fits cow.Slice[int32]
	aggs cow.Slice[DomainAgg]
	// shared holds the thousandths of each shareable GPU that fractional
	// pods hold (share.go); empty when no node has one.
	shared cow.Slice[uint16]
	// idx is the fit index (index.go): the domains of each declared level
	// ordered by their fits.
	idx cow.Slice[uint64]
	// indexed says idx is built and kept: not until the first Flush.
	indexed bool
	// deferred says changes write the nodes' states alone, the counters
	// left for CountAll (DeferCounts).
	deferred bool
	// free[f] is the free amount of every resource over flavor f's usable
	// nodes, a wide sum (res.AddWide): its low words here, as uint64 bits,
	// its high words in freeHi. Many nodes hold more than MaxInt64 in all,
	// and a total kept incrementally must not clip what a later change
	// takes back.
	free []res.Vec
	// freeBuf holds free when there are few flavors, so that a new version
	// copies it along with the state instead of allocating it apart.
	freeBuf [2]res.Vec
	// freeHi[f] holds the high words of free[f]; nil while they are all
	// zero, as they are unless a flavor's total passes 2^64. Never written
	// in place, so versions share it.
	freeHi *[]res.Vec
	// cooling lists nodes whose cooldown ends after now, sorted (nil for
	// none); never written in place, so versions share it.
	cooling *[]int32
	// dirty lists domains whose aggregates need recomputing: a writer's,
	// behind a pointer so that a published version does not carry it.
	dirty *[]int32
	// levelMax, on a capacity state only, is for each flavor, level and GPU
	// count the most pods of g GPUs any one domain of the level holds.
	levelMax *[][][]int32
}

// NewState returns a state at time now with every node free and usable.
func NewState(t *Topology, now int64) *State {
	return restate(t, now, func(_ int, span []NodeState, nodes []Node) {
		for k := range span {
			span[k] = nodes[k].Empty()
		}
	})
}

// Copy returns a state equal to s at time now that shares nothing with
// it, for a state to be written all over: a snapshot's first, copied
// from its capacity, before its running pods are booked. s must have no
// node cooling down after now. The copy has no fit index until its first
// Flush, and is no capacity state (LevelMax).
func (s *State) Copy(now int64) *State {
	t := s.T
	c := &State{T: t, now: now, freeGPUs: s.freeGPUs, cooling: s.cooling, freeHi: s.freeHi,
		nodes: s.nodes.Copy(t.NumNodes()), fits: s.fits.Copy(len(t.Domains) * t.G), aggs: s.aggs.Copy(len(t.Domains))}
	if t.ShareSlots > 0 {
		c.shared = s.shared.Copy(int(t.ShareSlots))
	}
	c.setFree(s.free)
	return c
}

// NewCapacity returns the empty cluster, every node usable: what could ever
// fit. It never changes, and it knows each level's largest domain.
func NewCapacity(t *Topology) *State {
	s := NewState(t, 0)
	s.setLevelMax()
	s.Flush()
	return s
}

// setLevelMax works out, for a capacity state, each level's largest domain.
func (s *State) setLevelMax() {
	t := s.T
	lm := make([][][]int32, len(t.Flavors))
	s.levelMax = &lm
	for f, ft := range t.Flavors {
		lm[f] = make([][]int32, len(ft.Levels)+1)
		for l, rng := range ft.Levels {
			m := make([]int32, t.G)
			for d := rng[0]; d < rng[1]; d++ {
				for g := 1; g <= t.G; g++ {
					m[g-1] = max(m[g-1], s.Fits(d, g))
				}
			}
			lm[f][l] = m
		}
		// Nodes: the most pods of g GPUs one node holds. A node of one
		// island holds its GPUs over g, so of those nodes the one with the
		// most GPUs holds the most at every g.
		m := make([]int32, t.G)
		most := 0
		for n := ft.First; n < ft.End; n++ {
			node := t.Node(n)
			if node.Islands <= 1 {
				most = max(most, bits.OnesCount64(node.AllGPUs()))
				continue
			}
			for g := 1; g <= int(node.GPUs); g++ {
				m[g-1] = max(m[g-1], int32(node.GPUFits(node.AllGPUs(), g)))
			}
		}
		for g := 1; g <= t.G; g++ {
			m[g-1] = max(m[g-1], int32(most/g))
		}
		lm[f][len(ft.Levels)] = m
	}
}

// LevelMax is, on a state made by NewCapacity, the most pods of g GPUs
// (1 ≤ g ≤ G) that one domain of tree level l of flavor f holds, GPUs
// alone considered; ok is false on any other state.
func (s *State) LevelMax(f int32, l, g int) (int32, bool) {
	if s.levelMax == nil || g < 1 || g > s.T.G || l >= len((*s.levelMax)[f]) {
		return 0, false
	}
	return (*s.levelMax)[f][l][g-1], true
}

// Now is the state's time: nodes whose cooldown ends later are not usable.
func (s *State) Now() int64 { return s.now }

// Node returns a node's state.
func (s *State) Node(n int32) *NodeState { return s.nodes.Ptr(int(n)) }

// Nodes returns, read-only, the states of nodes n, n+1, ... up to end,
// as many as share n's page (at least one).
func (s *State) Nodes(n, end int32) []NodeState { return s.nodes.Span(int(n), int(end-n)) }

// FlavorFree is the free amount of every resource over flavor f's usable
// nodes, MaxInt64 where it is more.
func (s *State) FlavorFree(f int32) res.Vec {
	var hi res.Vec
	if s.freeHi != nil {
		hi = (*s.freeHi)[f]
	}
	v := s.free[f]
	for r := range v {
		v[r] = res.SatWide(hi[r], uint64(v[r]))
	}
	return v
}

// Agg returns a domain's aggregates.
func (s *State) Agg(d int32) *DomainAgg { return s.aggs.Ptr(int(d)) }

// Fits returns how many pods of g GPUs (1 ≤ g ≤ G) domain d can hold, GPU
// islands respected, other resources ignored.
func (s *State) Fits(d int32, g int) int32 {
	if g > s.T.G {
		return 0
	}
	return s.fits.At(int(d)*s.T.G + g - 1)
}

// FreeMask returns node n's free GPUs as a node-local mask.
func (s *State) FreeMask(n int32) uint64 { return s.nodes.Ptr(int(n)).FreeGPUs }

// FreeGPUs counts the free GPUs of the whole cluster, usable nodes or not.
func (s *State) FreeGPUs() int64 { return s.freeGPUs }

// Fork returns a private, writable copy of a published state without
// writing to it, so that many goroutines may fork one state at once (to
// simulate evictions, say). s must never be written again.
func (s *State) Fork() *State {
	c := new(State)
	s.ForkInto(c)
	return c
}

// ForkInto is Fork writing the private copy into c.
func (s *State) ForkInto(c *State) {
	*c = State{T: s.T, now: s.now, freeGPUs: s.freeGPUs, nodes: s.nodes.Fork(),
		fits: s.fits.Fork(), aggs: s.aggs.Fork(), idx: s.idx.Fork(), indexed: s.indexed, cooling: s.cooling, freeHi: s.freeHi}
	if s.T.ShareSlots > 0 {
		c.shared = s.shared.Fork()
	}
	c.setFree(s.free)
}

// Spare gives the state's copy-on-write slices spare blocks, for a store's
// master, which writes and publishes them again and again (cow.Slice.Spare).
func (s *State) Spare() {
	s.nodes.Spare()
	s.fits.Spare()
	s.aggs.Spare()
	s.shared.Spare()
	s.idx.Spare()
}

// Spares are spare blocks for what a writer forks from a read-only
// version at every change and publishes: the topology a node event makes
// (Vacate, Fill, Renode) and the capacity state it moves onto it (Shifted,
// Renoded), as a store's master does. The forks take their copies from
// them, many to an allocation, instead of one allocation a copy. One
// Spares serves one fork of each at a time; nil serves none.
type Spares struct {
	nodes  cow.Spares[NodeState]
	fits   cow.Spares[int32]
	aggs   cow.Spares[DomainAgg]
	shared cow.Spares[uint16]
	idx    cow.Spares[uint64]
	// the topology's
	topoNodes cow.Spares[Node]
	slots     cow.Spares[int32]
	added     cow.Spares[string]
}

// spares returns each of sp's blocks, nil for a nil sp.
func (sp *Spares) spares() (nodes *cow.Spares[NodeState], fits *cow.Spares[int32], aggs *cow.Spares[DomainAgg], shared *cow.Spares[uint16], idx *cow.Spares[uint64]) {
	if sp == nil {
		return
	}
	return &sp.nodes, &sp.fits, &sp.aggs, &sp.shared, &sp.idx
}

// topology returns the blocks of sp for a topology's node, name-slot and
// added-name slices, nil for a nil sp.
func (sp *Spares) topology() (nodes *cow.Spares[Node], slots *cow.Spares[int32], added *cow.Spares[string]) {
	if sp == nil {
		return
	}
	return &sp.topoNodes, &sp.slots, &sp.added
}

// forkSpared is Fork with the copies taken from sp (nil: none); the
// caller calls dropSpares once it is written.
func (s *State) forkSpared(sp *Spares) *State {
	c := s.Fork()
	nodes, fits, aggs, shared, idx := sp.spares()
	c.nodes, c.fits, c.aggs, c.idx = s.nodes.ForkSpared(nodes), s.fits.ForkSpared(fits), s.aggs.ForkSpared(aggs), s.idx.ForkSpared(idx)
	if s.T.ShareSlots > 0 {
		c.shared = s.shared.ForkSpared(shared)
	}
	return c
}

// dropSpares forgets the spare blocks forkSpared gave s.
func (s *State) dropSpares() {
	s.nodes.DropSpare()
	s.fits.DropSpare()
	s.aggs.DropSpare()
	s.shared.DropSpare()
	s.idx.DropSpare()
}

// UseSpares makes s, a fork of from (ForkInto) that will replace it as a
// store's master or be dropped, take its copies from from's spare blocks
// (cow.Slice.UseSpare). from must not be written while s is.
func (s *State) UseSpares(from *State) {
	s.nodes.UseSpare(&from.nodes)
	s.fits.UseSpare(&from.fits)
	s.aggs.UseSpare(&from.aggs)
	s.shared.UseSpare(&from.shared)
	s.idx.UseSpare(&from.idx)
}

// CloneInto is Clone with the copy-on-write owners given (see
// cow.CloneAs), writing the new version into c, for a caller that
// allocates it together with other things.
func (s *State) CloneInto(c *State, child, parent cow.Owner) {
	*c = State{T: s.T, now: s.now, freeGPUs: s.freeGPUs,
		nodes: s.nodes.CloneAs(child, parent), fits: s.fits.CloneAs(child, parent), aggs: s.aggs.CloneAs(child, parent),
		idx: s.idx.CloneAs(child, parent), indexed: s.indexed, cooling: s.cooling, freeHi: s.freeHi}
	if s.T.ShareSlots > 0 {
		c.shared = s.shared.CloneAs(child, parent)
	}
	c.setFree(s.free)
}

// setFree makes s.free a copy of free, in freeBuf when it fits there.
func (s *State) setFree(free []res.Vec) {
	if len(free) <= len(s.freeBuf) {
		s.free = s.freeBuf[:len(free)]
		copy(s.free, free)
		return
	}
	s.free = slices.Clone(free)
}

// Rebuild recomputes every counter from the per-node state: each node's
// contribution added to its narrowest domain alone, then each level's
// sums added into their parents', narrowest first, O(nodes × G + domains
// × G) where adding each node to every domain above it costs a pass a
// level.
func (s *State) Rebuild() {
	t := s.T
	G, L := t.G, len(t.Levels)
	s.indexed = false
	fits := make([]int32, len(t.Domains)*G)
	// The narrowest domains' aggregates are folded in the same pass over
	// the nodes, and the broader ones' from them.
	aggs := make([]DomainAgg, len(t.Domains))
	for d := range aggs {
		aggs[d] = noAgg
	}
	var cooling []int32
	s.setFree(make([]res.Vec, len(t.Flavors)))
	s.freeHi = nil
	for n := 0; n < t.NumNodes(); {
		span := s.nodes.Span(n, t.NumNodes()-n)
		nodes := t.nodes.Span(n, len(span))
		for i := range span {
			ns, node := &span[i], &nodes[i]
			if ns.CooldownUntil > s.now {
				cooling = append(cooling, int32(n+i))
			}
			if !ns.Usable(s.now) {
				continue
			}
			s.moveFree(node.Flavor, res.Vec{}, ns.Free)
			leaf := t.NodeDomains(int32(n + i))[L]
			aggs[leaf].addNode(t, node, ns)
			if node.GPUs > 0 && ns.FreeGPUs != 0 {
				node.countFits(ns.FreeGPUs, fits[int(leaf)*G:][:node.GPUs])
			}
		}
		n += len(span)
	}
	t.addUp(fits, 0)
	for i := 0; i < len(fits); {
		i += copy(s.fits.MutSpan(i, len(s.fits.Span(i, len(fits)-i))), fits[i:])
	}
	s.setCooling(cooling)
	for l := L; l >= 1; l-- {
		for f := range t.Flavors {
			rng := t.Flavors[f].Levels[l]
			for d := rng[0]; d < rng[1]; d++ {
				aggs[t.Domains[d].Parent].addChild(&aggs[d])
			}
		}
	}
	for i := 0; i < len(aggs); {
		i += copy(s.aggs.MutSpan(i, len(s.aggs.Span(i, len(aggs)-i))), aggs[i:])
	}
	if s.dirty != nil {
		*s.dirty = (*s.dirty)[:0]
	}
}

// noAgg is the aggregates of a domain with no node that counts.
var noAgg = DomainAgg{MinFree: res.Fill(math.MaxInt64), MinPodsLeft: math.MaxInt32}

// addNode folds into a narrowest domain's aggregates a usable node of t,
// described by node and in state ns: it counts when it has a free GPU.
func (a *DomainAgg) addNode(t *Topology, node *Node, ns *NodeState) {
	if t.GPU >= 0 && ns.Free[t.GPU] > 0 {
		a.MinFree = a.MinFree.Min(ns.Free)
		a.MinPodsLeft = min(a.MinPodsLeft, podsLeft(node, ns))
	}
}

// addChild folds a child domain's aggregates into its parent's.
func (a *DomainAgg) addChild(c *DomainAgg) {
	a.MinFree = a.MinFree.Min(c.MinFree)
	a.MinPodsLeft = min(a.MinPodsLeft, c.MinPodsLeft)
}

// DeferCounts makes the state's changes (Allocate, AllocateShare,
// SetCondition …) write the nodes' states alone, not the counters above
// them, until CountAll works every counter out at once: for a state
// written all over before it is read, as Build books a snapshot's running
// pods, where a pass over every node costs less than keeping the counters
// pod by pod. Nothing may read the counters (Fits, Agg, FlavorFree, the
// fit index) in between; the nodes' states read as ever.
func (s *State) DeferCounts() { s.deferred = true }

// CountAll ends DeferCounts: every counter worked out from the nodes'
// states, as Rebuild works them out.
func (s *State) CountAll() {
	s.deferred = false
	s.Rebuild()
}

// addUp adds the counts of each domain below level top (fits[d*G+g-1]
// for domain d) into its parent's, level by level from the narrowest up,
// so that a domain's counts, given those of the narrowest domains alone,
// come to the sums of its nodes'.
func (t *Topology) addUp(fits []int32, top int) {
	G := t.G
	if G == 0 {
		return
	}
	for l := len(t.Levels); l > top; l-- {
		for f := range t.Flavors {
			rng := t.Flavors[f].Levels[l]
			for d := rng[0]; d < rng[1]; d++ {
				from, to := fits[int(d)*G:][:G], fits[int(t.Domains[d].Parent)*G:][:G]
				for g := range to {
					to[g] += from[g]
				}
			}
		}
	}
}

// contrib is what one node adds to its domains' counters.
type contrib struct {
	usable bool
	fits   [MaxNodeGPUs]int32 // fits[g-1]: pods of g GPUs
	free   res.Vec
}

func (s *State) contribOf(n int32) contrib { return s.contribFor(s.T.Node(n), s.nodes.Ptr(int(n))) }

// contribFor is what a node described by node, in state ns, adds to its
// domains' counters.
func (s *State) contribFor(node *Node, ns *NodeState) contrib {
	var c contrib
	if !ns.Usable(s.now) {
		return c
	}
	c.usable, c.free = true, ns.Free
	if node.GPUs == 0 {
		return c
	}
	mask := ns.FreeGPUs
	if mask == 0 {
		return c
	}
	node.countFits(mask, c.fits[:node.GPUs])
	return c
}

// podsOf[c][g] is c/g for c and g up to MaxNodeGPUs: how many pods of g
// GPUs c free GPUs of one island hold, read where every node's counts are
// worked out for every pod size, in place of a division each. Never
// written after it is made.
var podsOf = func() (t [MaxNodeGPUs + 1][MaxNodeGPUs + 1]uint8) {
	for c := range t {
		for g := 1; g < len(t[c]); g++ {
			t[c][g] = uint8(c / g)
		}
	}
	return t
}()

// countFits adds to fits[g-1], for g from 1 to the node's GPUs, how many
// pods of g GPUs the node holds when mask holds its free GPUs (GPUFits).
// Not monotone in g: with islands, a pod larger than every island may fit
// where a smaller one does not.
func (n *Node) countFits(mask uint64, fits []int32) {
	fits = fits[:n.GPUs]
	if n.Islands == 1 {
		pods := &podsOf[bits.OnesCount64(mask)]
		for g := range fits {
			fits[g] += int32(pods[g+1])
		}
		return
	}
	for g := range fits {
		fits[g] += int32(n.GPUFits(mask, g+1))
	}
}

// addFits adds (sign 1) or removes (sign -1) node n's contribution to the
// fits of all its domains and to its flavor's free totals.
func (s *State) addFits(n int32, sign int32) {
	var zero contrib
	c := s.contribOf(n)
	if sign > 0 {
		s.applyDelta(n, &zero, &c)
	} else {
		s.applyDelta(n, &c, &zero)
	}
}

// applyDelta moves node n's contribution from before to after in every
// domain above it.
func (s *State) applyDelta(n int32, before, after *contrib) {
	node := s.T.Node(n)
	if before.usable || after.usable {
		s.moveFree(node.Flavor, before.free, after.free)
	}
	G := s.T.G
	var delta [MaxNodeGPUs]int32
	last := 0
	for g := 0; g < G; g++ {
		delta[g] = after.fits[g] - before.fits[g]
		if delta[g] != 0 {
			last = g + 1
		}
	}
	if last == 0 {
		return
	}
	L := len(s.T.Levels)
	for l, d := range s.T.NodeDomains(n) {
		base := int(d) * G
		if s.indexed && l >= 1 && l <= L {
			for g, v := range delta[:last] {
				if v != 0 {
					from := s.fits.At(base + g)
					s.moveIndex(node.Flavor, d, l, g+1, from, from+v)
				}
			}
		}
		if span := s.fits.MutSpan(base, last); span != nil {
			for g, v := range delta[:last] {
				span[g] += v
			}
			continue
		}
		for g, v := range delta[:last] {
			if v != 0 {
				*s.fits.Mut(base + g) += v
			}
		}
	}
}

// moveFree takes before from flavor f's free total and adds after.
func (s *State) moveFree(flavor int32, before, after res.Vec) {
	f := &s.free[flavor]
	var carry res.Vec
	carried := false
	for r := range f {
		lo, up := res.AddWide(uint64(f[r]), after[r])
		lo, down := res.SubWide(lo, before[r])
		f[r], carry[r] = int64(lo), up+down
		carried = carried || carry[r] != 0
	}
	if carried {
		s.carryFree(flavor, carry)
	}
}

// carryFree adds carry to flavor f's high words of free, on a copy.
func (s *State) carryFree(f int32, carry res.Vec) {
	var hi []res.Vec
	if s.freeHi != nil {
		hi = slices.Clone(*s.freeHi)
	} else {
		hi = make([]res.Vec, len(s.T.Flavors))
	}
	hi[f] = hi[f].Add(carry)
	for i := range hi {
		if !hi[i].IsZero() {
			s.freeHi = &hi
			return
		}
	}
	s.freeHi = nil
}

// recomputeAgg recomputes domain d's aggregates from its nodes or children
// and reports whether they changed.
func (s *State) recomputeAgg(d int32) bool {
	dom := &s.T.Domains[d]
	agg := noAgg
	if int(dom.Level) == len(s.T.Levels) {
		// A page of node states at a time; without GPUs no node counts.
		for n := dom.First; n < dom.End && s.T.GPU >= 0; {
			span := s.nodes.Span(int(n), int(dom.End-n))
			nodes := s.T.nodes.Span(int(n), len(span))
			for i := range span {
				if span[i].Usable(s.now) {
					agg.addNode(s.T, &nodes[i], &span[i])
				}
			}
			n += int32(len(span))
		}
	} else {
		for c := dom.ChildFirst; c < dom.ChildEnd; c++ {
			agg.addChild(s.aggs.Ptr(int(c)))
		}
	}
	if *s.aggs.Ptr(int(d)) == agg {
		return false
	}
	s.aggs.Set(int(d), agg)
	return true
}

// podsLeft is how many more pods a node takes (MaxInt32 without a limit).
func podsLeft(node *Node, ns *NodeState) int32 {
	if node.MaxPods <= 0 {
		return math.MaxInt32
	}
	return node.MaxPods - ns.Pods
}

// change runs fn on node n's state, keeping the counters right.
func (s *State) change(n int32, fn func(ns *NodeState)) {
	if s.deferred {
		fn(s.nodes.Mut(int(n)))
		return
	}
	before := s.contribOf(n)
	fn(s.nodes.Mut(int(n)))
	after := s.contribOf(n)
	s.applyDelta(n, &before, &after)
	s.markDirty(n)
}

// Allocate books GPUs (a node-local mask) and resources r (GPU count
// included) for one or more pods on node n. The caller has checked they are
// free.
func (s *State) Allocate(n int32, gpus uint64, r res.Vec, pods int32) {
	s.change(n, func(ns *NodeState) {
		ns.Free = ns.Free.Sub(r)
		ns.Pods += pods
		ns.FreeGPUs &^= gpus
	})
	s.freeGPUs -= int64(bits.OnesCount64(gpus))
}

// Release returns what Allocate booked.
func (s *State) Release(n int32, gpus uint64, r res.Vec, pods int32) {
	s.change(n, func(ns *NodeState) {
		ns.Free = ns.Free.Add(r)
		ns.Pods -= pods
		ns.FreeGPUs |= gpus
	})
	s.freeGPUs += int64(bits.OnesCount64(gpus))
}

func maskBits(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return (uint64(1) << n) - 1
}

// SetCondition changes whether node n is cordoned or down and until when it
// cools down.
func (s *State) SetCondition(n int32, cordoned, down bool, cooldownUntil int64) {
	s.change(n, func(ns *NodeState) {
		ns.Cordoned, ns.Down, ns.CooldownUntil = cordoned, down, cooldownUntil
	})
	s.cool(n, cooldownUntil)
}

// cool keeps node n in the cooling list while its cooldown, until, ends
// after now, and out of it otherwise.
func (s *State) cool(n int32, cooldownUntil int64) {
	i, found := slices.BinarySearch(s.Cooling(), n)
	switch {
	case cooldownUntil > s.now && !found:
		s.setCooling(slices.Insert(slices.Clone(s.Cooling()), i, n))
	case cooldownUntil <= s.now && found:
		s.setCooling(slices.Delete(slices.Clone(s.Cooling()), i, i+1))
	}
}

// SetNow moves the state's clock; nodes whose cooldown has ended become
// usable.
func (s *State) SetNow(now int64) {
	var ended []int32
	for _, n := range s.Cooling() {
		if s.nodes.Ptr(int(n)).CooldownUntil <= now {
			ended = append(ended, n)
		}
	}
	s.now = now
	if len(ended) == 0 {
		return
	}
	kept := make([]int32, 0, len(s.Cooling())-len(ended))
	for _, n := range s.Cooling() {
		if s.nodes.Ptr(int(n)).CooldownUntil > now {
			kept = append(kept, n)
		}
	}
	s.setCooling(kept)
	for _, n := range ended {
		s.addFits(n, 1)
		s.markDirty(n)
	}
}

// Cooling lists the nodes still cooling down, sorted.
func (s *State) Cooling() []int32 {
	if s.cooling == nil {
		return nil
	}
	return *s.cooling
}

func (s *State) setCooling(nodes []int32) {
	if len(nodes) == 0 {
		s.cooling = nil
		return
	}
	s.cooling = &nodes
}

// markDirty notes that the aggregates of node n's narrowest domain need
// recomputing.
func (s *State) markDirty(n int32) {
	if s.dirty == nil {
		s.dirty = new([]int32)
	}
	*s.dirty = append(*s.dirty, s.T.NodeDomains(n)[len(s.T.Levels)])
}

// Flush recomputes the aggregates of every domain a change touched, from the
// narrowest level up. Call it before publishing.
func (s *State) Flush() {
	if !s.indexed {
		// Built once, here, rather than kept through the many changes
		// that make a state (a snapshot's running workloads booked one
		// by one): from now on every change keeps it.
		s.rebuildIndex()
	}
	if s.dirty == nil {
		return
	}
	dirty := *s.dirty
	for len(dirty) > 0 {
		slices.Sort(dirty)
		dirty = slices.Compact(dirty)
		level := s.T.Domains[dirty[len(dirty)-1]].Level
		// The parents to look at next overwrite the list in place: the
		// k-th is written after the k-th domain is read.
		k := 0
		for _, d := range dirty {
			// A parent's aggregates follow from its children's: when a
			// child's did not change, the parent's need no look.
			if s.recomputeAgg(d) && level > 0 {
				dirty[k] = s.T.Domains[d].Parent
				k++
			}
		}
		dirty = dirty[:k]
	}
	*s.dirty = dirty // empty, its room kept
}
