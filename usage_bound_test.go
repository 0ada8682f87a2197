package allot_test

import (
	"errors"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/quota"
)

// TestBuildRefusesUsagePastTheBound: a running pod set, or the running
// workloads of a queue together, may charge a flavor's resource at most
// quota.MaxQuantity, the bound Decide holds requests to; so may a running
// workload's pod sets together, over flavors.
func TestBuildRefusesUsagePastTheBound(t *testing.T) {
	const (
		bound = quota.MaxQuantity
		half  = bound/2 + 1
	)
	on := func(flavor, name string, count int32, cpu int64) allot.PodSet {
		return allot.PodSet{Name: name, Count: count, Flavor: flavor, PerPod: allot.Resources{"cpu": cpu}}
	}
	ps := func(name string, count int32, cpu int64) allot.PodSet { return on("qo", name, count, cpu) }
	run := func(id string, sets ...allot.PodSet) allot.Workload {
		return allot.Workload{ID: id, Queue: "q", PodSets: sets}
	}
	for _, c := range []struct {
		name    string
		running []allot.Workload
		path    string // "" builds
	}{
		{name: "one pod set at the bound", running: []allot.Workload{run("a", ps("w", 4, bound/4))}},
		{name: "one pod set past it", running: []allot.Workload{run("a", ps("w", 4096, bound/2048))}, path: "running[0].podSets[0].perPod.cpu"},
		{name: "count times perPod overflows", running: []allot.Workload{run("a", ps("w", 1<<20, bound))}, path: "running[0].podSets[0].perPod.cpu"},
		{name: "a quantity past the bound", running: []allot.Workload{run("a", ps("w", 1, bound+1))}, path: "running[0].podSets[0].perPod.cpu"},
		{name: "pod sets on two flavors past it together", running: []allot.Workload{run("a", on("qo", "w", 1, half), on("qp", "v", 1, half))}, path: "running[0].podSets[1].perPod.cpu"},
		{name: "pod sets on two flavors at it together", running: []allot.Workload{run("a", on("qo", "w", 1, bound/2), on("qp", "v", 1, bound/2))}},
		{name: "two pod sets", running: []allot.Workload{run("a", ps("w", 1, half), ps("v", 1, half))}, path: "running[0].podSets[1].perPod.cpu"},
		{name: "two workloads", running: []allot.Workload{run("a", ps("w", 1, half)), run("b", ps("w", 1, half))}, path: "running[1].podSets[0].perPod.cpu"},
		{name: "two workloads at the bound", running: []allot.Workload{run("a", ps("w", 1, bound/2)), run("b", ps("w", 1, bound/2))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := allot.Builder{
				Resources: []string{"cpu"},
				Flavors:   []allot.Flavor{{Name: "qo"}, {Name: "qp"}},
				Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{
					{Flavor: "qo", Resources: []allot.ResourceQuota{{Name: "cpu", Nominal: bound}}},
					{Flavor: "qp", Resources: []allot.ResourceQuota{{Name: "cpu", Nominal: bound}}}}}},
				Running: c.running,
			}
			s, err := b.Build()
			var be *allot.BuildError
			switch {
			case c.path == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.path == "":
				if u := s.Usage("q", "qo", "cpu") + s.Usage("q", "qp", "cpu"); u != bound {
					t.Errorf("usage %d", u)
				}
			case !errors.As(err, &be) || !errors.Is(err, allot.ErrInvalid) || be.Path != c.path:
				t.Fatalf("got %v, want a *BuildError wrapping ErrInvalid at %s", err, c.path)
			}
		})
	}
}

// TestUsageBoundHoldsOnAdmission: a queue that could borrow past the bound is
// held to it, by Decide and by Commit re-checking an older decision.
func TestUsageBoundHoldsOnAdmission(t *testing.T) {
	q := func(name string) allot.Queue {
		return allot.Queue{Name: name, Cohort: "c", Quota: []allot.FlavorQuota{{Flavor: "qo",
			Resources: []allot.ResourceQuota{{Name: "cpu", Nominal: quota.MaxQuantity}}}}}
	}
	b := allot.Builder{
		Resources: []string{"cpu"},
		Flavors:   []allot.Flavor{{Name: "qo"}},
		Cohorts:   []allot.Cohort{{Name: "c"}},
		Queues:    []allot.Queue{q("a"), q("b")},
		Running: []allot.Workload{{ID: "big", Queue: "a", PodSets: []allot.PodSet{{Name: "w", Count: 1, Flavor: "qo",
			PerPod: allot.Resources{"cpu": quota.MaxQuantity - 4}}}}},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	req := func(id string, cpu int64) allot.Request {
		return allot.Request{ID: id, Queue: "a", PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"cpu": cpu}}}}
	}
	// Queue b's quota would lend a the room: the bound does not.
	if d := allot.Decide(s, req("x", 8)); d.Reason != allot.HardCapReached {
		t.Errorf("past the bound: %v %s", d.Reason, d.Message)
	}
	st := allot.NewStore(s)
	d1, d2 := allot.Decide(s, req("y", 3)), allot.Decide(s, req("z", 3))
	if d1.Verdict != allot.VerdictAdmit || d2.Verdict != allot.VerdictAdmit {
		t.Fatalf("up to the bound: %v %s / %v %s", d1.Reason, d1.Message, d2.Reason, d2.Message)
	}
	if _, err := st.Commit(d1); err != nil {
		t.Fatal(err)
	}
	commitRefused(t, st, d2, allot.ErrConflict)
	if u := st.Load().Usage("a", "qo", "cpu"); u != quota.MaxQuantity-1 {
		t.Errorf("usage %d", u)
	}
}
