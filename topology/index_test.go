package topology

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

// checkIndex compares every answer of the fit index with a scan of the
// level's fits (the naive reference), for every need and a random set of
// domains to skip.
func checkIndex(t *testing.T, s *State, rng *rand.Rand, step int) {
	t.Helper()
	top := s.T
	for f := range top.Flavors {
		for l := 1; l <= len(top.Levels); l++ {
			for g := 1; g <= top.G; g++ {
				if !s.Indexed(int32(f), l, g) {
					continue
				}
				rg := top.Flavors[f].Levels[l]
				skipped := map[int32]bool{}
				for range rng.IntN(3) {
					skipped[rg[0]+rng.Int32N(rg[1]-rg[0])] = true
				}
				skip := func(d int32) bool { return skipped[d] }
				if rng.IntN(2) == 0 {
					skip, skipped = nil, map[int32]bool{}
				}
				most := int64(0)
				for d := rg[0]; d < rg[1]; d++ {
					if !skipped[d] {
						most = max(most, int64(s.Fits(d, g)))
					}
				}
				var order []int32
				for d := rg[0]; d < rg[1]; d++ {
					if s.Fits(d, g) > 0 {
						order = append(order, d)
					}
				}
				slices.SortStableFunc(order, func(a, b int32) int { return int(s.Fits(b, g)) - int(s.Fits(a, g)) })
				var got []int32
				for d, c := range s.Descending(int32(f), l, g) {
					if c != int64(s.Fits(d, g)) {
						t.Fatalf("step %d: descending gives domain %d %d pods, fits %d", step, d, c, s.Fits(d, g))
					}
					got = append(got, d)
				}
				if !slices.Equal(got, order) {
					t.Fatalf("step %d flavor %d level %d g=%d: descending %v, sorted scan %v", step, f, l, g, got, order)
				}
				if got := s.Largest(int32(f), l, g, skip); got != most {
					t.Fatalf("step %d flavor %d level %d g=%d: largest %d, scan %d", step, f, l, g, got, most)
				}
				for need := int64(1); need <= most+1; need++ {
					want, wantC := int32(-1), int64(0)
					for d := rg[0]; d < rg[1]; d++ {
						if c := int64(s.Fits(d, g)); !skipped[d] && c >= need && (want < 0 || c < wantC) {
							want, wantC = d, c
						}
					}
					d, c, ok := s.Tightest(int32(f), l, g, need, skip)
					if !ok {
						d = -1
					}
					if d != want || (ok && c != wantC) {
						t.Fatalf("step %d flavor %d level %d g=%d need %d: tightest %d (%d), scan %d (%d)", step, f, l, g, need, d, c, want, wantC)
					}
				}
			}
		}
	}
}

// TestFitIndexMatchesScan books and frees GPUs at random, cordons and
// cools nodes down, and after every step asks the fit index what a scan of
// the fits answers, on small random clusters and on one with thousands of
// racks (several words in every summary).
func TestFitIndexMatchesScan(t *testing.T) {
	defer func(m int32) { indexMinDomains = m }(indexMinDomains)
	indexMinDomains = 2
	rng := rand.New(rand.NewPCG(3, 17))
	tops := []*Topology{}
	for range 8 {
		tops = append(tops, testTopology(t, rng))
	}
	var specs []NodeSpec
	for i := range 4500 {
		specs = append(specs, NodeSpec{Name: fmt.Sprintf("n%05d", i), Labels: []string{fmt.Sprintf("b%d", i/700), fmt.Sprintf("r%05d", i)},
			Capacity: res.Vec{2, 64_000}})
	}
	wide, err := New([]string{"block", "rack"}, 2, 0, 1, specs)
	if err != nil {
		t.Fatal(err)
	}
	tops = append(tops, wide)
	for ti, top := range tops {
		s := NewState(top, 0)
		s.Flush()
		steps := 60
		if ti == len(tops)-1 {
			steps = 6
		}
		now := int64(0)
		indexed := false
		for f := range top.Flavors {
			indexed = indexed || s.Indexed(int32(f), len(top.Levels), 1)
		}
		if !indexed && top.NumNodes() > 40 {
			t.Fatalf("topology %d: no index on its racks", ti)
		}
		for step := range steps {
			for range 1 + rng.IntN(top.NumNodes()/4+1) {
				n := rng.Int32N(int32(top.NumNodes()))
				node := top.Node(n)
				switch free := s.FreeMask(n); rng.IntN(5) {
				case 0, 1:
					if free != 0 {
						m := free & -free
						s.Allocate(n, m, res.Vec{1, 1000}, 1)
					}
				case 2:
					if taken := node.AllGPUs() &^ free; taken != 0 {
						m := taken & -taken
						s.Release(n, m, res.Vec{1, 1000}, 1)
					}
				case 3:
					ns := s.Node(n)
					s.SetCondition(n, !ns.Cordoned, ns.Down, ns.CooldownUntil)
				case 4:
					s.SetCondition(n, false, false, now+int64(rng.IntN(3)))
					now += int64(rng.IntN(2))
					s.SetNow(now)
				}
			}
			s.Flush()
			checkAgainstRebuild(t, s, step)
			checkIndex(t, s, rng, step)
			// A version forked from this one keeps its own index.
			if step%7 == 0 {
				c := s.Fork()
				c.Rebuild()
				if c.Indexed(0, len(top.Levels), 1) {
					t.Fatal("a rebuilt state keeps an index before its Flush")
				}
				c.Flush()
				checkIndex(t, c, rng, step)
			}
		}
	}
}
