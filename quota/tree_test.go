package quota

import (
	"errors"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

// lim is a limit for a ResourceQuota literal.
func lim(v int64) *int64 { return &v }

// one is a single-flavor, single-resource quota list.
func one(nominal int64, bl, ll *int64) []ResourceQuota {
	return []ResourceQuota{{Nominal: nominal, BorrowingLimit: bl, LendingLimit: ll}}
}

func mustTree(t testing.TB, flavors, resources int, nodes []NodeSpec) *ResourceTree {
	t.Helper()
	tr, err := NewResourceTree(flavors, resources, nodes)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// use builds a Usage by adding each queue's amount on fr 0 through AddUsage.
func use(tr *ResourceTree, amounts map[int32]int64) Usage {
	u := tr.NewUsage()
	for _, q := range slices.Sorted(maps.Keys(amounts)) {
		tr.AddUsage(u, q, 0, amounts[q])
	}
	return u
}

// nodeWant is one node's expected figures on fr 0.
type nodeWant struct {
	node                      int32
	subtree, local, potential int64
	usage, available, clamped int64
	borrowing, withinNominal  bool
	height                    int
}

func checkNodes(t *testing.T, tr *ResourceTree, u Usage, wants []nodeWant) {
	t.Helper()
	for _, w := range wants {
		name := tr.Name(w.node)
		got := nodeWant{
			node: w.node, subtree: tr.SubtreeQuota(w.node, 0), local: tr.LocalQuota(w.node, 0),
			potential: tr.PotentialAvailable(w.node, 0), usage: u.At(w.node, 0),
			available: tr.Available(u, w.node, 0), clamped: tr.AvailableClamped(u, w.node, 0),
			borrowing: tr.Borrowing(u, w.node, 0), withinNominal: tr.IsWithinNominal(u, w.node, []int{0}),
			height: tr.Height(w.node),
		}
		if got != w {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, w)
		}
	}
	// The incrementally kept cohort usage is Kueue's from-scratch value.
	fresh := u.Clone()
	if err := tr.Recompute(fresh); err != nil {
		t.Fatal(err)
	}
	for n := range tr.Len() {
		if !slices.Equal(fresh[n], u[n]) {
			t.Errorf("%s: incremental usage %v, recomputed %v", tr.Name(int32(n)), u[n], fresh[n])
		}
	}
}

// The reference's worked example, Kueue's cohort-lend preemption fixture.
func TestResourceTreeCohortLend(t *testing.T) {
	const cohort, lend1, lend2 = 0, 1, 2
	tr := mustTree(t, 1, 1, []NodeSpec{
		{Name: "cohort", Parent: -1},
		{Name: "lend1", Parent: cohort, Queue: true, Quotas: one(6, nil, lim(4))},
		{Name: "lend2", Parent: cohort, Queue: true, Quotas: one(6, nil, lim(2))},
	})
	// lend1 adds 3: LocalAvailable 2, so 1 spills; lend2 adds 7:
	// LocalAvailable 4, so 3 spill. Cohort usage 1 + 3 = 4.
	u := use(tr, map[int32]int64{lend1: 3, lend2: 7})
	checkNodes(t, tr, u, []nodeWant{
		// SubtreeQuota = (6−2) + (6−4) = 6; available 6 − 4 = 2.
		{node: cohort, subtree: 6, local: 0, potential: 6, usage: 4, available: 2, clamped: 2, withinNominal: true, height: 1},
		// localQuota = 6 − 4 = 2; Available = max(0, 2−3) + 2 = 2;
		// PotentialAvailable = 2 + 6 = 8.
		{node: lend1, subtree: 6, local: 2, potential: 8, usage: 3, available: 2, clamped: 2, withinNominal: true},
		// localQuota = 6 − 2 = 4; Available = max(0, 4−7) + 2 = 2;
		// PotentialAvailable = 4 + 6 = 10; 7 > 6, borrowing.
		{node: lend2, subtree: 6, local: 4, potential: 10, usage: 7, available: 2, clamped: 2, borrowing: true},
	})
}

// Without lending limits all quota is pooled at the root and a queue's
// nominal quota is not reserved for it.
func TestResourceTreeNoLendingLimits(t *testing.T) {
	const root, a, b = 0, 1, 2
	tr := mustTree(t, 1, 1, []NodeSpec{
		{Name: "root", Parent: -1},
		{Name: "a", Parent: root, Queue: true, Quotas: one(4, nil, nil)},
		{Name: "b", Parent: root, Queue: true, Quotas: one(6, nil, nil)},
	})
	// b uses 9 of the pooled 10: it borrows 3, all of it a's nominal.
	u := use(tr, map[int32]int64{b: 9})
	checkNodes(t, tr, u, []nodeWant{
		{node: root, subtree: 10, potential: 10, usage: 9, available: 1, clamped: 1, withinNominal: true, height: 1},
		// a has used nothing of its 4, yet only 10 − 9 = 1 is available.
		{node: a, subtree: 4, potential: 10, usage: 0, available: 1, clamped: 1, withinNominal: true},
		{node: b, subtree: 6, potential: 10, usage: 9, available: 1, clamped: 1, borrowing: true},
	})
	levels := []struct {
		q       int32
		v       int64
		level   int
		reclaim bool
	}{
		// a asks for its own 4: not borrowing, level 0; it does not fit
		// (available 1), but may reclaim in the hierarchy.
		{a, 4, 0, true},
		// b asks for 1 more: borrowing; the root holds 9 + 1 ≤ 10, height 1,
		// and the root is the whole tree, so nothing to reclaim.
		{b, 1, 1, false},
		// b asks for 2: the root would hold 11 > 10; still the root's height.
		{b, 2, 1, false},
	}
	for _, c := range levels {
		level, reclaim := tr.BorrowingLevel(u, c.q, 0, c.v)
		if level != c.level || reclaim != c.reclaim {
			t.Errorf("BorrowingLevel(%s, %d) = %d, %v; want %d, %v", tr.Name(c.q), c.v, level, reclaim, c.level, c.reclaim)
		}
	}
}

// A borrowing limit caps a queue at Nominal + BL, and every borrowing
// limit on the path caps it too.
func TestResourceTreeBorrowingLimits(t *testing.T) {
	t.Run("queue", func(t *testing.T) {
		const root, a, b = 0, 1, 2
		tr := mustTree(t, 1, 1, []NodeSpec{
			{Name: "root", Parent: -1},
			{Name: "a", Parent: root, Queue: true, Quotas: one(4, lim(2), nil)},
			{Name: "b", Parent: root, Queue: true, Quotas: one(6, nil, nil)},
		})
		u := tr.NewUsage()
		// PotentialAvailable(a) = min(0 + 10, 4 + 2) = 6.
		// Available(a) = min(10, (4 − 0) − 0 + 2) = 6.
		checkNodes(t, tr, u, []nodeWant{{node: a, subtree: 4, potential: 6, available: 6, clamped: 6, withinNominal: true}})
		tr.AddUsage(u, a, 0, 5)
		// min(10 − 5, (4 − 0) − 5 + 2) = min(5, 1) = 1: 5 + 1 = Nominal + BL.
		checkNodes(t, tr, u, []nodeWant{{node: a, subtree: 4, potential: 6, usage: 5, available: 1, clamped: 1, borrowing: true}})
		tr.AddUsage(u, a, 0, 1)
		checkNodes(t, tr, u, []nodeWant{{node: a, subtree: 4, potential: 6, usage: 6, available: 0, clamped: 0, borrowing: true}})
	})
	t.Run("path", func(t *testing.T) {
		const root, c1, q1 = 0, 1, 2
		tr := mustTree(t, 1, 1, []NodeSpec{
			{Name: "root", Parent: -1, Quotas: one(10, nil, nil)},
			{Name: "c1", Parent: root, Quotas: one(0, lim(2), nil)},
			{Name: "q1", Parent: c1, Queue: true, Quotas: one(3, lim(5), nil)},
		})
		// SubtreeQuota: q1 3, c1 3, root 10 + 3 = 13.
		// PotentialAvailable(c1) = min(0 + 13, 3 + 2) = 5;
		// PotentialAvailable(q1) = min(0 + 5, 3 + 5) = 5: c1's limit binds.
		u := tr.NewUsage()
		checkNodes(t, tr, u, []nodeWant{
			{node: root, subtree: 13, potential: 13, available: 13, clamped: 13, withinNominal: true, height: 2},
			{node: c1, subtree: 3, potential: 5, available: 5, clamped: 5, withinNominal: true, height: 1},
			{node: q1, subtree: 3, potential: 5, available: 5, clamped: 5, withinNominal: true},
		})
		tr.AddUsage(u, q1, 0, 5)
		// root 13 − 5 = 8; c1 min(8, 3 − 5 + 2) = 0; q1 min(0, 3 − 5 + 5) = 0.
		checkNodes(t, tr, u, []nodeWant{
			{node: root, subtree: 13, potential: 13, usage: 5, available: 8, clamped: 8, withinNominal: true, height: 2},
			{node: c1, subtree: 3, potential: 5, usage: 5, available: 0, clamped: 0, borrowing: true, height: 1},
			{node: q1, subtree: 3, potential: 5, usage: 5, available: 0, clamped: 0, borrowing: true},
		})
	})
}

// hierarchy is the tree of TestResourceTreeHierarchical:
//
//	root (nominal 10)
//	├── A (nominal 0, lending limit 4)
//	│   ├── a1 (nominal 6)
//	│   └── a2 (nominal 4, lending limit 1)
//	└── B (nominal 2, borrowing limit 3)
//	    ├── b1 (nominal 5)
//	    └── b2 (nominal 5, borrowing limit 0)
const (
	hRoot int32 = iota
	hA
	hA1
	hA2
	hB
	hB1
	hB2
)

func hierarchy(t testing.TB) *ResourceTree {
	return mustTree(t, 1, 1, []NodeSpec{
		{Name: "root", Parent: -1, Quotas: one(10, nil, nil)},
		{Name: "A", Parent: hRoot, Quotas: one(0, nil, lim(4))},
		{Name: "a1", Parent: hA, Queue: true, Quotas: one(6, nil, nil)},
		{Name: "a2", Parent: hA, Queue: true, Quotas: one(4, nil, lim(1))},
		{Name: "B", Parent: hRoot, Quotas: one(2, lim(3), nil)},
		{Name: "b1", Parent: hB, Queue: true, Quotas: one(5, nil, nil)},
		{Name: "b2", Parent: hB, Queue: true, Quotas: one(5, lim(0), nil)},
	})
}

func TestResourceTreeHierarchical(t *testing.T) {
	tr := hierarchy(t)
	// Static figures:
	//   a1: SubtreeQuota 6, localQuota 0.   a2: 4, localQuota 4 − 1 = 3.
	//   A:  0 + (6 − 0) + (4 − 3) = 7, localQuota 7 − 4 = 3.
	//   b1, b2: 5, localQuota 0.  B: 2 + 5 + 5 = 12, localQuota 0.
	//   root: 10 + (7 − 3) + (12 − 0) = 26.
	// PotentialAvailable:
	//   root 26; A 3 + 26 = 29; B min(0 + 26, 12 + 3) = 15;
	//   a1 0 + 29 = 29; a2 3 + 29 = 32; b1 0 + 15 = 15; b2 min(15, 5 + 0) = 5.
	// Heights: queues 0, A and B 1, root 2.
	//
	// Usage a1 8, a2 2, b1 9:
	//   a1 +8: LocalAvailable(a1) 0, 8 spills to A; LocalAvailable(A) 3,
	//          so A keeps 3 locally and 5 spills to root.
	//   a2 +2: LocalAvailable(a2) 3 ≥ 2, nothing spills.
	//   b1 +9: 9 spills to B, B's localQuota is 0, 9 spills to root.
	//   A = max(0, 8−0) + max(0, 2−3) = 8; B = 9; root = max(0, 8−3) + 9 = 14.
	// Available:
	//   root 26 − 14 = 12.
	//   A:  LocalAvailable max(0, 3−8) = 0, + 12 = 12.
	//   a1: 0 + 12 = 12.   a2: max(0, 3−2) = 1, + 12 = 13.
	//   B:  min(12, (12 − 0) − 9 + 3) = 6, + 0 = 6.
	//   b1: 0 + 6 = 6.     b2: min(6, (5 − 0) − 0 + 0) = 5, + 0 = 5.
	u := use(tr, map[int32]int64{hA1: 8, hA2: 2, hB1: 9})
	checkNodes(t, tr, u, []nodeWant{
		{node: hRoot, subtree: 26, potential: 26, usage: 14, available: 12, clamped: 12, withinNominal: true, height: 2},
		// A: usage 8 > SubtreeQuota 7, borrowing.
		{node: hA, subtree: 7, local: 3, potential: 29, usage: 8, available: 12, clamped: 12, borrowing: true, height: 1},
		{node: hA1, subtree: 6, potential: 29, usage: 8, available: 12, clamped: 12, borrowing: true},
		{node: hA2, subtree: 4, local: 3, potential: 32, usage: 2, available: 13, clamped: 13, withinNominal: true},
		{node: hB, subtree: 12, potential: 15, usage: 9, available: 6, clamped: 6, withinNominal: true, height: 1},
		{node: hB1, subtree: 5, potential: 15, usage: 9, available: 6, clamped: 6, borrowing: true},
		{node: hB2, subtree: 5, potential: 5, usage: 0, available: 5, clamped: 5, withinNominal: true},
	})

	levels := []struct {
		name    string
		q       int32
		v       int64
		level   int
		reclaim bool
	}{
		// 2 + 1 ≤ 4: within a2's nominal.
		{"within nominal", hA2, 1, 0, true},
		// 2 + 3 > 4; remaining 3 − LocalAvailable(a2) 1 = 2.
		// A: 8 + 2 > 7, borrowing; remaining 2 − LocalAvailable(A) 0 = 2.
		// root: 14 + 2 ≤ 26, height 2, and the root is the whole tree.
		{"fits at root", hA2, 3, 2, false},
		// 9 + 2 > 5; remaining 2; B: 9 + 2 ≤ 12, height 1, below the root.
		{"fits in own cohort", hB1, 2, 1, true},
		// B: 9 + 4 > 12; root: 14 + 4 ≤ 26.
		{"needs the root", hB1, 4, 2, false},
		// A: 8 + 20 > 7; root: 14 + 20 > 26; nothing holds it: root height.
		{"fits nowhere", hA1, 20, 2, false},
		// b2 within nominal even though its borrowing limit is 0.
		{"b2 within nominal", hB2, 5, 0, true},
	}
	for _, c := range levels {
		level, reclaim := tr.BorrowingLevel(u, c.q, 0, c.v)
		if level != c.level || reclaim != c.reclaim {
			t.Errorf("%s: BorrowingLevel(%s, %d) = %d, %v; want %d, %v", c.name, tr.Name(c.q), c.v, level, reclaim, c.level, c.reclaim)
		}
	}

	// FitsInQuota(A, 2): 8 + 2 > 7; remaining max(0, 2 − 0) = 2.
	if fits, rem := tr.FitsInQuota(u, hA, 0, 2); fits || rem != 2 {
		t.Errorf("FitsInQuota(A, 2) = %v, %d; want false, 2", fits, rem)
	}
	// FitsInQuota(a2, 1): 2 + 1 ≤ 4; remaining max(0, 1 − 1) = 0.
	if fits, rem := tr.FitsInQuota(u, hA2, 0, 1); !fits || rem != 0 {
		t.Errorf("FitsInQuota(a2, 1) = %v, %d; want true, 0", fits, rem)
	}

	// Removing in another order restores zero everywhere.
	tr.RemoveUsage(u, hB1, 0, 9)
	tr.RemoveUsage(u, hA1, 0, 8)
	tr.RemoveUsage(u, hA2, 0, 2)
	for n := range tr.Len() {
		if u.At(int32(n), 0) != 0 {
			t.Errorf("%s: usage %d after removing everything", tr.Name(int32(n)), u.At(int32(n), 0))
		}
	}
	if got := tr.Path(hB2); !slices.Equal(got, []int32{hB2, hB, hRoot}) || tr.Root(hB2) != hRoot {
		t.Errorf("Path(b2) = %v, Root %d", got, tr.Root(hB2))
	}
}

// A quota cut under admitted usage leaves negative availability.
func TestResourceTreeOverAdmission(t *testing.T) {
	const root, q1, q2 = 0, 1, 2
	spec := func(q2Nominal int64) []NodeSpec {
		return []NodeSpec{
			{Name: "root", Parent: -1},
			{Name: "q1", Parent: root, Queue: true, Quotas: one(6, nil, nil)},
			{Name: "q2", Parent: root, Queue: true, Quotas: one(q2Nominal, nil, nil)},
		}
	}
	before := mustTree(t, 1, 1, spec(6))
	u := use(before, map[int32]int64{q1: 6, q2: 6})
	// q2's nominal drops from 6 to 2: the root holds 6 + 2 = 8 under 12.
	after := mustTree(t, 1, 1, spec(2))
	if err := after.Recompute(u); err != nil {
		t.Fatal(err)
	}
	checkNodes(t, after, u, []nodeWant{
		{node: root, subtree: 8, potential: 8, usage: 12, available: -4, clamped: 0, borrowing: true, height: 1},
		{node: q1, subtree: 6, potential: 8, usage: 6, available: -4, clamped: 0, withinNominal: true},
		{node: q2, subtree: 2, potential: 8, usage: 6, available: -4, clamped: 0, borrowing: true},
	})
	// A lending limit added on q1 under its usage: localQuota 6 − 1 = 5
	// holds 5 of q1's 6 privately; the root (SubtreeQuota 1 + 2 = 3) holds
	// 1 + 6 = 7. Recompute is what brings cohort usage in line.
	lent := mustTree(t, 1, 1, []NodeSpec{
		{Name: "root", Parent: -1},
		{Name: "q1", Parent: root, Queue: true, Quotas: one(6, nil, lim(1))},
		{Name: "q2", Parent: root, Queue: true, Quotas: one(2, nil, nil)},
	})
	if err := lent.Recompute(u); err != nil {
		t.Fatal(err)
	}
	checkNodes(t, lent, u, []nodeWant{
		{node: root, subtree: 3, potential: 3, usage: 7, available: -4, clamped: 0, borrowing: true, height: 1},
		// max(0, 5 − 6) + (3 − 7) = −4.
		{node: q1, subtree: 6, local: 5, potential: 8, usage: 6, available: -4, clamped: 0, withinNominal: true},
	})
}

func TestResourceTreeUnlimited(t *testing.T) {
	const root, big, small, lender = 0, 1, 2, 3
	tr := mustTree(t, 1, 1, []NodeSpec{
		{Name: "root", Parent: -1},
		{Name: "big", Parent: root, Queue: true, Quotas: one(Unlimited, nil, nil)},
		{Name: "small", Parent: root, Queue: true, Quotas: one(4, lim(3), nil)},
		// An unlimited queue with a lending limit: localQuota is
		// max(0, Unlimited − 5) = Unlimited, so it lends Unlimited −
		// Unlimited = 0, as Kueue's Amount arithmetic has it.
		{Name: "lender", Parent: root, Queue: true, Quotas: one(Unlimited, nil, lim(5))},
	})
	u := use(tr, map[int32]int64{big: 1 << 40, small: 2, lender: 7})
	checkNodes(t, tr, u, []nodeWant{
		// Unlimited + 4 + 0 = Unlimited; Unlimited − usage = Unlimited.
		{node: root, subtree: Unlimited, potential: Unlimited, usage: 1<<40 + 2, available: Unlimited, clamped: Unlimited, withinNominal: true, height: 1},
		{node: big, subtree: Unlimited, potential: Unlimited, usage: 1 << 40, available: Unlimited, clamped: Unlimited, withinNominal: true},
		// min(Unlimited, 4 + 3) = 7; min(Unlimited, (4 − 0) − 2 + 3) = 5.
		{node: small, subtree: 4, potential: 7, usage: 2, available: 5, clamped: 5, withinNominal: true},
		// Its 7 stays local and never reaches the root.
		{node: lender, subtree: Unlimited, local: Unlimited, potential: Unlimited, usage: 7, available: Unlimited, clamped: Unlimited, withinNominal: true},
	})
	if tr.BorrowingWith(u, big, 0, math.MaxInt64-1) {
		t.Error("an unlimited queue borrows")
	}
	if bl, ok := tr.BorrowingLimit(big, 0); ok || bl != Unlimited {
		t.Errorf("BorrowingLimit(big) = %d, %v", bl, ok)
	}
	if ll, ok := tr.LendingLimit(lender, 0); !ok || ll != 5 {
		t.Errorf("LendingLimit(lender) = %d, %v", ll, ok)
	}
}

func TestAmountArithmetic(t *testing.T) {
	const minI = math.MinInt64
	cases := []struct {
		name     string
		a, b     int64
		add, sub int64
	}{
		{"bounded", 7, 3, 10, 4},
		{"negative result", 3, 7, 10, -4},
		{"unlimited and bounded", Unlimited, 5, Unlimited, Unlimited},
		{"bounded and unlimited", 5, Unlimited, Unlimited, minI},
		{"both unlimited", Unlimited, Unlimited, Unlimited, 0},
		{"unlimited minus negative", Unlimited, -5, Unlimited, Unlimited},
		{"bounded overflow stays bounded", Unlimited - 1, 1, Unlimited - 1, Unlimited - 2},
		{"bounded sum exactly at the sentinel", Unlimited - 2, 2, Unlimited - 1, Unlimited - 4},
		{"large positives", 1 << 62, 1 << 62, Unlimited - 1, 0},
		{"underflow", minI, -1, minI, minI + 1},
		{"no-capacity minus more", minI, 1, minI + 1, minI},
		{"subtracting no-capacity", 1, minI, minI + 1, math.MaxInt64},
	}
	for _, c := range cases {
		if got := AddAmount(c.a, c.b); got != c.add {
			t.Errorf("%s: AddAmount(%d, %d) = %d, want %d", c.name, c.a, c.b, got, c.add)
		}
		if got := SubAmount(c.a, c.b); got != c.sub {
			t.Errorf("%s: SubAmount(%d, %d) = %d, want %d", c.name, c.a, c.b, got, c.sub)
		}
	}
}

func TestNewResourceTreeValidates(t *testing.T) {
	queue := func(parent int32, q ...ResourceQuota) NodeSpec {
		return NodeSpec{Name: "q", Parent: parent, Queue: true, Quotas: q}
	}
	cohort := func(parent int32, q ...ResourceQuota) NodeSpec {
		return NodeSpec{Name: "c", Parent: parent, Quotas: q}
	}
	cases := []struct {
		name      string
		resources int
		nodes     []NodeSpec
		want      error
	}{
		{"ok", 1, []NodeSpec{cohort(-1), queue(0, ResourceQuota{Nominal: 4, BorrowingLimit: lim(2), LendingLimit: lim(4)})}, nil},
		{"empty", 1, nil, nil},
		{"lone queue", 1, []NodeSpec{queue(-1, ResourceQuota{Nominal: 4})}, nil},
		{"cohort lends more than its own nominal", 1, []NodeSpec{cohort(-1), cohort(0, ResourceQuota{LendingLimit: lim(9)}), queue(1, ResourceQuota{Nominal: 9})}, nil},
		{"unlimited limit without parent is no limit", 1, []NodeSpec{queue(-1, ResourceQuota{Nominal: 1, BorrowingLimit: lim(Unlimited)})}, nil},
		{"too many resources", res.Max + 1, nil, ErrTreeShape},
		{"no resources", 0, nil, ErrTreeShape},
		{"short quota list", 2, []NodeSpec{queue(-1, ResourceQuota{Nominal: 1})}, ErrQuotaShape},
		{"unknown parent", 1, []NodeSpec{queue(3)}, ErrUnknownCohort},
		{"parent below -1", 1, []NodeSpec{queue(-2)}, ErrUnknownCohort},
		{"queue as parent", 1, []NodeSpec{queue(-1), queue(0)}, ErrParentIsQueue},
		{"self cycle", 1, []NodeSpec{cohort(0)}, ErrCohortCycle},
		{"long cycle", 1, []NodeSpec{cohort(2), cohort(0), cohort(1)}, ErrCohortCycle},
		{"negative nominal", 1, []NodeSpec{queue(-1, ResourceQuota{Nominal: -1})}, ErrNegativeQuota},
		{"negative borrowing limit", 1, []NodeSpec{cohort(-1), queue(0, ResourceQuota{BorrowingLimit: lim(-1)})}, ErrNegativeQuota},
		{"lending above nominal", 1, []NodeSpec{cohort(-1), queue(0, ResourceQuota{Nominal: 4, LendingLimit: lim(5)})}, ErrLendingAboveNominal},
		{"borrowing limit at a root", 1, []NodeSpec{cohort(-1, ResourceQuota{BorrowingLimit: lim(1)})}, ErrLimitWithoutParent},
		{"lending limit on a queue without cohort", 1, []NodeSpec{queue(-1, ResourceQuota{Nominal: 4, LendingLimit: lim(1)})}, ErrLimitWithoutParent},
	}
	for _, c := range cases {
		_, err := NewResourceTree(1, c.resources, c.nodes)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
}

func TestResourceTreeHeights(t *testing.T) {
	// r ── c1 ── c2 ── q;  r ── q;  r ── empty cohort;  lone (no children).
	tr := mustTree(t, 1, 1, []NodeSpec{
		{Name: "r", Parent: -1}, {Name: "c1", Parent: 0}, {Name: "c2", Parent: 1},
		{Name: "q", Parent: 2, Queue: true}, {Name: "rq", Parent: 0, Queue: true},
		{Name: "empty", Parent: 0}, {Name: "lone", Parent: -1},
	})
	want := []int{3, 2, 1, 0, 0, 0, 0}
	for n, h := range want {
		if got := tr.Height(int32(n)); got != h {
			t.Errorf("Height(%s) = %d, want %d", tr.Name(int32(n)), got, h)
		}
	}
}

// AddVec is AddUsage/RemoveUsage per resource, and copy-on-write keeps
// earlier versions intact.
func TestAddVecMatchesAddUsage(t *testing.T) {
	const F, R = 2, 3
	q := func(nominal int64, ll *int64) []ResourceQuota {
		qs := make([]ResourceQuota, F*R)
		for i := range qs {
			qs[i] = ResourceQuota{Nominal: nominal + int64(i), LendingLimit: ll}
		}
		return qs
	}
	tr := mustTree(t, F, R, []NodeSpec{
		{Name: "root", Parent: -1},
		{Name: "mid", Parent: 0, Quotas: q(1, lim(1))},
		{Name: "q1", Parent: 1, Queue: true, Quotas: q(4, lim(2))},
		{Name: "q2", Parent: 1, Queue: true, Quotas: q(2, nil)},
	})
	byVec, byOne := tr.NewUsage(), tr.NewUsage()
	steps := []struct {
		q    int32
		f    int
		vec  res.Vec
		sign int
	}{
		{2, 1, res.Vec{5, 0, 9}, 1},
		{3, 1, res.Vec{1, 7, 2}, 1},
		{2, 0, res.Vec{3, 3, 3}, 1},
		{2, 1, res.Vec{2, 0, 4}, -1},
		{3, 1, res.Vec{1, 7, 2}, -1},
	}
	var versions []Usage
	var frozen [][][]int64
	for _, s := range steps {
		versions = append(versions, byVec.Clone())
		frozen = append(frozen, deepCopy(byVec))
		tr.AddVec(byVec, s.q, s.f, s.vec, s.sign)
		for r := range R {
			if s.sign > 0 {
				tr.AddUsage(byOne, s.q, tr.FR(s.f, r), s.vec[r])
			} else {
				tr.RemoveUsage(byOne, s.q, tr.FR(s.f, r), s.vec[r])
			}
		}
		for n := range tr.Len() {
			if !slices.Equal(byVec[n], byOne[n]) {
				t.Fatalf("after %+v: %s: AddVec %v, AddUsage %v", s, tr.Name(int32(n)), byVec[n], byOne[n])
			}
		}
	}
	for i, v := range versions {
		for n := range v {
			if !slices.Equal(v[n], frozen[i][n]) {
				t.Errorf("version %d, node %d changed: %v, was %v", i, n, v[n], frozen[i][n])
			}
		}
	}
}

func deepCopy(u Usage) [][]int64 {
	out := make([][]int64, len(u))
	for i, row := range u {
		out[i] = slices.Clone(row)
	}
	return out
}

// The hot path's allocations are pinned: reads allocate nothing, a write
// allocates its new rows once, a snapshot copies the outer slice once.
func TestResourceTreeAllocs(t *testing.T) {
	tr := hierarchy(t)
	u := use(tr, map[int32]int64{hA1: 8, hA2: 2, hB1: 9})
	var sink int64
	cases := []struct {
		name string
		want float64
		f    func()
	}{
		{"Available", 0, func() { sink += tr.Available(u, hA2, 0) }},
		{"BorrowingLevel", 0, func() { l, _ := tr.BorrowingLevel(u, hA2, 0, 3); sink += int64(l) }},
		{"AddUsage+RemoveUsage", 2, func() { tr.AddUsage(u, hA1, 0, 3); tr.RemoveUsage(u, hA1, 0, 3) }},
		{"AddVec both ways", 2, func() { tr.AddVec(u, hB1, 0, res.Vec{4}, 1); tr.AddVec(u, hB1, 0, res.Vec{4}, -1) }},
		{"AddVec of nothing", 0, func() { tr.AddVec(u, hB1, 0, res.Vec{}, 1) }},
		{"Clone", 1, func() { sink += int64(len(u.Clone())) }},
	}
	for _, c := range cases {
		if got := testing.AllocsPerRun(100, c.f); got != c.want {
			t.Errorf("%s: %v allocs, want %v", c.name, got, c.want)
		}
	}
	_ = sink
}

func TestRecomputeRejectsMismatch(t *testing.T) {
	tr := hierarchy(t)
	if err := tr.Recompute(make(Usage, 3)); !errors.Is(err, ErrUsageShape) {
		t.Errorf("short usage: %v", err)
	}
	u := tr.NewUsage()
	u[hA1] = []int64{1, 2}
	if err := tr.Recompute(u); !errors.Is(err, ErrUsageShape) {
		t.Errorf("long row: %v", err)
	}
}

func TestUsageOnCohortPanics(t *testing.T) {
	tr := hierarchy(t)
	defer func() {
		if recover() == nil {
			t.Error("AddUsage on a cohort did not panic")
		}
	}()
	tr.AddUsage(tr.NewUsage(), hA, 0, 1)
}
