package preempt

import (
	"math"
	"slices"

	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/view"
)

// Admitted is what a search reads the admitted workloads from: the set of
// them by ID (Booking reads one's booking), and, where the caller keeps
// one, their Index.
//
// Without an Index the search scans the set once and orders the
// candidates it accepts; with one it reads its lists lazily from the
// index, and once it has read ReadBound entries it scans, from the index,
// only the queues it may take from, for the candidates it has not yet
// looked at. Either way every list yields the same candidates in the same
// order (Less, ID the last tie-break), so the victims are the same: the
// index only saves the search the workloads it would not look at.
type Admitted[R any] struct {
	Set     *cow.Buffered[R]
	Booking func(R) *view.Booking
	// Room is how many candidates a classical search's scan of the set
	// makes room for at once: the preemptor's queue's admitted workloads,
	// where most of its candidates are. (The fair search's candidates
	// are spread over the queues and few of a queue's workloads are.)
	Room int
	// Index, when not nil, is the index of the same workloads; Set and
	// Booking are then not read.
	Index *Index
	// ReadBound is how many entries (and runs opened) a search reads from
	// the index's lists before it scans; 0 is DefaultReadBound.
	ReadBound int
	// NoneTakeable, when set, says that no workload of Set is Takeable
	// (every one is pinned): no search can find a victim, so Find answers
	// at once that it found none, reading nothing. Unset, the search
	// reads the workloads as usual.
	NoneTakeable bool
}

// DefaultReadBound is where a search stops reading the lazy lists and
// scans the rest. A lazy read costs several times a scan's (a look-up in
// the index for each run opened and each batch of a run, two heaps), so a
// search that reads most of its candidates is better off scanning them,
// and one that has read a few hundred has already saved the scan of the
// thousands it does not look at. With 256, a search that takes all 5,000
// workloads below it costs what the scan did (BenchmarkPreempt); other
// bounds were not swept.
const DefaultReadBound = 256

// IndexFrom is how many admitted workloads make an index worth keeping: a
// snapshot with fewer keeps none and is scanned by every search. The
// simulator's synthetic replays, a few hundred admitted on 1,024 GPUs and
// searches that mostly read every candidate, ran slower with the index
// from 256 admitted than from 1,024; a scan of 1,000 costs 90 to 115 µs
// (BenchmarkPreempt), a search on the index about 16 µs.
const IndexFrom = 1024

// reach is a queue a list takes candidates from, up to priority top.
type reach struct {
	l          *list
	queue, top int32
}

// collect keeps admitted workload b, read by a scan of the set, when it
// is a candidate of the list that takes from its queue; file then puts
// the candidates in their lists.
func (s *search) collect(b *view.Booking) {
	if int(b.Queue) >= len(s.listOf) {
		return
	}
	k := s.listOf[b.Queue]
	if k < 0 || b.Priority > s.reach[k].top {
		return
	}
	if v, ok := s.accept(b); ok {
		s.cands = append(s.cands, v)
	}
}

// file puts the candidates a scan of the set collected in their lists,
// with their keys: one array for the keys and one for the lists, each
// list its own stretch of it.
func (s *search) file() {
	n := len(s.cands)
	s.keys = make([]Candidate, n)
	for _, l := range s.lists {
		l.n = 0
	}
	for i := range s.cands {
		c := &s.cands[i]
		s.keys[i] = s.key(c.Booking, int32(i), 0)
		s.reach[s.listOf[c.Queue]].l.n++
	}
	buf := make([]int32, n)
	at := 0
	for _, l := range s.lists {
		l.heap, at = buf[at:at:at+l.n], at+l.n
	}
	for i := range s.cands {
		l := s.reach[s.listOf[s.cands[i].Queue]].l
		l.heap = append(l.heap, int32(i))
	}
}

// push adds b to l's heap when it is a candidate.
func (s *search) push(l *list, b *view.Booking) {
	if v, ok := s.accept(b); ok {
		i := int32(len(s.cands))
		s.cands = append(s.cands, v)
		s.keys = append(s.keys, s.key(b, i, 0))
		l.heap = append(l.heap, i)
	}
}

// makeRoom makes room for n candidates before a scan of the set.
func (s *search) makeRoom(n int) { s.cands = make([]Victim, 0, n) }

// heapify orders every list's heap after a scan filled it.
func (s *search) heapify() {
	for _, l := range s.lists {
		for i := len(l.heap)/2 - 1; i >= 0; i-- {
			s.downCand(l.heap, i)
		}
	}
}

// sortLists sorts every list's candidates after a scan of the set filled
// them, yielding them all at once: the fair search looks at the head of
// every queue's list for each target it picks, and a sorted list answers
// without a pop.
func (s *search) sortLists() {
	for _, l := range s.lists {
		slices.SortFunc(l.heap, func(a, b int32) int {
			if s.candLess(a, b) {
				return -1
			}
			return 1 // no two candidates are equal: IDs differ
		})
		l.done, l.heap = l.heap, nil // a scan's lists yielded nothing yet
	}
}

// scanIndex stops reading the lists lazily: each list forgets its sources
// and the candidates read and not yet yielded, and takes instead, from one
// scan of the index over the queues it takes from, every candidate after
// the last it yielded. What it yielded stays as it was.
func (s *search) scanIndex() {
	s.scanned = true
	for _, l := range s.lists {
		l.heap, l.srcs = l.heap[:0], l.srcs[:0]
	}
	for k := range s.reach {
		r := s.reach[k]
		l := r.l
		var last keyed
		yielded := len(l.done) > 0
		if yielded {
			k := l.done[len(l.done)-1]
			last = keyed{Candidate: s.keys[k], id: s.cands[k].ID}
		}
		start := group{queue: r.queue, priority: math.MinInt32, size: math.MinInt64}.start()
		s.idx.t.Ascend(start, func(e entry) bool {
			if e.queue != r.queue || e.priority > r.top {
				return false
			}
			if v, ok := s.accept(e.b); ok {
				key := keyed{Candidate: s.key(e.b, int32(len(s.cands)), 0), id: e.b.ID}
				if yielded && !keyedLess(&last, &key) {
					return true
				}
				l.heap = append(l.heap, int32(len(s.cands)))
				s.cands = append(s.cands, v)
				s.keys = append(s.keys, key.Candidate)
			}
			return true
		})
	}
	s.heapify()
}
