package allot

import (
	"cmp"
	"math"
	"slices"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/internal/res"
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
	notAdmitted := 0
	for cycle := 0; cycle < budget; cycle++ {
		s := st.Load()
		heads := lines.heads(s, blocked)
		if len(heads) == 0 {
			return
		}
		// Order the cycle's heads by what their admission would do to the
		// queue's quota (Kueue nominates then orders; the quota figures it
		// orders by come from the quota check alone), then decide each on
		// the snapshot its predecessors left, and commit.
		entries := make([]entry, len(heads))
		for i, w := range heads {
			entries[i] = entry{w: w}
			if s.fairSharing.Enabled {
				entries[i].share = s.shareAfter(w)
			} else {
				entries[i].level = s.borrowingLevelOf(w)
			}
		}
		slices.SortStableFunc(entries, s.headOrder)
		if s.fairSharing.Enabled && s.nestedCohorts(heads) {
			ordered := s.fairOrder(heads, s.usage.Clone())
			for i, w := range ordered {
				entries[i] = entry{w: w}
			}
		}
		admitted, stepped, preempted := 0, 0, false
		for _, e := range entries {
			d := decide(st.Load(), Request(*e.w))
			q := s.queueIdx[e.w.Queue]
			if d.Verdict != VerdictAdmit && d.Verdict != VerdictPreempt {
				stepped++
				lines.stepAside(q, e.w)
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

// entry is one head of a cycle with its ordering keys: the dominant share
// after admission (fair sharing on) or the borrowing level (off; Order
// leaves it 0).
type entry struct {
	w     *Workload
	level int
	share fairness.Share
}

// headOrder orders a cycle's heads as Kueue does: with fair sharing, heads
// that do not borrow first, then the lower share; without, the lower
// borrowing level; then the history keys, priority, submission and queue.
func (s *Snapshot) headOrder(a, b entry) int {
	if s.fairSharing.Enabled {
		if a.share.Borrowing != b.share.Borrowing {
			return boolFirst(!a.share.Borrowing)
		}
		if a.share.Less(b.share) {
			return -1
		}
		if b.share.Less(a.share) {
			return 1
		}
	} else if c := cmp.Compare(a.level, b.level); c != 0 {
		return c
	}
	if c := s.historyOrder(a.w, b.w); c != 0 {
		return c
	}
	if pendingBeforeAcross(a.w, b.w) {
		return -1
	}
	return 1
}

// borrowingLevelOf is the borrowing level w's admission would have on the
// first flavor of its queue whose quota holds it (0 when none does).
func (s *Snapshot) borrowingLevelOf(w *Workload) int {
	q, ok := s.queueIdx[w.Queue]
	if !ok {
		return 0
	}
	for k := range s.quota.Queues[q].Flavors {
		fq := &s.quota.Queues[q].Flavors[k]
		if !allowsFlavor(w, s.flavors[fq.Flavor].Name) {
			continue
		}
		var need res.Vec
		for _, ps := range w.PodSets {
			per, err := s.vector(ps.PerPod, "perPod")
			if err != nil {
				return 0
			}
			if charge, err := s.podCharge(per, ps.Tokens, "tokens"); err == nil {
				need = need.Add(charge.Scale(int64(ps.Count)))
			}
		}
		if fit := s.fitQuota(q, fq, res.Vec{}, need); fit.verdict == quota.Fit {
			return fit.level
		}
	}
	return 0
}

func boolFirst(a bool) int {
	if a {
		return -1
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

// pendingBefore is a queue's order: higher priority, then earlier
// submission, then ID.
func pendingBefore(a, b *Workload) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.SubmittedAt != b.SubmittedAt {
		return a.SubmittedAt < b.SubmittedAt
	}
	return a.ID < b.ID
}

// shareAfter is the dominant resource share of w's queue once w is
// admitted on its queue's first flavor that allows it.
func (s *Snapshot) shareAfter(w *Workload) fairness.Share {
	q := s.queueIdx[w.Queue]
	extra := make([]int64, s.rtree.FRs())
	s.firstFlavorCharges(w, func(f int32, need res.Vec) {
		for r := range s.resources {
			extra[s.rtree.FR(int(f), r)] += need[r]
		}
	})
	return fairness.DominantShare(s.rtree, s.usage, q, extra, s.limits[q].weight)
}

// firstFlavorCharges hands over, for each pod set of pending workload w,
// the first flavor of w's queue the pod set allows and what the pod set
// charges there; pod sets whose resources do not resolve are left out.
func (s *Snapshot) firstFlavorCharges(w *Workload, add func(f int32, need res.Vec)) {
	q := s.queueIdx[w.Queue]
	for _, ps := range w.PodSets {
		per, err := s.vector(ps.PerPod, "perPod")
		if err != nil {
			continue
		}
		charge, err := s.podCharge(per, ps.Tokens, "tokens")
		if err != nil {
			continue
		}
		for _, fq := range s.quota.Queues[q].Flavors {
			if len(ps.Flavors) == 0 || slices.Contains(ps.Flavors, s.flavors[fq.Flavor].Name) {
				add(fq.Flavor, charge.Scale(int64(ps.Count)))
				break
			}
		}
	}
}

// Order lists the pending workloads in the order the scheduling loop
// considers them if each were admitted in turn: cycles of one head per
// queue, the heads ordered as Schedule orders them (with fair sharing, by
// the dominant share each queue would reach). StrictFIFO and
// BestEffortFIFO queues order alike (priority, then submission); they
// differ only when a head cannot be admitted, which Schedule handles.
func Order(s *Snapshot) []string {
	byQueue := make([][]*Workload, len(s.queues))
	s.byQueue.Scan(func(w *Workload) bool {
		if q, ok := s.queueIdx[w.Queue]; ok {
			byQueue[q] = append(byQueue[q], w)
		}
		return true
	})
	u := s.usage.Clone()
	view := *s
	view.usage = u
	var out []string
	heads := make([]entry, 0, len(byQueue))
	for {
		heads = heads[:0]
		for q := range byQueue {
			if len(byQueue[q]) > 0 {
				h := entry{w: byQueue[q][0]}
				byQueue[q] = byQueue[q][1:]
				if s.fairSharing.Enabled {
					// A queue's share depends on its own usage only, and no
					// other head of this cycle is in the same queue.
					h.share = view.shareAfter(h.w)
				}
				heads = append(heads, h)
			}
		}
		if len(heads) == 0 {
			return out
		}
		cycle := func(hs []entry) []*Workload {
			ws := make([]*Workload, len(hs))
			for i, h := range hs {
				ws[i] = h.w
			}
			return ws
		}
		slices.SortStableFunc(heads, s.headOrder)
		if s.fairSharing.Enabled && s.nestedCohorts(cycle(heads)) {
			for _, w := range s.fairOrder(cycle(heads), view.usage) {
				out = append(out, w.ID)
			}
			continue
		}
		for _, h := range heads {
			out = append(out, h.w.ID)
			if s.fairSharing.Enabled {
				view.accountIn(view.usage, h.w)
			}
		}
	}
}

// historyOrder compares two heads by the optional history keys: higher
// fairness debt first (OrderByDebt), then lower decayed usage per weight
// (OrderByUsage); 0 when neither is on or they tie.
func (s *Snapshot) historyOrder(a, b *Workload) int {
	qa, qb := s.queueIdx[a.Queue], s.queueIdx[b.Queue]
	if qa == qb {
		return 0
	}
	h := s.history.HalfLife
	if s.options.OrderByDebt {
		if c := cmp.Compare(s.debt[qb].Now(s.now, h), s.debt[qa].Now(s.now, h)); c != 0 {
			return c
		}
	}
	if s.options.OrderByUsage {
		perWeight := func(q int32) float64 {
			u := s.used[q].Now(s.now, h)
			if w := s.limits[q].weight; w > 0 {
				return u / w
			}
			return math.Inf(1)
		}
		if c := cmp.Compare(perWeight(qa), perWeight(qb)); c != 0 {
			return c
		}
	}
	return 0
}

// pendingBeforeAcross orders workloads of different queues: higher
// priority, earlier submission, then queue name and ID.
func pendingBeforeAcross(a, b *Workload) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.SubmittedAt != b.SubmittedAt {
		return a.SubmittedAt < b.SubmittedAt
	}
	if a.Queue != b.Queue {
		return a.Queue < b.Queue
	}
	return a.ID < b.ID
}

// accountIn adds a pending workload's usage to a private usage u, on its
// queue's first allowed flavor.
func (s *Snapshot) accountIn(u quota.Usage, w *Workload) {
	q := s.queueIdx[w.Queue]
	s.firstFlavorCharges(w, func(f int32, need res.Vec) { s.rtree.AddVec(u, q, int(f), need, 1) })
}
