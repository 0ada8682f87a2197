package allot_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

// commitCluster is two nodes of 8 GPUs and 8 cores, maxPods pods each (0:
// no limit); running and cordoned describe what the store starts with.
func commitCluster(t *testing.T, maxPods int32, cordoned bool, running ...allot.Workload) *allot.Snapshot {
	t.Helper()
	b := allot.Builder{
		Resources: []string{"gpu", "cpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 16}, {Name: "cpu", Nominal: 16_000}}}}}},
		Running: running,
	}
	for i := range 2 {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: "f", MaxPods: maxPods,
			Unschedulable: cordoned && i == 0, Capacity: allot.Resources{"gpu": 8, "cpu": 8000}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCommitPodConflicts pins the messages of a decision whose pods no
// longer fit, two of them on one node: each pod is checked against what is
// free once the workload's earlier pods are booked.
func TestCommitPodConflicts(t *testing.T) {
	on := func(id string, cpu int64, gpus ...int) allot.Workload {
		w := allot.Workload{ID: id, Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: int32(len(gpus)), Flavor: "f",
			PerPod: allot.Resources{"gpu": 1, "cpu": cpu}}}}
		for _, g := range gpus {
			w.PodSets[0].Nodes = append(w.PodSets[0].Nodes, "n0")
			w.PodSets[0].GPUIndices = append(w.PodSets[0].GPUIndices, []int{g})
		}
		return w
	}
	for _, c := range []struct {
		name     string
		maxPods  int32
		cordoned bool
		running  []allot.Workload
		detail   string
	}{
		{name: "room", running: []allot.Workload{on("o", 3000, 7)},
			detail: `node "n0" no longer has room: free {gpu:7 cpu:5000}, the workload books {gpu:4 cpu:6000}`},
		{name: "pods", maxPods: 3, running: []allot.Workload{on("o", 0, 6, 7)},
			detail: `node "n0" no longer has room for 2 more pods`},
		{name: "gpus", running: []allot.Workload{on("o", 0, 2)},
			detail: `GPUs [2 3] of node "n0" are no longer free`},
		{name: "usable", cordoned: true,
			detail: `node "n0" is no longer usable`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := allot.Decide(commitCluster(t, c.maxPods, false), allot.Request{ID: "r", Queue: "q",
				PodSets: []allot.PodSet{{Name: "w", Count: 2, PerPod: allot.Resources{"gpu": 2, "cpu": 3000}}}})
			if d.Verdict != allot.VerdictAdmit || d.Placement[0].Node != "n0" || d.Placement[1].Node != "n0" || d.Placement[1].GPUs != 0b1100 {
				t.Fatalf("test premise: both pods on n0, got %v %+v", d.Reason, d.Placement)
			}
			st := allot.NewStore(commitCluster(t, c.maxPods, c.cordoned, c.running...))
			before, free := st.Load(), st.Load().FreeGPUs()
			_, err := st.Commit(d)
			var ce *allot.ConflictError
			if !errors.As(err, &ce) || ce.Detail != c.detail {
				t.Fatalf("got %v, want a conflict %q", err, c.detail)
			}
			after, err := st.Apply(allot.AdvanceTime{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Load() == before || after.FreeGPUs() != free || slices.Compare(after.RunningIDs(), before.RunningIDs()) != 0 {
				t.Errorf("a refused commit changed the store: free %d, was %d; running %v", after.FreeGPUs(), free, after.RunningIDs())
			}
			if d2 := allot.Decide(after, allot.Request{ID: "r2", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 8}}}}); d2.Verdict != allot.VerdictAdmit {
				t.Errorf("n1 should still be free: %v %s", d2.Reason, d2.Message)
			}
		})
	}
}

// TestCommitRefusesMalformedDecisions commits decisions Decide did not make
// (its request changed since, fields cleared, lengths that do not match):
// each is refused with an error, the store left as it was, and none panics.
func TestCommitRefusesMalformedDecisions(t *testing.T) {
	s := commitCluster(t, 0, false)
	fresh := func() (allot.Decision, []allot.PodSet) {
		r := allot.Request{ID: "r", Queue: "q", PodSets: []allot.PodSet{
			{Name: "a", Count: 2, PerPod: allot.Resources{"gpu": 2, "cpu": 1000}},
			{Name: "b", Count: 1, PerPod: allot.Resources{"gpu": 4}}}}
		d := allot.Decide(s, r)
		if d.Verdict != allot.VerdictAdmit || len(d.Placement) != 3 {
			t.Fatalf("test premise: %v %s", d.Reason, d.Message)
		}
		return d, r.PodSets // the decision's request shares them
	}
	for _, c := range []struct {
		name   string
		mutate func(d *allot.Decision, ps []allot.PodSet)
		want   error
	}{
		{"zero decision", func(d *allot.Decision, ps []allot.PodSet) { *d = allot.Decision{} }, allot.ErrInvalid},
		{"zero admit", func(d *allot.Decision, ps []allot.PodSet) { *d = allot.Decision{Verdict: allot.VerdictAdmit} }, allot.ErrInvalid},
		{"zero preempt", func(d *allot.Decision, ps []allot.PodSet) { *d = allot.Decision{Verdict: allot.VerdictPreempt} }, allot.ErrInvalid},
		{"queue verdict", func(d *allot.Decision, ps []allot.PodSet) { d.Verdict = allot.VerdictQueue }, allot.ErrInvalid},
		{"unknown verdict", func(d *allot.Decision, ps []allot.PodSet) { d.Verdict = 99 }, allot.ErrInvalid},
		{"other workload", func(d *allot.Decision, ps []allot.PodSet) { d.Workload = "zz" }, allot.ErrInvalid},
		{"no flavors", func(d *allot.Decision, ps []allot.PodSet) { d.Flavors = nil }, allot.ErrInvalid},
		{"extra flavor", func(d *allot.Decision, ps []allot.PodSet) { d.Flavors = append(d.Flavors, d.Flavors[0]) }, allot.ErrInvalid},
		{"unknown flavor", func(d *allot.Decision, ps []allot.PodSet) { d.Flavors[1].Flavor = "zz" }, allot.ErrInvalid},
		{"flavor of another pod set", func(d *allot.Decision, ps []allot.PodSet) { d.Flavors[0].PodSet = "b" }, allot.ErrInvalid},
		{"no placement", func(d *allot.Decision, ps []allot.PodSet) { d.Placement = nil }, allot.ErrInvalid},
		{"short placement", func(d *allot.Decision, ps []allot.PodSet) { d.Placement = d.Placement[:2] }, allot.ErrInvalid},
		{"long placement", func(d *allot.Decision, ps []allot.PodSet) { d.Placement = append(d.Placement, d.Placement[2]) }, allot.ErrInvalid},
		{"placement of another pod set", func(d *allot.Decision, ps []allot.PodSet) { d.Placement[0].PodSet = "b" }, allot.ErrInvalid},
		{"unknown node", func(d *allot.Decision, ps []allot.PodSet) { d.Placement[1].Node = "zz" }, allot.ErrInvalid},
		{"GPU beyond the node", func(d *allot.Decision, ps []allot.PodSet) { d.Placement[2].GPUs = 1 << 63 }, allot.ErrInvalid},
		{"too few GPUs", func(d *allot.Decision, ps []allot.PodSet) { d.Placement[2].GPUs = 1 }, allot.ErrInvalid},
		{"count -1", func(d *allot.Decision, ps []allot.PodSet) { ps[0].Count = -1 }, allot.ErrInvalid},
		{"count 0", func(d *allot.Decision, ps []allot.PodSet) { ps[1].Count = 0 }, allot.ErrInvalid},
		{"count lower", func(d *allot.Decision, ps []allot.PodSet) { ps[0].Count = 1 }, allot.ErrInvalid},
		{"count higher", func(d *allot.Decision, ps []allot.PodSet) { ps[1].Count = 2 }, allot.ErrInvalid},
		{"count huge", func(d *allot.Decision, ps []allot.PodSet) { ps[1].Count = 1 << 30 }, allot.ErrInvalid},
		{"negative perPod", func(d *allot.Decision, ps []allot.PodSet) { ps[0].PerPod = allot.Resources{"gpu": -2} }, allot.ErrInvalid},
		{"unknown resource", func(d *allot.Decision, ps []allot.PodSet) { ps[0].PerPod = allot.Resources{"zz": 1} }, allot.ErrInvalid},
		{"pod set renamed", func(d *allot.Decision, ps []allot.PodSet) { ps[1].Name = "a" }, allot.ErrInvalid},
		{"placement in the request", func(d *allot.Decision, ps []allot.PodSet) { ps[0].Nodes = []string{"n0", "n0"} }, allot.ErrInvalid},
		{"own victim", func(d *allot.Decision, ps []allot.PodSet) {
			d.Verdict, d.Victims = allot.VerdictPreempt, []allot.Victim{{ID: "r"}}
		}, allot.ErrInvalid},
		{"victim twice", func(d *allot.Decision, ps []allot.PodSet) {
			d.Verdict, d.Victims = allot.VerdictPreempt, []allot.Victim{{ID: "v"}, {ID: "v"}}
		}, allot.ErrInvalid},
		{"victims out of order", func(d *allot.Decision, ps []allot.PodSet) {
			d.Verdict, d.Victims = allot.VerdictPreempt, []allot.Victim{{ID: "w"}, {ID: "v"}}
		}, allot.ErrInvalid},
		{"unknown victim", func(d *allot.Decision, ps []allot.PodSet) {
			d.Verdict, d.Victims = allot.VerdictPreempt, []allot.Victim{{ID: "zz"}}
		}, allot.ErrConflict},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := allot.NewStore(s)
			d, ps := fresh()
			c.mutate(&d, ps)
			commitRefused(t, st, d, c.want)
		})
	}
	// Random combinations of the same kinds of change.
	withV := commitCluster(t, 0, false, allot.Workload{ID: "v", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 1,
		Flavor: "f", Nodes: []string{"n1"}, PerPod: allot.Resources{"gpu": 4}}}})
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"", "a", "b", "r", "v", "zz", "n0", "n1", "f"}
	pick := func() string { return names[rng.IntN(len(names))] }
	for i := range 2000 {
		d, ps := fresh()
		for range 1 + rng.IntN(3) {
			switch rng.IntN(10) {
			case 0:
				d.Verdict = allot.Verdict(rng.IntN(6))
			case 1:
				d.Flavors = d.Flavors[:rng.IntN(len(d.Flavors)+1)]
			case 2:
				if len(d.Flavors) > 0 {
					f := &d.Flavors[rng.IntN(len(d.Flavors))]
					f.PodSet, f.Flavor = pick(), pick()
				}
			case 3:
				pl := append(slices.Clone(d.Placement[:rng.IntN(len(d.Placement)+1)]), d.Placement...)
				d.Placement = pl[:min(len(pl), rng.IntN(6))]
			case 4:
				if len(d.Placement) > 0 {
					p := &d.Placement[rng.IntN(len(d.Placement))]
					p.PodSet, p.Node, p.GPUs = pick(), pick(), allot.GPUSet(rng.Uint64()>>rng.IntN(64))
				}
			case 5:
				d.Victims = append(d.Victims, allot.Victim{ID: pick(), AdmittedAt: int64(rng.IntN(2))})
			case 6:
				ps[rng.IntN(2)].Count = int32(rng.IntN(5)) - 1
			case 7:
				ps[rng.IntN(2)].PerPod = allot.Resources{pick(): int64(rng.IntN(9)) - 1}
			case 8:
				ps[rng.IntN(2)].Name = pick()
			case 9:
				d.Workload = pick()
			}
		}
		st := allot.NewStore(withV)
		before := st.Load()
		var err error
		if p := catch(func() { _, err = st.Commit(d) }); p != nil {
			t.Fatalf("case %d: Commit of %+v panicked: %v", i, d, p)
		}
		if err != nil && st.Load() != before {
			t.Fatalf("case %d: a refused commit published a version", i)
		}
		// Whatever was admitted, the store must be whole.
		if p := catch(func() { checkGPUsBooked(t, st.Load(), 16) }); p != nil {
			t.Fatalf("case %d: the store broke after committing %+v: %v", i, d, p)
		}
	}
}

// checkGPUsBooked checks that the free GPUs of s are its total less what
// its admitted workloads hold.
func checkGPUsBooked(t *testing.T, s *allot.Snapshot, total int64) {
	t.Helper()
	held := int64(0)
	for _, id := range s.RunningIDs() {
		w, _ := s.Running(id)
		for _, ps := range w.PodSets {
			held += int64(ps.Count) * ps.PerPod["gpu"]
			if len(ps.Nodes) != int(ps.Count) {
				t.Fatalf("%s: %d pods on %d nodes", id, ps.Count, len(ps.Nodes))
			}
		}
	}
	if s.FreeGPUs() != total-held {
		t.Fatalf("%d GPUs free, %d held of %d", s.FreeGPUs(), held, total)
	}
}

// TestApplyRefusesNilEvents: no event, or a nil pointer to one, is an error.
func TestApplyRefusesNilEvents(t *testing.T) {
	for _, ev := range []allot.Event{nil, (*allot.Finish)(nil), (*allot.SetQueue)(nil)} {
		st := allot.NewStore(commitCluster(t, 0, false))
		var err error
		if p := catch(func() { _, err = st.Apply(ev) }); p != nil {
			t.Fatalf("Apply(%#v) panicked: %v", ev, p)
		}
		if !errors.Is(err, allot.ErrInvalid) {
			t.Errorf("Apply(%#v): %v, want ErrInvalid", ev, err)
		}
	}
}

// manyPodsCluster is 8 nodes of 8 GPUs and 64 cores, with quota for all.
func manyPodsCluster(t testing.TB) *allot.Snapshot {
	t.Helper()
	b := allot.Builder{
		Resources: []string{"gpu", "cpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 64}, {Name: "cpu", Nominal: 8 * 64000}}}}}},
	}
	for i := range 8 {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: "f", Capacity: allot.Resources{"gpu": 8, "cpu": 64000}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCommitCostDoesNotGrowPerPod commits, and finishes, workloads of 2,500
// to 20,000 pods many to a node (../shared/repro/commit_quadratic_test.go:
// Commit took seconds, looking at every earlier pod for each pod): what a
// commit allocates is the same for every pod count, so no pod costs more
// than the ones before it. BenchmarkCommit shows the time.
func TestCommitCostDoesNotGrowPerPod(t *testing.T) {
	s := manyPodsCluster(t)
	allocs := map[int32]float64{}
	for _, pods := range []int32{2_500, 5_000, 10_000, 20_000} {
		d := allot.Decide(s, allot.Request{ID: "tiny", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: pods, PerPod: allot.Resources{"cpu": 1}}}})
		if d.Verdict != allot.VerdictAdmit {
			t.Fatalf("%d pods: %v %s", pods, d.Reason, d.Message)
		}
		allocs[pods] = testing.AllocsPerRun(3, func() {
			st := allot.NewStore(s)
			if _, err := st.Commit(d); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Apply(allot.Finish{ID: "tiny"}); err != nil {
				t.Fatal(err)
			}
		})
		st := allot.NewStore(s)
		if _, err := st.Commit(d); err != nil {
			t.Fatal(err)
		}
		checkGPUsBooked(t, st.Load(), 64)
		if w, _ := st.Load().Running("tiny"); len(w.PodSets[0].Nodes) != int(pods) {
			t.Fatalf("%d pods placed of %d", len(w.PodSets[0].Nodes), pods)
		}
	}
	if allocs[20_000] != allocs[2_500] {
		t.Errorf("allocations per commit and finish by pod count: %v", allocs)
	}
}

// TestStalePreemptVictims commits a Preempt decision after the store moved
// on: it evicts its victims while they are all still needed, and is refused,
// evicting nothing, when the room some of them held came free another way.
func TestStalePreemptVictims(t *testing.T) {
	low := func(id, node string, prio int32) allot.Workload {
		return allot.Workload{ID: id, Queue: "q", Priority: prio, PodSets: []allot.PodSet{{Name: "w", Count: 1, Flavor: "f",
			Nodes: []string{node}, PerPod: allot.Resources{"gpu": 8}}}}
	}
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Queues: []allot.Queue{{Name: "q", Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"},
			Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 24}}}}}},
		Running: []allot.Workload{low("v1", "n0", 0), low("v2", "n1", 0), low("x", "n2", 5)},
	}
	for i := range 3 {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: "f", Capacity: allot.Resources{"gpu": 8}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	p := allot.Request{ID: "p", Queue: "q", Priority: 10, PodSets: []allot.PodSet{{Name: "w", Count: 2, PerPod: allot.Resources{"gpu": 8}}}}
	d := allot.Decide(s, p)
	if d.Verdict != allot.VerdictPreempt || len(d.Victims) != 2 || d.Victims[0].ID != "v1" || d.Victims[1].ID != "v2" {
		t.Fatalf("test premise: %v %s", d.Reason, d.Message)
	}
	for _, c := range []struct {
		name     string
		meantime allot.Event
		detail   string // "" commits
	}{
		{name: "all still needed", meantime: allot.AdvanceTime{Seconds: 5}},
		{name: "one no longer needed", meantime: allot.Finish{ID: "x"},
			detail: `evicting "v2" is no longer needed: decide again`},
		{name: "a victim gone", meantime: allot.Finish{ID: "v1"},
			detail: `victim "v1" no longer runs`},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := allot.NewStore(s)
			if _, err := st.Apply(c.meantime); err != nil {
				t.Fatal(err)
			}
			if c.detail == "" {
				next, err := st.Commit(d)
				if err != nil {
					t.Fatal(err)
				}
				if len(next.Evictions()) != 2 || slices.Compare(next.RunningIDs(), []string{"p", "x"}) != 0 {
					t.Fatalf("evictions %v running %v", next.Evictions(), next.RunningIDs())
				}
				return
			}
			commitRefused(t, st, d, allot.ErrConflict)
			var ce *allot.ConflictError
			if _, err := st.Commit(d); !errors.As(err, &ce) || ce.Detail != c.detail {
				t.Fatalf("got %v, want a conflict %q", err, c.detail)
			}
			// Deciding again evicts fewer.
			again := allot.Decide(st.Load(), p)
			next, err := st.Commit(again)
			if err != nil {
				t.Fatal(err)
			}
			if len(next.Evictions()) >= len(d.Victims) {
				t.Errorf("deciding again evicted %v", next.Evictions())
			}
		})
	}
}
