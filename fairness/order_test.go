package fairness

import (
	"math"
	"slices"
	"testing"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
)

func TestTurnBefore(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b Turn
		want bool
	}{
		{"higher priority first", Turn{Priority: 5, SubmittedAt: 9, ID: "z"}, Turn{Priority: 1, ID: "a"}, true},
		{"lower priority later", Turn{Priority: 1, ID: "a"}, Turn{Priority: 5, SubmittedAt: 9, ID: "z"}, false},
		{"earlier submission first", Turn{SubmittedAt: 1, ID: "z"}, Turn{SubmittedAt: 2, ID: "a"}, true},
		{"then ID", Turn{SubmittedAt: 1, ID: "a"}, Turn{SubmittedAt: 1, ID: "b"}, true},
		{"not before itself", Turn{ID: "a"}, Turn{ID: "a"}, false},
	} {
		if got := c.a.Before(c.b); got != c.want {
			t.Errorf("%s: %v.Before(%v) = %v", c.name, c.a, c.b, got)
		}
	}
}

func TestOrderCompare(t *testing.T) {
	key := func(q int32, name string, prio int32, at int64, id string) Key {
		return Key{Queue: q, QueueName: name, Turn: Turn{Priority: prio, SubmittedAt: at, ID: id}}
	}
	with := func(k Key, f func(*Key)) Key { f(&k); return k }
	a, b := key(0, "qa", 1, 10, "a"), key(1, "qb", 1, 10, "b")
	borrowing := Share{Ratio: 100, Weighted: 100, Borrowing: true}
	for _, c := range []struct {
		name string
		o    Order
		a, b Key
		want int
	}{
		{"lower level first", Order{}, with(b, func(k *Key) { k.Level = 1 }), a, 1},
		{"level before priority", Order{}, with(a, func(k *Key) { k.Turn.Priority = 9 }), with(b, func(k *Key) { k.Level = -1 }), 1},
		{"level ignored with fair sharing", Order{FairSharing: true}, with(a, func(k *Key) { k.Level = 3 }), b, -1},
		{"share ignored without fair sharing", Order{}, with(a, func(k *Key) { k.Share = borrowing }), b, -1},
		{"not borrowing first", Order{FairSharing: true}, with(a, func(k *Key) { k.Share = borrowing }), with(b, func(k *Key) { k.Share.Weighted = 500 }), 1},
		{"lower share first", Order{FairSharing: true}, with(a, func(k *Key) { k.Share = Share{Ratio: 50, Weighted: 50, Borrowing: true} }), with(b, func(k *Key) { k.Share = borrowing }), -1},
		{"zero-weight borrowers by ratio", Order{FairSharing: true},
			with(a, func(k *Key) { k.Share = Share{Ratio: 90, Weighted: math.Inf(1), Borrowing: true} }),
			with(b, func(k *Key) { k.Share = Share{Ratio: 80, Weighted: math.Inf(1), Borrowing: true} }), 1},
		{"higher debt first", Order{ByDebt: true}, with(a, func(k *Key) { k.Debt = 1 }), with(b, func(k *Key) { k.Debt = 2 }), 1},
		{"debt off", Order{}, with(a, func(k *Key) { k.Debt = 1 }), with(b, func(k *Key) { k.Debt = 2 }), -1},
		{"debt after share", Order{FairSharing: true, ByDebt: true}, with(a, func(k *Key) { k.Share = borrowing }), with(b, func(k *Key) { k.Debt = -1 }), 1},
		{"lower usage per weight first", Order{ByUsage: true}, with(a, func(k *Key) { k.Usage = 3 }), with(b, func(k *Key) { k.Usage = 2 }), 1},
		{"usage after debt", Order{ByDebt: true, ByUsage: true}, with(a, func(k *Key) { k.Debt, k.Usage = 2, 9 }), with(b, func(k *Key) { k.Debt = 1 }), -1},
		{"priority before debt", Order{ByDebt: true}, with(a, func(k *Key) { k.Debt = 5 }), with(b, func(k *Key) { k.Turn.Priority = 2 }), 1},
		{"priority before usage", Order{ByUsage: true}, with(a, func(k *Key) { k.Turn.Priority = 2; k.Usage = 9 }), b, -1},
		{"history before submission", Order{ByUsage: true}, with(a, func(k *Key) { k.Usage = 3 }), with(b, func(k *Key) { k.Turn.SubmittedAt = 99 }), 1},
		{"history within a queue ignored", Order{ByDebt: true}, with(a, func(k *Key) { k.Debt = 1 }), with(b, func(k *Key) { k.Queue, k.Debt = 0, 2 }), -1},
		{"then priority", Order{}, a, with(b, func(k *Key) { k.Turn.Priority = 2 }), 1},
		{"then submission", Order{}, with(a, func(k *Key) { k.Turn.SubmittedAt = 11 }), b, 1},
		{"then queue name before ID", Order{}, with(a, func(k *Key) { k.QueueName, k.Turn.ID = "qz", "a" }), with(b, func(k *Key) { k.Turn.ID = "z" }), 1},
		{"then ID", Order{}, a, with(b, func(k *Key) { k.QueueName = "qa" }), -1},
	} {
		if got := c.o.Compare(&c.a, &c.b); got != c.want {
			t.Errorf("%s: Compare = %d, want %d", c.name, got, c.want)
		}
		if got := c.o.Compare(&c.b, &c.a); got != -c.want {
			t.Errorf("%s: Compare reversed = %d, want %d", c.name, got, -c.want)
		}
	}
}

func TestOrderSort(t *testing.T) {
	heads := []Head{
		{Key: Key{Queue: 0, QueueName: "q0", Level: 1, Turn: Turn{Priority: 9, ID: "a"}}},
		{Key: Key{Queue: 1, QueueName: "q1", Turn: Turn{Priority: 1, ID: "b"}}},
		{Key: Key{Queue: 2, QueueName: "q2", Turn: Turn{Priority: 5, ID: "c"}}},
		{Key: Key{Queue: 3, QueueName: "q3", Level: 1, Turn: Turn{Priority: 9, SubmittedAt: -1, ID: "d"}}},
	}
	buf := make([]int, 0, 8)
	got := Order{}.Sort(heads, buf)
	if want := []int{2, 1, 3, 0}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if &got[0] != &buf[:1][0] {
		t.Fatal("Sort did not reuse out's memory")
	}
}

func TestPerWeight(t *testing.T) {
	for _, c := range []struct{ u, w, want float64 }{{10, 2, 5}, {0, 1, 0}, {10, 0, math.Inf(1)}, {0, -1, math.Inf(1)}} {
		if got := PerWeight(c.u, c.w); got != c.want {
			t.Errorf("PerWeight(%v, %v) = %v, want %v", c.u, c.w, got, c.want)
		}
	}
}

// twoLevels is a two-level cohort tree of one flavor with two resources
// (gpu, cpu): queues qa and qb (4 gpu each) in cohort left, qc (4 gpu) in
// cohort right, both under root. No lending limits: a cohort's usage is
// its subtree's.
func twoLevels(t *testing.T) *quota.ResourceTree {
	t.Helper()
	q := func(gpu int64) []quota.ResourceQuota { return []quota.ResourceQuota{{Nominal: gpu}, {Nominal: 100}} }
	tr, err := quota.NewResourceTree(1, 2, []quota.NodeSpec{
		{Name: "qa", Parent: 3, Queue: true, Quotas: q(4)},
		{Name: "qb", Parent: 3, Queue: true, Quotas: q(4)},
		{Name: "qc", Parent: 4, Queue: true, Quotas: q(4)},
		{Name: "left", Parent: 5},
		{Name: "right", Parent: 5},
		{Name: "root", Parent: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func gpus(n int64) []Charge { return []Charge{{Flavor: 0, Need: res.Vec{n, 1}}} }

func TestShareAfterAndAccount(t *testing.T) {
	tr := twoLevels(t)
	u := tr.NewUsage()
	Account(tr, u, 0, gpus(4))
	if got := u.At(5, tr.FR(0, 0)); got != 4 {
		t.Fatalf("root uses %d gpu, want 4", got)
	}
	lendable := float64(tr.PotentialAvailable(3, tr.FR(0, 0)))
	for _, c := range []struct {
		name    string
		q       int32
		charges []Charge
		weight  float64
		want    Share
	}{
		{"within nominal", 0, nil, 1, Share{}},
		{"borrowing", 0, gpus(2), 1, Share{Ratio: 2000 / lendable, Weighted: 2000 / lendable, Borrowing: true}},
		{"weighted", 0, gpus(2), 2, Share{Ratio: 2000 / lendable, Weighted: 1000 / lendable, Borrowing: true}},
		{"weight 0", 0, gpus(2), 0, Share{Ratio: 2000 / lendable, Weighted: math.Inf(1), Borrowing: true}},
		{"charges summed", 1, append(gpus(3), gpus(2)...), 1, Share{Ratio: 1000 / lendable, Weighted: 1000 / lendable, Borrowing: true}},
	} {
		if got := ShareAfter(tr, u, c.q, c.charges, c.weight); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// A queue that borrows cpu is borrowing for a head that asks for cpu, not
// for one that asks only for gpu within its nominal quota (Kueue's
// IsBorrowingOn); its share counts the cpu either way.
func TestShareAfterBorrowingOnWhatIsAsked(t *testing.T) {
	tr := twoLevels(t)
	u := tr.NewUsage()
	Account(tr, u, 0, []Charge{{Flavor: 0, Need: res.Vec{0, 150}}}) // 50 cpu beyond qa's 100
	lendable := float64(tr.PotentialAvailable(3, tr.FR(0, 1)))
	ratio := 50 * 1000 / lendable
	for _, c := range []struct {
		name    string
		charges []Charge
		want    Share
	}{
		{"gpu only", []Charge{{Flavor: 0, Need: res.Vec{2, 0}}}, Share{Ratio: ratio, Weighted: ratio}},
		{"gpu and cpu", []Charge{{Flavor: 0, Need: res.Vec{2, 10}}}, Share{Ratio: 60 * 1000 / lendable, Weighted: 60 * 1000 / lendable, Borrowing: true}},
	} {
		if got := ShareAfter(tr, u, 0, c.charges, 1); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	if got := DominantShare(tr, u, 0, nil, 1); !got.Borrowing {
		t.Errorf("DominantShare without a head: %+v, want borrowing", got)
	}
}
