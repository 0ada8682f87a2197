package fairness

import (
	"slices"
	"testing"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

func TestEndOf(t *testing.T) {
	for _, c := range []struct {
		admitted, runtime, end int64
		ok                     bool
	}{{100, 50, 150, true}, {0, 1, 1, true}, {100, 0, 0, false}, {100, -5, 0, false}} {
		if end, ok := EndOf(c.admitted, c.runtime); end != c.end || ok != c.ok {
			t.Errorf("EndOf(%d, %d) = %d, %v; want %d, %v", c.admitted, c.runtime, end, ok, c.end, c.ok)
		}
	}
}

func TestSortLeaving(t *testing.T) {
	b := func(id string) *view.Booking { return &view.Booking{ID: id} }
	ls := []Leaving{{End: 300, B: b("a")}, {End: 100, B: b("z")}, {End: 200, B: b("c")}, {End: 100, B: b("b")}}
	SortLeaving(ls)
	var got []string
	for _, l := range ls {
		got = append(got, l.B.ID)
	}
	if want := []string{"b", "z", "c", "a"}; !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
}

func TestAddReservedAndOverlaps(t *testing.T) {
	a := func(n int32, gpus uint64) gang.Assignment { return gang.Assignment{Node: n, GPUs: gpus} }
	reserved := make([]gang.Assignment, 0, 8)
	reserved = AddReserved(reserved, []gang.Assignment{a(1, 0b0011), a(4, 0b1000)})
	got := AddReserved(reserved, []gang.Assignment{a(4, 0b0001), a(0, 0b1111), a(2, 0b0100), a(2, 0b0010)})
	if want := []gang.Assignment{a(0, 0b1111), a(1, 0b0011), a(2, 0b0110), a(4, 0b1001)}; !slices.Equal(got, want) {
		t.Fatalf("reserved %v, want %v", got, want)
	}
	if &got[0] != &reserved[0] {
		t.Fatal("reservations with room were not added in place")
	}
	for _, c := range []struct {
		name      string
		asg, pods []gang.Assignment
		want      bool
	}{
		{"same GPU", []gang.Assignment{a(3, 0b0100)}, []gang.Assignment{a(1, 0b0100), a(3, 0b0110)}, true},
		{"other GPUs of the node", []gang.Assignment{a(3, 0b1001)}, []gang.Assignment{a(3, 0b0110)}, false},
		{"other node", []gang.Assignment{a(2, 0b0110)}, []gang.Assignment{a(3, 0b0110)}, false},
		{"nothing reserved", []gang.Assignment{a(2, 0b0110)}, nil, false},
	} {
		if got := Overlaps(c.asg, c.pods); got != c.want {
			t.Errorf("%s: Overlaps = %v, want %v", c.name, got, c.want)
		}
	}
}

// backfillWorld is a small cluster of one flavor (gpu, cpu): nodes n0 and
// n1 in rack r0, n2 in rack r1, 4 GPUs each, every GPU taken by one
// running workload per node, expected to end at 100 (n0), 200 (n1) and
// 300 (n2), all in one queue of nominal gpu quota nominal.
func backfillWorld(t *testing.T, nominal int64) (*quota.ResourceTree, quota.Usage, *topology.State, []Leaving) {
	t.Helper()
	tr, err := quota.NewResourceTree(1, 2, []quota.NodeSpec{
		{Name: "q", Parent: -1, Queue: true, Quotas: []quota.ResourceQuota{{Nominal: nominal}, {Nominal: 1000}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var specs []topology.NodeSpec
	for i, rack := range []string{"r0", "r0", "r1"} {
		specs = append(specs, topology.NodeSpec{Name: []string{"n0", "n1", "n2"}[i], Labels: []string{rack}, Capacity: res.Vec{4, 64}})
	}
	top, err := topology.New([]string{"rack"}, 2, 0, 1, specs)
	if err != nil {
		t.Fatal(err)
	}
	st := topology.NewState(top, 0)
	u := tr.NewUsage()
	per := res.Vec{4, 8}
	var ls []Leaving
	// Listed last to first: the plan follows SortLeaving's order.
	for n := int32(2); n >= 0; n-- {
		st.Allocate(n, 0b1111, per, 1)
		tr.AddVec(u, 0, 0, per, 1)
		ls = append(ls, Leaving{End: 100 * int64(n+1), B: &view.Booking{ID: []string{"a", "b", "c"}[n], Queue: 0,
			Sets: []view.Set{{Flavor: 0, Count: 1, Per: per}}, Pods: []view.Pod{{Node: n, GPUs: 0b1111}}}})
	}
	st.Flush()
	SortLeaving(ls)
	return tr, u, st, ls
}

func TestPlannerReserve(t *testing.T) {
	pods := func(count int64, level int) []gang.PodSet {
		ps := gang.PodSet{Flavor: 0, Count: count, GPUs: 4, Res: res.Vec{4, 8}}
		if level > 0 {
			ps.Mode, ps.Level = gang.Required, level
		}
		return []gang.PodSet{ps}
	}
	at := func(nodes ...int32) []gang.Assignment {
		var out []gang.Assignment
		for _, n := range nodes {
			out = append(out, gang.Assignment{Node: n, GPUs: 0b1111})
		}
		return out
	}
	for _, c := range []struct {
		name     string
		nominal  int64
		now      int64
		sets     []gang.PodSet
		need     int64
		reserved []gang.Assignment
		start    int64
		pods     []gang.Assignment
		ok       bool
	}{
		{name: "first to leave", nominal: 12, now: 50, sets: pods(1, 0), need: 4, start: 100, pods: at(0), ok: true},
		{name: "no earlier than now", nominal: 12, now: 150, sets: pods(1, 0), need: 4, start: 150, pods: at(0), ok: true},
		{name: "a rack of two", nominal: 12, now: 50, sets: pods(2, 1), need: 8, start: 200, pods: at(0, 1), ok: true},
		{name: "reserved GPUs stay taken", nominal: 12, now: 50, sets: pods(1, 0), need: 4, reserved: at(0), start: 200, pods: at(1), ok: true},
		// The queue uses 12 of 8: room for 4 once 8 have left, though
		// n0 is free before.
		{name: "quota first", nominal: 8, now: 50, sets: pods(1, 0), need: 4, start: 200, pods: at(0), ok: true},
		{name: "never", nominal: 12, now: 50, sets: pods(4, 0), need: 16},
	} {
		tr, u, st, ls := backfillWorld(t, c.nominal)
		before := st.FreeGPUs()
		p := Planner{View: view.Sim{Tree: tr, Usage: u, Tokens: -1, Nodes: view.NodeRes{0b11}}, Now: c.now, Leaving: ls, Placer: new(gang.Placer)}
		start, got, ok := p.Reserve(&Blocked{Queue: 0, Charges: []Charge{{Flavor: 0, Need: res.Vec{c.need, 2 * c.need}}}, Sets: c.sets}, st, c.reserved)
		if ok != c.ok || start != c.start || !slices.Equal(got, c.pods) {
			t.Errorf("%s: start %d on %v (%v), want %d on %v (%v)", c.name, start, got, ok, c.start, c.pods, c.ok)
		}
		if u.At(0, tr.FR(0, 0)) != 12 || st.FreeGPUs() != before {
			t.Errorf("%s: the plan changed the usage or the state it was given", c.name)
		}
		if ok && len(p.Scratch) > 0 && &p.Scratch[0] == &got[0] {
			t.Errorf("%s: the reservation shares the placer's scratch", c.name)
		}
	}
}
