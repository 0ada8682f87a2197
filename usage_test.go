package allot_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/allot-sched/allot"
)

func cohortBuilder() allot.Builder {
	ptr := func(v int64) *int64 { return &v }
	gpu := func(nominal int64, bl, ll *int64) []allot.FlavorQuota {
		return []allot.FlavorQuota{{Flavor: "default", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: nominal, BorrowingLimit: bl, LendingLimit: ll}}}}
	}
	return allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "default"}},
		Cohorts: []allot.Cohort{{Name: "org", Quota: gpu(4, nil, nil)}, {Name: "ml", Parent: "org", Quota: gpu(0, ptr(6), nil)},
			{Name: "cv", Parent: "org", Quota: gpu(2, nil, ptr(3))}},
		Queues: []allot.Queue{
			{Name: "a", Cohort: "ml", Quota: gpu(8, ptr(4), ptr(2))},
			{Name: "b", Cohort: "ml", Quota: gpu(6, nil, nil)},
			{Name: "c", Cohort: "cv", Quota: gpu(10, nil, ptr(5))},
			{Name: "d", Quota: gpu(5, nil, nil)},
		},
	}
}

// TestUsageMatchesFromScratch drives a store through long random sequences
// of admissions, finishes and evictions, then builds a fresh snapshot from
// the admitted workloads alone: every node of the cohort tree must show the
// same usage, so the incremental bookkeeping never drifts.
func TestUsageMatchesFromScratch(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		b := cohortBuilder()
		s0, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		st := allot.NewStore(s0)
		queues := []string{"a", "b", "c", "d"}
		admitted := 0
		for step := 0; step < 300; step++ {
			s := st.Load()
			running := s.RunningIDs()
			switch {
			case rng.IntN(3) > 0 || len(running) == 0:
				req := allot.Request{ID: fmt.Sprintf("w%d-%d", seed, step), Queue: queues[rng.IntN(len(queues))],
					PodSets: []allot.PodSet{{Name: "m", Count: int32(1 + rng.IntN(2)), PerPod: allot.Resources{"gpu": int64(1 + rng.IntN(4))}}}}
				if d := allot.Decide(s, req); d.Verdict == allot.VerdictAdmit {
					if _, err := st.Commit(d); err != nil {
						t.Fatalf("seed %d step %d: %v", seed, step, err)
					}
					admitted++
				}
			case rng.IntN(2) == 0:
				if _, err := st.Apply(allot.Finish{ID: running[rng.IntN(len(running))]}); err != nil {
					t.Fatal(err)
				}
			default:
				if _, err := st.Apply(allot.Evict{ID: running[rng.IntN(len(running))]}); err != nil {
					t.Fatal(err)
				}
			}
		}
		s := st.Load()
		fresh := cohortBuilder()
		for _, id := range s.RunningIDs() {
			w, _ := s.Running(id)
			fresh.Running = append(fresh.Running, w)
		}
		f, err := fresh.Build()
		if err != nil {
			t.Fatalf("seed %d: rebuild: %v", seed, err)
		}
		names, got, frs := s.TreeUsage()
		_, want, _ := f.TreeUsage()
		for n := range names {
			for fr := 0; fr < frs; fr++ {
				if got.At(int32(n), fr) != want.At(int32(n), fr) {
					t.Fatalf("seed %d: %s usage %d, from scratch %d", seed, names[n], got.At(int32(n), fr), want.At(int32(n), fr))
				}
			}
		}
		if admitted < 20 {
			t.Fatalf("seed %d: only %d admissions; the test exercises too little", seed, admitted)
		}
	}
}

// TestQueueConfigChangeKeepsUsage changes quota through the store and checks
// the new quota takes effect on the next snapshot with usage kept.
func TestQueueConfigChangeKeepsUsage(t *testing.T) {
	b := cohortBuilder()
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(s)
	req := func(id string, gpus int64) allot.Request {
		return allot.Request{ID: id, Queue: "d", PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": gpus}}}}
	}
	if _, err := st.Commit(allot.Decide(st.Load(), req("first", 4))); err != nil {
		t.Fatal(err)
	}
	if d := allot.Decide(st.Load(), req("second", 4)); d.Reason != allot.QuotaExhausted {
		t.Fatalf("before the change: %v %s", d.Reason, d.Message)
	}
	before := st.Load()
	q := b.Queues[3]
	q.Quota = []allot.FlavorQuota{{Flavor: "default", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}
	if _, err := st.Apply(allot.SetQueue{Queue: q}); err != nil {
		t.Fatal(err)
	}
	// Versions share the configuration: the change must not reach one
	// published before it.
	if d := allot.Decide(before, req("second", 4)); d.Reason != allot.QuotaExhausted {
		t.Fatalf("the version before the change: %v %s", d.Reason, d.Message)
	}
	if got, _ := before.Queue("d"); !reflect.DeepEqual(got, b.Queues[3]) {
		t.Fatalf("the version before the change shows queue %+v", got)
	}
	if got := st.Load().Usage("d", "default", "gpu"); got != 4 {
		t.Fatalf("usage after the change: %d", got)
	}
	if d := allot.Decide(st.Load(), req("second", 4)); d.Reason != allot.Fits {
		t.Fatalf("after the change: %v %s", d.Reason, d.Message)
	}
	// A cohort change too: org gives up its own quota.
	mid := st.Load()
	if _, err := st.Apply(allot.SetCohort{Cohort: allot.Cohort{Name: "org"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply(allot.SetCohort{Cohort: allot.Cohort{Name: "loop", Parent: "loop"}}); err == nil {
		t.Fatal("a cohort that is its own parent was accepted")
	}
	// Neither the change nor the refused one reached the earlier version.
	if got, want := mid.Cohorts(), b.Cohorts; !reflect.DeepEqual(got, want) {
		t.Fatalf("cohorts of the version before the change: %+v, want %+v", got, want)
	}
	if _, err := st.Apply(allot.SetQueue{Queue: q}); err != nil {
		t.Fatalf("the store's configuration broke after a refused change: %v", err)
	}
}
