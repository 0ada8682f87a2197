package preempt

import (
	"slices"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

// World is the cluster a search runs on, as the snapshot holds it.
type World struct {
	// Tree is the cohort tree's quantities (queue q is node q, cohorts
	// follow) and Usage its usage now.
	Tree  *quota.ResourceTree
	Usage quota.Usage
	// Free is the free capacity now, Empty the empty cluster with every
	// node usable: what could ever fit.
	Free, Empty *topology.State
	// Nodes are the resources each flavor's nodes hold.
	Nodes view.NodeRes
	// Cost prices a victim's lost work at the snapshot's time; its Tokens
	// also says what a booking charges to quota.
	Cost
	// Debt is each queue's fairness debt, by queue, decaying with
	// HalfLife.
	Debt     []fairness.Debt
	HalfLife int64
	// Fair, enabled, runs Kueue's fair-sharing preemption instead of its
	// classical one.
	Fair Sharing
	// KueueOrder orders candidates as Kueue does: allot's keys within one
	// priority (fairness debt, then least lost work) are left out, so the
	// most recently admitted goes first.
	KueueOrder bool
}

// Sharing is Kueue's fair sharing as the search needs it.
type Sharing struct {
	Enabled bool
	// Strategies are the preemption strategies in order, the second zero
	// when only one is configured.
	Strategies [2]Strategy
	// Weights is each cohort tree node's fair-sharing weight.
	Weights []float64
}

// Strategy is one of Kueue's fair-sharing preemption strategies.
type Strategy uint8

const (
	// LessThanOrEqualToFinalShare takes a target's workload when the
	// preemptor's share, the request counted, would not exceed the
	// target's share once the workload is gone.
	LessThanOrEqualToFinalShare Strategy = 1 + iota
	// LessThanInitialShare takes it when the preemptor's share stays below
	// the target's share as it is.
	LessThanInitialShare
)

// Policies are a queue's preemption policies (Kueue's ClusterQueue
// preemption).
type Policies struct {
	WithinQueue, Reclaim, Borrow Policy
	// Threshold is borrowWithinCohort's maxPriorityThreshold, when
	// HasThreshold.
	Threshold    int32
	HasThreshold bool
}

// Preemptor is the request victims are looked for, with one flavor
// assignment.
type Preemptor struct {
	Queue       int32
	Policies    Policies
	Priority    int32
	SubmittedAt int64
	// Need[f] is what the request charges to flavor f, Open[f] the part of
	// it the assignment has not placed, and Quota[f] the queue's quota
	// there (nil for a flavor no pod set uses).
	Need, Open []res.Vec
	Quota      []*quota.FlavorQuota
	// Exhausted says that the quota of some flavor is used up now (not a
	// cap): preemption for quota is then considered only as Kueue does.
	Exhausted bool
	// Sets are the pod sets that go on nodes, in request order (nil when
	// none does).
	Sets []gang.PodSet
}

// Victim is an admitted workload the search evicts, with the variant it
// was collected or taken under.
type Victim struct {
	*view.Booking
	Variant Variant
	// lca is the index, in the preemptor queue's path to the root, of the
	// lowest cohort shared with the victim's queue (0 in the own queue).
	lca int32
}

// Result is what a search found.
type Result struct {
	Victims []*Victim
	// Placement is where the preemptor's pods go once the victims are gone,
	// Sets in order (nil when no pod set goes on nodes).
	Placement []gang.Assignment
	// Borrows says that the preemptor's queue still borrows on what it
	// needs then, and Level is its borrowing level then (the largest over
	// the flavor-resources that needed room).
	Borrows bool
	Level   int
}

// search is one run of Find: its inputs and its scratch.
type search struct {
	// Copies of the caller's: pointers to them would move them to the
	// heap.
	World
	Preemptor
	pl  *gang.Placer // reused by every placement of the search
	idx *Index       // the admitted workloads, or nil: a scan files them
	// read counts the entries and runs the lists have read from idx;
	// at readBound they scan it instead (scanIndex), and scanned says
	// they have.
	read, readBound int
	scanned         bool

	frs  []int   // the flavor-resources that need room (Kueue's preempt mode)
	all  []int   // every flavor-resource the request asks for
	path []int32 // the preemptor queue's path to the root of its tree
	m    view.Sim
	asg  []gang.Assignment
	// cands holds every candidate read, keys their order keys; the lists
	// index both, and srcs holds the lists' sources.
	cands []Victim
	keys  []Candidate
	srcs  []source
	arena []int32 // where the lists' slices start (carve)
	// lists are the search's lists, reach the queues they take from, and
	// listOf[q] the index in reach of queue q's (-1 for none).
	lists  []*list
	reach  []reach
	listOf []int32

	// The classical search's candidate lists, the hierarchical advantage
	// at each ancestor on path, and per queue of another list the index in
	// path of its lowest cohort shared with the preemptor's.
	hierarchy, priority, own list
	adv                      []bool
	lcas                     []int32
	// queues are the fair search's lists, one per queue.
	queues []list
}

// Find looks for victims whose eviction lets preemptor p fit world w: its
// quota and, for its pod sets on nodes, a placement (pl places them).
// admitted holds the admitted workloads: with an index, the search reads
// from it about as many candidates as it looks at. It reports whether it
// found victims.
func Find[R any](w *World, p *Preemptor, pl *gang.Placer, admitted Admitted[R]) (Result, bool) {
	if admitted.NoneTakeable {
		return Result{}, false // every candidate is pinned: accept takes none
	}
	s := search{World: *w, Preemptor: *p, pl: pl, idx: admitted.Index, readBound: admitted.ReadBound}
	if s.readBound <= 0 {
		s.readBound = DefaultReadBound
	}
	if !s.start() {
		return Result{}, false
	}
	if s.Fair.Enabled && !s.startFair() {
		return Result{}, false
	}
	if !s.Fair.Enabled {
		s.startClassical()
	}
	if s.idx == nil && len(s.reach) > 0 {
		if !s.Fair.Enabled {
			s.makeRoom(admitted.Room)
		}
		booking := admitted.Booking
		admitted.Set.Scan(func(r R) bool { s.collect(booking(r)); return true })
		s.file()
		if s.Fair.Enabled {
			s.sortLists()
		} else {
			s.heapify()
		}
	}
	var victims []*Victim
	var ok bool
	if s.Fair.Enabled {
		victims, ok = s.fair()
	} else {
		victims, ok = s.classical()
	}
	if !ok {
		return Result{}, false
	}
	return Result{Victims: victims, Placement: s.placement(), Borrows: s.preemptorBorrows(), Level: s.preemptorLevel()}, true
}

// needAt is what the request charges to flavor-resource fr.
func (s *search) needAt(fr int) int64 {
	R := s.Tree.Resources()
	return s.Need[fr/R][fr%R]
}

// start finds what needs room and rules out a search that cannot help.
func (s *search) start() bool {
	t := s.Tree
	// Kueue looks for victims only on the flavor-resources that do not fit
	// (its "preempt" mode). When quota fits and only the placement does
	// not, those of the pod sets the assignment could not place: the others
	// fit as they are, and a queue borrowing only there gives back nothing
	// the placement needs (taking its workloads anyway lets the two sides
	// evict each other in turn).
	for f, fq := range s.Quota {
		if fq == nil {
			continue
		}
		for r := range t.Resources() {
			if s.Need[f][r] > 0 {
				fr := t.FR(f, r)
				s.all = append(s.all, fr)
				if s.Need[f][r] > t.AvailableClamped(s.Usage, s.Queue, fr) {
					s.frs = append(s.frs, fr)
				}
			}
		}
	}
	if len(s.frs) == 0 {
		for f, fq := range s.Quota {
			for r := range t.Resources() {
				if fq != nil && s.Open[f][r] > 0 {
					s.frs = append(s.frs, t.FR(f, r))
				}
			}
		}
	}
	if len(s.frs) == 0 {
		return false
	}
	if s.Sets != nil {
		s.pl.Reset(s.Empty)
		if _, _, ok := s.pl.Place(s.Sets, nil); !ok {
			return false // no emptied cluster holds it
		}
	}
	// Kueue considers preemption for quota only if every flavor-resource
	// that needs room can get it: the request fits the queue's nominal
	// quota there, or the cohort tree can reclaim for it there, or the
	// queue may preempt while borrowing.
	if s.Exhausted && !s.Policies.PreemptsWhileBorrowing(s.Fair.Enabled) {
		for _, fr := range s.frs {
			if !s.reclaimable(fr, s.needAt(fr)) {
				return false
			}
		}
	}
	s.path = t.Path(s.Queue)
	return true
}

// allotKeys are allot's additions to a candidate's order: its lost work and
// its queue's fairness debt now, both zero under Kueue's order.
func (s *search) allotKeys(b *view.Booking) (lost int64, debt float64) {
	if s.KueueOrder {
		return 0, 0
	}
	return s.Lost(b), s.Debt[b.Queue].Now(s.Now, s.HalfLife)
}

// PreemptsWhileBorrowing reports whether a queue with these policies may
// preempt while it borrows, Kueue's canPreemptWhileBorrowing: under
// borrowWithinCohort, or with fair sharing on under reclaimWithinCohort.
func (l *Policies) PreemptsWhileBorrowing(fairSharing bool) bool {
	return l.Borrow != Never || fairSharing && l.Reclaim != Never
}

// reclaimable reports whether preemption can make room for v of
// flavor-resource fr without the preemptor borrowing past what it may: v
// is within the queue's nominal quota there, or the cohort tree holds v
// below its root (the rest may be reclaimed).
func (s *search) reclaimable(fr int, v int64) bool {
	R := s.Tree.Resources()
	_, mayReclaim := s.Tree.BorrowingLevel(s.Usage, s.Queue, fr, v)
	return s.Quota[fr/R].Nominal[fr%R] >= v || mayReclaim
}

// startClassical prepares collecting the classical search's candidates.
func (s *search) startClassical() {
	t := s.Tree
	// Hierarchical advantage at each ancestor of the preemptor's queue:
	// adv[i] holds before collecting at path[i].
	s.adv = make([]bool, len(s.path))
	has := true
	// Kueue weighs the whole request here, not only what needs room.
	remaining := make([]int64, len(s.all))
	for k, fr := range s.all {
		fits, rem := t.FitsInQuota(s.Usage, s.Queue, fr, s.needAt(fr))
		has = has && fits
		remaining[k] = rem
	}
	for i := 1; i < len(s.path); i++ {
		s.adv[i] = has
		all := true
		for k, fr := range s.all {
			fits, rem := t.FitsInQuota(s.Usage, s.path[i], fr, remaining[k])
			all = all && fits
			remaining[k] = rem
		}
		has = has || all
	}
	// The candidate lists: the preemptor's own queue's workloads, and
	// those of every queue of its tree that borrows below the lowest
	// cohort it shares with the preemptor's (only they can give quota
	// back), under hierarchical advantage or not.
	l := &s.Policies
	s.addQueue(&s.own, s.Queue, l.WithinQueue)
	if l.Reclaim == Never {
		return
	}
	s.lcas = make([]int32, len(s.Debt))
	for q := range int32(len(s.Debt)) {
		if q == s.Queue {
			continue
		}
		lca := s.lcaIndex(q)
		if lca < 0 || !s.borrowingBelow(s.Usage, q, lca) {
			continue
		}
		s.lcas[q] = int32(lca)
		if s.adv[lca] {
			s.addQueue(&s.hierarchy, q, l.Reclaim)
		} else {
			s.addQueue(&s.priority, q, l.Reclaim)
		}
	}
}

// key is b's ordering key as candidate index, with idRank for Less's last
// tie-break (the lists compare IDs instead, and pass 0).
func (s *search) key(b *view.Booking, index, idRank int32) Candidate {
	key := Candidate{Index: index, IDRank: idRank, OwnQueue: b.Queue == s.Queue, Priority: b.Priority, AdmittedAt: b.AdmittedAt}
	key.LostWork, key.Debt = s.allotKeys(b)
	return key
}

// classical is Kueue's classical preemption over the collected candidates:
// greedy removal in the lists' order, in the passes the borrowing policy
// allows.
func (s *search) classical() ([]*Victim, bool) {
	hierarchy, priority, own := &s.hierarchy, &s.priority, &s.own
	_, hasHierarchy := s.at(hierarchy, 0)
	_, hasPriority := s.at(priority, 0)
	if _, hasOwn := s.at(own, 0); !hasHierarchy && !hasPriority && !hasOwn {
		return nil, false
	}
	t := s.Tree
	forbidden := s.Policies.Borrow == Never
	underNominal := true
	for _, fr := range s.frs {
		underNominal = underNominal && t.Nominal(s.Queue, fr) > s.Usage.At(s.Queue, fr)
	}
	var passes []bool
	switch {
	case !hasHierarchy && !hasPriority || forbidden && !underNominal:
		passes = []bool{true}
	case forbidden && !hasHierarchy:
		passes = []bool{false, true}
	default:
		passes = []bool{true, false}
	}
	seq := []*list{hierarchy, priority, own}
	for _, allowBorrowing := range passes {
		if victims, ok := s.greedy(seq, allowBorrowing); ok {
			return victims, true
		}
	}
	return nil, false
}

// usesNeeded reports whether a workload holds any flavor-resource the
// preemptor needs.
func (s *search) usesNeeded(b *view.Booking) bool {
	R := s.Tree.Resources()
	for i := range b.Sets {
		set := &b.Sets[i]
		for _, fr := range s.frs {
			// The pod set charges resource r when its pods ask for it (a
			// pod set has at least one pod).
			if r := fr % R; fr/R == int(set.Flavor) && (set.Per[r] > 0 || r == s.Tokens && set.Tokens > 0) {
				return true
			}
		}
	}
	return false
}

// lcaIndex is the index in the preemptor's path of the lowest cohort it
// shares with queue q, or -1 when they are in different trees.
func (s *search) lcaIndex(q int32) int {
	other := s.Tree.Path(q)
	for i, a := range s.path {
		if slices.Contains(other, a) {
			return i
		}
	}
	return -1
}

// borrowingBelow reports whether queue q and every cohort strictly between
// it and the preemptor's ancestor at lca use more than their own quota on
// the needed flavor-resources: only such candidates can give quota back.
func (s *search) borrowingBelow(u quota.Usage, q int32, lca int) bool {
	t := s.Tree
	top := s.path[lca]
	for _, n := range t.Path(q) {
		if n == top {
			return true
		}
		if t.IsWithinNominal(u, n, s.frs) {
			return false
		}
	}
	return true
}

// begin starts the view the search evicts from: the snapshot's usage and,
// when pod sets go on nodes, its free capacity.
func (s *search) begin() {
	s.m = view.Sim{Tree: s.Tree, Usage: s.Usage.Clone(), Tokens: s.Tokens, Nodes: s.Nodes}
	if s.Sets != nil {
		s.m.State = s.Free.Fork()
	}
}

// fits reports whether the request fits the view: quota (without
// borrowing unless allowed, the hard cap included) and placement.
func (s *search) fits(allowBorrowing bool) bool {
	t := s.Tree
	R := t.Resources()
	for _, fr := range s.all {
		r := fr % R
		v := s.needAt(fr)
		used := s.m.Usage.At(s.Queue, fr)
		if !allowBorrowing && t.BorrowingWith(s.m.Usage, s.Queue, fr, v) {
			return false
		}
		if v > t.AvailableClamped(s.m.Usage, s.Queue, fr) {
			return false
		}
		if fq := s.Quota[fr/R]; fq.HardMask&(1<<r) != 0 && used+v > fq.Hard[r] {
			return false
		}
	}
	if s.m.State == nil {
		return true
	}
	s.pl.Reset(s.m.State)
	s.pl.Final = true
	var ok bool
	s.asg, _, ok = s.pl.Place(s.Sets, s.asg[:0])
	return ok
}

// greedy is one pass of Kueue's greedy removal with reverse fill-back.
func (s *search) greedy(seq []*list, allowBorrowing bool) ([]*Victim, bool) {
	s.begin()
	var targets []*Victim
	for _, l := range seq {
		for i := 0; ; i++ {
			k, ok := s.at(l, i)
			if !ok {
				break
			}
			// A pointer into cands stays what it was when cands grows: a
			// victim is not changed once taken.
			c := &s.cands[k]
			if !s.valid(c, allowBorrowing) {
				continue
			}
			s.m.Evict(c.Booking)
			targets = append(targets, c)
			if s.fits(allowBorrowing) {
				return s.fillBack(targets, allowBorrowing), true
			}
		}
	}
	return nil, false
}

// fillBack adds the victims back in reverse order and keeps out only those
// the preemptor still needs; the last one taken is always needed.
func (s *search) fillBack(targets []*Victim, allowBorrowing bool) []*Victim {
	for i := len(targets) - 2; i >= 0; i-- {
		s.m.Restore(targets[i].Booking)
		if s.fits(allowBorrowing) {
			targets = slices.Delete(targets, i, i+1)
		} else {
			s.m.Evict(targets[i].Booking)
		}
	}
	return targets
}

// valid is Kueue's dynamic candidate check: a candidate of another queue
// stops being one as soon as its queue, or a cohort below the common
// ancestor, is back within its nominal quota.
func (s *search) valid(c *Victim, allowBorrowing bool) bool {
	switch c.Variant {
	case WithinQueue:
		return true
	case ReclaimWithoutBorrowing:
		if allowBorrowing {
			return false
		}
	}
	return s.borrowingBelow(s.m.Usage, c.Queue, int(c.lca))
}

// preemptorBorrows reports whether the preemptor's queue would borrow on
// what it needs once the request is counted, in the current view.
func (s *search) preemptorBorrows() bool {
	for _, fr := range s.frs {
		if s.Tree.BorrowingWith(s.m.Usage, s.Queue, fr, s.needAt(fr)) {
			return true
		}
	}
	return false
}

// preemptorLevel is the preemptor's borrowing level on the view, the
// victims gone: the largest over the flavor-resources that needed room.
func (s *search) preemptorLevel() int {
	level := 0
	for _, fr := range s.frs {
		l, _ := s.Tree.BorrowingLevel(s.m.Usage, s.Queue, fr, s.needAt(fr))
		level = max(level, l)
	}
	return level
}

// placement is where the request's pods go on the view, the victims gone.
func (s *search) placement() []gang.Assignment {
	if s.m.State == nil {
		return nil
	}
	s.pl.Reset(s.m.State)
	s.asg, _, _ = s.pl.Place(s.Sets, s.asg[:0])
	return s.asg
}

// Possibility is what preemption could do for one flavor-resource, Kueue's
// preemption possibility, worst first.
type Possibility uint8

const (
	// Impossible: preemption cannot make room there (the request is
	// beyond the queue's nominal quota, nothing below the root can be
	// reclaimed, and the queue may not preempt while borrowing).
	Impossible Possibility = iota
	// NoCandidates: preemption may make room, but no admitted workload
	// the policies allow would.
	NoCandidates
	// PreemptOwn: the candidates include workloads of the preemptor's own
	// queue.
	PreemptOwn
	// Reclaim: the candidates are all of other queues.
	Reclaim
)

// Simulate is Kueue's preemption oracle: what preemption could do for v of
// flavor-resource fr alone (the other resources of the request left out),
// with the borrowing level the preemptor would have once the candidates
// are gone (or, without candidates, now). p gives the queue, its policies,
// the request's priority and submission time and the queue's quota; its
// Need, Open and Sets are not read. Kueue's flavor assigner asks it, flavor
// by flavor, to rank the flavors that need preemption.
func Simulate[R any](w *World, p *Preemptor, fr int, v int64, pl *gang.Placer, admitted Admitted[R]) (Possibility, int) {
	t := w.Tree
	nr := t.Resources()
	f := fr / nr
	q := Preemptor{Queue: p.Queue, Policies: p.Policies, Priority: p.Priority, SubmittedAt: p.SubmittedAt,
		Exhausted: true, Need: make([]res.Vec, 2*t.Flavors()), Quota: make([]*quota.FlavorQuota, t.Flavors())}
	q.Need, q.Open = q.Need[:t.Flavors()], q.Need[t.Flavors():]
	q.Need[f][fr%nr], q.Quota[f] = v, p.Quota[f]
	probe := search{World: *w, Preemptor: q}
	if !q.Policies.PreemptsWhileBorrowing(w.Fair.Enabled) && !probe.reclaimable(fr, v) {
		return Impossible, 0
	}
	found, ok := Find(w, &q, pl, admitted)
	if !ok {
		level, _ := t.BorrowingLevel(w.Usage, p.Queue, fr, v)
		return NoCandidates, level
	}
	for _, c := range found.Victims {
		if c.Queue == p.Queue {
			return PreemptOwn, found.Level
		}
	}
	return Reclaim, found.Level
}
