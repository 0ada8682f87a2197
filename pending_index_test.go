package allot_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
)

// indexBuilder has two flavors on nodes of two racks and two queues, one
// of them StrictFIFO, for the pending-index test.
func indexBuilder() allot.Builder {
	b := allot.Builder{
		Resources: []string{"gpu", "cpu"},
		Levels:    []string{"rack"},
		Flavors:   []allot.Flavor{{Name: "h100"}, {Name: "a100"}},
		Queues: []allot.Queue{
			{Name: "strict", QueueingStrategy: allot.StrictFIFO, Quota: []allot.FlavorQuota{
				{Flavor: "h100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 24}, {Name: "cpu", Nominal: 1 << 20}}}}},
			{Name: "best", UserCap: allot.Resources{"gpu": 20}, NonPreemptibleCap: allot.Resources{"gpu": 20}, Quota: []allot.FlavorQuota{
				{Flavor: "a100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 24}, {Name: "cpu", Nominal: 1 << 20}}},
				{Flavor: "h100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}, {Name: "cpu", Nominal: 1 << 20}}}}},
		},
		Now: 1,
	}
	for i := range 8 {
		f := "h100"
		if i >= 4 {
			f = "a100"
		}
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: f, Labels: map[string]string{"rack": fmt.Sprintf("r%d", i/2)},
			Capacity: allot.Resources{"gpu": 8, "cpu": 64}})
	}
	return b
}

// TestPendingIndexesMatchFromScratch drives a store through random
// submissions, withdrawals, scheduling loops, finishes, evictions and
// queue changes, and checks after every step that what the pending indexes
// feed (fragmentation, the admission order, StrictFIFO's answer) equals
// what a snapshot built from scratch with the same workloads gives: the
// incremental indexes never drift.
func TestPendingIndexesMatchFromScratch(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		b := indexBuilder()
		s0, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		st := allot.NewStore(s0)
		queues := []string{"strict", "best"}
		now := int64(1)
		// Every published version must keep answering as it did when it
		// was published, whatever the store wrote since.
		type seen struct {
			s    *allot.Snapshot
			then string
		}
		var versions []seen
		for step := range 200 {
			s := st.Load()
			switch op := rng.IntN(10); {
			case op < 4:
				w := allot.Workload{ID: fmt.Sprintf("w%d", step), Queue: queues[rng.IntN(2)], Priority: int32(rng.IntN(3)), SubmittedAt: now,
					User: []string{"ann", "bob"}[rng.IntN(2)], Preemption: allot.PreemptionSpec{Class: []allot.PreemptionClass{allot.Never, allot.Preemptible}[rng.IntN(2)]},
					PodSets: []allot.PodSet{{Name: "m", Count: int32(1 + rng.IntN(3)), PerPod: allot.Resources{"gpu": int64(1 << rng.IntN(4)), "cpu": int64(4 * (1 + rng.IntN(2)))}}}}
				if rng.IntN(4) == 0 {
					w.PodSets[0].Flavors = []string{"h100"}
				}
				_, err = st.Apply(allot.Submit{Workload: w})
			case op < 5 && len(s.PendingIDs()) > 0:
				ids := s.PendingIDs()
				_, err = st.Apply(allot.Withdraw{ID: ids[rng.IntN(len(ids))]})
			case op < 7:
				allot.Schedule(st)
			case op < 9 && len(s.RunningIDs()) > 0:
				ids := s.RunningIDs()
				if rng.IntN(2) == 0 {
					_, err = st.Apply(allot.Finish{ID: ids[rng.IntN(len(ids))]})
				} else {
					_, err = st.Apply(allot.Evict{ID: ids[rng.IntN(len(ids))]})
				}
			default:
				// The best-effort queue gains or loses its h100 quota, so
				// its pending pods change the flavors they may land on.
				q := b.Queues[1]
				if rng.IntN(2) == 0 {
					q.Quota = q.Quota[:1]
				}
				_, err = st.Apply(allot.SetQueue{Queue: q})
			}
			if err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			now++
			if _, err := st.Apply(allot.AdvanceTime{Seconds: 1}); err != nil {
				t.Fatal(err)
			}
			compareWithScratch(t, fmt.Sprintf("seed %d step %d", seed, step), st.Load())
			versions = append(versions, seen{st.Load(), fingerprint(st.Load())})
		}
		for i, v := range versions {
			if now := fingerprint(v.s); now != v.then {
				t.Fatalf("seed %d: version %d changed after it was published:\nthen %s\nnow  %s", seed, i, v.then, now)
			}
		}
	}
}

// fingerprint renders what a snapshot answers about its queues and what
// it decides for probes that meet the user and non-preemptible caps.
func fingerprint(s *allot.Snapshot) string {
	var b strings.Builder
	for _, q := range []string{"strict", "best"} {
		fmt.Fprintf(&b, "%s: %d running, debt %.6g, used %.6g, gpu %d; ", q, s.RunningCount(q), s.Debt(q), s.HistoricalUsage(q), s.Usage(q, "h100", "gpu"))
	}
	for _, user := range []string{"ann", "bob"} {
		for _, class := range []allot.PreemptionClass{allot.Never, allot.Preemptible} {
			d := allot.Decide(s, allot.Request{ID: "probe", Queue: "best", User: user, Preemption: allot.PreemptionSpec{Class: class},
				PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 4, "cpu": 4}}}})
			fmt.Fprintf(&b, "%v %s; ", d.Reason, d.Message)
		}
	}
	return b.String()
}

func compareWithScratch(t *testing.T, at string, s *allot.Snapshot) {
	t.Helper()
	fresh := indexBuilder()
	fresh.Queues = nil
	for _, name := range []string{"strict", "best"} {
		q, _ := s.Queue(name)
		fresh.Queues = append(fresh.Queues, q)
	}
	fresh.Now = s.Now()
	fresh.Pending = s.PendingWorkloads()
	for _, id := range s.RunningIDs() {
		w, _ := s.Running(id)
		fresh.Running = append(fresh.Running, w)
	}
	f, err := fresh.Build()
	if err != nil {
		t.Fatalf("%s: rebuild: %v", at, err)
	}
	if got, want := s.Fragmentation(), f.Fragmentation(); got != want {
		t.Fatalf("%s: fragmentation %+v, from scratch %+v", at, got, want)
	}
	if got, want := allot.Order(s), allot.Order(f); !slices.Equal(got, want) {
		t.Fatalf("%s: order %v, from scratch %v", at, got, want)
	}
	for _, w := range fresh.Pending {
		got, want := allot.Decide(s, allot.Request(w)), allot.Decide(f, allot.Request(w))
		if got.Reason != want.Reason || got.Message != want.Message {
			t.Fatalf("%s: %s decided %v %q, from scratch %v %q", at, w.ID, got.Reason, got.Message, want.Reason, want.Message)
		}
	}
}

// TestScheduleFuncSeesWhatScheduleReturns runs both loops on twin stores
// with waiting work of both queues: ScheduleFunc hands over, one by one,
// the decisions Schedule returns, and both stores end alike.
func TestScheduleFuncSeesWhatScheduleReturns(t *testing.T) {
	b := indexBuilder()
	for i := range 40 {
		b.Pending = append(b.Pending, allot.Workload{ID: fmt.Sprintf("w%02d", i), Queue: []string{"strict", "best"}[i%3%2], Priority: int32(i % 4),
			PodSets: []allot.PodSet{{Name: "m", Count: int32(1 + i%3), PerPod: allot.Resources{"gpu": int64(1 << (i % 4)), "cpu": 4}}}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	a, c := allot.NewStore(s), allot.NewStore(s)
	want := allot.Schedule(a)
	var got []allot.Decision
	allot.ScheduleFunc(c, func(d *allot.Decision) {
		got = append(got, allot.Decision{Verdict: d.Verdict, Reason: d.Reason, Workload: d.Workload, Message: strings.Clone(d.Message)})
	})
	if len(got) != len(want) || len(want) < 10 {
		t.Fatalf("%d decisions seen, %d returned", len(got), len(want))
	}
	admitted := 0
	for i := range want {
		if got[i].Workload != want[i].Workload || got[i].Verdict != want[i].Verdict || got[i].Reason != want[i].Reason || got[i].Message != want[i].Message {
			t.Fatalf("decision %d: %s %v %q, Schedule: %s %v %q", i, got[i].Workload, got[i].Reason, got[i].Message, want[i].Workload, want[i].Reason, want[i].Message)
		}
		if want[i].Verdict == allot.VerdictAdmit {
			admitted++
		}
	}
	if admitted == 0 || !slices.Equal(a.Load().RunningIDs(), c.Load().RunningIDs()) || !slices.Equal(a.Load().PendingIDs(), c.Load().PendingIDs()) {
		t.Fatalf("%d admitted; the stores differ", admitted)
	}
}

// TestStrictFIFODecideDoesNotAllocate: finding the workload ahead in a
// StrictFIFO queue is a seek from a pivot in the decision's workspace.
func TestStrictFIFODecideDoesNotAllocate(t *testing.T) {
	b := indexBuilder()
	b.Pending = []allot.Workload{{ID: "p", Queue: "strict", SubmittedAt: 1, PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 1}}}}}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := allot.Request{ID: "r", Queue: "strict", SubmittedAt: 1, PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 1}}}}
	var d allot.Decision
	allot.DecideInto(s, r, &d)
	if d.Reason != allot.HigherPriorityPending || !strings.Contains(d.Message, `"p" waits ahead`) {
		t.Fatalf("%v %s", d.Reason, d.Message)
	}
	if n := testing.AllocsPerRun(100, func() { allot.DecideInto(s, r, &d) }); n != 0 {
		t.Fatalf("%v allocations per decision", n)
	}
}
