package fairness

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

// naiveReserve is Reserve as plainly written: each leaving workload out of
// the quota and the state in turn, the quota checked and the placement
// tried after every one.
func naiveReserve(p *Planner, b *Blocked, held *topology.State, reserved []gang.Assignment) (int64, []gang.Assignment, bool) {
	m := p.View
	m.Usage, m.State, m.Reserved = m.Usage.Clone(), held.Fork(), reserved
	for i := range p.Leaving {
		l := &p.Leaving[i]
		m.Evict(l.B)
		if !fitsQuota(m.Tree, m.Usage, b) {
			continue
		}
		p.Placer.Reset(m.State)
		p.Placer.Final = true
		asg, _, placed := p.Placer.Place(b.Sets, nil)
		if placed {
			return max(l.End, p.Now), asg, true
		}
	}
	return 0, nil, false
}

// reserveWorld is a random cluster of 8-GPU nodes in racks of two to four,
// its running workloads of one to three pods of 1, 2, 4 or 8 GPUs placed
// first fit from a random node and leaving at random times, some of its
// GPUs reserved (free ones or busy ones, as a plan reserves GPUs that are
// busy until its start) on a held state, and a blocked workload of one or
// two pod sets, in a rack now and then, under a random nominal quota.
func reserveWorld(t *testing.T, rng *rand.Rand) (p *Planner, b *Blocked, held *topology.State, reserved []gang.Assignment) {
	t.Helper()
	const gpus = 8
	nodes := 4 + rng.IntN(9)
	perRack := 2 + rng.IntN(3)
	var specs []topology.NodeSpec
	for n := range nodes {
		specs = append(specs, topology.NodeSpec{Name: fmt.Sprintf("n%02d", n), Labels: []string{fmt.Sprintf("r%d", n/perRack)}, Capacity: res.Vec{gpus, 1000}})
	}
	top, err := topology.New([]string{"rack"}, 2, 0, 1, specs)
	if err != nil {
		t.Fatal(err)
	}
	nominal := int64(rng.IntN(nodes*gpus + 1))
	tr, err := quota.NewResourceTree(1, 2, []quota.NodeSpec{
		{Name: "q", Parent: -1, Queue: true, Quotas: []quota.ResourceQuota{{Nominal: nominal}, {Nominal: 1 << 40}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	st := topology.NewState(top, 0)
	u := tr.NewUsage()
	var ls []Leaving
	for i := range rng.IntN(4 * nodes) {
		g := []int{1, 2, 4, 8}[rng.IntN(4)]
		per := res.Vec{int64(g), 1}
		bk := &view.Booking{ID: fmt.Sprintf("w%03d", i), Queue: 0}
		count := 1 + rng.IntN(3)
		for range count {
			from := rng.IntN(nodes)
			for k := range nodes {
				n := int32((from + k) % nodes)
				free := st.FreeMask(n)
				if bits.OnesCount64(free) < g {
					continue
				}
				var mask uint64
				for j := 0; j < gpus && bits.OnesCount64(mask) < g; j++ {
					if free&(1<<j) != 0 {
						mask |= 1 << j
					}
				}
				st.Allocate(n, mask, per, 1)
				bk.Pods = append(bk.Pods, view.Pod{Node: n, GPUs: mask})
				break
			}
		}
		if len(bk.Pods) == 0 {
			continue
		}
		bk.Sets = []view.Set{{Flavor: 0, Count: int32(len(bk.Pods)), Per: per}}
		tr.AddVec(u, 0, 0, bk.Need(0, -1), 1)
		ls = append(ls, Leaving{End: int64(100 + rng.IntN(1000)), B: bk})
	}
	st.Flush()
	SortLeaving(ls)
	held = st
	if rng.IntN(2) == 0 {
		held = st.Fork()
		for n := range int32(nodes) {
			if rng.IntN(3) != 0 {
				continue
			}
			mask := uint64(rng.IntN(1 << gpus))
			if mask == 0 {
				continue
			}
			reserved = append(reserved, gang.Assignment{Node: n, GPUs: mask})
			held.BookPod(n, mask, 0, res.Vec{}, 0, 1)
		}
		held.Flush()
	}
	b = &Blocked{Queue: 0}
	total := int64(0)
	for range 1 + rng.IntN(2) {
		g := []int{1, 2, 4, 8}[rng.IntN(4)]
		ps := gang.PodSet{Flavor: 0, Count: int64(1 + rng.IntN(2*nodes)), GPUs: g, Res: res.Vec{int64(g), 1}}
		if rng.IntN(3) == 0 {
			ps.Mode, ps.Level = gang.Required, 1
		}
		b.Sets = append(b.Sets, ps)
		total += ps.Count * int64(g)
	}
	b.Charges = []Charge{{Flavor: 0, Need: res.Vec{total, 1}}}
	p = &Planner{View: view.Sim{Tree: tr, Usage: u, Tokens: -1, Nodes: view.NodeRes{0b11}}, Now: int64(rng.IntN(500)), Leaving: ls,
		Placer: new(gang.Placer), Base: st}
	return p, b, held, reserved
}

// TestReserveMatchesNaive: on random worlds (reserveWorld), Reserve, with
// its base and without, finds the start and the GPUs the plain loop finds
// (naiveReserve), and writes neither the usage nor the state it is given;
// a planner's second Reserve, on its base counted already, answers the
// same.
func TestReserveMatchesNaive(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	rng := rand.New(rand.NewPCG(2026, 41))
	found, late := 0, 0
	for c := range n {
		p, b, held, reserved := reserveWorld(t, rng)
		want := func() string {
			start, pods, ok := naiveReserve(p, b, held, reserved)
			return fmt.Sprint(start, pods, ok)
		}()
		usage, free := p.View.Usage.Clone(), held.FreeGPUs()
		unbounded := *p
		unbounded.Base = nil
		for _, run := range []struct {
			name string
			p    *Planner
		}{{"bounded", p}, {"unbounded", &unbounded}, {"bounded again", p}} {
			start, pods, ok := run.p.Reserve(b, held, reserved)
			if got := fmt.Sprint(start, pods, ok); got != want {
				t.Fatalf("case %d, %s: %s, the plain loop %s", c, run.name, got, want)
			}
			if !slices.EqualFunc(usage, p.View.Usage, func(a, b []int64) bool { return slices.Equal(a, b) }) || held.FreeGPUs() != free {
				t.Fatalf("case %d, %s: Reserve wrote the usage or the state it was given", c, run.name)
			}
			if ok && run.name == "bounded" {
				found++
				if start > p.Leaving[0].End && start > p.Now {
					late++
				}
			}
		}
	}
	t.Logf("%d worlds, %d reservations, %d after the first leaves", n, found, late)
	if found < n/5 || late < n/10 {
		t.Errorf("%d reservations, %d after the first leaves, of %d worlds: the test reaches too little", found, late, n)
	}
}
