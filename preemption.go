package allot

import (
	"slices"
	"unsafe"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/preempt"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

// candidate is a running workload the preemptor may evict.
type candidate struct {
	r       *running
	variant preempt.Variant
	// lca is the index, in the preemptor queue's path to the root, of the
	// lowest cohort shared with the candidate's queue (0 in the own queue).
	lca int32
}

// ordered yields candidates in preempt.Less order, sorting lazily: a heap
// of pointer-free keys pops only as many as the search looks at, so a
// queue of ten thousand workloads is not sorted to find the few victims it
// needs.
type ordered struct {
	heap []preempt.Candidate
	done []int32 // popped, in order: indices into the search's candidates
}

func (o *ordered) len() int { return len(o.heap) + len(o.done) }

func (o *ordered) less(i, j int) bool { return preempt.Less(&o.heap[i], &o.heap[j]) }

func (o *ordered) down(i int) {
	n := len(o.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && o.less(r, l) {
			m = r
		}
		if !o.less(m, i) {
			return
		}
		o.heap[i], o.heap[m] = o.heap[m], o.heap[i]
		i = m
	}
}

func (o *ordered) init() {
	for i := len(o.heap)/2 - 1; i >= 0; i-- {
		o.down(i)
	}
}

// at returns the index of the i-th candidate in order, popping the heap as
// needed.
func (o *ordered) at(i int) int32 {
	for len(o.done) <= i {
		n := len(o.heap) - 1
		o.heap[0], o.heap[n] = o.heap[n], o.heap[0]
		o.done = append(o.done, o.heap[n].Index)
		o.heap = o.heap[:n]
		o.down(0)
	}
	return o.done[i]
}

// whatIf is a what-if view of the snapshot's quota usage and of state, the
// GPUs of reserved (one entry per node, sorted by node) staying taken when
// the workloads on them leave.
func (s *Snapshot) whatIf(state *topology.State, reserved []gang.Assignment) view.Sim {
	return view.Sim{Tree: s.rtree, Usage: s.usage.Clone(), State: state, Tokens: s.tokens, Nodes: s.nodeRes, Reserved: podsOf(reserved)}
}

// podsOf is a as the what-if view's pods, without a copy: the two are the
// same struct (the conversion below would not compile otherwise), and the
// view only reads them.
func podsOf(a []gang.Assignment) []view.Pod {
	return unsafe.Slice((*view.Pod)(unsafe.Pointer(unsafe.SliceData(a))), len(a))
}

var _ = view.Pod(gang.Assignment{})

// preemption is the search for victims for one flavor assignment: each
// pod set on its flavor, the pod sets that fit keeping theirs.
type preemption struct {
	s   *Snapshot
	q   int32
	req *Request
	// flavor is each pod set's flavor; need[f] is what the request charges
	// to flavor f, open[f] the part of it the assignment has not placed,
	// and fqs[f] the queue's quota there (nil for a flavor no pod set
	// uses).
	flavor []int32
	need   []res.Vec
	open   []res.Vec
	fqs    []*quota.FlavorQuota
	frs    []int // the flavor-resources that need room (Kueue's preempt mode)
	all    []int // every flavor-resource the request asks for
	sets   []gang.PodSet
	path   []int32 // the preemptor queue's path to the root of its tree
	m      view.Sim
	pl     *gang.Placer // reused by every placement of the search
	asg    []gang.Assignment
	// cands holds every candidate; the ordered lists index it.
	cands []candidate
	// scratch is the usage table shares counts the request into.
	scratch quota.Usage
}

// needAt is what the request charges to flavor-resource fr.
func (p *preemption) needAt(fr int) int64 {
	R := p.s.rtree.Resources()
	return p.need[fr/R][fr%R]
}

// lostWork is what evicting an admitted workload now throws away.
func (s *Snapshot) lostWork(r *running) int64 {
	return preempt.LostWork(s.now, r.AdmittedAt, r.LastCheckpoint, r.Checkpointable, s.lostSize(r))
}

// lostSize is what a workload's lost time is multiplied by: the GPUs it
// holds (charged to quota, on nodes or not), or without GPUs its largest
// other quantity.
func (s *Snapshot) lostSize(r *running) int64 {
	if s.gpu >= 0 {
		if g := r.Charged(s.gpu, s.tokens); g > 0 {
			return g
		}
	}
	size := int64(0)
	for k := range s.resources {
		size = max(size, r.Charged(k, s.tokens))
	}
	return size
}

// tryPreemption looks for victims whose eviction lets the request fit:
// its quota and a placement on the freed capacity. The pod sets the flavor
// assignment already fitted keep their flavors (Kueue preempts only for
// the pod sets whose assignment needs it); the others are tried on each
// flavor of the queue in order, a pod set that does not allow it on the
// first flavor it allows. With whenCanBorrow TryNextFlavor a flavor whose
// victims still leave the request borrowing gives way to a later one that
// does not; otherwise, and failing such a flavor, the first flavor with
// victims wins. It concludes the decision and reports true when it finds
// some.
func (dc *decider) tryPreemption() bool {
	s := dc.s
	if !s.limits[dc.q].preempts() {
		return false
	}
	var first *preemption
	var firstVictims []*candidate
	for k := range dc.qc.Flavors {
		f := dc.qc.Flavors[k].Flavor
		flavors, ok := dc.preemptionFlavors(f)
		if !ok {
			continue // the failed unit may not use f
		}
		p := dc.preemptionFor(flavors[:dc.n])
		if p == nil {
			continue
		}
		victims, ok := p.search()
		if !ok {
			continue
		}
		if !dc.qc.TryNextWhenBorrowing || !p.preemptorBorrows() {
			dc.concludePreemption(p, victims)
			return true
		}
		if first == nil {
			first, firstVictims = p, victims
		}
	}
	if first != nil {
		dc.concludePreemption(first, firstVictims)
		return true
	}
	return false
}

// preemptionFlavors is the flavor assignment tryPreemption searches with
// flavor f: the units that fit keep their flavors; the unit that failed
// goes on f (or, not allowed there, on its first allowed flavor); each
// later unit, as Kueue's flavor assigner goes on to the next pod sets,
// takes the first flavor whose quota holds it with what the earlier pod
// sets put there (within nominal quota first under whenCanBorrow
// TryNextFlavor), and otherwise waits for victims on f too. ok is false
// when the failed unit may not use f: another flavor's search covers it.
func (dc *decider) preemptionFlavors(f int32) (flavors [maxPodSets]int32, ok bool) {
	var failed, done uint16
	for i := 0; i < dc.n; i++ {
		if done&(1<<i) != 0 {
			continue
		}
		if dc.chosen[i] >= 0 {
			flavors[i] = dc.chosen[i]
			continue
		}
		members := dc.unit(i)
		done |= members
		target := f
		switch {
		case failed == 0:
			if !dc.allowed(members, f) {
				return flavors, false
			}
			failed = members
		default:
			if g, fits := dc.quotaFlavor(members, flavors[:i]); fits {
				target = g
			} else if !dc.allowed(members, f) {
				target = dc.firstAllowed(members)
			}
		}
		for m := i; m < dc.n; m++ {
			if members&(1<<m) != 0 {
				flavors[m] = target
			}
		}
	}
	return flavors, true
}

// quotaFlavor is the first flavor of the queue, in order, whose quota
// holds unit u on top of what the pod sets before it were given
// (assigned); under whenCanBorrow TryNextFlavor a flavor within nominal
// quota comes first.
func (dc *decider) quotaFlavor(u uint16, assigned []int32) (int32, bool) {
	s := dc.s
	for pass := 0; pass < 2; pass++ {
		for k := range dc.qc.Flavors {
			fq := &dc.qc.Flavors[k]
			if !dc.allowed(u, fq.Flavor) {
				continue
			}
			var earlier, need res.Vec
			for m := 0; m < dc.n; m++ {
				switch {
				case u&(1<<m) != 0:
					need = need.Add(dc.need[m])
				case m < len(assigned) && assigned[m] == fq.Flavor:
					earlier = earlier.Add(dc.need[m])
				}
			}
			fit := s.fitQuota(dc.q, fq, earlier, need)
			if fit.verdict == quota.Fit && (pass == 1 || fit.level == 0 || !dc.qc.TryNextWhenBorrowing) {
				return fq.Flavor, true
			}
		}
	}
	return -1, false
}

// firstAllowed is the first flavor of the queue unit u allows (-1 when
// none does).
func (dc *decider) firstAllowed(u uint16) int32 {
	for k := range dc.qc.Flavors {
		if f := dc.qc.Flavors[k].Flavor; dc.allowed(u, f) {
			return f
		}
	}
	return -1
}

// tryPreemptionAt looks for victims with the unit that failed on flavor f
// (whenCanPreempt Preempt stops there); it concludes the decision and
// reports true when it finds some. With withinNominal, victims that still
// leave the request borrowing do not count (whenCanBorrow TryNextFlavor
// tries later flavors then).
func (dc *decider) tryPreemptionAt(f int32, withinNominal bool) bool {
	if !dc.s.limits[dc.q].preempts() {
		return false
	}
	flavors, ok := dc.preemptionFlavors(f)
	if !ok {
		return false
	}
	p := dc.preemptionFor(flavors[:dc.n])
	if p == nil {
		return false
	}
	victims, ok := p.search()
	if !ok || withinNominal && p.preemptorBorrows() {
		return false
	}
	dc.concludePreemption(p, victims)
	return true
}

// preemptionFor prepares the search with pod set i on flavors[i]; nil when
// a pod set may not use its flavor or the queue has no quota there.
func (dc *decider) preemptionFor(flavors []int32) *preemption {
	s := dc.s
	nf := len(s.flavors)
	vecs := make([]res.Vec, 2*nf)
	p := &preemption{s: s, q: dc.q, req: dc.r, pl: &dc.d.work.search, flavor: flavors,
		need: vecs[:nf:nf], open: vecs[nf:], fqs: make([]*quota.FlavorQuota, nf)}
	nodes := false
	for i, f := range flavors {
		if f < 0 || !dc.allowed(1<<i, f) {
			return nil
		}
		fq, ok := dc.qc.Quota(f)
		if !ok {
			return nil
		}
		p.fqs[f] = fq
		p.need[f] = p.need[f].Add(dc.need[i])
		if dc.chosen[i] < 0 {
			p.open[f] = p.open[f].Add(dc.need[i])
		}
		nodes = nodes || s.flavorHasNodes(f)
	}
	if !nodes {
		return p
	}
	// Pod sets in request order (the placement maps back by it); the
	// members of a topology group share a group number and a flavor.
	var groups [maxPodSets]string
	ng := 0
	for i, f := range flavors {
		if !s.flavorHasNodes(f) {
			continue
		}
		ps := &dc.r.PodSets[i]
		g := s.gangPodSet(ps, dc.perPod[i], f)
		if name := ps.Topology.Group; name != "" {
			at := slices.Index(groups[:ng], name)
			if at < 0 {
				groups[ng], at = name, ng
				ng++
			}
			g.Group = at + 1
		}
		p.sets = append(p.sets, g)
	}
	return p
}

// search runs Kueue's classical preemption on one flavor, with placement.
func (p *preemption) search() ([]*candidate, bool) {
	s := p.s
	t := s.rtree
	// Kueue looks for victims only on the flavor-resources that do not fit
	// (its "preempt" mode). When quota fits and only the placement does
	// not, those of the pod sets the assignment could not place: the others
	// fit as they are, and a queue borrowing only there gives back nothing
	// the placement needs (taking its workloads anyway lets the two sides
	// evict each other in turn).
	for f, fq := range p.fqs {
		if fq == nil {
			continue
		}
		for r := range s.resources {
			if p.need[f][r] > 0 {
				fr := t.FR(f, r)
				p.all = append(p.all, fr)
				if p.need[f][r] > t.AvailableClamped(s.usage, p.q, fr) {
					p.frs = append(p.frs, fr)
				}
			}
		}
	}
	if len(p.frs) == 0 {
		for f, fq := range p.fqs {
			for r := range s.resources {
				if fq != nil && p.open[f][r] > 0 {
					p.frs = append(p.frs, t.FR(f, r))
				}
			}
		}
	}
	if len(p.frs) == 0 {
		return nil, false
	}
	// Quota that can never fit, or a cap preemption cannot lift.
	exhausted := false
	for f, fq := range p.fqs {
		if fq == nil {
			continue
		}
		fit := s.fitQuota(p.q, fq, res.Vec{}, p.need[f])
		if fit.verdict == quota.NoFitEver {
			return nil, false
		}
		exhausted = exhausted || fit.verdict == quota.NoFitNow && fit.reason == QuotaExhausted
	}
	if p.sets != nil {
		p.pl.Reset(s.capacity)
		if _, _, ok := p.pl.Place(p.sets, nil); !ok {
			return nil, false // no emptied cluster holds it
		}
	}
	// Kueue considers preemption for quota only if the request fits the
	// queue's nominal quota, or the cohort tree can reclaim for it, or it
	// may preempt while borrowing.
	if exhausted {
		l := &s.limits[p.q]
		// With fair sharing, reclaiming in the cohort counts as a way to
		// preempt while borrowing.
		ok := l.borrow != preempt.Never || s.fairSharing.Enabled && l.reclaim != preempt.Never
		for _, fr := range p.frs {
			R := t.Resources()
			v := p.needAt(fr)
			_, mayReclaim := t.BorrowingLevel(s.usage, p.q, fr, v)
			ok = ok || p.fqs[fr/R].Nominal[fr%R] >= v || mayReclaim
		}
		if !ok {
			return nil, false
		}
	}
	p.path = t.Path(p.q)
	if s.fairSharing.Enabled {
		return p.fairSearch()
	}
	hierarchy, priority, own := p.candidates()
	if hierarchy.len()+priority.len()+own.len() == 0 {
		return nil, false
	}
	l := &s.limits[p.q]
	forbidden := l.borrow == preempt.Never
	underNominal := true
	for _, fr := range p.frs {
		underNominal = underNominal && t.Nominal(p.q, fr) > s.usage.At(p.q, fr)
	}
	cross := hierarchy.len() + priority.len()
	var passes []bool
	switch {
	case cross == 0 || forbidden && !underNominal:
		passes = []bool{true}
	case forbidden && hierarchy.len() == 0:
		passes = []bool{false, true}
	default:
		passes = []bool{true, false}
	}
	seq := []*ordered{hierarchy, priority, own}
	for _, allowBorrowing := range passes {
		if victims, ok := p.greedy(seq, allowBorrowing); ok {
			return victims, true
		}
	}
	return nil, false
}

// candidates collects and orders the workloads the policies allow as
// victims: the hierarchy list, the priority list and the own queue's list.
func (p *preemption) candidates() (hierarchy, priority, own *ordered) {
	hierarchy, priority, own = new(ordered), new(ordered), new(ordered)
	s := p.s
	t := s.rtree
	l := &s.limits[p.q]
	r := p.req
	// Hierarchical advantage at each ancestor of the preemptor's queue:
	// adv[i] holds before collecting at path[i].
	adv := make([]bool, len(p.path))
	has := true
	// Kueue weighs the whole request here, not only what needs room.
	remaining := make([]int64, len(p.all))
	for k, fr := range p.all {
		fits, rem := t.FitsInQuota(s.usage, p.q, fr, p.needAt(fr))
		has = has && fits
		remaining[k] = rem
	}
	for i := 1; i < len(p.path); i++ {
		adv[i] = has
		all := true
		for k, fr := range p.all {
			fits, rem := t.FitsInQuota(s.usage, p.path[i], fr, remaining[k])
			all = all && fits
			remaining[k] = rem
		}
		has = has || all
	}
	own.heap = make([]preempt.Candidate, 0, s.runCount[p.q])
	p.cands = make([]candidate, 0, s.runCount[p.q])
	rank := int32(-1)
	s.running.Scan(func(w *running) bool {
		rank++
		if !p.usesNeeded(w) || w.Pinned {
			return true
		}
		c := candidate{r: w}
		key := preempt.Candidate{Index: int32(len(p.cands)), IDRank: rank, OwnQueue: w.Queue == p.q,
			Priority: w.Priority, AdmittedAt: w.AdmittedAt, LostWork: s.lostWork(w),
			Debt: s.debt[w.Queue].Now(s.now, s.history.HalfLife)}
		if w.Queue == p.q {
			if l.withinQueue.Allows(r.Priority, w.Priority, r.SubmittedAt, w.SubmittedAt) {
				c.variant = preempt.WithinQueue
				p.cands = append(p.cands, c)
				own.heap = append(own.heap, key)
			}
			return true
		}
		if l.reclaim == preempt.Never || !l.reclaim.Allows(r.Priority, w.Priority, r.SubmittedAt, w.SubmittedAt) {
			return true
		}
		lca := p.lcaIndex(w.Queue)
		if lca < 0 || !p.borrowingBelow(s.usage, w.Queue, lca) {
			return true
		}
		c.lca = int32(lca)
		if adv[lca] {
			c.variant = preempt.HierarchicalReclaim
			p.cands = append(p.cands, c)
			hierarchy.heap = append(hierarchy.heap, key)
			return true
		}
		c.variant = preempt.ReclaimWithoutBorrowing
		if l.borrow != preempt.Never && w.Priority < r.Priority && (!l.hasThreshold || w.Priority <= l.threshold) {
			c.variant = preempt.ReclaimWhileBorrowing
		}
		p.cands = append(p.cands, c)
		priority.heap = append(priority.heap, key)
		return true
	})
	hierarchy.init()
	priority.init()
	own.init()
	return hierarchy, priority, own
}

// usesNeeded reports whether a workload holds any flavor-resource the
// preemptor needs.
func (p *preemption) usesNeeded(w *running) bool {
	R := p.s.rtree.Resources()
	for i := range w.Sets {
		set := &w.Sets[i]
		for _, fr := range p.frs {
			// The pod set charges resource r when its pods ask for it (a
			// pod set has at least one pod).
			if r := fr % R; fr/R == int(set.Flavor) && (set.Per[r] > 0 || r == p.s.tokens && set.Tokens > 0) {
				return true
			}
		}
	}
	return false
}

// lcaIndex is the index in the preemptor's path of the lowest cohort it
// shares with queue q, or -1 when they are in different trees.
func (p *preemption) lcaIndex(q int32) int {
	other := p.s.rtree.Path(q)
	for i, a := range p.path {
		if slices.Contains(other, a) {
			return i
		}
	}
	return -1
}

// borrowingBelow reports whether queue q and every cohort strictly between
// it and the preemptor's ancestor at lca use more than their own quota on
// the needed flavor-resources: only such candidates can give quota back.
func (p *preemption) borrowingBelow(u quota.Usage, q int32, lca int) bool {
	t := p.s.rtree
	top := p.path[lca]
	for _, n := range t.Path(q) {
		if n == top {
			return true
		}
		if t.IsWithinNominal(u, n, p.frs) {
			return false
		}
	}
	return true
}

// fits reports whether the request fits the view: quota (without
// borrowing unless allowed, the hard cap included) and placement.
func (p *preemption) fits(allowBorrowing bool) bool {
	s := p.s
	t := s.rtree
	R := t.Resources()
	for _, fr := range p.all {
		r := fr % R
		v := p.needAt(fr)
		used := p.m.Usage.At(p.q, fr)
		if !allowBorrowing && t.BorrowingWith(p.m.Usage, p.q, fr, v) {
			return false
		}
		if v > t.AvailableClamped(p.m.Usage, p.q, fr) {
			return false
		}
		if fq := p.fqs[fr/R]; fq.HardMask&(1<<r) != 0 && used+v > fq.Hard[r] {
			return false
		}
	}
	if p.m.State == nil {
		return true
	}
	p.pl.Reset(p.m.State)
	p.pl.Final = true
	var ok bool
	p.asg, _, ok = p.pl.Place(p.sets, p.asg[:0])
	return ok
}

// greedy is one pass of Kueue's greedy removal with reverse fill-back.
func (p *preemption) greedy(seq []*ordered, allowBorrowing bool) ([]*candidate, bool) {
	s := p.s
	p.m = view.Sim{Tree: s.rtree, Usage: s.usage.Clone(), Tokens: s.tokens, Nodes: s.nodeRes}
	if p.sets != nil {
		p.m.State = s.state.Fork()
	}
	var targets []*candidate
	for _, list := range seq {
		for i := 0; i < list.len(); i++ {
			c := &p.cands[list.at(i)]
			if !p.valid(c, allowBorrowing) {
				continue
			}
			p.m.Evict(&c.r.Booking)
			targets = append(targets, c)
			if p.fits(allowBorrowing) {
				return p.fillBack(targets, allowBorrowing), true
			}
		}
	}
	return nil, false
}

// fillBack adds the victims back in reverse order and keeps out only those
// the preemptor still needs; the last one taken is always needed.
func (p *preemption) fillBack(targets []*candidate, allowBorrowing bool) []*candidate {
	for i := len(targets) - 2; i >= 0; i-- {
		p.m.Restore(&targets[i].r.Booking)
		if p.fits(allowBorrowing) {
			targets = slices.Delete(targets, i, i+1)
		} else {
			p.m.Evict(&targets[i].r.Booking)
		}
	}
	return targets
}

// valid is Kueue's dynamic candidate check: a candidate of another queue
// stops being one as soon as its queue, or a cohort below the common
// ancestor, is back within its nominal quota.
func (p *preemption) valid(c *candidate, allowBorrowing bool) bool {
	switch c.variant {
	case preempt.WithinQueue:
		return true
	case preempt.ReclaimWithoutBorrowing:
		if allowBorrowing {
			return false
		}
	}
	return p.borrowingBelow(p.m.Usage, c.r.Queue, int(c.lca))
}

// concludePreemption fills in a Preempt decision: the victims, with their
// cost, and the placement the preemptor gets once they are gone.
func (dc *decider) concludePreemption(p *preemption, victims []*candidate) {
	s, r, d := dc.s, dc.r, dc.d
	own, fair := true, false
	for _, v := range victims {
		own = own && v.variant == preempt.WithinQueue
		fair = fair || v.variant == preempt.FairSharing
		policy := "withinQueue: " + s.limits[dc.q].withinQueue.String()
		switch v.variant {
		case preempt.WithinQueue:
		case preempt.ReclaimWhileBorrowing:
			policy = "borrowWithinCohort: " + s.limits[dc.q].borrow.String()
		case preempt.FairSharing:
			policy = "fairSharing: reclaimWithinCohort " + s.limits[dc.q].reclaim.String()
		default:
			policy = "reclaimWithinCohort: " + s.limits[dc.q].reclaim.String()
		}
		ckpt := int64(0)
		if v.r.Checkpointable {
			ckpt = v.r.LastCheckpoint
		}
		d.Victims = append(d.Victims, Victim{ID: v.r.ID, Queue: v.r.w.Queue, Priority: v.r.Priority,
			Reason: v.variant.Reason(), LostGPUSeconds: s.lostWork(v.r), Preemptor: r.ID, CheckpointAt: ckpt, Policy: policy,
			AdmittedAt: v.r.AdmittedAt})
	}
	slices.SortFunc(d.Victims, func(a, b Victim) int { return cmpStrings(a.ID, b.ID) })
	d.Preemptible = false
	for i := 0; i < dc.n; i++ {
		f := p.flavor[i]
		dc.chosen[i] = f
		d.Flavors = append(d.Flavors, PodSetFlavor{PodSet: r.PodSets[i].Name, Flavor: s.flavors[f].Name})
		d.Preemptible = d.Preemptible || s.flavors[f].Spot
	}
	// The placement the victims free, for the embedder to hold.
	if p.m.State != nil {
		p.pl.Reset(p.m.State)
		asg, _, _ := p.pl.Place(p.sets, p.asg[:0])
		p.asg = asg
		at := 0
		for i := 0; i < dc.n; i++ {
			ps := &r.PodSets[i]
			if !s.flavorHasNodes(p.flavor[i]) {
				continue
			}
			for k := int32(0); k < ps.Count; k++ {
				a := asg[at]
				at++
				d.Placement = append(d.Placement, PodPlacement{PodSet: ps.Name, Pod: k, Node: s.topo.NodeName(a.Node), GPUs: GPUSet(a.GPUs)})
			}
		}
	}
	reason := PriorityPreemption
	switch {
	case fair:
		reason = FairSharePreemption
	case !own:
		reason = ReclaimQuota
	}
	m := dc.mark()
	dc.w("evicting ")
	dc.wi(int64(len(victims)))
	if len(victims) == 1 {
		dc.w(" workload (")
	} else {
		dc.w(" workloads (")
	}
	lost := int64(0)
	for i, v := range d.Victims {
		if i > 0 {
			dc.w(", ")
		}
		dc.w(v.ID)
		lost += v.LostGPUSeconds
	}
	dc.w(") lets the request fit on ")
	for i := 0; i < dc.n; i++ {
		f := p.flavor[i]
		if slices.Index(p.flavor[:i], f) >= 0 {
			continue
		}
		if i > 0 {
			dc.w(" and ")
		}
		dc.w(s.flavors[f].Name)
	}
	dc.w("; they lose ")
	dc.wi(lost)
	dc.w(" GPU-seconds of work")
	dc.conclude(StagePreemption, reason, m)
	d.Verdict = VerdictPreempt
}

func cmpStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
