package gang

import (
	"math"
	"math/bits"
	"slices"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/topology"
)

// Mode is how a pod set is constrained to the topology.
type Mode uint8

const (
	// Unconstrained puts the pod set on the least-free node that holds it
	// whole, or fills the least-free nodes first when no node does.
	Unconstrained Mode = 1 + iota
	// Required keeps all pods in one domain of Level, or fails.
	Required
	// Preferred tries one domain of Level, then broader ones, then the
	// whole cluster.
	Preferred
)

// Policy is how pods spread over the chosen domains.
type Policy uint8

const (
	Pack Policy = 1 + iota
	Spread
	Balanced
)

// SliceSpec is one layer of slices: every Size consecutive pods in one
// domain of tree level Level.
type SliceSpec struct {
	Level int
	Size  int64
}

// PodSet is one pod set to place, already resolved against the topology.
type PodSet struct {
	Flavor int32
	Count  int64
	// GPUs per pod; Res per pod, the GPU count included.
	GPUs int
	// Share, when not zero, is the thousandths of one shareable GPU each
	// pod takes (GPUs is then 0): the pods pack onto shared GPUs, never
	// across two (share.go).
	Share int32
	Res   res.Vec
	Mode  Mode
	// Level is the tree level of Required or Preferred (1 is the broadest
	// declared level, topology.NodeLevel() the node).
	Level  int
	Policy Policy
	// Slices, outermost first, with strictly increasing levels; sizes
	// divide each other and Count.
	Slices []SliceSpec
	// Group co-locates pod sets of one request that share a non-zero value.
	Group int
	// Exclude, when not nil, is the nodes of the flavor the pod set must
	// not use (bit n%64 of word n/64 for node n): those with a taint it
	// does not tolerate. Where the counters are exact they count a domain
	// less what its excluded nodes would hold.
	Exclude []uint64
	// AvoidStranding changes how Unconstrained chooses among the nodes
	// that hold the whole pod set: first the node with the fewest
	// stranded GPUs, then the least free, then path order. A node's
	// stranded GPUs are the free ones pods of this shape could take but
	// for another resource they exhaust first (CPU, memory, pod slots).
	// Placing the pods leaves that number as it was, so the rule sends a
	// shape to the nodes whose proportions suit it, and keeps the nodes
	// that would run short of CPU before GPUs for pods that ask for less
	// CPU. On nodes where GPUs alone limit the pods it is least free.
	// Kueue's least free weighs pods alone. One fractional pod goes
	// first to the node whose shareable GPUs it strands the fewest
	// thousandths of the same way, then by best fit (share.go).
	AvoidStranding bool
}

// excluded reports whether the current pod set must not use node n.
func (p *Placer) excluded(n int32) bool {
	ex := p.ps.Exclude
	return ex != nil && int(n>>6) < len(ex) && ex[n>>6]&(1<<(n&63)) != 0
}

// excludedFits is how many pods of the current pod set the nodes of
// domain d it must not use would hold, as the state's counters count
// them (usable nodes, GPUs only): fastCount takes them off the domain's.
func (p *Placer) excludedFits(d int32) int64 {
	dom := &p.t.Domains[d]
	ex, g := p.ps.Exclude, p.ps.GPUs
	sum := int64(0)
	for lo, hi := dom.First, min(dom.End, int32(len(ex)*64)); lo < hi; lo = (lo | 63) + 1 {
		w := ex[lo>>6] >> (lo & 63)
		if n := min(64-lo&63, hi-lo); n < 64 {
			w &= 1<<n - 1
		}
		for w != 0 {
			n := lo + int32(bits.TrailingZeros64(w))
			w &= w - 1
			if ns := p.st.Node(n); ns.Usable(p.st.Now()) {
				sum += int64(p.t.Node(n).GPUFits(ns.FreeGPUs, g))
			}
		}
	}
	return sum
}

// AnyIn reports whether node set b (bit n%64 of word n/64 for node n) has
// a node in [lo, hi), a word at a time.
func AnyIn(b []uint64, lo, hi int32) bool {
	hi = min(hi, int32(len(b)*64))
	for lo < hi {
		w := b[lo>>6] >> (lo & 63)
		if n := min(64-lo&63, hi-lo); n < 64 {
			w &= 1<<n - 1
		}
		if w != 0 {
			return true
		}
		lo = (lo | 63) + 1
	}
	return false
}

// Assignment places one pod: a node and a node-local GPU mask. A
// fractional pod's mask is the one GPU it shares, Share the thousandths
// of it the pod holds (0 for a pod of whole GPUs).
type Assignment struct {
	Node  int32
	Share int32
	GPUs  uint64
}

// Failure explains why a pod set did not fit.
type Failure struct {
	// PodSet is the index of the pod set that failed.
	PodSet int
	// Level is the tree level at which the best domain was counted.
	Level int
	// Fit is how many pods the best domain of Level holds; Need how many
	// were asked.
	Fit, Need int64
}

type cand struct {
	id    int32
	count int64
	// raw is the count before rounding down to whole slices: among equal
	// counts, the domain with fewer leftover pods is the tighter fit.
	raw int64
}

type ovNode struct {
	node int32
	gpus uint64
	r    res.Vec
	pods int32
}

// Placer places pod sets on one state. The zero value is not usable; call
// Reset. A Placer is not safe for concurrent use, but any number of Placers
// may read one state.
type Placer struct {
	st *topology.State
	t  *topology.Topology
	// IgnoreCooldown counts nodes still cooling down as usable (to tell a
	// Cooldown wait from any other).
	IgnoreCooldown bool
	// Final says that no Place call follows this one before the next
	// Reset, so its pods need not be remembered for later calls (which
	// saves the bookkeeping on a request's last pod set).
	Final bool
	ov    []ovNode
	// ovShares are the thousandths of shared GPUs the overlay's
	// fractional pods hold, by node and GPU (share.go).
	ovShares    []ovShare
	cands, next []cand
	tmp         []cand
	ps          *PodSet
	// units[l] is the pods one domain of level l must take in whole
	// multiples of (the size of the innermost slice at or below l), for
	// every level down to the nodes'.
	units []int64
	// holder is the node findHolder has found to hold the whole pod set
	// (-1 for none yet), holderCount how many pods it holds and
	// holderStranded its stranded GPUs (PodSet.AvoidStranding; 0 without).
	holder         int32
	holderCount    int64
	holderStranded int
	// ones counts the one-pod nodes collectNodes has seen; it stops once
	// they reach stopAt (when set).
	ones, stopAt int64
	// budget is what is left of fillByCounts' visits.
	budget int64
	// sliceTop is the outermost slice level of the current pod set (the
	// node level when it has none).
	sliceTop int
	// keep says whether later pod sets of the request need this one's
	// pods in the overlay.
	keep bool
	// Fast-path figures of the current pod set (see fastCount).
	fast    bool
	perNode int64
	minFree res.Vec
	// limits lists the resources other than GPUs the pod asks for: the
	// only ones the fast path compares.
	limits    [res.Max]int8
	numLimits int
	// shareLater leaves the GPU shares out of nodeCountOf, for shareKey,
	// which reads them itself; rooms is their buffer, made at the first
	// fractional pod set (share.go), so that a placer of whole GPUs stays
	// as small as it was.
	shareLater bool
	rooms      *[topology.MaxNodeGPUs]int32
}

// Reset points the placer at a state and forgets earlier pod sets.
func (p *Placer) Reset(st *topology.State) {
	p.st, p.t = st, st.T
	p.ov, p.ovShares = p.ov[:0], p.ovShares[:0]
	p.IgnoreCooldown, p.Final = false, false
}

// Place places every pod set, in order, each on what the earlier ones (of
// this call and of earlier calls since Reset) left. It appends one
// assignment per pod to out, pod sets in order, and returns it; on failure
// it returns the first pod set that failed and remembers nothing of it.
func (p *Placer) Place(sets []PodSet, out []Assignment) ([]Assignment, Failure, bool) {
	for i := range sets {
		ps := &sets[i]
		first, more := true, false
		if ps.Group != 0 {
			for j := range sets {
				if j != i && sets[j].Group == ps.Group {
					if j < i {
						first = false
					} else {
						more = true
					}
				}
			}
		}
		if !first {
			continue // placed with its group
		}
		var f Failure
		var ok bool
		p.keep = !p.Final || more || i < len(sets)-1
		if more {
			out, f, ok = p.placeGroup(sets, ps.Group, out)
		} else {
			out, f, ok = p.placeOne(ps, p.root(ps.Flavor), 0, out)
			f.PodSet = i
		}
		if !ok {
			return out, f, false
		}
	}
	return p.reorder(sets, out), Failure{}, true
}

// reorder makes pod sets of a group that were placed together appear in
// request order again.
func (p *Placer) reorder(sets []PodSet, out []Assignment) []Assignment {
	grouped := false
	for i := range sets {
		if sets[i].Group != 0 {
			grouped = true
		}
	}
	if !grouped {
		return out
	}
	// placement order: sets in order, but a group's members all at the
	// position of its first member, in member order. Rebuild request order.
	type span struct{ from, to int }
	spans := make([]span, len(sets))
	pos := len(out)
	for i := range sets {
		pos -= int(sets[i].Count)
	}
	at := pos
	done := make([]bool, len(sets))
	for i := range sets {
		if done[i] {
			continue
		}
		for j := i; j < len(sets); j++ {
			if j == i || (sets[i].Group != 0 && sets[j].Group == sets[i].Group) {
				spans[j] = span{at, at + int(sets[j].Count)}
				at += int(sets[j].Count)
				done[j] = true
			}
		}
	}
	placed := slices.Clone(out[pos:])
	w := pos
	for i := range sets {
		w += copy(out[w:], placed[spans[i].from-pos:spans[i].to-pos])
	}
	return out
}

func (p *Placer) root(f int32) int32 { return p.t.Flavors[f].Levels[0][0] }

// placeGroup co-locates the pod sets of one group in one domain of the
// narrowest level they require (or prefer).
func (p *Placer) placeGroup(sets []PodSet, group int, out []Assignment) ([]Assignment, Failure, bool) {
	var members []int
	level, mode := 0, Unconstrained
	for i := range sets {
		if sets[i].Group != group {
			continue
		}
		members = append(members, i)
		m := &sets[i]
		switch {
		case m.Mode == Required && (mode != Required || m.Level > level):
			level, mode = m.Level, Required
		case m.Mode == Preferred && mode != Required && m.Level > level:
			level, mode = m.Level, Preferred
		}
	}
	lead := members[0]
	for _, i := range members {
		if sets[i].Count > sets[lead].Count {
			lead = i
		}
	}
	f0 := sets[lead].Flavor
	root := p.root(f0)
	best := Failure{PodSet: lead, Level: level}
	for l := level; l >= 0; l-- {
		var lo, hi int32
		if l == 0 {
			lo, hi = root, root+1
		} else {
			lo, hi = p.domainsAt(f0, l, root)
		}
		p.cands = p.cands[:0]
		for d := lo; d < hi; d++ {
			fits := true
			for _, i := range members {
				p.setPodSet(&sets[i])
				c := p.count(d, l)
				if i == lead && c > best.Fit && l == level {
					best.Fit = c
				}
				if c < sets[i].Count {
					fits = false
					break
				}
			}
			if fits {
				p.setPodSet(&sets[lead])
				p.cands = append(p.cands, cand{id: d, count: p.count(d, l)})
			}
		}
		slices.SortStableFunc(p.cands, func(a, b cand) int { return cmpInt(a.count, b.count) })
		tried := slices.Clone(p.cands)
		for _, c := range tried {
			saved, savedShares := slices.Clone(p.ov), len(p.ovShares)
			mark := len(out)
			ok := true
			for _, i := range members {
				m := sets[i]
				if m.Level <= l || m.Mode == Unconstrained {
					m.Mode, m.Level = Required, l
				}
				var f Failure
				out, f, ok = p.placeOne(&m, c.id, l, out)
				if !ok {
					_ = f
					break
				}
			}
			if ok {
				return out, Failure{}, true
			}
			out = out[:mark]
			p.ov, p.ovShares = saved, p.ovShares[:savedShares]
		}
		if mode != Preferred {
			break
		}
	}
	best.Need = sets[lead].Count
	return out, best, false
}

// domainsAt bounds the level-l domains (or nodes) inside scope.
func (p *Placer) domainsAt(f int32, l int, scope int32) (int32, int32) {
	d := &p.t.Domains[scope]
	if l == p.t.NodeLevel() {
		return d.First, d.End
	}
	return p.t.DomainsWithin(f, l, d.First, d.End)
}

func (p *Placer) setPodSet(ps *PodSet) {
	p.ps = ps
	nl := p.t.NodeLevel()
	if len(p.units) < nl+1 {
		p.units = make([]int64, nl+1)
	}
	for l := 0; l <= nl; l++ {
		u := int64(1)
		for _, s := range ps.Slices {
			if s.Level >= l {
				u = s.Size
				break
			}
		}
		p.units[l] = u
	}
	p.sliceTop = nl
	if len(ps.Slices) > 0 {
		p.sliceTop = ps.Slices[0].Level
	}
	p.fast = ps.GPUs > 0 && ps.GPUs <= p.t.G && ps.Policy != Spread && !p.IgnoreCooldown
	for l := 0; l <= nl && p.fast; l++ {
		p.fast = p.unit(l) == 1
	}
	if p.fast {
		// The counters are exact when no node with a free GPU is short of
		// anything else for the most pods of this shape a node can take.
		p.perNode = int64(p.t.G / ps.GPUs)
		p.minFree = res.Vec{}
		p.numLimits = 0
		for r := 0; r < p.t.Resource; r++ {
			if r != p.t.GPU && ps.Res[r] > 0 {
				p.limits[p.numLimits] = int8(r)
				p.numLimits++
				p.minFree[r] = res.MulSat(ps.Res[r], p.perNode)
			}
		}
	}
}

func (p *Placer) unit(l int) int64 {
	if l < len(p.units) {
		return p.units[l]
	}
	return 1
}

// placeOne places one pod set inside domain scope (at tree level scopeLevel).
func (p *Placer) placeOne(ps *PodSet, scope int32, scopeLevel int, out []Assignment) ([]Assignment, Failure, bool) {
	p.setPodSet(ps)
	need := ps.Count
	nl := p.t.NodeLevel()
	mode, level := ps.Mode, ps.Level
	if mode == Unconstrained && len(ps.Slices) > 0 {
		mode, level = Preferred, scopeLevel // Kueue: slice-only requests start at the top
	}
	if level < scopeLevel {
		level = scopeLevel
	}
	switch mode {
	case Required, Preferred:
		fail := Failure{Level: level, Need: need}
		for l := level; l >= scopeLevel; l-- {
			if l == scopeLevel {
				c := p.count(scope, l)
				if l == level {
					fail.Fit = c
				}
				if c >= need {
					return p.descend(cand{id: scope, count: need}, l, out), Failure{}, true
				}
				break
			}
			var best int32
			if p.indexed(scope, l) {
				best = p.tightest(l, need)
				if best < 0 && l == level {
					fail.Fit = p.largest(l)
				}
			} else {
				lo, hi := p.domainsAt(ps.Flavor, l, scope)
				bestC, maxC := int64(math.MaxInt64), int64(0)
				best = -1
				for d := lo; d < hi; d++ {
					c := p.count(d, l)
					maxC = max(maxC, c)
					if c >= need && c < bestC {
						best, bestC = d, c
					}
				}
				if l == level {
					fail.Fit = maxC
				}
			}
			if best >= 0 {
				return p.descend(cand{id: best, count: need}, l, out), Failure{}, true
			}
			if mode == Required {
				break
			}
		}
		return out, fail, false
	}
	// Unconstrained is Kueue's least free capacity, decided among the
	// scope's nodes directly (no level above them is weighed): the whole
	// pod set on the node that holds it with the fewest pods to spare,
	// ties by path; only when no single node holds it, the nodes with the
	// fewest pods first, each filled before the next.
	if ps.Share > 0 && need == 1 {
		// One fractional pod: best fit GPU by GPU (share.go).
		if n := p.shareHolder(scope); n >= 0 {
			p.next = append(p.next[:0], cand{id: n, count: 1})
			return p.emit(out), Failure{}, true
		}
		return out, Failure{Level: nl, Need: need}, false
	}
	total := p.count(scope, scopeLevel)
	if total < need {
		return out, Failure{Level: nl, Fit: p.bestNode(scope), Need: need}, false
	}
	if need <= p.nodeBound() {
		p.holder, p.holderCount, p.holderStranded = -1, math.MaxInt64, 0
		p.findHolder(scope, scopeLevel, need)
		if p.holder >= 0 {
			p.next = append(p.next[:0], cand{id: p.holder, count: need})
			return p.emit(out), Failure{}, true
		}
	}
	// From here on no node holds the whole pod set.
	// The counters find the least free nodes without visiting every node
	// (fillByCounts). (On a small scope a plain scan costs less than a
	// search that may give up and scan anyway.)
	if dom := &p.t.Domains[scope]; p.fast && dom.End-dom.First > onesSearchMin && p.fillByCounts(scope, scopeLevel, need) {
		return p.emit(out), Failure{}, true
	}
	// Otherwise least free first over every node. Once the nodes seen in
	// path order that hold exactly one cover the request, the rest of the
	// scan cannot change the answer.
	p.ones, p.stopAt = 0, need
	p.cands = p.collectNodes(scope, scopeLevel, p.cands[:0])
	p.stopAt = 0
	p.sortAscending(p.cands)
	p.next = p.next[:0]
	for _, c := range p.cands {
		take := min(c.count, need)
		p.next = append(p.next, cand{id: c.id, count: take})
		need -= take
		if need == 0 {
			break
		}
	}
	return p.emit(out), Failure{}, true
}

// nodeBound is at most how many pods of the current pod set one node can
// hold: what the largest node's GPUs make (one under Spread), unbounded for a
// pod without GPUs.
func (p *Placer) nodeBound() int64 {
	switch {
	case p.ps.Policy == Spread:
		return 1
	case p.ps.GPUs > 0:
		return int64(p.t.G / p.ps.GPUs)
	}
	return math.MaxInt64
}

// findHolder looks, in path order under domain d (at level l), for the node
// that holds need pods with the fewest to spare and keeps the best so far in
// p.holder and p.holderCount. It reports true once a node holds exactly
// need: no later node can do better, so the search stops there.
func (p *Placer) findHolder(d int32, l int, need int64) bool {
	nl := p.t.NodeLevel()
	if l == nl {
		return p.considerHolder(d, p.nodeCount(d), need)
	}
	if !p.mayHold(d, l, need) {
		return false
	}
	dom := &p.t.Domains[d]
	if l+1 == nl {
		// Nodes: walk their states and specs page by page.
		for n := dom.ChildFirst; n < dom.ChildEnd; {
			states, specs := p.st.Nodes(n, dom.ChildEnd), p.t.NodeRun(n, dom.ChildEnd)
			states = states[:min(len(states), len(specs))]
			for i := range states {
				if p.considerHolder(n+int32(i), p.nodeCountOf(n+int32(i), &specs[i], &states[i]), need) {
					return true
				}
			}
			n += int32(len(states))
		}
		return false
	}
	for c := dom.ChildFirst; c < dom.ChildEnd; c++ {
		before := p.holder
		if p.findHolder(c, l+1, need) {
			return true
		}
		// A holder found in c may leave nothing better anywhere in d: the
		// counters of d say so at once, where asking each later child
		// would cost as many reads as d has children.
		if p.holder != before && c+1 < dom.ChildEnd && !p.mayHold(d, l, need) {
			return false
		}
	}
	return false
}

// considerHolder keeps node n, which holds c pods, when it holds need with
// fewer to spare than the holder so far (a tie keeps the earlier, by path),
// under AvoidStranding first with fewer stranded GPUs, and reports whether
// no later node can do better: it holds exactly need, none stranded.
func (p *Placer) considerHolder(n int32, c, need int64) bool {
	if c < need {
		return false
	}
	if !p.ps.AvoidStranding {
		if c < p.holderCount {
			p.holder, p.holderCount = n, c
		}
		return c == need
	}
	s := p.stranded(n, c)
	if p.holder < 0 || s < p.holderStranded || (s == p.holderStranded && c < p.holderCount) {
		p.holder, p.holderCount, p.holderStranded = n, c, s
	}
	return c == need && s == 0
}

// stranded is how many of node n's free GPUs pods of the current shape
// cannot take for want of something else when the node holds c of them:
// the GPUs of the pods its GPUs alone would hold beyond c. (A pod without
// GPUs strands none.)
func (p *Placer) stranded(n int32, c int64) int {
	g := p.ps.GPUs
	if g == 0 {
		return 0
	}
	mask := p.st.Node(n).FreeGPUs
	if len(p.ov) > 0 {
		if i, ok := p.ovFind(n); ok {
			mask &^= p.ov[i].gpus
		}
	}
	return (p.t.Node(n).GPUFits(mask, g) - int(c)) * g
}

// mayHold reports whether some node of domain d (at level l) may hold need
// pods of the current pod set with fewer to spare than the holder found so
// far; false only when the counters prove that none does. Where they are
// exact and no node has GPU islands, a node holds k pods of g GPUs exactly
// when it has k·g free GPUs: no node holds need when none fits one pod of
// need·g, and none beats the holder when even the least free node with a
// free GPU holds as many as the holder does.
func (p *Placer) mayHold(d int32, l int, need int64) bool {
	c, ok := p.fastCount(d, l)
	switch {
	case !ok:
		return true
	case c < need:
		return false
	case p.t.Islands(d):
		return true
	}
	g := int64(p.ps.GPUs)
	// Under AvoidStranding a node that holds more can still beat a holder
	// that strands GPUs, never one that strands none: a node that strands
	// none holds exactly its free GPUs' worth.
	if p.holder >= 0 && p.holderStranded == 0 {
		if p.st.Agg(d).MinFree[p.t.GPU] >= p.holderCount*g {
			return false
		}
		// A node holds need to holderCount−1 pods when it has lo to hi−1
		// free GPUs. Past half the largest node, Fits counts the nodes
		// with at least that many free, one pod each: none has lo to hi−1
		// when the two counts are equal.
		if lo, hi := int(need*g), int(p.holderCount*g); 2*lo > p.t.G && p.st.Fits(d, lo) == p.st.Fits(d, hi) {
			return false
		}
	}
	return p.st.Fits(d, int(need*g)) > 0
}

// bestNode is the most pods any node inside scope holds.
func (p *Placer) bestNode(scope int32) int64 {
	d := &p.t.Domains[scope]
	best := int64(0)
	for n := d.First; n < d.End; n++ {
		best = max(best, p.nodeCount(n))
	}
	return best
}

// onesSearchMin is the number of nodes above which the unconstrained
// placement looks for the least free nodes with the counters first (a
// variable so that tests can take every scope that way).
var onesSearchMin int32 = 256

// fillByCounts puts the pod set in p.next as least free capacity fills it
// when no node holds it whole (every node with room in order of the pods
// it holds, fewest first, ties by path, each filled before the next),
// without a scan of every node: for v = 1, 2, … it collects, in path
// order, the nodes that hold exactly v pods, until the pods collected
// cover need. The nodes of each count all come before those of the next,
// and the last node collected takes what is left. It gives up (false)
// after a visit budget that grows with need: where nodes of every count
// sit everywhere, one scan and a counting sort cost less than many
// passes.
func (p *Placer) fillByCounts(scope int32, l int, need int64) bool {
	p.next = p.next[:0]
	p.budget = 64 + 16*need
	pods := int64(0)
	for v := int64(1); v <= p.perNode && pods < need; v++ {
		p.next = p.collectExactly(scope, l, v, p.next, &pods, need)
		if p.budget < 0 {
			return false
		}
	}
	if pods < need {
		return false
	}
	p.next[len(p.next)-1].count -= pods - need
	return true
}

// collectExactly appends, in path order, the nodes of domain d (at level
// l) that hold exactly v pods, adding their pods to *pods, until *pods
// reaches need. It skips a domain whose counters prove that every usable
// node with a free GPU holds more than v: the counters are exact for the
// pod's shape there, no node has GPU islands, and the fewest free GPUs of
// any such node make v + 1 pods. Without that proof it descends, so the
// answer never depends on it. Each domain and node visited costs one of
// p.budget.
func (p *Placer) collectExactly(d int32, l int, v int64, out []cand, pods *int64, need int64) []cand {
	if *pods >= need || p.budget < 0 {
		return out
	}
	p.budget--
	if l == p.t.NodeLevel() {
		if p.nodeCount(d) == v {
			out = append(out, cand{id: d, count: v})
			*pods += v
		}
		return out
	}
	if c, ok := p.fastCount(d, l); ok {
		if c == 0 {
			return out
		}
		if !p.t.Islands(d) && p.st.Agg(d).MinFree[p.t.GPU] >= (v+1)*int64(p.ps.GPUs) {
			return out
		}
	}
	dom := &p.t.Domains[d]
	for c := dom.ChildFirst; c < dom.ChildEnd && *pods < need && p.budget >= 0; c++ {
		out = p.collectExactly(c, l+1, v, out, pods, need)
	}
	return out
}

// collectNodes appends every node of scope with room for a pod, skipping
// domains whose counters say they are full.
func (p *Placer) collectNodes(d int32, l int, out []cand) []cand {
	nl := p.t.NodeLevel()
	if p.stopAt > 0 && p.ones >= p.stopAt {
		return out
	}
	if l == nl {
		if c := p.nodeCount(d); c > 0 {
			out = append(out, cand{id: d, count: c})
			if c == 1 {
				p.ones++
			}
		}
		return out
	}
	if c, ok := p.fastCount(d, l); ok && c == 0 {
		return out
	}
	dom := &p.t.Domains[d]
	for c := dom.ChildFirst; c < dom.ChildEnd; c++ {
		out = p.collectNodes(c, l+1, out)
	}
	return out
}

// sortAscending orders candidates by count, then by index (path).
func (p *Placer) sortAscending(cs []cand) {
	if p.bucketSort(cs, false) {
		return
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.count != b.count {
			return cmpInt(a.count, b.count)
		}
		return int(a.id) - int(b.id)
	})
}

// bucketSort orders candidates given in index order by count (descending
// when desc), stably, when every count is small: a counting sort, linear
// instead of n log n, over as many buckets as the largest count needs (a
// node's candidates count a few pods each). It reports false when counts
// are too large for it.
func (p *Placer) bucketSort(cs []cand, desc bool) bool {
	const maxBucket = 256
	if len(cs) < 16 {
		return false
	}
	most := int64(0)
	for i := range cs {
		if i > 0 && cs[i].id < cs[i-1].id {
			return false // not in index order: ties would not go by path
		}
		if c := cs[i].count; c > maxBucket || c < 0 {
			return false
		} else if c > most {
			most = c
		}
	}
	var buf [maxBucket + 2]int32
	hist := buf[:most+2]
	key := func(count int64) int64 {
		if desc {
			return most - count
		}
		return count
	}
	for _, c := range cs {
		hist[key(c.count)+1]++
	}
	for i := 1; i < len(hist); i++ {
		hist[i] += hist[i-1]
	}
	p.tmp = slices.Grow(p.tmp[:0], len(cs))[:len(cs)]
	for _, c := range cs {
		k := key(c.count)
		p.tmp[hist[k]] = c
		hist[k]++
	}
	copy(cs, p.tmp)
	return true
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// descend turns a chosen domain at level l into nodes, level by level.
func (p *Placer) descend(chosen cand, l int, out []Assignment) []Assignment {
	nl := p.t.NodeLevel()
	p.next = append(p.next[:0], chosen)
	for ; l < nl; l++ {
		cur := append(p.cands[:0], p.next...)
		p.cands = cur
		p.next = p.next[:0]
		// Above the outermost slice level Kueue pools the children of
		// every chosen domain; at and below it each domain splits its own
		// pods among its children, so no slice straddles two domains.
		pooled := l < p.sliceTop && p.ps.Policy != Balanced
		if pooled && l == 0 && len(cur) == 1 && len(p.ov) == 0 && p.indexed(cur[0].id, 1) {
			// The whole cluster's blocks, largest first, by the index.
			p.takeLargest(cur[0].count)
			continue
		}
		if pooled {
			// Kueue's global re-selection: pool the children of every
			// chosen domain and take greedily.
			start := len(p.next)
			need := int64(0)
			if byID := func(a, b cand) int { return int(a.id) - int(b.id) }; !slices.IsSortedFunc(cur, byID) {
				slices.SortFunc(cur, byID)
			}
			for _, c := range cur {
				need += c.count
				p.next = p.children(c.id, l, p.next)
			}
			p.sortDescending(p.next[start:])
			p.next = append(p.next[:start], greedyTake(p.next[start:], need)...)
			continue
		}
		for _, c := range cur {
			start := len(p.next)
			p.next = p.children(c.id, l, p.next)
			kids := p.next[start:]
			p.sortDescending(kids)
			var picked []cand
			if p.ps.Policy == Balanced {
				picked = balancedTake(kids, c.count, p.unit(l+1))
			} else {
				picked = greedyTake(kids, c.count)
			}
			p.next = append(p.next[:start], picked...)
		}
	}
	return p.emit(out)
}

// children appends the children of domain d (at level l) that hold a pod,
// with their counts.
func (p *Placer) children(d int32, l int, out []cand) []cand {
	dom := &p.t.Domains[d]
	out = slices.Grow(out, int(dom.ChildEnd-dom.ChildFirst))
	if l+1 == p.t.NodeLevel() && p.unit(l+1) == 1 {
		// Nodes: walk their states and specs page by page.
		for n := dom.ChildFirst; n < dom.ChildEnd; {
			states, specs := p.st.Nodes(n, dom.ChildEnd), p.t.NodeRun(n, dom.ChildEnd)
			states = states[:min(len(states), len(specs))]
			for i := range states {
				if c := p.nodeCountOf(n+int32(i), &specs[i], &states[i]); c > 0 {
					out = append(out, cand{id: n + int32(i), count: c, raw: c})
				}
			}
			n += int32(len(states))
		}
		return out
	}
	for c := dom.ChildFirst; c < dom.ChildEnd; c++ {
		if n := p.count(c, l+1); n > 0 {
			out = append(out, cand{id: c, count: n, raw: p.rawCount(c, l+1)})
		}
	}
	return out
}

// rawCount is count before the last rounding down to whole slices of the
// domain's own level.
func (p *Placer) rawCount(d int32, l int) int64 {
	if p.unit(l) == 1 {
		return p.count(d, l)
	}
	if l == p.t.NodeLevel() {
		saved := p.units[l]
		p.units[l] = 1
		c := p.nodeCount(d)
		p.units[l] = saved
		return c
	}
	dom := &p.t.Domains[d]
	sum := int64(0)
	for c := dom.ChildFirst; c < dom.ChildEnd; c++ {
		sum += p.count(c, l+1)
	}
	return sum
}

// sortDescending orders candidates for BestFit: most pods first, then path.
func (p *Placer) sortDescending(cs []cand) {
	if len(p.ps.Slices) == 0 && p.bucketSort(cs, true) {
		return
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.count != b.count {
			return cmpInt(b.count, a.count)
		}
		if a.raw != b.raw {
			return cmpInt(a.raw, b.raw)
		}
		return int(a.id) - int(b.id)
	})
}

// greedyTake takes from candidates sorted by count descending until need is
// met; the domain that finishes the request is the tightest that can (best
// fit). It reuses cs's storage for its result.
func greedyTake(cs []cand, need int64) []cand {
	n := 0
	for i := 0; i < len(cs) && need > 0; i++ {
		if cs[i].count >= need {
			j := i
			for k := i + 1; k < len(cs); k++ {
				if cs[k].count >= need && cs[k].count < cs[j].count {
					j = k
				}
			}
			cs[n] = cand{id: cs[j].id, count: need}
			n++
			break
		}
		cs[n] = cs[i]
		need -= cs[i].count
		n++
	}
	return cs[:n]
}

// balancedTake picks the fewest children that hold need (largest first) and
// splits need over them as evenly as their capacities allow, in units.
func balancedTake(cs []cand, need, unit int64) []cand {
	k, sum := 0, int64(0)
	for k < len(cs) && sum < need {
		sum += cs[k].count
		k++
	}
	chosen := cs[:k]
	slices.SortStableFunc(chosen, func(a, b cand) int { return cmpInt(a.count, b.count) })
	rem := need / unit
	for i := range chosen {
		left := int64(len(chosen) - i)
		share := (rem + left - 1) / left
		take := min(chosen[i].count/unit, share)
		chosen[i].count = take * unit
		rem -= take
	}
	slices.SortFunc(chosen, func(a, b cand) int { return int(a.id) - int(b.id) })
	n := 0
	for _, c := range chosen {
		if c.count > 0 {
			chosen[n] = c
			n++
		}
	}
	return chosen[:n]
}

// emit turns p.next (nodes with pod counts) into assignments, nodes in path
// order, and books them in the overlay for later pod sets.
func (p *Placer) emit(out []Assignment) []Assignment {
	byID := func(a, b cand) int { return int(a.id) - int(b.id) }
	if !slices.IsSortedFunc(p.next, byID) {
		slices.SortFunc(p.next, byID)
	}
	ps := p.ps
	hadOv := len(p.ov)
	for _, c := range p.next {
		n := c.id
		node := p.t.Node(n)
		mask := p.st.FreeMask(n)
		oi, inOv := -1, false
		if hadOv > 0 {
			// Only the entries from before this call are sorted; the
			// ones appended below are for other nodes of p.next.
			oi, inOv = ovSearch(p.ov[:hadOv], n)
			if inOv {
				mask &^= p.ov[oi].gpus
			}
		}
		var taken uint64
		if ps.Share > 0 {
			out, taken = p.emitShares(n, c.count, out)
		} else {
			for range c.count {
				m := uint64(0)
				if ps.GPUs > 0 {
					m = node.TakeGPUs(mask, ps.GPUs)
					mask &^= m
					taken |= m
				}
				out = append(out, Assignment{Node: n, GPUs: m})
			}
		}
		if !p.keep {
			continue
		}
		r := ps.Res.Scale(c.count)
		if inOv {
			e := &p.ov[oi]
			e.gpus |= taken
			e.r = e.r.Add(r)
			e.pods += int32(c.count)
		} else {
			p.ov = append(p.ov, ovNode{node: n, gpus: taken, r: r, pods: int32(c.count)})
		}
	}
	if p.keep && hadOv > 0 && len(p.ov) > hadOv {
		slices.SortFunc(p.ov, func(a, b ovNode) int { return int(a.node) - int(b.node) })
	}
	return out
}

func (p *Placer) ovFind(n int32) (int, bool) { return ovSearch(p.ov, n) }

func ovSearch(ov []ovNode, n int32) (int, bool) {
	return slices.BinarySearchFunc(ov, n, func(e ovNode, n int32) int { return int(e.node) - int(n) })
}

// ovTouches reports whether the overlay holds a node of domain d.
func (p *Placer) ovTouches(d int32) bool {
	if len(p.ov) == 0 {
		return false
	}
	dom := &p.t.Domains[d]
	i, _ := p.ovFind(dom.First)
	return i < len(p.ov) && p.ov[i].node < dom.End
}

// otherFits is how many pods of the current pod set a node with free and
// pods running holds by everything but its GPUs: the other resources the
// pods ask for and the node's pod limit; math.MaxInt64 when neither limits
// them.
func (p *Placer) otherFits(node *topology.Node, free *res.Vec, pods int32) int64 {
	c := int64(math.MaxInt64)
	for r := 0; r < p.t.Resource; r++ {
		if r != p.t.GPU && p.ps.Res[r] > 0 {
			c = min(c, max(free[r], 0)/p.ps.Res[r])
		}
	}
	if node.MaxPods > 0 {
		c = min(c, int64(max(node.MaxPods-pods, 0)))
	}
	return c
}

// nodeCount is how many pods of the current pod set node n holds.
func (p *Placer) nodeCount(n int32) int64 { return p.nodeCountOf(n, p.t.Node(n), p.st.Node(n)) }

// nodeCountOf is nodeCount with the node's spec and state already in hand.
func (p *Placer) nodeCountOf(n int32, node *topology.Node, ns *topology.NodeState) int64 {
	if ns.Cordoned || ns.Down || (!p.IgnoreCooldown && ns.CooldownUntil > p.st.Now()) || p.excluded(n) {
		return 0
	}
	ps := p.ps
	free, pods := ns.Free, ns.Pods
	var mask uint64
	if ps.GPUs > 0 {
		mask = ns.FreeGPUs
	}
	if len(p.ov) > 0 {
		if i, ok := p.ovFind(n); ok {
			e := &p.ov[i]
			free, pods, mask = free.Sub(e.r), pods+e.pods, mask&^e.gpus
		}
	}
	if p.fast && (node.MaxPods <= 0 || int64(node.MaxPods-pods) >= p.perNode) && p.roomFor(&free) {
		// Nothing but GPUs can limit this node: no division needed.
		return int64(node.GPUFits(mask, ps.GPUs))
	}
	c := int64(math.MaxInt64)
	if ps.GPUs > 0 {
		c = min(c, int64(node.GPUFits(mask, ps.GPUs)))
	}
	if ps.Share > 0 && !p.shareLater && c > 0 {
		c = min(c, p.shareFits(n))
	}
	c = min(c, p.otherFits(node, &free, pods))
	if c == math.MaxInt64 {
		c = ps.Count // the pod asks for nothing a node could run out of
	}
	if ps.Policy == Spread {
		c = min(c, 1)
	}
	if u := p.unit(p.t.NodeLevel()); u > 1 {
		c -= c % u
	}
	return c
}

// roomFor reports whether free holds, of every resource the pod asks for
// besides GPUs, enough for the most pods of its shape a node can take.
func (p *Placer) roomFor(free *res.Vec) bool {
	for _, r := range p.limits[:p.numLimits] {
		if free[r] < p.minFree[r] {
			return false
		}
	}
	return true
}

// count is how many pods of the current pod set domain d (at level l) holds,
// in whole slices of its level.
func (p *Placer) count(d int32, l int) int64 {
	nl := p.t.NodeLevel()
	if l == nl {
		return p.nodeCount(d)
	}
	if c, ok := p.fastCount(d, l); ok {
		return c
	}
	dom := &p.t.Domains[d]
	sum := int64(0)
	for c := dom.ChildFirst; c < dom.ChildEnd; c++ {
		sum += p.count(c, l+1)
	}
	if u := p.unit(l); u > 1 {
		sum -= sum % u
	}
	return sum
}

// fastCount reads a domain's count from the state's counters when they are
// exact for the current pod shape.
func (p *Placer) fastCount(d int32, l int) (int64, bool) {
	if !p.fast || (len(p.ov) > 0 && p.ovTouches(d)) {
		return 0, false
	}
	agg := p.st.Agg(d)
	if int64(agg.MinPodsLeft) < p.perNode {
		return 0, false
	}
	if !p.roomFor(&agg.MinFree) {
		return 0, false
	}
	c := int64(p.st.Fits(d, p.ps.GPUs))
	if p.ps.Exclude != nil {
		c -= p.excludedFits(d)
	}
	return c, true
}

// useIndex lets the searches of a level read the state's fit index; off,
// they scan the level (the reference the index is tested against).
var useIndex = true

// indexed reports whether the tightest domain of level l inside scope can be
// found through the state's fit index: the scope is the flavor's root, the
// level a declared one with an index for the pod's GPUs, and the counters
// exact for the pod's shape on every node (the root's aggregates show no
// node with a free GPU short of anything else), so that every domain's
// count is its fits, but for the domains the overlay touches. The index
// counts every node of the flavor: a pod set with nodes to exclude scans.
func (p *Placer) indexed(scope int32, l int) bool {
	f := p.ps.Flavor
	if !useIndex || !p.fast || p.ps.Exclude != nil || l <= 0 || l >= p.t.NodeLevel() || scope != p.root(f) ||
		!p.st.Flushed() || !p.st.Indexed(f, l, p.ps.GPUs) {
		return false
	}
	agg := p.st.Agg(scope)
	return int64(agg.MinPodsLeft) >= p.perNode && p.roomFor(&agg.MinFree)
}

// tightest is, where indexed says so, the domain of level l that holds the
// fewest pods among those that hold need, ties by path (-1 for none): the
// index's answer among the domains the overlay leaves alone, against the
// counts of the few it touches.
func (p *Placer) tightest(l int, need int64) int32 {
	f := p.ps.Flavor
	best, bestC, ok := p.st.Tightest(f, l, p.ps.GPUs, need, p.skipTouched())
	if !ok {
		best, bestC = -1, math.MaxInt64
	}
	for d := range p.touchedAt(l) {
		if c := p.count(d, l); c >= need && (c < bestC || (c == bestC && d < best)) {
			best, bestC = d, c
		}
	}
	return best
}

// largest is, where indexed says so, the most pods one domain of level l
// holds.
func (p *Placer) largest(l int) int64 {
	most := p.st.Largest(p.ps.Flavor, l, p.ps.GPUs, p.skipTouched())
	for d := range p.touchedAt(l) {
		most = max(most, p.count(d, l))
	}
	return most
}

// takeLargest is greedyTake over the flavor's level-1 domains sorted
// for BestFit, read from the fit index where indexed says so and the
// overlay is empty: it appends to p.next the largest domains in turn until
// one holds what is left, and then the tightest that does.
func (p *Placer) takeLargest(need int64) {
	f, g := p.ps.Flavor, p.ps.GPUs
	for d, c := range p.st.Descending(f, 1, g) {
		if c >= need {
			best, _, _ := p.st.Tightest(f, 1, g, need, p.taken)
			p.next = append(p.next, cand{id: best, count: need})
			return
		}
		p.next = append(p.next, cand{id: d, count: c, raw: c})
		need -= c
	}
}

// taken reports whether domain d is among the candidates in p.next.
func (p *Placer) taken(d int32) bool {
	for _, c := range p.next {
		if c.id == d {
			return true
		}
	}
	return false
}

// skipTouched names the domains the overlay touches, nil when it is empty.
func (p *Placer) skipTouched() func(int32) bool {
	if len(p.ov) == 0 {
		return nil
	}
	return p.ovTouches
}

// touchedAt yields, once each, the level-l domains of the current flavor
// that hold a node of the overlay.
func (p *Placer) touchedAt(l int) func(yield func(int32) bool) {
	return func(yield func(int32) bool) {
		lo, hi := p.t.Flavors[p.ps.Flavor].Levels[l][0], p.t.Flavors[p.ps.Flavor].Levels[l][1]
		last := int32(-1)
		for i := range p.ov {
			d := p.t.NodeDomains(p.ov[i].node)[l]
			if d != last && d >= lo && d < hi {
				if !yield(d) {
					return
				}
				last = d
			}
		}
	}
}

// Feasible reports whether the pod sets could be placed, without building
// the placement. For a single pod set it reads domain counts only (the
// state's counters when they are exact); otherwise it places them.
func (p *Placer) Feasible(sets []PodSet) bool {
	if len(sets) != 1 || sets[0].Group != 0 {
		saved := append([]ovNode(nil), p.ov...)
		savedShares := len(p.ovShares)
		_, _, ok := p.Place(sets, nil)
		p.ov, p.ovShares = saved, p.ovShares[:savedShares]
		return ok
	}
	ps := &sets[0]
	p.setPodSet(ps)
	root := p.root(ps.Flavor)
	if ps.Mode != Required || len(ps.Slices) > 0 {
		// Preferred falls back to the whole cluster, unconstrained uses it.
		return p.count(root, 0) >= ps.Count
	}
	if p.indexed(root, ps.Level) {
		return p.tightest(ps.Level, ps.Count) >= 0
	}
	lo, hi := p.domainsAt(ps.Flavor, ps.Level, root)
	for d := lo; d < hi; d++ {
		if p.count(d, ps.Level) >= ps.Count {
			return true
		}
	}
	return false
}

// Never reports, in O(1), that a single pod set can never be placed: the
// placer must be reset to a state made by topology.NewCapacity. It answers
// only when the state's counters are exact for the pod's shape everywhere;
// false means "not proven", never "fits".
func (p *Placer) Never(ps *PodSet) (Failure, bool) {
	p.setPodSet(ps)
	if !p.fast || len(ps.Slices) > 0 || ps.Exclude != nil {
		return Failure{}, false
	}
	root := p.root(ps.Flavor)
	agg := p.st.Agg(root)
	if int64(agg.MinPodsLeft) < p.perNode || !p.minFree.LessEq(agg.MinFree) {
		return Failure{}, false
	}
	// The level that decides, and the level placeOne reports a failure at.
	decides, reports := 0, p.t.NodeLevel()
	switch ps.Mode {
	case Required:
		decides, reports = ps.Level, ps.Level
	case Preferred:
		reports = ps.Level
	}
	most, ok := p.st.LevelMax(ps.Flavor, decides, ps.GPUs)
	if !ok || int64(most) >= ps.Count {
		return Failure{}, false
	}
	fit, _ := p.st.LevelMax(ps.Flavor, reports, ps.GPUs)
	return Failure{Level: reports, Fit: int64(fit), Need: ps.Count}, true
}
