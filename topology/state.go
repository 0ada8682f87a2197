package topology

import (
	"math"
	"math/bits"
	"slices"

	"github.com/bits-and-blooms/bitset"

	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/res"
)

// NodeState is a node's free capacity and condition.
type NodeState struct {
	// Free is what is left of every resource, GPUs as a count.
	Free          res.Vec
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
	// SumFree is the free amount of each resource over all usable nodes.
	SumFree res.Vec
}

// State is the free capacity of a cluster at one moment.
type State struct {
	T   *Topology
	now int64
	// gpus has bit i set when cluster-wide GPU i is free.
	gpus  *bitset.BitSet
	nodes cow.Slice[NodeState]
	// fits[d*G+g-1] is how many pods of g GPUs the usable nodes of domain d
	// can hold, GPU islands respected.
	fits cow.Slice[int32]
	aggs cow.Slice[DomainAgg]
	// cooling lists nodes whose cooldown ends after now, sorted.
	cooling []int32
	// dirty lists domains whose aggregates need recomputing (writer only).
	dirty []int32
}

// NewState returns a state at time now with every node free and usable.
func NewState(t *Topology, now int64) *State {
	s := &State{T: t, now: now, gpus: bitset.New(uint(t.TotalGPUs))}
	s.gpus.SetAll()
	s.nodes = cow.Make[NodeState](len(t.Nodes))
	for i := range t.Nodes {
		ns := s.nodes.Mut(i)
		ns.Free = t.Nodes[i].Capacity
	}
	s.fits = cow.Make[int32](len(t.Domains) * t.G)
	s.aggs = cow.Make[DomainAgg](len(t.Domains))
	s.Rebuild()
	return s
}

// Now is the state's time: nodes whose cooldown ends later are not usable.
func (s *State) Now() int64 { return s.now }

// Node returns a node's state.
func (s *State) Node(n int32) *NodeState { return s.nodes.Ptr(int(n)) }

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
func (s *State) FreeMask(n int32) uint64 {
	node := &s.T.Nodes[n]
	if node.GPUs == 0 {
		return 0
	}
	words := s.gpus.Words()
	base := uint(node.GPUBase)
	w, off := base>>6, base&63
	m := words[w] >> off
	if off != 0 && int(off)+int(node.GPUs) > 64 {
		m |= words[w+1] << (64 - off)
	}
	if node.GPUs < 64 {
		m &= (uint64(1) << node.GPUs) - 1
	}
	return m
}

// FreeGPUs counts the free GPUs of the whole cluster, usable nodes or not.
func (s *State) FreeGPUs() int64 { return int64(s.gpus.Count()) }

// Clone returns the next version for a writer: it shares pages with s and
// copies the free-GPU bitset's words.
func (s *State) Clone() *State {
	c := &State{T: s.T, now: s.now, gpus: s.gpus.Clone(), nodes: s.nodes.Clone(), fits: s.fits.Clone(), aggs: s.aggs.Clone(),
		cooling: s.cooling}
	return c
}

// Rebuild recomputes every counter from the per-node state.
func (s *State) Rebuild() {
	G := s.T.G
	for d := range s.T.Domains {
		for g := 0; g < G; g++ {
			s.fits.Set(d*G+g, 0)
		}
	}
	s.cooling = s.cooling[:0]
	for n := range s.T.Nodes {
		ns := s.nodes.Ptr(n)
		if ns.CooldownUntil > s.now {
			s.cooling = append(s.cooling, int32(n))
		}
		s.addFits(int32(n), 1)
	}
	// Aggregates bottom-up: narrowest level first.
	for l := len(s.T.Levels); l >= 0; l-- {
		for f := range s.T.Flavors {
			rng := s.T.Flavors[f].Levels[l]
			for d := rng[0]; d < rng[1]; d++ {
				s.recomputeAgg(d)
			}
		}
	}
	s.dirty = s.dirty[:0]
}

// addFits adds (sign 1) or removes (sign -1) node n's contribution to the
// fits of all its domains.
func (s *State) addFits(n int32, sign int32) {
	node := &s.T.Nodes[n]
	ns := s.nodes.Ptr(int(n))
	if !ns.Usable(s.now) || node.GPUs == 0 {
		return
	}
	mask := s.FreeMask(n)
	if mask == 0 {
		return
	}
	G := s.T.G
	for g := 1; g <= int(node.GPUs); g++ {
		c := int32(node.GPUFits(mask, g))
		if c == 0 {
			break
		}
		for _, d := range node.Domains {
			*s.fits.Mut(int(d)*G + g - 1) += sign * c
		}
	}
}

func (s *State) recomputeAgg(d int32) {
	dom := &s.T.Domains[d]
	agg := DomainAgg{MinFree: res.Fill(math.MaxInt64), MinPodsLeft: math.MaxInt32}
	if int(dom.Level) == len(s.T.Levels) {
		for n := dom.First; n < dom.End; n++ {
			ns := s.nodes.Ptr(int(n))
			if !ns.Usable(s.now) {
				continue
			}
			agg.SumFree = agg.SumFree.Add(ns.Free)
			if s.T.GPU >= 0 && ns.Free[s.T.GPU] > 0 {
				agg.MinFree = agg.MinFree.Min(ns.Free)
				agg.MinPodsLeft = min(agg.MinPodsLeft, podsLeft(&s.T.Nodes[n], ns))
			}
		}
	} else {
		for c := dom.ChildFirst; c < dom.ChildEnd; c++ {
			ca := s.aggs.Ptr(int(c))
			agg.SumFree = agg.SumFree.Add(ca.SumFree)
			agg.MinFree = agg.MinFree.Min(ca.MinFree)
			agg.MinPodsLeft = min(agg.MinPodsLeft, ca.MinPodsLeft)
		}
	}
	s.aggs.Set(int(d), agg)
}

// PodsLeft is how many more pods node n takes (MaxInt32 without a limit).
func (s *State) PodsLeft(n int32) int32 { return podsLeft(&s.T.Nodes[n], s.nodes.Ptr(int(n))) }

func podsLeft(node *Node, ns *NodeState) int32 {
	if node.MaxPods <= 0 {
		return math.MaxInt32
	}
	return node.MaxPods - ns.Pods
}

// change runs fn on node n's state, keeping the counters right.
func (s *State) change(n int32, fn func(ns *NodeState)) {
	s.addFits(n, -1)
	fn(s.nodes.Mut(int(n)))
	s.addFits(n, 1)
	s.dirty = append(s.dirty, s.T.Nodes[n].Domains[len(s.T.Levels)])
}

// Allocate books GPUs (a node-local mask) and resources r (GPU count
// included) for one or more pods on node n. The caller has checked they are
// free.
func (s *State) Allocate(n int32, gpus uint64, r res.Vec, pods int32) {
	s.change(n, func(ns *NodeState) {
		ns.Free = ns.Free.Sub(r)
		ns.Pods += pods
		s.setGPUs(n, gpus, false)
	})
}

// Release returns what Allocate booked.
func (s *State) Release(n int32, gpus uint64, r res.Vec, pods int32) {
	s.change(n, func(ns *NodeState) {
		ns.Free = ns.Free.Add(r)
		ns.Pods -= pods
		s.setGPUs(n, gpus, true)
	})
}

func (s *State) setGPUs(n int32, mask uint64, free bool) {
	base := uint(s.T.Nodes[n].GPUBase)
	for mask != 0 {
		low := mask & -mask
		i := base + uint(bitsTrailing(low))
		if free {
			s.gpus.Set(i)
		} else {
			s.gpus.Clear(i)
		}
		mask &^= low
	}
}

// SetCondition changes whether node n is cordoned or down and until when it
// cools down.
func (s *State) SetCondition(n int32, cordoned, down bool, cooldownUntil int64) {
	s.change(n, func(ns *NodeState) {
		ns.Cordoned, ns.Down, ns.CooldownUntil = cordoned, down, cooldownUntil
	})
	i, found := slices.BinarySearch(s.cooling, n)
	switch {
	case cooldownUntil > s.now && !found:
		s.cooling = slices.Insert(slices.Clone(s.cooling), i, n)
	case cooldownUntil <= s.now && found:
		s.cooling = slices.Delete(slices.Clone(s.cooling), i, i+1)
	}
}

// SetNow moves the state's clock; nodes whose cooldown has ended become
// usable.
func (s *State) SetNow(now int64) {
	var ended []int32
	for _, n := range s.cooling {
		if s.nodes.Ptr(int(n)).CooldownUntil <= now {
			ended = append(ended, n)
		}
	}
	s.now = now
	if len(ended) == 0 {
		return
	}
	kept := make([]int32, 0, len(s.cooling)-len(ended))
	for _, n := range s.cooling {
		if s.nodes.Ptr(int(n)).CooldownUntil > now {
			kept = append(kept, n)
		}
	}
	s.cooling = kept
	for _, n := range ended {
		s.addFits(n, 1)
		s.dirty = append(s.dirty, s.T.Nodes[n].Domains[len(s.T.Levels)])
	}
}

// Cooling lists the nodes still cooling down, sorted.
func (s *State) Cooling() []int32 { return s.cooling }

// Flush recomputes the aggregates of every domain a change touched, from the
// narrowest level up. Call it before publishing.
func (s *State) Flush() {
	if len(s.dirty) == 0 {
		return
	}
	for len(s.dirty) > 0 {
		slices.Sort(s.dirty)
		s.dirty = slices.Compact(s.dirty)
		level := s.T.Domains[s.dirty[len(s.dirty)-1]].Level
		next := s.dirty[:0:0]
		for _, d := range s.dirty {
			s.recomputeAgg(d)
			if p := s.T.Domains[d].Parent; p >= 0 && level > 0 {
				next = append(next, p)
			}
		}
		s.dirty = next
	}
}

func bitsTrailing(x uint64) int { return bits.TrailingZeros64(x) }
