package preempt

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/view"
)

// twoQueueLists makes s's lists of queues qa (within the queue) and qb
// (reclaimed): one over both queues when merged, as the classical
// search's cross lists merge queues, or one per queue, as the fair search
// reads them.
func twoQueueLists(s *search, pol Policies, merged bool) []*list {
	if merged {
		l := new(list)
		s.addQueue(l, qa, pol.WithinQueue)
		s.addQueue(l, qb, pol.Reclaim)
		return []*list{l}
	}
	la, lb := new(list), new(list)
	s.addQueue(la, qa, pol.WithinQueue)
	s.addQueue(lb, qb, pol.Reclaim)
	return []*list{la, lb}
}

// indexedWorld is the small world of the index tests, in Kueue's order or
// allot's, with fairness debt, and an index of up to 70 random bookings
// inserted into it, which it returns too.
func indexedWorld(t *testing.T, rng *rand.Rand) (*World, Index, []*view.Booking) {
	w, _ := world(t, [3]int64{4, 4, 8}, false, nil)
	w.Cost.Resources = 2
	w.KueueOrder = rng.IntN(2) == 0
	w.Debt = []fairness.Debt{{Value: float64(rng.IntN(2)), At: 900}, {Value: float64(rng.IntN(2)), At: 950}}
	w.HalfLife = 100
	idx := NewIndex(w.Cost)
	var live []*view.Booking
	for i := range rng.IntN(70) {
		b := randomBooking(rng, i)
		if slices.ContainsFunc(live, func(o *view.Booking) bool { return o.ID == b.ID }) {
			continue
		}
		idx.Insert(b)
		live = append(live, b)
	}
	return w, idx, live
}

// randomBooking is an admitted workload of queue a or b with keys drawn
// to collide: few priorities (now and then the extremes), few sizes, times
// around the world's now (1000) so that some lose nothing yet, and now and
// then an admission so old that its lost work saturates.
func randomBooking(rng *rand.Rand, i int) *view.Booking {
	prios := []int32{-1, 0, 0, 1, 2, 5, 5, 6, math.MinInt32, math.MaxInt32}
	b := &view.Booking{ID: fmt.Sprintf("w%03d", rng.IntN(1000)*1000+i), Queue: int32(rng.IntN(2)),
		Priority:    prios[rng.IntN(len(prios))],
		SubmittedAt: int64(rng.IntN(10)), AdmittedAt: int64(990 + rng.IntN(15)),
		Pinned: rng.IntN(10) == 0}
	if rng.IntN(12) == 0 {
		b.AdmittedAt = math.MinInt64 / 2
	}
	if rng.IntN(3) == 0 {
		b.Checkpointable = true
		b.LastCheckpoint = b.AdmittedAt + int64(rng.IntN(20)) - 5
	}
	pods := int32(1 + rng.IntN(2))
	gpus := []int64{0, 1, 2, 8}[rng.IntN(4)]
	b.Sets = []view.Set{{Count: pods, Per: res.Vec{gpu: gpus, 1: int64(1 + rng.IntN(3))}}}
	for range pods {
		b.Pods = append(b.Pods, view.Pod{Node: -1})
	}
	return b
}

// TestListsMatchSort: the candidates a list reads lazily from the index,
// in order, are those a scan of every admitted workload accepts, sorted
// by Less (ID the last tie-break), on random sets of workloads with some
// deleted again, for each policy, either order and both searches' queue
// sets.
func TestListsMatchSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 17))
	policies := []Policy{Never, LowerPriority, LowerOrNewerEqualPriority, Any}
	for c := range 3000 {
		w, idx, live := indexedWorld(t, rng)
		w.Fair.Enabled = rng.IntN(2) == 0
		for range rng.IntN(1 + len(live)/3) {
			k := rng.IntN(len(live))
			if !idx.Delete(live[k]) {
				t.Fatalf("case %d: %s not deleted", c, live[k].ID)
			}
			live = slices.Delete(live, k, k+1)
		}
		if idx.Len() != len(live) {
			t.Fatalf("case %d: index holds %d, want %d", c, idx.Len(), len(live))
		}
		pol := Policies{WithinQueue: policies[rng.IntN(4)], Reclaim: policies[rng.IntN(4)]}
		prios := []int32{0, 1, 5, math.MinInt32, math.MaxInt32}
		p := Preemptor{Queue: qa, Policies: pol, Priority: prios[rng.IntN(len(prios))], SubmittedAt: int64(rng.IntN(10))}
		s := search{World: *w, Preemptor: p, idx: &idx, frs: []int{gpu}, lcas: make([]int32, 2), adv: []bool{false, rng.IntN(2) == 0}}
		s.lcas[qb] = 1
		lists := twoQueueLists(&s, pol, rng.IntN(2) == 0)
		var got []string
		for _, l := range lists {
			for i := 0; ; i++ {
				k, ok := s.at(l, i)
				if !ok {
					break
				}
				got = append(got, s.cands[k].ID+":"+s.cands[k].Variant.Reason())
			}
		}
		// The naive reference: every workload the policies accept, by
		// Less with IDRank its rank by ID, per queue for the fair search's
		// lists.
		byID := slices.Clone(live)
		slices.SortFunc(byID, func(x, y *view.Booking) int { return strings.Compare(x.ID, y.ID) })
		var keys []Candidate
		var accepted []Victim
		for rank, b := range byID {
			if v, ok := s.accept(b); ok {
				keys = append(keys, s.key(b, int32(len(accepted)), int32(rank)))
				accepted = append(accepted, v)
			}
		}
		slices.SortFunc(keys, func(x, y Candidate) int {
			if qx, qy := accepted[x.Index].Queue, accepted[y.Index].Queue; len(lists) == 2 && qx != qy {
				return int(qx - qy)
			}
			switch {
			case Less(&x, &y):
				return -1
			case Less(&y, &x):
				return 1
			}
			return 0
		})
		var want []string
		for _, k := range keys {
			v := accepted[k.Index]
			want = append(want, v.ID+":"+v.Variant.Reason())
		}
		if !slices.Equal(got, want) {
			t.Fatalf("case %d (kueue order %v, fair %v, policies %+v, priority %d):\n got %v\nwant %v",
				c, w.KueueOrder, w.Fair.Enabled, pol, p.Priority, got, want)
		}
	}
}
