package quota_test

import (
	"fmt"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
)

// Kueue's cohort-lend fixture: two queues lend only part of their nominal
// quota to their cohort and keep the rest for themselves.
func ExampleResourceTree() {
	limit := func(v int64) *int64 { return &v }
	tr, err := quota.NewResourceTree(1, 1, []quota.NodeSpec{
		{Name: "cohort", Parent: -1},
		{Name: "lend1", Parent: 0, Queue: true, Quotas: []quota.ResourceQuota{{Nominal: 6, LendingLimit: limit(4)}}},
		{Name: "lend2", Parent: 0, Queue: true, Quotas: []quota.ResourceQuota{{Nominal: 6, LendingLimit: limit(2)}}},
	})
	if err != nil {
		panic(err)
	}
	fr := tr.FR(0, 0)
	u := tr.NewUsage()
	tr.AddVec(u, 1, 0, res.Vec{3}, +1)
	before := u.Clone() // a reader's snapshot: later writes leave it alone
	tr.AddUsage(u, 2, fr, 7)

	fmt.Println("cohort usage:", u.At(0, fr), "was", before.At(0, fr))
	fmt.Println("lend1 available:", tr.Available(u, 1, fr), "of at most", tr.PotentialAvailable(1, fr))
	level, reclaim := tr.BorrowingLevel(u, 1, fr, 4)
	fmt.Println("lend1 asking 4 more borrows at level", level, "may reclaim:", reclaim)
	// Output:
	// cohort usage: 4 was 1
	// lend1 available: 2 of at most 8
	// lend1 asking 4 more borrows at level 1 may reclaim: false
}
