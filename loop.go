package allot

import (
	"slices"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/quota"
)

// Schedule is the scheduling loop an embedder runs on its store, and what a
// simulator drives: in cycles, as Kueue does, it takes the head of every
// queue's pending workloads (by priority, then submit time), decides each
// on the current snapshot, orders the heads, and commits them in that
// order; a commit the store refuses (an earlier one took the room) is
// retried next cycle. It stops when a cycle admits nothing and sets no
// head aside (every pending workload has had its turn), and returns
// every decision it made, in order, with its trail.
//
// Heads are ordered as Kueue orders a cycle's entries: without fair
// sharing, lower borrowing level, then higher priority, then earlier
// submission; with fair sharing on, entries that do not borrow first, then
// the lower dominant resource share after admission, then priority, then
// submission (ties by queue name). In a BestEffortFIFO queue a head that
// cannot be admitted steps aside for the rest of the loop; in a StrictFIFO
// queue it stays at the head and the queue admits nothing more in this
// loop (a rejected head too, until the embedder removes it, as Kueue keeps
// an inadmissible head in place). Options.QueueDepth bounds how many
// workloads that cannot be admitted one call looks at.
func Schedule(st *Store) []Decision {
	var out []Decision
	schedule(st, func(s *Snapshot, r Request) *Decision {
		out = append(out, Decide(s, r))
		return &out[len(out)-1]
	}, nil)
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
	schedule(st, func(s *Snapshot, r Request) *Decision {
		DecideInto(s, r, &d)
		return &d
	}, see)
}

// schedule is the loop of Schedule and ScheduleFunc: decide gives each
// decision its memory, see (when set) hears it once it is settled.
func schedule(st *Store, decide func(*Snapshot, Request) *Decision, see func(*Decision)) {
	blocked := map[int32]bool{}
	// Preemptions put victims back among the pending; bound the churn so
	// that no policy makes the loop run forever.
	start := st.Load()
	budget := 4*(start.pending.Len()+start.running.Len()) + 16
	lines := newLines(start)
	var c cycle
	notAdmitted := 0
	for range budget {
		s := st.Load()
		heads := lines.heads(s, blocked)
		if len(heads) == 0 {
			return
		}
		// Order the cycle's heads by what their admission would do to the
		// queue's quota (Kueue nominates then orders; the quota figures it
		// orders by come from the quota check alone), then decide each on
		// the snapshot its predecessors left, and commit.
		c.reset(s)
		for _, w := range heads {
			c.add(s, w, s.usage, true)
		}
		var order []int
		if s.fairSharing.Enabled && fairness.Nested(s.rtree, c.heads) {
			order = c.tournament(s, s.usage.Clone())
		} else {
			order = c.sort(s)
		}
		admitted, stepped, preempted := 0, 0, false
		for _, i := range order {
			w := heads[i]
			d := decide(st.Load(), Request(*w))
			q := s.queueIdx[w.Queue]
			if d.Verdict != VerdictAdmit && d.Verdict != VerdictPreempt {
				stepped++
				lines.stepAside(q, w)
				if s.limits[q].strict {
					blocked[q] = true
				}
			} else if _, err := st.Commit(*d); err == nil {
				admitted++
				preempted = preempted || d.Verdict == VerdictPreempt
			}
			if see != nil {
				see(d)
			}
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

// cycle holds the heads of one cycle with their keys (fairness.Key), and
// the order found for them; its memory serves every cycle of a loop.
type cycle struct {
	// nominee is the scratch of the heads' nominations.
	nominee assigner
	heads   []fairness.Head
	charges []fairness.Charge
	order   []int
	weight  []float64
}

// reset empties the cycle, keeping its memory; at first it makes room
// for one head per queue, the most a cycle has.
func (c *cycle) reset(s *Snapshot) {
	if c.heads == nil {
		c.heads, c.order = make([]fairness.Head, 0, len(s.queues)), make([]int, 0, len(s.queues))
	}
	c.heads, c.charges = c.heads[:0], c.charges[:0]
}

// add appends head w with its keys: with fair sharing its queue's dominant
// share after admission on usage u and what the admission charges, without
// it the borrowing level (when levels is set); the history keys when they
// are on.
func (c *cycle) add(s *Snapshot, w *Workload, u quota.Usage, levels bool) {
	q := s.queueIdx[w.Queue]
	k := fairness.Key{Queue: q, QueueName: w.Queue, Turn: turnOf(w)}
	h := s.history.HalfLife
	if s.options.OrderByDebt {
		k.Debt = s.debt[q].Now(s.now, h)
	}
	if s.options.OrderByUsage {
		k.Usage = fairness.PerWeight(s.used[q].Now(s.now, h), s.limits[q].weight)
	}
	from := len(c.charges)
	if s.fairSharing.Enabled || levels {
		// The keys come from the flavors the head's admission would take,
		// by quota alone (nominate: Decide's assignment rule).
		nom := &c.nominee
		fits := s.nominate(w, u, nom)
		switch {
		case s.fairSharing.Enabled:
			for i := range nom.n {
				if f := nom.asg.flavor[i]; f >= 0 {
					c.charges = append(c.charges, fairness.Charge{Flavor: f, Need: nom.need[i]})
				}
			}
			k.Share = fairness.ShareAfter(s.rtree, u, q, c.charges[from:], s.limits[q].weight)
		case fits:
			k.Level = nom.asg.level
		}
	}
	// Later heads append past this head's charges: a growth leaves them
	// in the old array, unchanged.
	c.heads = append(c.heads, fairness.Head{Key: k, Charges: slices.Clip(c.charges[from:])})
}

// sort orders the heads by their keys (fairness.Order.Compare): their
// indices, in order.
func (c *cycle) sort(s *Snapshot) []int {
	o := fairness.Order{FairSharing: s.fairSharing.Enabled, ByDebt: s.options.OrderByDebt, ByUsage: s.options.OrderByUsage}
	c.order = o.Sort(c.heads, c.order)
	return c.order
}

// tournament orders the heads by the fair-sharing tournament on usage u,
// which it changes (fairness.Tournament): their indices, in order.
func (c *cycle) tournament(s *Snapshot, u quota.Usage) []int {
	c.weight = c.weight[:0]
	for n := range s.rtree.Len() {
		c.weight = append(c.weight, s.weightOf(int32(n)))
	}
	c.order = fairness.Tournament(s.rtree, u, c.heads, c.weight, c.order[:0])
	return c.order
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

// queueLines hold a cursor per queue over the snapshot's pending workloads
// in the queue's order: the last workload that stepped aside there. A
// cycle finds each queue's head with one seek, never scanning the pending
// workloads.
type queueLines struct {
	start   []Workload // sorts before each queue's first workload
	after   []*Workload
	skipped map[string]bool
	skip    func(*Workload) bool
	out     []*Workload
}

func newLines(s *Snapshot) *queueLines {
	l := &queueLines{start: make([]Workload, len(s.queues)), after: make([]*Workload, len(s.queues)), skipped: map[string]bool{}}
	for q := range s.queues {
		l.start[q] = lineStart(s.queues[q].Name)
	}
	l.skip = func(w *Workload) bool { return l.skipped[w.ID] }
	return l
}

// heads are s's workloads at the cursors of the queues not blocked, in
// queue order; the slice is reused by the next call.
func (l *queueLines) heads(s *Snapshot, blocked map[int32]bool) []*Workload {
	l.out = l.out[:0]
	for q := range s.queues {
		if q >= len(l.after) || blocked[int32(q)] {
			continue
		}
		at := l.after[q]
		if at == nil {
			at = &l.start[q]
		}
		if w := s.queueHead(s.queues[q].Name, at, l.skip); w != nil {
			l.out = append(l.out, w)
		}
	}
	return l.out
}

// stepAside leaves w out for the rest of the loop and moves its queue's
// cursor past it.
func (l *queueLines) stepAside(q int32, w *Workload) {
	l.skipped[w.ID] = true
	if int(q) < len(l.after) {
		l.after[q] = w
	}
}

// rewind puts every cursor back at its queue's start: evicted victims are
// pending again, maybe ahead of a cursor.
func (l *queueLines) rewind() { clear(l.after) }

// Order lists the pending workloads in the order the scheduling loop
// considers them if each were admitted in turn: cycles of one head per
// queue, the heads ordered as Schedule orders them (with fair sharing, by
// the dominant share each queue would reach). StrictFIFO and
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
	// Each cycle's heads are counted in a private usage as they are
	// admitted in turn.
	u := s.usage.Clone()
	var c cycle
	for {
		// A queue's share depends on its own usage only, and no other head
		// of this cycle is in the same queue. Without fair sharing the
		// heads order by the history keys and their turn alone.
		c.reset(s)
		for q := range byQueue {
			if len(byQueue[q]) > 0 {
				c.add(s, byQueue[q][0], u, false)
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
