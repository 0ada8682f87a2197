package gang_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/topology"
)

// fragmented builds a random cluster of 8-GPU nodes in racks and blocks,
// some racks larger than others, with GPUs booked at random, a few nodes
// cordoned and, on some clusters, a few nodes short of CPU (where the
// counters are not exact and the index must not answer).
func fragmented(t *testing.T, rng *rand.Rand) *topology.State {
	t.Helper()
	var specs []topology.NodeSpec
	racks := 120 + rng.IntN(100) // about as many as a level needs for an index
	for r := range racks {
		for i := range 1 + rng.IntN(16) {
			specs = append(specs, topology.NodeSpec{Name: fmt.Sprintf("r%03d-n%02d", r, i),
				Labels:   []string{fmt.Sprintf("b%d", r/(1+rng.IntN(8))), fmt.Sprintf("r%03d", r)},
				Capacity: res.Vec{8, 192_000}, MaxPods: int32(rng.IntN(2) * 110)})
		}
	}
	top, err := topology.New([]string{"block", "rack"}, 2, 0, 1, specs)
	if err != nil {
		t.Fatal(err)
	}
	st := topology.NewState(top, 0)
	short := rng.IntN(3) == 0
	for n := range top.NumNodes() {
		switch x := rng.IntN(10); {
		case x < 5:
		case x < 7:
			st.Allocate(int32(n), 0xff, res.Vec{8, 4_000}, 1)
		case x < 8:
			st.SetCondition(int32(n), true, false, 0)
		default:
			used := 1 + rng.IntN(7)
			cpu := int64(4_000)
			if short && rng.IntN(4) == 0 {
				cpu = 190_000
			}
			st.Allocate(int32(n), uint64(1)<<used-1, res.Vec{int64(used), cpu}, 1)
		}
	}
	st.Flush()
	return st
}

func randomPodSet(rng *rand.Rand) gang.PodSet {
	g := []int{1, 2, 4, 8}[rng.IntN(4)]
	ps := gang.PodSet{Count: 1 + rng.Int64N(int64([]int{4, 16, 64, 300}[rng.IntN(4)])), GPUs: g,
		Res: res.Vec{int64(g), int64(4_000 * g)}, Level: 1 + rng.IntN(2), Policy: gang.Pack}
	switch rng.IntN(3) {
	case 0:
		ps.Mode = gang.Required
	default:
		ps.Mode = gang.Preferred
	}
	return ps
}

type placed struct {
	asg  []gang.Assignment
	fail gang.Failure
	ok   bool
	feas bool
}

func placeAll(st *topology.State, sets []gang.PodSet) placed {
	var p gang.Placer
	p.Reset(st)
	var r placed
	r.feas = p.Feasible(sets)
	r.asg, r.fail, r.ok = p.Place(sets, nil)
	return r
}

// TestIndexedSearchMatchesScan places random requests of one to three pod
// sets, required or preferred at a block or a rack, on random fragmented
// clusters, once through the fit index and once scanning every domain of
// each level (the naive reference), and asks for the same answer: the same
// pods on the same nodes and GPUs, or the same failure.
func TestIndexedSearchMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 5))
	indexed := 0
	defer func() {
		if indexed == 0 {
			t.Error("no cluster had a rack index: the test compared the scan with itself")
		}
	}()
	for c := range 60 {
		st := fragmented(t, rng)
		if st.Indexed(0, 2, 8) {
			indexed++
		}
		for range 8 {
			sets := make([]gang.PodSet, 1+rng.IntN(3))
			for i := range sets {
				sets[i] = randomPodSet(rng)
			}
			got := placeAll(st, sets)
			restore := gang.ScanLevels()
			want := placeAll(st, sets)
			restore()
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("cluster %d, %+v:\nindexed %+v\nscanned %+v", c, sets, got, want)
			}
		}
	}
}
