package preempt

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/quota"
)

// readWay is one way a search may read the admitted workloads.
type readWay struct {
	name string
	Admitted[*view.Booking]
}

// readWays are the ways a search may read idx's workloads: the index read
// lazily and never scanned, the scan of the set by ID without an index,
// and the index read lazily until it scans after 1, 2, 3, 5, 8 or 13
// reads, so that the switch falls before the first candidate, inside a
// run's batch, between runs and after several.
func readWays(idx *Index) []readWay {
	set := cow.NewBuffered(func(a, b *view.Booking) bool { return a.ID < b.ID })
	idx.Scan(func(b *view.Booking) bool { set.Insert(b); return true })
	ways := []readWay{
		{"the index, lazily", Admitted[*view.Booking]{Index: idx, ReadBound: math.MaxInt}},
		{"the set, scanned", Admitted[*view.Booking]{Set: &set, Booking: func(b *view.Booking) *view.Booking { return b }}},
	}
	for _, n := range []int{1, 2, 3, 5, 8, 13} {
		ways = append(ways, readWay{fmt.Sprintf("the index, scanned after %d reads", n), Admitted[*view.Booking]{Index: idx, ReadBound: n}})
	}
	return ways
}

// renderResult is everything a search found, in order.
func renderResult(r Result, ok bool) string {
	if !ok {
		return "no victims"
	}
	return fmt.Sprintf("victims %v placement %v borrows %v level %d", victims(r), r.Placement, r.Borrows, r.Level)
}

// TestReadWaysFindTheSame: on random worlds of three queues under two
// cohorts (queue a alone under one, b and c under the other), their
// workloads of colliding priorities, sizes, admission and checkpoint
// times, some pinned, with random policies, either order, classical or
// fair, every way of reading the admitted workloads finds the same
// victims, placement and borrowing, and the switch to the scan happens.
func TestReadWaysFindTheSame(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(2026, 21))
	switched, found := 0, 0
	for c := range n {
		w, idx, p, pol := randomSearch(t, rng, 0)
		q, need := p.Queue, p.Need[0]
		var want string
		for i, way := range readWays(&idx) {
			r, ok := Find(w, p, new(gang.Placer), way.Admitted)
			got := renderResult(r, ok)
			if i == 0 {
				want = got
				if ok {
					found++
				}
				continue
			}
			if got != want {
				t.Fatalf("case %d (fair %v, kueue order %v, policies %+v, priority %d, queue %d, need %v):\n%s: %s\n%s: %s",
					c, w.Fair.Enabled, w.KueueOrder, pol, p.Priority, q, need, way.name, got, readWays(&idx)[0].name, want)
			}
		}
		if scannedAfter(w, p, &idx, 1) {
			switched++
		}
	}
	t.Logf("%d worlds, %d with victims, %d whose search scanned after its first read", n, found, switched)
	if found < n/5 || switched < n/5 {
		t.Errorf("%d worlds with victims and %d that switched of %d: the test reaches too little", found, switched, n)
	}
}

// randomSearch is a random world of three queues under two cohorts (queue
// a alone under one, b and c under the other), its workloads of colliding
// priorities, sizes, admission and checkpoint times, one in ten pinned, or
// each with probability pinned (when above 0), with random policies,
// either order, classical or fair, and a preemptor of a random queue.
func randomSearch(t *testing.T, rng *rand.Rand, pinned float64) (*World, Index, *Preemptor, Policies) {
	t.Helper()
	policies := []Policy{Never, LowerPriority, LowerOrNewerEqualPriority, Any}
	nominal := []int64{int64(rng.IntN(60)), int64(rng.IntN(60)), int64(rng.IntN(60))}
	tree, err := quota.NewResourceTree(1, 2, []quota.NodeSpec{
		{Name: "a", Parent: 3, Queue: true, Quotas: gc(nominal[0], 0)},
		{Name: "b", Parent: 4, Queue: true, Quotas: gc(nominal[1], 0)},
		{Name: "c", Parent: 4, Queue: true, Quotas: gc(nominal[2], 0)},
		{Name: "top-a", Parent: 5, Quotas: gc(0, 0)},
		{Name: "top-bc", Parent: 5, Quotas: gc(int64(rng.IntN(20)), 3)},
		{Name: "root", Parent: -1, Quotas: gc(int64(rng.IntN(40)), 3)},
	})
	if err != nil {
		t.Fatal(err)
	}
	w := &World{Tree: tree, Usage: tree.NewUsage(), Nodes: view.NodeRes{1<<gpu | 1<<cpu},
		Cost:       Cost{Now: 1000, GPU: gpu, Tokens: -1, Resources: 2},
		Debt:       []fairness.Debt{{Value: float64(rng.IntN(2)), At: 900}, {Value: float64(rng.IntN(2)), At: 950}, {}},
		HalfLife:   100,
		KueueOrder: rng.IntN(2) == 0,
	}
	if rng.IntN(2) == 0 {
		w.Fair = Sharing{Enabled: true, Strategies: [2]Strategy{LessThanOrEqualToFinalShare, LessThanInitialShare}, Weights: []float64{1, 1, 2, 1, 1, 1}}
		if rng.IntN(2) == 0 {
			w.Fair.Strategies = [2]Strategy{LessThanInitialShare}
		}
	}
	m := view.Sim{Tree: tree, Usage: w.Usage, Tokens: -1, Nodes: w.Nodes}
	idx := NewIndex(w.Cost)
	seen := map[string]bool{}
	for i := range rng.IntN(40) {
		b := randomBooking(rng, i)
		b.Queue = int32(rng.IntN(3))
		if pinned > 0 {
			b.Pinned = rng.Float64() < pinned
		}
		if seen[b.ID] {
			continue
		}
		seen[b.ID] = true
		m.Restore(b)
		idx.Insert(b)
	}
	w.Usage = m.Usage
	pol := Policies{WithinQueue: policies[rng.IntN(3)], Reclaim: policies[rng.IntN(4)], Borrow: policies[rng.IntN(2)]}
	if rng.IntN(3) == 0 {
		pol.Threshold, pol.HasThreshold = int32(rng.IntN(6)), true
	}
	q := int32(rng.IntN(3))
	need := res.Vec{gpu: int64(1 + rng.IntN(16)), cpu: int64(rng.IntN(2))}
	p := fairPreemptor(w, q, pol, need)
	p.Priority, p.SubmittedAt = []int32{0, 1, 5, 6, math.MaxInt32}[rng.IntN(5)], int64(rng.IntN(10))
	return w, idx, p, pol
}

// scannedAfter reports whether a search of p on w, reading idx, switches
// to the scan with bound n.
func scannedAfter(w *World, p *Preemptor, idx *Index, n int) bool {
	s := search{World: *w, Preemptor: *p, pl: new(gang.Placer), idx: idx, readBound: n}
	if !s.start() {
		return false
	}
	if s.Fair.Enabled {
		if !s.startFair() {
			return false
		}
		s.fair()
	} else {
		s.startClassical()
		s.classical()
	}
	return s.scanned
}

// The lists a search reads lazily until a bound and then scans yield, in
// order, what the lazy lists yield: TestListsMatchSort's worlds with the
// switch after every few reads.
func TestListsSwitchToScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 23))
	for c := range 1000 {
		w, idx, _ := indexedWorld(t, rng)
		policies := []Policy{LowerPriority, LowerOrNewerEqualPriority, Any}
		pol := Policies{WithinQueue: policies[rng.IntN(3)], Reclaim: policies[rng.IntN(3)]}
		p := Preemptor{Queue: qa, Policies: pol, Priority: []int32{0, 1, 5, math.MaxInt32}[rng.IntN(4)], SubmittedAt: int64(rng.IntN(10))}
		merged := rng.IntN(2) == 0
		read := func(bound int) []string {
			s := search{World: *w, Preemptor: p, idx: &idx, readBound: bound, frs: []int{gpu}, lcas: make([]int32, 2), adv: []bool{false, true}}
			s.lcas[qb] = 1
			lists := twoQueueLists(&s, pol, merged)
			// Read the lists in turns, one candidate each, as the fair
			// search does, so that the switch finds some lists part read.
			var got []string
			for i, more := 0, true; more; i++ {
				more = false
				for j, l := range lists {
					if k, ok := s.at(l, i); ok {
						got = append(got, fmt.Sprintf("%d:%s:%s", j, s.cands[k].ID, s.cands[k].Variant.Reason()))
						more = true
					}
				}
			}
			return got
		}
		want := read(math.MaxInt)
		for _, bound := range []int{1, 2, 4, 9, 20} {
			if got := read(bound); !slices.Equal(got, want) {
				t.Fatalf("case %d, scanned after %d reads:\n got %v\nwant %v", c, bound, strings.Join(got, " "), strings.Join(want, " "))
			}
		}
	}
}
