package gang_test

// A property test of fractional placement against a naive reference:
// small random clusters of shareable GPUs, some of them shared or held
// whole already, and one fractional pod set.

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/topology"
)

// shareCase is a generated state with its description.
type shareCase struct {
	st   *topology.State
	desc string
}

// genShareCase makes 1..6 nodes of 1..8 GPUs, islands now and then, a
// random set of them shareable; some GPUs held whole, some shared by
// fractional pods already, cpu booked, a node cordoned now and then.
func genShareCase(t *testing.T, rng *rand.Rand) shareCase {
	t.Helper()
	n := 1 + rng.IntN(6)
	specs := make([]topology.NodeSpec, n)
	for i := range specs {
		gpus := 1 + rng.IntN(8)
		var groups []int
		if gpus >= 2 && rng.IntN(3) == 0 {
			groups = []int{gpus / 2, gpus - gpus/2}
		}
		specs[i] = topology.NodeSpec{Name: fmt.Sprintf("n%d", i), Labels: []string{fmt.Sprintf("r%d", rng.IntN(2))},
			Capacity: res.Vec{resGPU: int64(gpus), resCPU: int64(2+rng.IntN(8)) * 1000}, Groups: groups,
			Shareable: rng.Uint64() & (1<<gpus - 1)}
	}
	topo, err := topology.New([]string{"rack"}, nRes, resGPU, 1, specs)
	if err != nil {
		t.Fatal(err)
	}
	st := topology.NewState(topo, propNow)
	desc := ""
	for i := range topo.NumNodes() {
		node := topo.Node(int32(i))
		for gi := range int(node.GPUs) {
			switch rng.IntN(4) {
			case 0:
				st.Allocate(int32(i), 1<<gi, res.Vec{resGPU: 1}, 1)
			case 1:
				for range 1 + rng.IntN(3) {
					if m := int32(1 + rng.IntN(600)); st.ShareRoom(int32(i), gi) >= m {
						st.AllocateShare(int32(i), gi, m, res.Vec{}, 1)
					}
				}
			}
		}
		if rng.IntN(3) == 0 {
			st.Allocate(int32(i), 0, res.Vec{resCPU: st.Node(int32(i)).Free[resCPU] / 2}, 0)
		}
		if rng.IntN(10) == 0 {
			st.SetCondition(int32(i), true, false, 0)
		}
	}
	st.Flush()
	for i := range topo.NumNodes() {
		node, ns := topo.Node(int32(i)), st.Node(int32(i))
		desc += fmt.Sprintf("  %s gpus=%d groups=%v shareable=%0*b free=%0*b cpu=%d cordoned=%v held=", topo.NodeName(int32(i)), node.GPUs,
			node.Groups(nil), node.GPUs, node.Shareable, node.GPUs, ns.FreeGPUs, ns.Free[resCPU], ns.Cordoned)
		for gi := range int(node.GPUs) {
			desc += fmt.Sprintf("%d ", st.ShareHeld(int32(i), gi))
		}
		desc += "\n"
	}
	return shareCase{st: st, desc: desc}
}

// refShareRoom restates the room rule from the state's parts: a shared
// GPU's rest, a whole free shareable GPU's thousand, else none.
func refShareRoom(st *topology.State, n int32, gi int) int32 {
	node := st.T.Node(n)
	if node.Shareable&(1<<gi) == 0 {
		return 0
	}
	if h := st.ShareHeld(n, gi); h > 0 {
		return topology.MilliGPU - h
	}
	if st.FreeMask(n)&(1<<gi) != 0 {
		return topology.MilliGPU
	}
	return 0
}

// refFits is how many pods of share thousandths and cpu node n holds.
func refFits(st *topology.State, n int32, share int32, cpu int64) int64 {
	ns := st.Node(n)
	if ns.Cordoned || ns.Down || ns.CooldownUntil > st.Now() {
		return 0
	}
	c := int64(0)
	for gi := range int(st.T.Node(n).GPUs) {
		c += int64(refShareRoom(st, n, gi) / share)
	}
	if cpu > 0 {
		c = min(c, ns.Free[resCPU]/cpu)
	}
	return c
}

// refOne is where the reference puts one fractional pod: of every
// (node, GPU) that holds it, the shared GPU it leaves least room on, ties
// by node then GPU; with none, a whole free shareable GPU on the node with
// the fewest of them, ties by node, inside the island with the fewest
// such GPUs, the lowest. With avoid (PodSet.AvoidStranding) only the
// nodes that strand the fewest thousandths are looked at: those their
// GPUs hold pods of share for and cpu does not.
func refOne(st *topology.State, share int32, cpu int64, avoid bool) (int32, int, bool) {
	stranded := func(n int32) int64 { return (refFits(st, n, share, 0) - refFits(st, n, share, cpu)) * int64(share) }
	least := int64(1 << 62)
	for n := range int32(st.T.NumNodes()) {
		if refFits(st, n, share, cpu) > 0 {
			least = min(least, stranded(n))
		}
	}
	bestN, bestG, bestLeft := int32(-1), -1, int32(1<<30)
	for n := range int32(st.T.NumNodes()) {
		if refFits(st, n, share, cpu) == 0 || (avoid && stranded(n) != least) {
			continue
		}
		for gi := range int(st.T.Node(n).GPUs) {
			if h := st.ShareHeld(n, gi); h > 0 && refShareRoom(st, n, gi) >= share && refShareRoom(st, n, gi)-share < bestLeft {
				bestN, bestG, bestLeft = n, gi, refShareRoom(st, n, gi)-share
			}
		}
	}
	if bestN >= 0 {
		return bestN, bestG, true
	}
	bestWhole := 1 << 30
	for n := range int32(st.T.NumNodes()) {
		if refFits(st, n, share, cpu) == 0 || (avoid && stranded(n) != least) {
			continue
		}
		whole := 0
		for gi := range int(st.T.Node(n).GPUs) {
			if refShareRoom(st, n, gi) == topology.MilliGPU {
				whole++
			}
		}
		if whole > 0 && whole < bestWhole {
			bestN, bestWhole = n, whole
		}
	}
	if bestN < 0 {
		return 0, 0, false
	}
	node := st.T.Node(bestN)
	bestIsland := 1 << 30
	for _, isl := range node.Groups(nil) {
		k := 0
		first := -1
		for gi := range int(node.GPUs) {
			if isl&(1<<gi) != 0 && refShareRoom(st, bestN, gi) == topology.MilliGPU {
				k++
				if first < 0 {
					first = gi
				}
			}
		}
		if k > 0 && k < bestIsland {
			bestIsland, bestG = k, first
		}
	}
	return bestN, bestG, true
}

func TestSharePlacementAgainstReference(t *testing.T) {
	seeds := 3000
	if testing.Short() {
		seeds = 300
	}
	var p gang.Placer
	apart := 0 // one pod placed apart from Kueue's rule by AvoidStranding
	defer func() {
		t.Logf("AvoidStranding placed %d pods apart from the best fit alone", apart)
		if apart < 20 {
			t.Errorf("AvoidStranding placed only %d pods apart from the best fit alone: the generator hardly strands GPUs", apart)
		}
	}()
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		c := genShareCase(t, rng)
		share := int32(1 + rng.IntN(999))
		var cpu int64
		if rng.IntN(2) == 0 {
			cpu = int64(1+rng.IntN(4)) * 500
		}
		ps := gang.PodSet{Flavor: 0, Count: 1, Share: share, Res: res.Vec{resCPU: cpu}, Mode: gang.Unconstrained, Policy: gang.Pack,
			AvoidStranding: seed%2 == 0}

		// One pod: exactly the reference's GPU.
		p.Reset(c.st)
		out, _, ok := p.Place([]gang.PodSet{ps}, nil)
		wn, wg, wok := refOne(c.st, share, cpu, ps.AvoidStranding)
		if ps.AvoidStranding {
			if kn, kg, _ := refOne(c.st, share, cpu, false); kn != wn || kg != wg {
				apart++
			}
		}
		switch {
		case ok != wok:
			t.Fatalf("seed %d: share %d cpu %d: placed %v, reference %v\n%s", seed, share, cpu, ok, wok, c.desc)
		case ok && (out[0].Node != wn || out[0].GPUs != 1<<wg || out[0].Share != share):
			t.Fatalf("seed %d: share %d cpu %d: placed %+v, reference node %d GPU %d\n%s", seed, share, cpu, out[0], wn, wg, c.desc)
		}

		// As many pods as the cluster holds: all placed, each on one GPU
		// with room for it; one more: none.
		total := int64(0)
		for n := range int32(c.st.T.NumNodes()) {
			total += refFits(c.st, n, share, cpu)
		}
		if total == 0 {
			continue
		}
		ps.Count = total
		p.Reset(c.st)
		out, _, ok = p.Place([]gang.PodSet{ps}, nil)
		if !ok || int64(len(out)) != total {
			t.Fatalf("seed %d: %d pods of %d fit by the reference, placed %v (%d)\n%s", seed, total, share, ok, len(out), c.desc)
		}
		st := c.st.Fork()
		for _, a := range out {
			gi := bits.TrailingZeros64(a.GPUs)
			if bits.OnesCount64(a.GPUs) != 1 || st.ShareRoom(a.Node, gi) < share {
				t.Fatalf("seed %d: pod on node %d GPUs %b, room %d for %d\n%s", seed, a.Node, a.GPUs, st.ShareRoom(a.Node, gi), share, c.desc)
			}
			st.AllocateShare(a.Node, gi, share, res.Vec{resCPU: cpu}, 1)
		}
		ps.Count = total + 1
		p.Reset(c.st)
		if _, _, ok := p.Place([]gang.PodSet{ps}, nil); ok {
			t.Fatalf("seed %d: %d pods of %d placed, the reference holds %d\n%s", seed, total+1, share, total, c.desc)
		}

		// The same pods as two pod sets of one request: the second sees
		// what the first took, GPU by GPU.
		first := ps
		first.Count = 1 + rng.Int64N(total)
		second := ps
		second.Count = total - first.Count + 1
		p.Reset(c.st)
		if out, _, ok := p.Place([]gang.PodSet{first, second}, nil); ok {
			t.Fatalf("seed %d: %d+%d pods of %d placed, the reference holds %d: %+v\n%s", seed, first.Count, second.Count, share, total, out, c.desc)
		}
		if second.Count--; second.Count > 0 {
			p.Reset(c.st)
			if _, _, ok := p.Place([]gang.PodSet{first, second}, nil); !ok {
				t.Fatalf("seed %d: %d+%d pods of %d not placed, the reference holds %d\n%s", seed, first.Count, second.Count, share, total, c.desc)
			}
		}

		// A whole-GPU pod set after the fractions in one request never
		// takes a GPU they share.
		p.Reset(c.st)
		ps.Count = 1
		whole := gang.PodSet{Flavor: 0, Count: 1, GPUs: 1, Res: res.Vec{resGPU: 1}, Mode: gang.Unconstrained, Policy: gang.Pack}
		if out, _, ok := p.Place([]gang.PodSet{ps, whole}, nil); ok && out[1].Node == out[0].Node && out[1].GPUs&out[0].GPUs != 0 {
			t.Fatalf("seed %d: a whole-GPU pod on the GPU a fraction of its request shares: %+v\n%s", seed, out, c.desc)
		}
	}
}
