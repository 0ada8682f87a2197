package gang_test

import (
	"math"
	"testing"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/topology"
)

// TestFragmentationShared checks FGD's measure with shared GPUs on one
// node of two shareable GPUs and one that is not, GPU 0 shared (700 held).
func TestFragmentationShared(t *testing.T) {
	topo, err := topology.New(nil, nRes, resGPU, 1, []topology.NodeSpec{
		{Name: "n", Capacity: res.Vec{resGPU: 3, resCPU: 8000}, Shareable: 0b011},
	})
	if err != nil {
		t.Fatal(err)
	}
	share := func(m int32) gang.Demand { return gang.Demand{Count: 1, Share: m, Flavors: 1} }
	whole := func(g int) gang.Demand {
		return gang.Demand{Count: 1, GPUs: g, Res: res.Vec{resGPU: int64(g)}, Flavors: 1}
	}
	cases := []struct {
		name string
		held uint64 // GPUs held whole besides GPU 0's share
		mix  []gang.Demand
		// stranded is the expected free GPU the mix cannot use.
		stranded, free, shared float64
		strandedNodes          int
	}{
		// GPU 1 takes either shape; a fraction of 500 cannot use GPU 0's
		// 300 nor GPU 2 (not shareable), a whole GPU not GPU 0's 300.
		{"both fit", 0, []gang.Demand{share(500), whole(1)}, (1.3 + 0.3) / 2, 2, 0.3, 0},
		// 200 fits GPU 0's rest: only GPU 2 is lost to it.
		{"a small fraction", 0, []gang.Demand{share(200)}, 1, 2, 0.3, 0},
		// Three whole GPUs fit nowhere: everything free is lost to them.
		{"too large", 0, []gang.Demand{whole(3)}, 2.3, 2, 0.3, 1},
		// Only GPU 0's rest is free: a fraction of 300 uses it all.
		{"the rest exactly", 0b110, []gang.Demand{share(300), whole(1)}, 0.3 / 2, 0, 0.3, 0},
	}
	for _, c := range cases {
		st := topology.NewState(topo, 0)
		st.AllocateShare(0, 0, 700, res.Vec{}, 1)
		if c.held != 0 {
			st.Allocate(0, c.held, res.Vec{resGPU: int64(popcount(c.held))}, 1)
		}
		st.Flush()
		f := gang.MeasureDemand(st, c.mix)
		if math.Abs(f.ExpectedStranded-c.stranded) > 1e-9 || float64(f.FreeGPUs) != c.free || math.Abs(f.SharedFree-c.shared) > 1e-9 ||
			f.StrandedNodes != c.strandedNodes {
			t.Errorf("%s: %+v, want stranded %v, free %v + %v shared, %d nodes stranded", c.name, f, c.stranded, c.free, c.shared, c.strandedNodes)
		}
		if all := c.free + c.shared; math.Abs(f.StrandedShare-c.stranded/all) > 1e-9 {
			t.Errorf("%s: share %v, want %v", c.name, f.StrandedShare, c.stranded/all)
		}
	}
}

func popcount(m uint64) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}
