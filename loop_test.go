package allot_test

import (
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

func orderBuilder() allot.Builder {
	q := func(name string) allot.Queue {
		return allot.Queue{Name: name, Quota: []allot.FlavorQuota{{Flavor: "default", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 100}}}}}
	}
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "default"}},
		Queues:    []allot.Queue{q("a"), q("b"), q("c")},
		Now:       1000,
		History: allot.History{HalfLife: 3600, Preemptions: map[string]float64{"c": 2},
			Usage: map[string]allot.Resources{"a": {"gpu": 7200}, "b": {"gpu": 100}}},
	}
	for i, name := range []string{"a", "b", "c"} {
		b.Pending = append(b.Pending, allot.Workload{ID: name + "-0", Queue: name, Priority: 5, SubmittedAt: int64(i),
			PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 1}}}})
	}
	return b
}

func TestOrderHistoryOptions(t *testing.T) {
	cases := []struct {
		debt, usage bool
		want        []string
	}{
		{false, false, []string{"a-0", "b-0", "c-0"}}, // submission order
		{true, false, []string{"c-0", "a-0", "b-0"}},  // c was preempted lately
		{false, true, []string{"c-0", "b-0", "a-0"}},  // c used nothing, a the most
		{true, true, []string{"c-0", "b-0", "a-0"}},
	}
	for _, c := range cases {
		b := orderBuilder()
		b.Options.OrderByDebt, b.Options.OrderByUsage = c.debt, c.usage
		s, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		if got := allot.Order(s); !slices.Equal(got, c.want) {
			t.Errorf("debt=%v usage=%v: order %v, want %v", c.debt, c.usage, got, c.want)
		}
	}
}

// TestOrderHistoryWithinPriority: the history keys order the heads of one
// priority; a higher class goes first whatever its queue used or suffered.
func TestOrderHistoryWithinPriority(t *testing.T) {
	b := orderBuilder()
	b.Options.OrderByDebt, b.Options.OrderByUsage = true, true
	b.Pending[0].Priority = 9 // a used the most and suffered nothing
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := allot.Order(s), []string{"a-0", "c-0", "b-0"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestHistoricalUsageDecays(t *testing.T) {
	b := orderBuilder()
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := s.HistoricalUsage("a"); got != 7200 {
		t.Fatalf("initial usage %v", got)
	}
	st := allot.NewStore(s)
	d := allot.Decide(s, allot.Request(b.Pending[1])) // b-0, one GPU
	if _, err := st.Commit(d); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply(allot.AdvanceTime{Seconds: 3600}); err != nil {
		t.Fatal(err)
	}
	s2 := st.Load()
	// One half-life later: a's history halves; b's halves and gains the
	// GPU-hour it held.
	if got := s2.HistoricalUsage("a"); got != 3600 {
		t.Fatalf("a after a half-life: %v", got)
	}
	if got := s2.HistoricalUsage("b"); got != 50+3600 {
		t.Fatalf("b after a half-life holding one GPU: %v", got)
	}
	if got := s2.Debt("c"); got != 1 {
		t.Fatalf("c's debt after a half-life: %v", got)
	}
}

// A queue of workloads that cannot be admitted: without a depth the loop
// looks at all of them and admits the small one at the back; with a depth
// of 3 it stops after three.
func TestScheduleQueueDepth(t *testing.T) {
	for _, c := range []struct {
		depth     int
		decisions int
		admitted  bool
	}{{0, 6, true}, {3, 3, false}, {6, 6, true}} {
		b := allot.Builder{
			Resources: []string{"gpu"},
			Flavors:   []allot.Flavor{{Name: "default"}},
			Queues:    []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "default", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 10}}}}}},
			Running:   []allot.Workload{{ID: "run", Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 1, Flavor: "default", PerPod: allot.Resources{"gpu": 8}}}}},
			Options:   allot.Options{QueueDepth: c.depth},
		}
		for i := range 5 {
			b.Pending = append(b.Pending, allot.Workload{ID: string(rune('a' + i)), Queue: "q", Priority: int32(10 - i),
				PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 4}}}})
		}
		b.Pending = append(b.Pending, allot.Workload{ID: "small", Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 2}}}})
		s, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		st := allot.NewStore(s)
		ds := allot.Schedule(st)
		_, admitted := st.Load().Running("small")
		if len(ds) != c.decisions || admitted != c.admitted {
			t.Fatalf("depth %d: %d decisions, small admitted %v; want %d and %v", c.depth, len(ds), admitted, c.decisions, c.admitted)
		}
	}
	b := orderBuilder()
	b.Options.QueueDepth = -1
	if _, err := b.Build(); err == nil {
		t.Fatal("a negative queue depth was accepted")
	}
}

// TestScheduleSeesOtherWrites: the cycles keep each queue's head between
// cycles, but a workload another writer submits while the loop runs, to a
// queue that had none, is a head in the next cycle: submitted from the
// callback of a decision that another commit of the cycle follows (a1,
// then b1) or of a cycle's last decision (a2).
func TestScheduleSeesOtherWrites(t *testing.T) {
	for _, after := range []string{"a1", "a2"} {
		quota := []allot.FlavorQuota{{Flavor: "default", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 10}}}}
		one := []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 1}}}
		b := allot.Builder{
			Resources: []string{"gpu"},
			Flavors:   []allot.Flavor{{Name: "default"}},
			Queues:    []allot.Queue{{Name: "a", Quota: quota}, {Name: "b", Quota: quota}, {Name: "c", Quota: quota}},
			Pending: []allot.Workload{{ID: "a1", Queue: "a", Priority: 2, PodSets: one}, {ID: "a2", Queue: "a", Priority: 1, PodSets: one},
				{ID: "b1", Queue: "b", Priority: 1, PodSets: one}},
		}
		s, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		st := allot.NewStore(s)
		var seen []string
		allot.ScheduleFunc(st, func(d *allot.Decision) {
			seen = append(seen, d.Workload)
			if d.Workload == after {
				if _, err := st.Apply(allot.Submit{Workload: allot.Workload{ID: "c1", Queue: "c", PodSets: one}}); err != nil {
					t.Fatal(err)
				}
			}
		})
		if _, ok := st.Load().Running("c1"); !ok {
			t.Fatalf("submitted after %s: decided %v, c1 not admitted", after, seen)
		}
	}
}
