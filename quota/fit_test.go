package quota

import (
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

// fitTree is one flavor of two resources (0 and 1): cohort 0 holds queues
// a (1) and b (2), 4 and 10 of nominal quota each, and, with a borrowing
// limit of 1, queue c (3) with none; queue solo (4) stands alone with an
// Unlimited nominal quota.
func fitTree(t *testing.T) *ResourceTree {
	q := func(nominal ...int64) []ResourceQuota {
		out := make([]ResourceQuota, len(nominal))
		for i, v := range nominal {
			out[i] = ResourceQuota{Nominal: v}
		}
		return out
	}
	return mustTree(t, 1, 2, []NodeSpec{
		{Name: "cohort", Parent: -1},
		{Name: "a", Parent: 0, Queue: true, Quotas: q(4, 10)},
		{Name: "b", Parent: 0, Queue: true, Quotas: q(4, 10)},
		{Name: "c", Parent: 0, Queue: true, Quotas: []ResourceQuota{{BorrowingLimit: lim(1)}, {}}},
		{Name: "solo", Parent: -1, Queue: true, Quotas: q(Unlimited, Unlimited)},
	})
}

func TestFit(t *testing.T) {
	tr := fitTree(t)
	// fq is queue a's flavor quota: both resources covered, nominal as in
	// the tree, then changed per case.
	fq := func(change func(*FlavorQuota)) *FlavorQuota {
		f := &FlavorQuota{Covered: 0b11, Nominal: res.Vec{4, 10}, Ever: res.Vec{4, 10}}
		if change != nil {
			change(f)
		}
		return f
	}
	hard := func(r int, v int64) func(*FlavorQuota) {
		return func(f *FlavorQuota) { f.Hard[r], f.HardMask = v, f.HardMask|1<<r }
	}
	used := func(vs map[int32]res.Vec) Usage {
		u := tr.NewUsage()
		for q, v := range vs {
			tr.AddVec(u, q, 0, v, 1)
		}
		return u
	}
	cases := []struct {
		name          string
		q             int32
		fq            *FlavorQuota
		u             map[int32]res.Vec
		earlier, need res.Vec
		zeros         uint16
		want          FitResult
	}{
		{name: "within nominal", q: 1, fq: fq(nil), need: res.Vec{2, 1},
			want: FitResult{Verdict: Fit, Res: -1}},
		{name: "a resource not asked for is not checked", q: 1, fq: fq(func(f *FlavorQuota) { f.Covered = 0b01 }), need: res.Vec{2},
			want: FitResult{Verdict: Fit, Res: -1}},
		{name: "uncovered", q: 1, fq: fq(func(f *FlavorQuota) { f.Covered = 0b01 }), need: res.Vec{1, 1},
			want: FitResult{Verdict: NoFitEver, Reason: Uncovered, Res: 1, Need: 1}},
		{name: "over the hard cap alone", q: 1, fq: fq(hard(0, 3)), need: res.Vec{4},
			want: FitResult{Verdict: NoFitEver, Reason: OverHardCap, Res: 0, Need: 4, Limit: 3}},
		{name: "earlier pod sets count", q: 1, fq: fq(hard(0, 3)), earlier: res.Vec{2}, need: res.Vec{2},
			want: FitResult{Verdict: NoFitEver, Reason: OverHardCap, Res: 0, Need: 4, Limit: 3}},
		{name: "over MaxQuantity alone", q: 4, fq: fq(nil), need: res.Vec{MaxQuantity + 1},
			want: FitResult{Verdict: NoFitEver, Reason: OverHardCap, Res: 0, Need: MaxQuantity + 1, Limit: MaxQuantity}},
		{name: "beyond what the tree could ever give", q: 1, fq: fq(nil), need: res.Vec{9},
			want: FitResult{Verdict: NoFitEver, Reason: BeyondReach, Res: 0, Need: 9, Limit: 8}},
		{name: "beyond reach under a borrowing limit", q: 3, fq: fq(func(f *FlavorQuota) { f.Nominal, f.Ever = res.Vec{}, res.Vec{} }), need: res.Vec{2},
			want: FitResult{Verdict: NoFitEver, Reason: BeyondReach, Res: 0, Need: 2, Limit: 1}},
		{name: "a larger quota later in the day may fit", q: 1, fq: fq(func(f *FlavorQuota) { f.Ever[0] = 6 }), need: res.Vec{9},
			want: FitResult{Verdict: NoFitNow, Reason: Exhausted, Res: 0, Need: 9, Limit: 4, Avail: 8}},
		{name: "never comes before now", q: 1, fq: fq(hard(1, 5)), u: map[int32]res.Vec{2: {8}}, need: res.Vec{1, 6},
			want: FitResult{Verdict: NoFitEver, Reason: OverHardCap, Res: 1, Need: 6, Limit: 5}},
		{name: "hard cap reached", q: 1, fq: fq(hard(0, 6)), u: map[int32]res.Vec{1: {4}}, need: res.Vec{3},
			want: FitResult{Verdict: NoFitNow, Reason: AtHardCap, Res: 0, Used: 4, Need: 3, Limit: 6}},
		{name: "MaxQuantity reached", q: 4, fq: fq(nil), u: map[int32]res.Vec{4: {MaxQuantity}}, need: res.Vec{1},
			want: FitResult{Verdict: NoFitNow, Reason: AtHardCap, Res: 0, Used: MaxQuantity, Need: 1, Limit: MaxQuantity}},
		{name: "exhausted by a borrowing neighbour", q: 1, fq: fq(nil), u: map[int32]res.Vec{2: {6}}, need: res.Vec{3},
			want: FitResult{Verdict: NoFitNow, Reason: Exhausted, Res: 0, Need: 3, Limit: 4, Avail: 2}},
		{name: "exhausted on the second resource", q: 1, fq: fq(nil), u: map[int32]res.Vec{1: {0, 10}, 2: {0, 10}}, need: res.Vec{1, 1},
			want: FitResult{Verdict: NoFitNow, Reason: Exhausted, Res: 1, Used: 10, Need: 1, Limit: 10}},
		{name: "borrowing from the cohort", q: 1, fq: fq(nil), u: map[int32]res.Vec{1: {2}}, need: res.Vec{3},
			want: FitResult{Verdict: Fit, Res: -1, Level: 1, Borrow: true}},
		{name: "an explicit zero where the queue borrows raises the level", q: 1, fq: fq(nil), u: map[int32]res.Vec{1: {0, 12}}, need: res.Vec{1}, zeros: 0b10,
			want: FitResult{Verdict: Fit, Res: -1, Level: 1, Borrow: true}},
		{name: "the same resource not asked for is not checked", q: 1, fq: fq(nil), u: map[int32]res.Vec{1: {0, 12}}, need: res.Vec{1},
			want: FitResult{Verdict: Fit, Res: -1}},
		{name: "an explicit zero the flavor does not cover is left out", q: 1, fq: fq(func(f *FlavorQuota) { f.Covered = 0b01 }), need: res.Vec{1}, zeros: 0b10,
			want: FitResult{Verdict: Fit, Res: -1}},
		{name: "an Unlimited nominal quota", q: 4, fq: fq(func(f *FlavorQuota) { f.Nominal, f.Ever = res.Vec{Unlimited, Unlimited}, res.Vec{Unlimited, Unlimited} }),
			u: map[int32]res.Vec{4: {MaxQuantity / 2}}, need: res.Vec{MaxQuantity / 2},
			want: FitResult{Verdict: Fit, Res: -1}},
		{name: "over the soft cap", q: 1, fq: fq(func(f *FlavorQuota) { f.Soft[0], f.SoftMask = 2, 1 }), u: map[int32]res.Vec{1: {1}}, need: res.Vec{2},
			want: FitResult{Verdict: Fit, Res: -1, OverSoft: true}},
		{name: "at the soft cap", q: 1, fq: fq(func(f *FlavorQuota) { f.Soft[0], f.SoftMask = 3, 1 }), u: map[int32]res.Vec{1: {1}}, need: res.Vec{2},
			want: FitResult{Verdict: Fit, Res: -1}},
		{name: "a soft cap on another resource", q: 1, fq: fq(func(f *FlavorQuota) { f.Soft[1], f.SoftMask = 0, 0b10 }), need: res.Vec{2},
			want: FitResult{Verdict: Fit, Res: -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := tr.Fit(used(c.u), c.q, c.fq, c.earlier, c.need, c.zeros); got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestFitDoesNotAllocate pins that a fit check allocates nothing.
func TestFitDoesNotAllocate(t *testing.T) {
	tr := fitTree(t)
	u := tr.NewUsage()
	tr.AddVec(u, 2, 0, res.Vec{6}, 1)
	fq := &FlavorQuota{Covered: 0b11, Nominal: res.Vec{4, 10}, Ever: res.Vec{4, 10}}
	if n := testing.AllocsPerRun(100, func() { tr.Fit(u, 1, fq, res.Vec{}, res.Vec{1, 1}, 0) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
