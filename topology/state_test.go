package topology

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/res"
)

func testTopology(t *testing.T, rng *rand.Rand) *Topology {
	t.Helper()
	var specs []NodeSpec
	n := 5 + rng.IntN(60)
	for i := 0; i < n; i++ {
		gpus := []int{0, 2, 4, 8, 8, 16}[rng.IntN(6)]
		var groups []int
		if gpus == 8 && rng.IntN(2) == 0 {
			groups = []int{4, 4}
		}
		specs = append(specs, NodeSpec{
			Name:     fmt.Sprintf("n%02d", i),
			Flavor:   int32(rng.IntN(2)),
			Labels:   []string{fmt.Sprintf("b%d", rng.IntN(3)), fmt.Sprintf("r%d", rng.IntN(4))},
			Capacity: res.Vec{int64(gpus), 64_000},
			Groups:   groups,
			MaxPods:  int32(rng.IntN(3) * 4),
		})
	}
	top, err := New([]string{"block", "rack"}, 2, 0, 2, specs)
	if err != nil {
		t.Fatal(err)
	}
	return top
}

// checkAgainstRebuild compares every incrementally kept counter of s with a
// from-scratch recomputation of the same per-node state.
func checkAgainstRebuild(t *testing.T, s *State, step int) {
	t.Helper()
	fresh := s.Fork()
	fresh.Rebuild()
	top := s.T
	free := int64(0)
	for n := range top.NumNodes() {
		free += int64(popcount(s.FreeMask(int32(n))))
	}
	if free != s.FreeGPUs() {
		t.Fatalf("step %d: %d free GPUs counted, %d kept", step, free, s.FreeGPUs())
	}
	for d := range top.Domains {
		for g := 1; g <= top.G; g++ {
			if got, want := s.Fits(int32(d), g), fresh.Fits(int32(d), g); got != want {
				t.Fatalf("step %d domain %s level %d g=%d: fits %d, recomputed %d", step, top.Domains[d].Path, top.Domains[d].Level, g, got, want)
			}
		}
		if got, want := *s.Agg(int32(d)), *fresh.Agg(int32(d)); got != want {
			t.Fatalf("step %d domain %d: aggregates %+v, recomputed %+v", step, d, got, want)
		}
	}
	for f := range top.Flavors {
		if got, want := s.FlavorFree(int32(f)), fresh.FlavorFree(int32(f)); got != want {
			t.Fatalf("step %d flavor %d: free %v, recomputed %v", step, f, got, want)
		}
	}
}

func popcount(x uint64) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

// TestIncrementalCountersMatchRebuild applies long random sequences of
// allocations, releases, condition changes and clock moves, cloning between
// steps as the store does, and checks the counters against a rebuild.
func TestIncrementalCountersMatchRebuild(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		top := testTopology(t, rng)
		s := NewState(top, 0)
		type booking struct {
			n    int32
			gpus uint64
			r    res.Vec
		}
		var booked []booking
		now := int64(0)
		for step := 0; step < 400; step++ {
			switch x := rng.IntN(10); {
			case x < 5: // allocate a random pod where it fits
				n := int32(rng.IntN(top.NumNodes()))
				node := top.Node(n)
				g := rng.IntN(int(node.GPUs) + 1)
				mask := node.TakeGPUs(s.FreeMask(n), g)
				r := res.Vec{int64(g), int64(1000 * rng.IntN(8))}
				if g > 0 && mask == 0 || !r.LessEq(s.Node(n).Free) {
					continue
				}
				s.Allocate(n, mask, r, 1)
				booked = append(booked, booking{n, mask, r})
			case x < 8 && len(booked) > 0: // release one
				i := rng.IntN(len(booked))
				b := booked[i]
				s.Release(b.n, b.gpus, b.r, 1)
				booked = append(booked[:i], booked[i+1:]...)
			case x < 9: // node condition
				n := int32(rng.IntN(top.NumNodes()))
				s.SetCondition(n, rng.IntN(4) == 0, rng.IntN(5) == 0, now+int64(rng.IntN(3))*10)
			default: // time passes
				now += int64(rng.IntN(15))
				s.SetNow(now)
			}
			if step%7 == 0 {
				s.Flush()
				old := s
				s = new(State)
				old.CloneInto(s, cow.NewOwner(), cow.NewOwner())
				checkAgainstRebuild(t, old, step)
			}
		}
		s.Flush()
		checkAgainstRebuild(t, s, -1)
	}
}

func TestDomainsAreContiguous(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	top := testTopology(t, rng)
	for d, dom := range top.Domains {
		for n := dom.First; n < dom.End; n++ {
			if top.NodeDomains(int32(n))[dom.Level] != int32(d) {
				t.Fatalf("node %d inside domain %d says domain %d", n, d, top.NodeDomains(int32(n))[dom.Level])
			}
		}
		if dom.Level > 0 {
			p := top.Domains[dom.Parent]
			if dom.First < p.First || dom.End > p.End {
				t.Fatalf("domain %s outside its parent %s", dom.Path, p.Path)
			}
		}
	}
}

func TestGPUIslands(t *testing.T) {
	starts, islands, maxGroup, err := islandStarts([]int{4, 4}, 8)
	if err != nil {
		t.Fatal(err)
	}
	n := Node{GPUs: 8, Islands: islands, islandStarts: starts, MaxGroup: maxGroup}
	if got := n.Groups(nil); !slices.Equal(got, []uint64{0x0f, 0xf0}) || islands != 2 || maxGroup != 4 {
		t.Fatalf("islands of 4+4: %x (%d, largest %d)", got, islands, maxGroup)
	}
	odd, _, _, _ := islandStarts([]int{1, 2, 5}, 8)
	if got := (&Node{GPUs: 8, islandStarts: odd}).Groups(nil); !slices.Equal(got, []uint64{0b1, 0b110, 0b1111_1000}) {
		t.Fatalf("islands of 1+2+5: %b", got)
	}
	cases := []struct {
		free      uint64
		g         int
		fits      int
		take      uint64
		takeWhere string
	}{
		{0xff, 4, 2, 0x0f, "first island"},
		{0b1110_1110, 4, 0, 0, "3+3 holds no 4-GPU pod"},
		{0b1110_1110, 2, 2, 0b0000_0110, "the island with fewest free that fits, lowest first"},
		{0b1111_0010, 2, 2, 0b0011_0000, "1+4 free: the 1-GPU island cannot, the other can"},
		{0b1111_0111, 1, 7, 0b0000_0001, "a 1-GPU pod goes to the fuller island (3 free), not the empty one"},
		{0xff, 8, 1, 0xff, "a whole-node pod"},
		{0b0111_1111, 6, 1, 0b0011_1111, "larger than any island: anywhere on the node"},
	}
	for _, c := range cases {
		if got := n.GPUFits(c.free, c.g); got != c.fits {
			t.Errorf("%s: fits %d, want %d", c.takeWhere, got, c.fits)
		}
		if got := n.TakeGPUs(c.free, c.g); got != c.take {
			t.Errorf("%s: takes %08b, want %08b", c.takeWhere, got, c.take)
		}
	}
}

// TestFlavorFreeDoesNotOverflow keeps flavors whose nodes hold more than
// 2^64 of a resource in all: the free totals, kept change by change as
// nodes are booked, released, cordoned and brought back, match the exact
// sum clamped to MaxInt64 on every version, and a rebuild.
func TestFlavorFreeDoesNotOverflow(t *testing.T) {
	const big56 = int64(1) << 56
	var specs []NodeSpec
	for i := range 600 {
		specs = append(specs, NodeSpec{Name: fmt.Sprintf("n%03d", i), Flavor: int32(i % 2),
			Labels: []string{fmt.Sprintf("r%d", i%7)}, Capacity: res.Vec{1, big56}})
	}
	top, err := New([]string{"rack"}, 2, 0, 2, specs)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	s := NewState(top, 0)
	for step := range 3000 {
		n := int32(rng.IntN(top.NumNodes()))
		ns := s.Node(n)
		switch rng.IntN(3) {
		case 0: // book up to all of the node's cpu
			if ns.Free[1] > 0 {
				s.Allocate(n, 0, res.Vec{0, 1 + rng.Int64N(ns.Free[1])}, 0)
			}
		case 1: // give some back
			if held := big56 - ns.Free[1]; held > 0 {
				s.Release(n, 0, res.Vec{0, 1 + rng.Int64N(held)}, 0)
			}
		default:
			s.SetCondition(n, rng.IntN(2) == 0, false, 0)
		}
		if step%50 != 0 {
			continue
		}
		s.Flush()
		old := s
		s = new(State)
		old.CloneInto(s, cow.NewOwner(), cow.NewOwner())
		checkAgainstRebuild(t, old, step)
		for f := range top.Flavors {
			var want [2]*big.Int
			for r := range want {
				want[r] = new(big.Int)
			}
			for n := top.Flavors[f].First; n < top.Flavors[f].End; n++ {
				if ns := old.Node(n); ns.Usable(0) {
					for r := range want {
						want[r].Add(want[r], big.NewInt(ns.Free[r]))
					}
				}
			}
			got := old.FlavorFree(int32(f))
			for r := range want {
				w := int64(math.MaxInt64)
				if want[r].IsInt64() {
					w = want[r].Int64()
				}
				if got[r] != w {
					t.Fatalf("step %d flavor %d resource %d: free %d, want %d (exactly %v)", step, f, r, got[r], w, want[r])
				}
			}
		}
	}
}

// TestCopyEqualsNewState: a copy of a capacity state is the state NewState
// makes, counters and all, and writing it leaves the capacity as it was.
func TestCopyEqualsNewState(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 31))
	for range 20 {
		top := testTopology(t, rng)
		capacity := NewCapacity(top)
		got := capacity.Copy(40)
		want := NewState(top, 40)
		sameCounters(t, "copy", got, want)
		for n := range int32(top.NumNodes()) {
			if free := got.FreeMask(n); free != 0 {
				got.Allocate(n, free&-free, res.Vec{1, 0}, 1)
			}
		}
		got.Flush()
		checkAgainstRebuild(t, got, 0)
		sameCounters(t, "capacity after the copy's writes", capacity, NewCapacity(top))
	}
}

// TestLevelMaxOfNodes checks the capacity state's most pods of g GPUs one
// node holds against every node asked in turn.
func TestLevelMaxOfNodes(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		top := testTopology(t, rand.New(rand.NewPCG(seed, 5)))
		c := NewCapacity(top)
		for f, ft := range top.Flavors {
			for g := 1; g <= top.G; g++ {
				want := int32(0)
				for n := ft.First; n < ft.End; n++ {
					node := top.Node(n)
					want = max(want, int32(node.GPUFits(node.AllGPUs(), g)))
				}
				if got, ok := c.LevelMax(int32(f), top.NodeLevel(), g); !ok || got != want {
					t.Fatalf("seed %d flavor %d g=%d: level max %d (%v), want %d", seed, f, g, got, ok, want)
				}
			}
		}
	}
}

// TestDeferredCountsEqualIncremental books the same random pods,
// releases and conditions on two copies of a capacity state, one keeping
// its counters change by change and one deferring them to CountAll, and
// compares every node state, counter and fit index.
func TestDeferredCountsEqualIncremental(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 17))
		top := testTopology(t, rng)
		capacity := NewCapacity(top)
		kept, deferred := capacity.Copy(5), capacity.Copy(5)
		deferred.DeferCounts()
		type booking struct {
			n    int32
			gpus uint64
			r    res.Vec
		}
		var booked []booking
		for range 300 {
			switch x := rng.IntN(10); {
			case x < 6:
				n := int32(rng.IntN(top.NumNodes()))
				node := top.Node(n)
				g := rng.IntN(int(node.GPUs) + 1)
				mask := node.TakeGPUs(kept.FreeMask(n), g)
				r := res.Vec{int64(g), int64(1000 * rng.IntN(8))}
				if g > 0 && mask == 0 || !r.LessEq(kept.Node(n).Free) {
					continue
				}
				kept.Allocate(n, mask, r, 1)
				deferred.Allocate(n, mask, r, 1)
				booked = append(booked, booking{n, mask, r})
			case x < 8 && len(booked) > 0:
				i := rng.IntN(len(booked))
				b := booked[i]
				kept.Release(b.n, b.gpus, b.r, 1)
				deferred.Release(b.n, b.gpus, b.r, 1)
				booked = slices.Delete(booked, i, i+1)
			default:
				n := int32(rng.IntN(top.NumNodes()))
				cordoned, down, until := rng.IntN(4) == 0, rng.IntN(5) == 0, int64(rng.IntN(3))*5
				kept.SetCondition(n, cordoned, down, until)
				deferred.SetCondition(n, cordoned, down, until)
			}
		}
		deferred.CountAll()
		kept.Flush()
		deferred.Flush()
		sameCounters(t, fmt.Sprintf("seed %d", seed), deferred, kept)
		checkAgainstRebuild(t, deferred, -1)
		checkIndex(t, deferred, rng, -1)
	}
}
