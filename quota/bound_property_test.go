package quota

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

// exactTree reads the resource-node formulas in arbitrary precision: no
// saturation, no Unlimited, a nil limit is no limit. Where every sum of a
// tree fits an int64, the ResourceTree must agree with it exactly: that is
// the proof that quantities at MaxQuantity never overflow.
type exactTree struct {
	nodes    []NodeSpec
	children [][]int32
	totals   [][]*big.Int // per queue and fr
}

func bi(v int64) *big.Int { return big.NewInt(v) }

func bmax(a, b *big.Int) *big.Int {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

func bmin(a, b *big.Int) *big.Int {
	if a.Cmp(b) <= 0 {
		return a
	}
	return b
}

func add(a, b *big.Int) *big.Int { return new(big.Int).Add(a, b) }
func sub(a, b *big.Int) *big.Int { return new(big.Int).Sub(a, b) }

func (et *exactTree) q(n int32, fr int) ResourceQuota {
	if qs := et.nodes[n].Quotas; qs != nil {
		return qs[fr]
	}
	return ResourceQuota{}
}

func (et *exactTree) subtree(n int32, fr int) *big.Int {
	s := bi(et.q(n, fr).Nominal)
	for _, c := range et.children[n] {
		s = add(s, sub(et.subtree(c, fr), et.local(c, fr)))
	}
	return s
}

func (et *exactTree) local(n int32, fr int) *big.Int {
	if ll := et.q(n, fr).LendingLimit; ll != nil {
		return bmax(bi(0), sub(et.subtree(n, fr), bi(*ll)))
	}
	return bi(0)
}

func (et *exactTree) usage(n int32, fr int) *big.Int {
	if et.nodes[n].Queue {
		return et.totals[n][fr]
	}
	s := bi(0)
	for _, c := range et.children[n] {
		s = add(s, bmax(bi(0), sub(et.usage(c, fr), et.local(c, fr))))
	}
	return s
}

func (et *exactTree) localAvailable(n int32, fr int) *big.Int {
	return bmax(bi(0), sub(et.local(n, fr), et.usage(n, fr)))
}

func (et *exactTree) available(n int32, fr int) *big.Int {
	p := et.nodes[n].Parent
	if p < 0 {
		return sub(et.subtree(n, fr), et.usage(n, fr))
	}
	pa := et.available(p, fr)
	if bl := et.q(n, fr).BorrowingLimit; bl != nil {
		stored := sub(et.subtree(n, fr), et.local(n, fr))
		used := bmax(bi(0), sub(et.usage(n, fr), et.local(n, fr)))
		pa = bmin(pa, add(sub(stored, used), bi(*bl)))
	}
	return add(et.localAvailable(n, fr), pa)
}

func (et *exactTree) potential(n int32, fr int) *big.Int {
	p := et.nodes[n].Parent
	if p < 0 {
		return et.subtree(n, fr)
	}
	pa := add(et.local(n, fr), et.potential(p, fr))
	if bl := et.q(n, fr).BorrowingLimit; bl != nil {
		pa = bmin(pa, add(et.subtree(n, fr), bi(*bl)))
	}
	return pa
}

func (et *exactTree) borrowingWith(n int32, fr int, v *big.Int) bool {
	return et.subtree(n, fr).Cmp(add(et.usage(n, fr), v)) < 0
}

// level is Kueue's FindHeightOfLowestSubtreeThatFits, read directly.
func (et *exactTree) level(heights func(int32) int, q int32, fr int, v *big.Int) int {
	if et.nodes[q].Parent < 0 || !et.borrowingWith(q, fr, v) {
		return 0
	}
	remaining := sub(v, et.localAvailable(q, fr))
	for a := et.nodes[q].Parent; ; a = et.nodes[a].Parent {
		if !et.borrowingWith(a, fr, remaining) || et.nodes[a].Parent < 0 {
			return heights(a)
		}
		remaining = sub(remaining, et.localAvailable(a, fr))
	}
}

// nearBound is a quantity drawn where overflow would show: at, just below
// and at fractions of MaxQuantity, or anywhere up to it.
func nearBound(rng *rand.Rand) int64 {
	switch rng.IntN(8) {
	case 0:
		return 0
	case 1:
		return MaxQuantity
	case 2:
		return MaxQuantity - rng.Int64N(4)
	case 3:
		return MaxQuantity/int64(2+rng.IntN(3)) + rng.Int64N(3)
	case 4:
		return rng.Int64N(1 << 20)
	}
	return rng.Int64N(MaxQuantity + 1)
}

// boundTree is a random forest of up to 3 cohorts and 6 queues whose
// quotas and limits are drawn near MaxQuantity, the nominal quotas of each
// flavor-resource summing to at most math.MaxInt64 − 1 over the forest, so
// that no sum saturates.
func boundTree(rng *rand.Rand) ([]NodeSpec, int, int) {
	flavors, resources := 1+rng.IntN(2), 1+rng.IntN(2)
	frs := flavors * resources
	cohorts, queues := rng.IntN(4), 1+rng.IntN(6)
	nodes := forestShape(rng, cohorts, queues, 4, 6)
	for i := range nodes {
		s := &nodes[i]
		s.Quotas = make([]ResourceQuota, frs)
		for fr := range s.Quotas {
			q := &s.Quotas[fr]
			q.Nominal = nearBound(rng)
			if s.Parent >= 0 && rng.IntN(3) == 0 {
				q.BorrowingLimit = lim(nearBound(rng))
			}
			if s.Parent >= 0 && rng.IntN(3) == 0 {
				l := nearBound(rng)
				if s.Queue {
					l = min(l, q.Nominal)
				}
				q.LendingLimit = lim(l)
			}
		}
	}
	// Halve the largest nominal quota until the forest's sum fits.
	for fr := range frs {
		for {
			sum, top := bi(0), 0
			for i := range nodes {
				sum = add(sum, bi(nodes[i].Quotas[fr].Nominal))
				if nodes[i].Quotas[fr].Nominal > nodes[top].Quotas[fr].Nominal {
					top = i
				}
			}
			if sum.Cmp(bi(math.MaxInt64-1)) <= 0 {
				break
			}
			q := &nodes[top].Quotas[fr]
			q.Nominal /= 2
			if q.LendingLimit != nil && nodes[top].Queue {
				*q.LendingLimit = min(*q.LendingLimit, q.Nominal)
			}
		}
	}
	return nodes, flavors, resources
}

// TestArithmeticAtTheBound: trees whose quotas, limits, usages and requests
// are drawn at and near MaxQuantity give, in every query and in Fit, what
// exact arithmetic gives, as long as each queue's usage keeps to Bounded
// and the forest's usage of a flavor-resource, like its quota, fits an
// int64.
func TestArithmeticAtTheBound(t *testing.T) {
	trees, steps := 150, 60
	if testing.Short() {
		trees = 30
	}
	for seed := range uint64(trees) {
		rng := rand.New(rand.NewPCG(seed, 0xb0d))
		nodes, flavors, resources := boundTree(rng)
		tr, err := NewResourceTree(flavors, resources, nodes)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		frs := tr.FRs()
		et := &exactTree{nodes: nodes, children: make([][]int32, len(nodes)), totals: make([][]*big.Int, len(nodes))}
		var queues []int32
		for i, s := range nodes {
			if s.Parent >= 0 {
				et.children[s.Parent] = append(et.children[s.Parent], int32(i))
			}
			if s.Queue {
				queues = append(queues, int32(i))
			}
			et.totals[i] = make([]*big.Int, frs)
			for fr := range frs {
				et.totals[i][fr] = bi(0)
			}
		}
		forest := make([]int64, frs) // what all queues use, per fr
		u := tr.NewUsage()
		var live []admitted
		for step := range steps {
			if len(live) > 0 && rng.IntN(3) == 0 {
				i := rng.IntN(len(live))
				a := live[i]
				live[i] = live[len(live)-1]
				live = live[:len(live)-1]
				apply(tr, u, rng, a, -1)
				for r := range resources {
					fr := tr.FR(a.flavor, r)
					et.totals[a.q][fr] = sub(et.totals[a.q][fr], bi(a.vec[r]))
					forest[fr] -= a.vec[r]
				}
			} else {
				a := admitted{q: queues[rng.IntN(len(queues))], flavor: rng.IntN(flavors)}
				for r := range resources {
					fr := tr.FR(a.flavor, r)
					// Within the queue's bound and the forest's int64.
					room := min(MaxQuantity-u.At(a.q, fr), math.MaxInt64-1-forest[fr])
					a.vec[r] = min(nearBound(rng), room)
					forest[fr] += a.vec[r]
					et.totals[a.q][fr] = add(et.totals[a.q][fr], bi(a.vec[r]))
				}
				live = append(live, a)
				apply(tr, u, rng, a, 1)
			}
			if err := checkExact(tr, et, u, rng); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
		}
	}
}

func checkExact(tr *ResourceTree, et *exactTree, u Usage, rng *rand.Rand) error {
	height := func(n int32) int { return tr.Height(n) }
	for n := range int32(tr.Len()) {
		for fr := range tr.FRs() {
			for _, c := range [...]struct {
				what      string
				got       int64
				want      *big.Int
				onlyQueue bool
			}{
				{"usage", u.At(n, fr), et.usage(n, fr), false},
				{"SubtreeQuota", tr.SubtreeQuota(n, fr), et.subtree(n, fr), false},
				{"LocalQuota", tr.LocalQuota(n, fr), et.local(n, fr), false},
				{"LocalAvailable", tr.LocalAvailable(u, n, fr), et.localAvailable(n, fr), false},
				{"Available", tr.Available(u, n, fr), et.available(n, fr), false},
				{"PotentialAvailable", tr.PotentialAvailable(n, fr), et.potential(n, fr), false},
			} {
				if !c.want.IsInt64() || c.got != c.want.Int64() {
					return fmt.Errorf("%s fr %d: %s %d, exact %s", tr.Name(n), fr, c.what, c.got, c.want)
				}
			}
			if !tr.IsQueue(n) {
				continue
			}
			v := nearBound(rng)
			if got, _ := tr.BorrowingLevel(u, n, fr, v); got != et.level(height, n, fr, bi(v)) {
				want := et.level(height, n, fr, bi(v))
				return fmt.Errorf("%s fr %d: BorrowingLevel(%d) %d, exact %d", tr.Name(n), fr, v, got, want)
			}
		}
		if tr.IsQueue(n) {
			if err := checkFitExact(tr, et, u, n, rng); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkFitExact holds Fit, for a request drawn near the bound (what earlier
// pod sets put on the flavor and what this one needs, each within it),
// under a hard cap or none, to the verdict exact arithmetic reaches by
// Fit's documented order of checks.
func checkFitExact(tr *ResourceTree, et *exactTree, u Usage, q int32, rng *rand.Rand) error {
	f := rng.IntN(tr.Flavors())
	fq := FlavorQuota{Flavor: int32(f), Covered: 1<<tr.Resources() - 1}
	var earlier, need res.Vec
	for r := range tr.Resources() {
		fq.Nominal[r] = tr.Nominal(q, tr.FR(f, r))
		fq.Ever[r] = fq.Nominal[r]
		if rng.IntN(3) == 0 {
			fq.Hard[r], fq.HardMask = nearBound(rng), fq.HardMask|1<<r
		}
		if rng.IntN(2) == 0 {
			earlier[r] = nearBound(rng)
		}
		need[r] = nearBound(rng)
	}
	got := tr.Fit(u, q, &fq, earlier, need, 0)

	want := FitResult{Verdict: Fit, Res: -1}
	// Fit checks the resources this pod set asks for, whatever earlier
	// pod sets put on the flavor.
	asked := func(r int) bool { return need[r] != 0 }
	bound := bi(MaxQuantity)
never:
	for r := range tr.Resources() {
		val, fr := add(bi(earlier[r]), bi(need[r])), tr.FR(f, r)
		switch {
		case !asked(r):
			continue
		case fq.HardMask&(1<<r) != 0 && val.Cmp(bi(fq.Hard[r])) > 0:
			want = FitResult{Verdict: NoFitEver, Reason: OverHardCap, Res: r}
		case val.Cmp(bound) > 0:
			want = FitResult{Verdict: NoFitEver, Reason: OverHardCap, Res: r}
		case val.Cmp(et.potential(q, fr)) > 0:
			want = FitResult{Verdict: NoFitEver, Reason: BeyondReach, Res: r}
		default:
			continue
		}
		break never
	}
	if want.Verdict == Fit {
	now:
		for r := range tr.Resources() {
			val, fr := add(bi(earlier[r]), bi(need[r])), tr.FR(f, r)
			after := add(bi(u.At(q, fr)), val)
			switch {
			case !asked(r):
				continue
			case fq.HardMask&(1<<r) != 0 && after.Cmp(bi(fq.Hard[r])) > 0:
				want = FitResult{Verdict: NoFitNow, Reason: AtHardCap, Res: r}
			case after.Cmp(bound) > 0:
				want = FitResult{Verdict: NoFitNow, Reason: AtHardCap, Res: r}
			case val.Cmp(bmax(bi(0), et.available(q, fr))) > 0:
				want = FitResult{Verdict: NoFitNow, Reason: Exhausted, Res: r}
			default:
				continue
			}
			break now
		}
	}
	if want.Verdict == Fit {
		for r := range tr.Resources() {
			val, fr := add(bi(earlier[r]), bi(need[r])), tr.FR(f, r)
			if !asked(r) {
				continue
			}
			want.Level = max(want.Level, et.level(func(n int32) int { return tr.Height(n) }, q, fr, val))
			want.Borrow = want.Borrow || add(bi(u.At(q, fr)), val).Cmp(bi(fq.Nominal[r])) > 0
		}
	}
	if got.Verdict != want.Verdict || got.Reason != want.Reason || got.Res != want.Res ||
		got.Level != want.Level || got.Borrow != want.Borrow {
		return fmt.Errorf("%s: Fit(earlier %v, need %v, hard %v) = %+v, exact %+v", tr.Name(q), earlier, need, fq.Hard, got, want)
	}
	return nil
}

// FuzzBounded: Bounded and AddCharge agree with exact arithmetic for any
// quantities, and AddCharge leaves the total unchanged when it refuses.
func FuzzBounded(f *testing.F) {
	f.Add(int64(0), int64(MaxQuantity), int32(1), int64(0))
	f.Add(int64(MaxQuantity), int64(1), int32(1), int64(MaxQuantity))
	f.Add(int64(1), int64(MaxQuantity/2), int32(2), int64(MaxQuantity/2+1))
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), int32(math.MaxInt32), int64(-1))
	f.Fuzz(func(t *testing.T, used, q int64, count int32, more int64) {
		if used < 0 || used > MaxQuantity || q < 0 || count < 0 {
			return
		}
		exact := add(bi(used), new(big.Int).Mul(bi(q), bi(int64(count))))
		if got, want := Bounded(used, q, count), exact.Cmp(bi(MaxQuantity)) <= 0; got != want {
			t.Fatalf("Bounded(%d, %d, %d) = %v, exact %s", used, q, count, got, exact)
		}
		if q > MaxQuantity || more < 0 || more > MaxQuantity {
			return
		}
		total := res.Vec{used, used}
		k := AddCharge(&total, res.Vec{q, more})
		want := -1
		switch {
		case add(bi(used), bi(q)).Cmp(bi(MaxQuantity)) > 0:
			want = 0
		case add(bi(used), bi(more)).Cmp(bi(MaxQuantity)) > 0:
			want = 1
		}
		if k != want {
			t.Fatalf("AddCharge(%d, {%d %d}) = %d, want %d", used, q, more, k, want)
		}
		if k >= 0 && total != (res.Vec{used, used}) || k < 0 && total != (res.Vec{used + q, used + more}) {
			t.Fatalf("AddCharge(%d, {%d %d}) left %v", used, q, more, total[:2])
		}
	})
}
