package allot_test

import (
	"testing"

	"github.com/allot-sched/allot"
)

// TestCohortLendingLimitAboveItsOwnNominal: a cohort's lending limit
// bounds what its subtree lends, so it may exceed the cohort's own
// (here zero) nominal quota, as in Kueue.
func TestCohortLendingLimitAboveItsOwnNominal(t *testing.T) {
	five := int64(5)
	gpu := func(n int64, ll *int64) []allot.FlavorQuota {
		return []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: n, LendingLimit: ll}}}}
	}
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Cohorts:   []allot.Cohort{{Name: "root"}, {Name: "c", Parent: "root", Quota: gpu(0, &five)}},
		Queues: []allot.Queue{
			{Name: "owner", Cohort: "c", Quota: gpu(10, nil)},
			{Name: "sibling", Cohort: "root", Quota: gpu(0, nil)},
		},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		gpus int64
		want allot.Verdict
	}{{3, allot.VerdictAdmit}, {5, allot.VerdictAdmit}, {6, allot.VerdictReject}} {
		d := allot.Decide(s, allot.Request{ID: "x", Queue: "sibling", PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": c.gpus}}}})
		if d.Verdict != c.want {
			t.Errorf("sibling asks %d gpu of the 5 cohort c lends: %v %v: %s", c.gpus, d.Verdict, d.Reason, d.Message)
		}
	}
}

// TestWindowClosingInsideAnother: a ×0.5 window closing inside a ×2 one
// leaves the quota doubled for a while, so a request that fits only then
// waits for it instead of being told it never fits.
func TestWindowClosingInsideAnother(t *testing.T) {
	b := allot.Builder{
		Now:       9 * 3600,
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}},
			Windows: []allot.Window{{From: "10:00", To: "12:00", Scale: 0.5}, {From: "11:00", To: "13:00", Scale: 2}}}},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d := allot.Decide(s, allot.Request{ID: "x", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 16}}}})
	if d.Verdict != allot.VerdictQueue {
		t.Fatalf("16 gpu fit between 12:00 and 13:00: %v %v: %s", d.Verdict, d.Reason, d.Message)
	}
}
