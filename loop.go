package allot

import (
	"slices"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/quota"
)

// Schedule is the scheduling loop an embedder runs on its store, and what a
// simulator drives: it takes the head of every queue's pending workloads
// (by priority, then submit time), decides it, and commits what is
// admitted, until every pending workload has had its turn; it returns
// every decision it made, in order, with its trail. How the heads take
// turns depends on the mode:
//
//   - Kueue's cycles (without fair sharing, and in Kueue-exact mode,
//     Options.Semantics "kueue", with it): every cycle takes one head per
//     queue, orders them (below), and decides each in that order. In
//     allot's default a head is decided on the snapshot its predecessors
//     left and a commit the store refuses is retried next cycle. In
//     Kueue-exact mode every head of a cycle is decided on the snapshot
//     the cycle began with, as Kueue nominates them all on one snapshot;
//     its commit re-checks it against what the cycle admitted before it,
//     and a head that no longer fits stays at its queue's head for the
//     next cycle (Kueue skips it and requeues it at once). The loop stops
//     when a cycle admits nothing and sets no head aside.
//   - Progressive filling (fair sharing on, allot's default): one
//     admission at a time, always the head the cycle's order puts first
//     on the usage of the moment, so that every admission is weighed
//     against every earlier one. That is weighted DRF's progressive
//     filling (Ghodsi et al.): the queue whose dominant share after
//     admitting its next workload, divided by its weight, is lowest goes
//     next, and a queue whose head cannot be admitted is skipped while
//     the others go on. Kueue's cycles admit one head of every queue per
//     cycle whatever the weights: two queues of weights 3 and 1 that both
//     ask for all of 16 GPUs end at 8 and 8 in Kueue-exact mode, at 12
//     and 4 here.
//
// Heads are ordered as Kueue orders a cycle's entries: without fair
// sharing, lower borrowing level, then higher priority, then earlier
// submission; with fair sharing on, entries that do not borrow what they
// ask for first, then the lower dominant resource share after admission
// (the tournament with nested cohorts), then priority, then submission
// (ties by queue name). In a BestEffortFIFO queue a head that cannot be
// admitted steps aside for the rest of the loop; in a StrictFIFO queue it
// stays at the head and the queue admits nothing more in this loop (a
// rejected head too, until the embedder removes it, as Kueue keeps an
// inadmissible head in place). Options.QueueDepth bounds how many
// workloads that cannot be admitted one call looks at.
func Schedule(st *Store) []Decision {
	var out []Decision
	var d Decision
	schedule(st, func(s *Snapshot, r Request) *Decision {
		d = Decide(s, r)
		return &d
	}, func(d *Decision) { out = append(out, *d) })
	return out
}

// ScheduleFunc is Schedule handing each decision to see as soon as it is
// made (and committed, when it admits) instead of collecting them. It
// decides into one reused Decision, so a simulator or a controller that
// keeps only what it needs allocates far less: d and everything it refers
// to, its strings included, are valid only during the call (d.Clone()
// keeps one).
func ScheduleFunc(st *Store, see func(d *Decision)) {
	var d Decision
	ScheduleInto(st, &d, see)
}

// ScheduleInto is ScheduleFunc deciding into d, as DecideInto does: d's
// memory serves every decision of this loop and of the next loops given
// the same d, and so does what its workspace remembers (what the empty
// cluster holds, which the versions share until a node changes). A
// simulator that runs a loop after every event keeps one d for them all.
func ScheduleInto(st *Store, d *Decision, see func(d *Decision)) {
	if see == nil {
		see = func(*Decision) {}
	}
	schedule(st, func(s *Snapshot, r Request) *Decision {
		DecideInto(s, r, d)
		return d
	}, see)
}

// schedule is the loop of Schedule and ScheduleFunc: decide gives each
// decision its memory (a decision made again on a newer snapshot may take
// the memory of the one before), see hears each head's decision once it is
// settled.
func schedule(st *Store, decide func(*Snapshot, Request) *Decision, see func(*Decision)) {
	if s := st.Load(); s.progressive() {
		fill(st, decide, see)
	} else {
		cycles(st, decide, see)
	}
}

// progressive reports whether the loop fills progressively (fair sharing
// in allot's default) rather than in Kueue's cycles.
func (s *Snapshot) progressive() bool { return s.fairSharing.Enabled && !s.kueueExact() }

// loopBudget bounds the rounds of one loop: preemptions put victims back
// among the pending, and no policy may make the loop run forever.
func loopBudget(s *Snapshot) int { return 4*(s.pending.Len()+s.running.Len()) + 16 }

// cycles is the loop in Kueue's cycles.
func cycles(st *Store, decide func(*Snapshot, Request) *Decision, see func(*Decision)) {
	blocked := map[int32]bool{}
	start := st.Load()
	lines := newLines(start)
	var c cycle
	notAdmitted := 0
	for range loopBudget(start) {
		s := st.Load()
		heads := lines.heads(s, blocked)
		if len(heads) == 0 {
			return
		}
		// Order the cycle's heads by what their admission would do to the
		// queue's quota (Kueue nominates then orders; the quota figures it
		// orders by come from the quota check alone), then decide each on
		// the snapshot its predecessors left (Kueue-exact: on s), and
		// commit.
		exact := s.kueueExact()
		c.reset(s)
		for i, w := range heads {
			c.add(s, lines.outQueue[i], w, s.usage, true)
		}
		nested := s.fairSharing.Enabled && fairness.Nested(s.rtree, c.heads)
		var order []int
		if !nested {
			order = c.sort(s)
		}
		// With nested cohorts Kueue runs the tournament again after every
		// entry, on the usage of the entries admitted so far: u.
		var u quota.Usage
		if nested {
			u = s.usage.Clone()
			c.play(len(heads))
		}
		admitted, stepped, preempted := 0, 0, false
		for k := range heads {
			var i int
			if nested {
				i = c.next(s, u)
			} else {
				i = order[k]
			}
			w, q := heads[i], lines.outQueue[i]
			on := s
			if !exact {
				on = st.Load()
			}
			d, ok := decide(on, Request(*w)), false
			if !admits(d) {
				stepped++
				lines.stepAside(q, w)
				if s.limits[q].strict {
					blocked[q] = true
				}
			} else if d, ok = c.commit(st, s, d, w, decide, lines); ok {
				admitted++
				preempted = preempted || d.Verdict == VerdictPreempt
				if nested {
					fairness.Account(s.rtree, u, q, c.heads[i].Charges)
				}
			}
			see(d)
		}
		if preempted {
			lines.rewind()
		}
		// A head that stepped aside uncovers the next of its queue, so the
		// loop ends only once a cycle neither admits nor uncovers anything,
		// or the queue depth is spent.
		if admitted == 0 && stepped == 0 {
			return
		}
		notAdmitted += stepped
		if d := s.options.QueueDepth; d > 0 && notAdmitted >= d {
			return
		}
	}
}

// admits reports whether d admits its workload, at once or after victims.
func admits(d *Decision) bool { return d.Verdict == VerdictAdmit || d.Verdict == VerdictPreempt }

// commit commits head w's decision d, made on the cycle's snapshot s (or
// later), and returns the decision that settles the head and whether the
// store took it. A refusal means the store changed since d was made. In
// allot's default the head is retried next cycle. In Kueue-exact mode the
// refusal is Kueue's check that a head's nomination still fits after the
// entries before it in the cycle; but a decision names GPUs, which an
// earlier head may have taken where Kueue, counting pods per domain, still
// sees room. So the head is decided again on the current snapshot and
// committed if that gives the same verdict on the same flavors; otherwise
// it stays at its queue's head for the next cycle, as Kueue requeues at
// once a head that no longer fits. lines hears of a commit that took.
func (c *cycle) commit(st *Store, s *Snapshot, d *Decision, w *Workload, decide func(*Snapshot, Request) *Decision, lines *queueLines) (*Decision, bool) {
	prev := st.Load()
	next, err := st.Commit(*d)
	if err == nil {
		lines.committed(s.queueIdx[w.Queue], d, next)
		carryPlan(prev, next)
	}
	if err == nil || !s.kueueExact() || st.Load().version == s.version {
		return d, err == nil
	}
	verdict := d.Verdict
	c.flavors = flavorsOf(s, d, c.flavors[:0])
	n := len(c.flavors)
	prev = st.Load()
	d = decide(prev, Request(*w))
	if d.Verdict != verdict || !slices.Equal(c.flavors[:n], flavorsOf(s, d, c.flavors[n:n])) {
		return d, false
	}
	if next, err = st.Commit(*d); err == nil {
		lines.committed(s.queueIdx[w.Queue], d, next)
		carryPlan(prev, next)
	}
	return d, err == nil
}

// flavorsOf appends the index of each flavor d chose, in pod set order, to
// out.
func flavorsOf(s *Snapshot, d *Decision, out []int32) []int32 {
	for _, f := range d.Flavors {
		out = append(out, s.flavorIdx[f.Flavor])
	}
	return out
}

// fill is the loop by progressive filling: every round decides the one head
// the cycle's order puts first on the snapshot of the moment, and commits
// it. The heads and their keys are kept from round to round (filling)
// until an admission may change them.
func fill(st *Store, decide func(*Snapshot, Request) *Decision, see func(*Decision)) {
	blocked := map[int32]bool{}
	start := st.Load()
	lines := newLines(start)
	f := newFilling(start)
	seen := start.version
	notAdmitted := 0
	for range loopBudget(start) {
		s := st.Load()
		if s.version != seen {
			// Someone else wrote to the store: nothing kept holds.
			f.forgetAll()
			seen = s.version
		}
		q, ok := f.pick(s, s.usage, func(q int32) *Workload {
			if blocked[q] {
				return nil
			}
			return lines.head(s, q)
		})
		if !ok {
			return
		}
		w := f.head[q]
		d := decide(s, Request(*w))
		admitted := false
		if admits(d) {
			if next, err := st.Commit(*d); err == nil {
				admitted, seen = true, next.version
				carryPlan(s, next)
				f.admitted(q)
				if d.Verdict == VerdictAdmit {
					lines.admitted(q, s.version, next.version)
				}
				if d.Verdict == VerdictPreempt {
					lines.rewind()
					f.forgetAll()
				}
			} else if st.Load().version != s.version {
				// The store moved on under the decision: decide again.
				see(d)
				continue
			}
		}
		if !admitted {
			// Not admissible, or refused on the very snapshot it was
			// decided on (deciding again would give the same): the head
			// steps aside.
			lines.stepAside(q, w)
			f.forget(q)
			if s.limits[q].strict {
				blocked[q] = true
			}
			notAdmitted++
		}
		see(d)
		if d := s.options.QueueDepth; d > 0 && notAdmitted >= d {
			return
		}
	}
}

// cycle holds the heads of one cycle with their keys (fairness.Key), and
// the order found for them; its memory serves every cycle of a loop.
type cycle struct {
	// nominee is the scratch of the heads' nominations.
	nominee assigner
	heads   []fairness.Head
	charges []fairness.Charge
	order   []int
	weight  []float64
	// in are the heads next has not taken yet.
	in      []int
	bracket fairness.Bracket
	// flavors is commit's scratch.
	flavors []int32
}

// reset empties the cycle, keeping its memory; at first it makes room
// for one head per queue, the most a cycle has.
func (c *cycle) reset(s *Snapshot) {
	if c.heads == nil {
		c.heads, c.order = make([]fairness.Head, 0, len(s.queues)), make([]int, 0, len(s.queues))
	}
	c.heads, c.charges = c.heads[:0], c.charges[:0]
}

// add appends head w of queue q with its keys: with fair sharing its
// queue's dominant share after admission on usage u and what the admission
// charges, without it the borrowing level (when levels is set); the
// history keys when they are on.
func (c *cycle) add(s *Snapshot, q int32, w *Workload, u quota.Usage, levels bool) {
	from := len(c.charges)
	c.heads = append(c.heads, fairness.Head{})
	h := &c.heads[len(c.heads)-1]
	c.charges = s.headKey(&h.Key, q, w, u, levels, &c.nominee, c.charges)
	// Later heads append past this head's charges: a growth leaves them
	// in the old array, unchanged.
	h.Charges = slices.Clip(c.charges[from:])
}

// headKey sets k to the keys of head w of queue q and appends what its
// admission charges to charges: with fair sharing its queue's dominant
// share after admission on usage u, without it the borrowing level (when
// levels is set); the history keys when they are on. nom is the
// nomination's scratch.
func (s *Snapshot) headKey(k *fairness.Key, q int32, w *Workload, u quota.Usage, levels bool, nom *assigner, charges []fairness.Charge) []fairness.Charge {
	*k = fairness.Key{Queue: q, QueueName: w.Queue, Turn: turnOf(w)}
	h := s.history.HalfLife
	if s.options.OrderByDebt {
		k.Debt = s.debt[q].Now(s.now, h)
	}
	if s.options.OrderByUsage {
		k.Usage = fairness.PerWeight(s.used[q].Now(s.now, h), s.limits[q].weight)
	}
	if !s.fairSharing.Enabled && (!levels || !s.rtree.InCohort(q)) {
		// The key is the borrowing level alone, if asked for, and a queue
		// in no cohort has none to nominate for.
		return charges
	}
	// The keys come from the flavors the head's admission would take, by
	// quota alone (nominate: Decide's assignment rule).
	from := len(charges)
	fits := s.nominate(w, u, nom)
	switch {
	case s.fairSharing.Enabled:
		for i := range nom.n {
			if f := nom.asg.flavor[i]; f >= 0 {
				charges = append(charges, fairness.Charge{Flavor: f, Need: nom.need[i]})
			}
		}
		k.Share = fairness.ShareAfter(s.rtree, u, q, charges[from:], s.limits[q].weight)
	case fits:
		k.Level = nom.asg.level
	}
	return charges
}

// order is the order of the cycle's heads, by their keys.
func (s *Snapshot) order() fairness.Order {
	return fairness.Order{FairSharing: s.fairSharing.Enabled, ByDebt: s.options.OrderByDebt, ByUsage: s.options.OrderByUsage}
}

// sort orders the heads by their keys (fairness.Order.Compare): their
// indices, in order.
func (c *cycle) sort(s *Snapshot) []int {
	c.order = s.order().Sort(c.heads, c.order)
	return c.order
}

// tournament orders the heads by the fair-sharing tournament on usage u,
// which it changes (fairness.Tournament), as if each were admitted in
// turn: their indices, in order.
func (c *cycle) tournament(s *Snapshot, u quota.Usage) []int {
	c.order = fairness.Tournament(s.rtree, u, c.heads, s.weights(&c.weight), c.order[:0])
	return c.order
}

// play puts the cycle's first n heads in play for next.
func (c *cycle) play(n int) {
	c.in = c.in[:0]
	for i := range n {
		c.in = append(c.in, i)
	}
}

// next takes the head in play that the fair-sharing tournament on usage u
// picks (fairness.Bracket), and returns its index.
func (c *cycle) next(s *Snapshot, u quota.Usage) int {
	i := c.bracket.Winner(s.rtree, u, c.heads, c.in, s.weights(&c.weight))
	c.in = slices.DeleteFunc(c.in, func(j int) bool { return j == i })
	return i
}

// weights are the fair-sharing weights of every resource-tree node, in
// *buf's memory.
func (s *Snapshot) weights(buf *[]float64) []float64 {
	*buf = (*buf)[:0]
	for n := range s.rtree.Len() {
		*buf = append(*buf, s.weightOf(int32(n)))
	}
	return *buf
}

// weightOf is a resource-tree node's fair-sharing weight, a queue's or a
// cohort's (the tree numbers queues first, then cohorts).
func (s *Snapshot) weightOf(n int32) float64 {
	if int(n) < len(s.limits) {
		return s.limits[n].weight
	}
	if c := int(n) - len(s.limits); c < len(s.cohortWeight) {
		return s.cohortWeight[c]
	}
	return 1
}

// filling is progressive filling's memory: each queue's head and its keys,
// kept until an admission may change them, in standings that give the
// first. A queue's share after admission depends on its own usage and its
// head's charges; the charges depend on the usage of the queue's tree only
// when the queue has more than one flavor to choose from (flexible). With
// nested cohorts the tournament computes the shares from the charges
// afresh every round.
type filling struct {
	nominee assigner
	// By queue: head is its head (nil for none), key its keys and charges
	// their memory.
	head    []*Workload
	key     []fairness.Head
	charges [][]fairness.Charge
	// staleHead and staleKey say which queue's head or key is to be found
	// again, dirty lists them.
	staleHead, staleKey []bool
	dirty               []int32
	// flexibleOf is, by queue, the flexible queues of its tree; nested
	// whether the queue sits below nested cohorts, nestedHeads how many
	// such queues have a head.
	flexibleOf  [][]int32
	nested      []bool
	nestedHeads int
	standings   fairness.Standings
	// Scratch of a round with nested cohorts.
	heads   []fairness.Head
	in      []int
	queueOf []int32
	weight  []float64
	bracket fairness.Bracket
}

func newFilling(s *Snapshot) *filling {
	n := len(s.queues)
	f := &filling{head: make([]*Workload, n), key: make([]fairness.Head, n), charges: make([][]fairness.Charge, n),
		staleHead: make([]bool, n), staleKey: make([]bool, n), dirty: make([]int32, 0, n),
		flexibleOf: make([][]int32, n), nested: make([]bool, n)}
	flexible := map[int32][]int32{} // by tree root
	for q := range int32(n) {
		f.nested[q] = len(s.rtree.Path(q)) > 2
		if len(s.quota.Queues[q].Flavors) > 1 {
			r := s.rtree.Root(q)
			flexible[r] = append(flexible[r], q)
		}
	}
	for q := range int32(n) {
		f.flexibleOf[q] = flexible[s.rtree.Root(q)]
	}
	f.standings.Reset(s.order(), n)
	f.forgetAll()
	return f
}

// stale marks queue q's key, and its head too when head is set, to be
// found again.
func (f *filling) stale(q int32, head bool) {
	if !f.staleHead[q] && !f.staleKey[q] {
		f.dirty = append(f.dirty, q)
	}
	f.staleKey[q] = true
	f.staleHead[q] = f.staleHead[q] || head
}

// forget drops queue q's head and key.
func (f *filling) forget(q int32) { f.stale(q, true) }

// forgetAll drops every head and key.
func (f *filling) forgetAll() {
	for q := range int32(len(f.head)) {
		f.stale(q, true)
	}
}

// admitted drops what queue q's admission of its head may change: q's head
// and key, and the keys of the flexible queues of q's tree.
func (f *filling) admitted(q int32) {
	f.forget(q)
	for _, x := range f.flexibleOf[q] {
		f.stale(x, false)
	}
}

// pick is the queue whose head goes next on usage u: the first by the
// cycle's order (the tournament's winner when a head sits below nested
// cohorts); false when no queue has a head. headOf finds a queue's head.
func (f *filling) pick(s *Snapshot, u quota.Usage, headOf func(q int32) *Workload) (int32, bool) {
	for _, q := range f.dirty {
		if f.staleHead[q] {
			w := headOf(q)
			if f.nested[q] && (w == nil) != (f.head[q] == nil) {
				if w == nil {
					f.nestedHeads--
				} else {
					f.nestedHeads++
				}
			}
			f.head[q] = w
		}
		if w := f.head[q]; w == nil {
			f.standings.Set(int(q), nil)
		} else {
			f.charges[q] = s.headKey(&f.key[q].Key, q, w, u, false, &f.nominee, f.charges[q][:0])
			f.key[q].Charges = f.charges[q]
			f.standings.Set(int(q), &f.key[q].Key)
		}
		f.staleHead[q], f.staleKey[q] = false, false
	}
	f.dirty = f.dirty[:0]
	if f.nestedHeads == 0 {
		q, ok := f.standings.First()
		return int32(q), ok
	}
	f.heads, f.in, f.queueOf = f.heads[:0], f.in[:0], f.queueOf[:0]
	for q := range int32(len(f.head)) {
		if f.head[q] != nil {
			f.in = append(f.in, len(f.heads))
			f.heads = append(f.heads, f.key[q])
			f.queueOf = append(f.queueOf, q)
		}
	}
	return f.queueOf[f.bracket.Winner(s.rtree, u, f.heads, f.in, s.weights(&f.weight))], true
}

// queueLines hold a cursor per queue over the snapshot's pending workloads
// in the queue's order: the last workload that stepped aside there. A
// cycle finds each queue's head with one seek, never scanning the pending
// workloads, and keeps the heads it found from cycle to cycle: a queue's
// head changes only when its cursor moves, when one of its workloads is
// admitted, or when a preemption or a write from elsewhere changes the
// pending workloads.
type queueLines struct {
	start   []Workload // sorts before each queue's first workload
	after   []*Workload
	skipped map[string]bool
	skip    func(*Workload) bool
	// out are the heads heads found, outQueue their queues.
	out      []*Workload
	outQueue []int32
	// kept[q] is queue q's head on version, when known[q].
	kept    []*Workload
	known   []bool
	version uint64
	// ahead[q][next[q]:] is what follows queue q's cursor on version
	// aheadOn[q], when read[q]: its next pending workloads that are not
	// skipped, in order, read with one seek; all of them when whole[q]. A
	// head stepping aside is the first of them, so the next head is the
	// one after it, found without another seek.
	ahead       [][]*Workload
	next        []int
	aheadOn     []uint64
	read, whole []bool
}

// aheadRead is how many workloads one seek reads ahead of a cursor.
const aheadRead = 16

func newLines(s *Snapshot) *queueLines {
	n := len(s.queues)
	l := &queueLines{start: make([]Workload, n), after: make([]*Workload, n), skipped: map[string]bool{},
		kept: make([]*Workload, n), known: make([]bool, n), version: s.version,
		ahead: make([][]*Workload, n), next: make([]int, n), aheadOn: make([]uint64, n), read: make([]bool, n), whole: make([]bool, n)}
	for q := range s.queues {
		l.start[q] = lineStart(s.queues[q].Name)
	}
	l.skip = func(w *Workload) bool { return l.skipped[w.ID] }
	return l
}

// heads are s's workloads at the cursors of the queues not blocked, in
// queue order; the slice is reused by the next call.
func (l *queueLines) heads(s *Snapshot, blocked map[int32]bool) []*Workload {
	if s.version != l.version {
		l.forget(s.version)
	}
	l.out, l.outQueue = l.out[:0], l.outQueue[:0]
	for q := range s.queues {
		if blocked[int32(q)] {
			continue
		}
		if q >= len(l.known) {
			continue // a queue added since the loop started has no cursor
		}
		if !l.known[q] {
			l.kept[q], l.known[q] = l.head(s, int32(q)), true
		}
		if w := l.kept[q]; w != nil {
			l.out, l.outQueue = append(l.out, w), append(l.outQueue, int32(q))
		}
	}
	return l.out
}

// forget drops the heads kept: they are found again on version.
func (l *queueLines) forget(version uint64) {
	clear(l.known)
	l.version = version
}

// committed hears that decision d of a head of queue q was committed,
// making version next. An admission straight after the version the heads
// are kept for changes only q's pending workloads; anything else (victims
// pending again, or another writer's versions in between) may change any.
func (l *queueLines) committed(q int32, d *Decision, next *Snapshot) {
	if d.Verdict == VerdictAdmit && next.version == l.version+1 && int(q) < len(l.known) {
		l.admitted(q, l.version, next.version)
		l.known[q], l.version = false, next.version
		return
	}
	l.forget(next.version)
}

// admitted hears that a head of queue q was admitted on version from,
// making version to. Straight after it (to is from+1) only q's pending
// workloads changed: what the other queues have ahead of their cursors
// on from they have on to.
func (l *queueLines) admitted(q int32, from, to uint64) {
	if to != from+1 {
		return
	}
	for k := range l.aheadOn {
		if int32(k) != q && l.aheadOn[k] == from {
			l.aheadOn[k] = to
		}
	}
}

// head is s's workload at queue q's cursor, nil when none is left.
func (l *queueLines) head(s *Snapshot, q int32) *Workload {
	if int(q) >= len(l.after) || int(q) >= len(s.queues) {
		return nil
	}
	if l.read[q] && l.aheadOn[q] == s.version && (l.next[q] < len(l.ahead[q]) || l.whole[q]) {
		return l.first(q)
	}
	at := l.after[q]
	if at == nil {
		at = &l.start[q]
	}
	a := s.queueAhead(s.queues[q].Name, at, l.skip, l.ahead[q][:0], aheadRead)
	l.ahead[q], l.next[q], l.aheadOn[q], l.read[q], l.whole[q] = a, 0, s.version, true, len(a) < aheadRead
	return l.first(q)
}

// first is the first workload ahead of queue q's cursor, nil for none.
func (l *queueLines) first(q int32) *Workload {
	if l.next[q] == len(l.ahead[q]) {
		return nil
	}
	return l.ahead[q][l.next[q]]
}

// stepAside leaves w out for the rest of the loop and moves its queue's
// cursor past it.
func (l *queueLines) stepAside(q int32, w *Workload) {
	l.skipped[w.ID] = true
	if int(q) < len(l.after) {
		l.after[q], l.known[q] = w, false
		// w first ahead: the rest follow the new cursor, none skipped.
		if l.read[q] && l.first(q) == w {
			l.next[q]++
		} else {
			l.read[q] = false
		}
	}
}

// rewind puts every cursor back at its queue's start: evicted victims are
// pending again, maybe ahead of a cursor.
func (l *queueLines) rewind() {
	clear(l.after)
	clear(l.known)
	clear(l.read)
}

// Order lists the pending workloads in the order the scheduling loop
// considers them if each were admitted in turn: by progressive filling
// with fair sharing in allot's default (each next the head that goes
// first on the usage of every workload before it), otherwise in cycles of
// one head per queue, the heads ordered as Schedule orders them (with fair
// sharing, by the dominant share each queue would reach). StrictFIFO and
// BestEffortFIFO queues order alike (priority, then submission); they
// differ only when a head cannot be admitted, which Schedule handles.
func Order(s *Snapshot) []string {
	byQueue := make([][]*Workload, len(s.queues))
	n := 0
	s.byQueue.Scan(func(w *Workload) bool {
		if q, ok := s.queueIdx[w.Queue]; ok {
			byQueue[q] = append(byQueue[q], w)
			n++
		}
		return true
	})
	var out []string
	if n > 0 {
		out = make([]string, 0, n)
	}
	// The heads are counted in a private usage as they are admitted in
	// turn.
	u := s.usage.Clone()
	if s.progressive() {
		f := newFilling(s)
		headOf := func(q int32) *Workload {
			if len(byQueue[q]) == 0 {
				return nil
			}
			return byQueue[q][0]
		}
		for {
			q, ok := f.pick(s, u, headOf)
			if !ok {
				return out
			}
			out = append(out, byQueue[q][0].ID)
			fairness.Account(s.rtree, u, q, f.key[q].Charges)
			byQueue[q] = byQueue[q][1:]
			f.admitted(q)
		}
	}
	var c cycle
	for {
		// A queue's share depends on its own usage only, and no other head
		// of this cycle is in the same queue. Without fair sharing the
		// heads order by the history keys and their turn alone.
		c.reset(s)
		for q := range byQueue {
			if len(byQueue[q]) > 0 {
				c.add(s, int32(q), byQueue[q][0], u, false)
				byQueue[q] = byQueue[q][1:]
			}
		}
		if len(c.heads) == 0 {
			return out
		}
		if s.fairSharing.Enabled && fairness.Nested(s.rtree, c.heads) {
			for _, i := range c.tournament(s, u) {
				out = append(out, c.heads[i].Key.Turn.ID)
			}
			continue
		}
		for _, i := range c.sort(s) {
			out = append(out, c.heads[i].Key.Turn.ID)
			if s.fairSharing.Enabled {
				fairness.Account(s.rtree, u, c.heads[i].Key.Queue, c.heads[i].Charges)
			}
		}
	}
}
