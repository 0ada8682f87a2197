package preempt

import (
	"math"

	"github.com/allot-sched/allot/internal/view"
)

// list yields the candidates of some queues in Less order, reading the
// Index lazily: a heap of the candidates read and not yet yielded, and a
// heap of sources (the runs of the index being read, and per queue an
// opener for its runs not yet opened), each keyed by a bound that no
// workload it has left goes before. A list yields its best candidate
// read once it goes before every source's bound, so a search reads about
// as many workloads as it looks at, whatever the number admitted.
type list struct {
	heap []int32 // read, not yet yielded: indices into the search's cands
	srcs []int32 // sources with more to read: indices into the search's srcs
	done []int32 // yielded, in order
	// listed says the search has the list among its lists; n counts its
	// candidates as a scan files them.
	listed bool
	n      int
}

// source is one run of the index being read, or a queue's opener: the
// queue's next run not yet opened, of priority at most maxPriority.
type source struct {
	bound       keyed
	g           group
	opener      bool
	maxPriority int32
	// at and n are the read position in buf and how much of it is
	// filled; last is the last entry read, where the next read starts.
	at, n int
	last  entry
	read  bool // last is set
	buf   [readBatch]entry
}

// readBatch is how many entries of a run one look-up in the index reads.
const readBatch = 8

// listStart is the room a list starts with in each of its slices.
const listStart = 8

// carve returns an empty slice of capacity n from the search's arena.
func (s *search) carve(n int) []int32 {
	if len(s.arena) < n {
		s.arena = make([]int32, 32*n)
	}
	c := s.arena[:0:n]
	s.arena = s.arena[n:]
	return c
}

// maxPriority is the highest priority policy p may let a preemptor of
// priority prio take; false when it lets it take none.
func maxPriority(p Policy, prio int32) (int32, bool) {
	switch p {
	case LowerPriority:
		return prio - 1, prio > math.MinInt32
	case LowerOrNewerEqualPriority:
		return prio, true
	case Any:
		return math.MaxInt32, true
	}
	return 0, false
}

// addQueue adds queue q's admitted workloads that policy p may let the
// preemptor take to l: from the index, its first run, or with none the
// scan files them (collect).
func (s *search) addQueue(l *list, q int32, p Policy) {
	top, ok := maxPriority(p, s.Priority)
	if !ok {
		return
	}
	if !l.listed {
		l.listed = true
		if s.idx != nil {
			// A list's first few of each kind, carved from one array: a
			// search yields few candidates. (A scan's lists grow as it
			// fills them.)
			l.heap, l.srcs, l.done = s.carve(listStart), s.carve(listStart), s.carve(listStart)
		}
		if s.lists == nil {
			// A search has a list per queue at most, and three.
			s.lists = make([]*list, 0, max(3, len(s.Debt)))
		}
		s.lists = append(s.lists, l)
	}
	if s.listOf == nil {
		s.listOf = make([]int32, len(s.Debt))
		for i := range s.listOf {
			s.listOf[i] = -1
		}
		s.reach = make([]reach, 0, len(s.Debt))
	}
	s.listOf[q] = int32(len(s.reach))
	s.reach = append(s.reach, reach{l: l, queue: q, top: top})
	if s.idx == nil {
		return
	}
	g, ok := s.idx.firstGroup(group{queue: q, priority: math.MinInt32, size: math.MinInt64})
	if !ok || g.priority > top {
		return
	}
	if s.srcs == nil {
		s.srcs = make([]source, 0, 8)
		s.cands, s.keys = make([]Victim, 0, 16), make([]Candidate, 0, 16)
	}
	si := int32(len(s.srcs))
	s.srcs = append(s.srcs, source{g: g, opener: true, maxPriority: top, bound: s.openerBound(g)})
	s.pushSource(l, si)
}

// debtOf is queue q's fairness debt as the order weighs it.
func (s *search) debtOf(q int32) float64 {
	if s.KueueOrder {
		return 0
	}
	return s.Debt[q].Now(s.Now, s.HalfLife)
}

// openerBound goes before every workload of group g and the groups after
// it in g's queue.
func (s *search) openerBound(g group) keyed {
	return keyed{Candidate: Candidate{OwnQueue: g.queue == s.Queue, Priority: g.priority, Debt: s.debtOf(g.queue),
		LostWork: math.MinInt64, AdmittedAt: math.MaxInt64}}
}

// fill makes sure source si has an entry to read next and sets its bound
// from it; false when its run is done.
func (s *search) fill(si int32) bool {
	src := &s.srcs[si]
	if src.at == src.n {
		var last *entry
		if src.read {
			last = &src.last
		}
		src.n, src.at = s.idx.read(src.g, last, src.buf[:]), 0
		s.read += src.n
		if src.n == 0 {
			return false
		}
		src.last, src.read = src.buf[src.n-1], true
	}
	e := &src.buf[src.at]
	src.bound = keyed{Candidate: s.key(e.b, -1, 0), id: e.b.ID}
	if e.fromCheckpoint {
		// Lost work grows along the run, admission times need not: only
		// the lost work bounds the rest.
		src.bound.AdmittedAt, src.bound.id = math.MaxInt64, ""
	}
	return true
}

// at is the i-th candidate of l in order, read as needed; false when l
// has fewer.
func (s *search) at(l *list, i int) (int32, bool) {
	for len(l.done) <= i {
		if !s.advance(l) {
			return -1, false
		}
	}
	return l.done[i], true
}

// advance yields l's next candidate.
func (s *search) advance(l *list) bool {
	for len(l.srcs) > 0 {
		if len(l.heap) > 0 && s.candBefore(l.heap[0], &s.srcs[l.srcs[0]].bound) {
			break
		}
		if s.read >= s.readBound {
			s.scanIndex() // every list's sources are gone
			break
		}
		s.pull(l)
	}
	if len(l.heap) == 0 {
		return false
	}
	l.done = append(l.done, l.heap[0])
	n := len(l.heap) - 1
	l.heap[0] = l.heap[n]
	l.heap = l.heap[:n]
	s.downCand(l.heap, 0)
	return true
}

// pull reads from l's source of least bound: an opener opens its run and
// moves on to the queue's next, a run gives its next workload, which
// joins the heap if it is a candidate.
func (s *search) pull(l *list) {
	si := l.srcs[0]
	src := &s.srcs[si]
	if src.opener {
		s.read++
		g, top := src.g, src.maxPriority
		next, ok := g.next()
		if ok {
			next, ok = s.idx.firstGroup(next)
		}
		if ok && next.priority <= top {
			src.g, src.bound = next, s.openerBound(next)
			s.downSource(l.srcs, 0)
		} else {
			s.popSource(l)
		}
		run := int32(len(s.srcs))
		s.srcs = append(s.srcs, source{g: g})
		if s.fill(run) {
			s.pushSource(l, run)
		}
		return
	}
	b := src.buf[src.at].b
	src.at++
	if s.fill(si) {
		s.downSource(l.srcs, 0)
	} else {
		s.popSource(l)
	}
	n := len(l.heap)
	if s.push(l, b); len(l.heap) > n {
		s.upCand(l.heap, n)
	}
}

// accept is the candidate b makes, with the variant it is collected
// under; false when the policies do not let the preemptor take it.
func (s *search) accept(b *view.Booking) (Victim, bool) {
	if !Takeable(b) || !s.usesNeeded(b) {
		return Victim{}, false
	}
	l := &s.Policies
	if b.Queue == s.Queue {
		return Victim{Booking: b, Variant: WithinQueue}, l.WithinQueue.Allows(s.Priority, b.Priority, s.SubmittedAt, b.SubmittedAt)
	}
	if !l.Reclaim.Allows(s.Priority, b.Priority, s.SubmittedAt, b.SubmittedAt) {
		return Victim{}, false
	}
	if s.Fair.Enabled {
		return Victim{Booking: b, Variant: ReclaimWithoutBorrowing}, true
	}
	lca := s.lcas[b.Queue]
	c := Victim{Booking: b, lca: lca, Variant: ReclaimWithoutBorrowing}
	switch {
	case s.adv[lca]:
		c.Variant = HierarchicalReclaim
	case l.Borrow != Never && b.Priority < s.Priority && (!l.HasThreshold || b.Priority <= l.Threshold):
		c.Variant = ReclaimWhileBorrowing
	}
	return c, true
}

func (s *search) pushSource(l *list, si int32) {
	l.srcs = append(l.srcs, si)
	h := l.srcs
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !keyedLess(&s.srcs[h[i]].bound, &s.srcs[h[p]].bound) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (s *search) popSource(l *list) {
	n := len(l.srcs) - 1
	l.srcs[0] = l.srcs[n]
	l.srcs = l.srcs[:n]
	s.downSource(l.srcs, 0)
}

func (s *search) downSource(h []int32, i int) {
	for {
		m := 2*i + 1
		if m >= len(h) {
			return
		}
		if r := m + 1; r < len(h) && keyedLess(&s.srcs[h[r]].bound, &s.srcs[h[m]].bound) {
			m = r
		}
		if !keyedLess(&s.srcs[h[m]].bound, &s.srcs[h[i]].bound) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (s *search) upCand(h []int32, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !s.candLess(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (s *search) downCand(h []int32, i int) {
	for {
		m := 2*i + 1
		if m >= len(h) {
			return
		}
		if r := m + 1; r < len(h) && s.candLess(h[r], h[m]) {
			m = r
		}
		if !s.candLess(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// candLess is Less between candidates i and j, their IDs the last
// tie-break.
func (s *search) candLess(i, j int32) bool {
	if c := compareKeys(&s.keys[i], &s.keys[j]); c != 0 {
		return c < 0
	}
	return s.cands[i].ID < s.cands[j].ID
}

// candBefore reports whether candidate i goes before bound b.
func (s *search) candBefore(i int32, b *keyed) bool {
	if c := compareKeys(&s.keys[i], &b.Candidate); c != 0 {
		return c < 0
	}
	return s.cands[i].ID < b.id
}
