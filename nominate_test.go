package allot_test

import (
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

// TestOrderKeysFollowDecidesAssignment: the loop orders a head by the
// borrowing level of the flavors Decide would give it, pod set by pod set.
// x's two pod sets fit its nominal quota on two flavors (Decide: Fits);
// on one flavor together they would borrow (whenCanBorrow TryNextFlavor
// makes Decide take the second flavor). y fits its queue's nominal
// quota too and was submitted later, so x goes first.
func TestOrderKeysFollowDecidesAssignment(t *testing.T) {
	gpu := func(n int64) allot.Resources { return allot.Resources{"gpu": n} }
	quota := func(a, b int64) []allot.FlavorQuota {
		return []allot.FlavorQuota{
			{Flavor: "a", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: a}}},
			{Flavor: "b", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: b}}}}
	}
	b := allot.Builder{
		Now:       100,
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "a"}, {Name: "b"}},
		Cohorts:   []allot.Cohort{{Name: "c"}},
		Queues: []allot.Queue{
			{Name: "qx", Cohort: "c", Quota: quota(4, 4), FlavorFungibility: allot.FlavorFungibility{WhenCanBorrow: "TryNextFlavor"}},
			{Name: "qy", Cohort: "c", Quota: quota(8, 8)},
		},
		Pending: []allot.Workload{
			{ID: "x", Queue: "qx", SubmittedAt: 1, PodSets: []allot.PodSet{{Name: "p0", Count: 1, PerPod: gpu(4)}, {Name: "p1", Count: 1, PerPod: gpu(4)}}},
			{ID: "y", Queue: "qy", SubmittedAt: 2, PodSets: []allot.PodSet{{Name: "p0", Count: 1, PerPod: gpu(4)}}},
		},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	w, _ := s.Pending("x")
	d := allot.Decide(s, allot.Request(w))
	if d.Reason != allot.Fits || d.BorrowingLevel != 0 {
		t.Fatalf("x: %v %v level %d: %s", d.Verdict, d.Reason, d.BorrowingLevel, d.Message)
	}
	if got, want := allot.Order(s), []string{"x", "y"}; !slices.Equal(got, want) {
		t.Fatalf("Order = %v, want %v", got, want)
	}
	st := allot.NewStore(s)
	var seen []string
	allot.ScheduleFunc(st, func(d *allot.Decision) { seen = append(seen, d.Workload) })
	if want := []string{"x", "y"}; !slices.Equal(seen, want) {
		t.Fatalf("Schedule decided %v, want %v", seen, want)
	}
}
