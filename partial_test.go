package allot_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
)

// partialCluster is one node of 8 GPUs whose queue q may use all of them
// and preempt lower priorities in it; running describes what it starts
// with.
func partialCluster(t *testing.T, running ...allot.Workload) *allot.Snapshot {
	t.Helper()
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Nodes:     []allot.Node{{Name: "n0", Flavor: "f", Capacity: allot.Resources{"gpu": 8}}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}},
			Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"}}},
		Running: running,
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// onePodsOn is a running workload of pods one-GPU pods on n0.
func onePodsOn(id string, priority int32, pods int) allot.Workload {
	w := allot.Workload{ID: id, Queue: "q", Priority: priority,
		PodSets: []allot.PodSet{{Name: "main", Count: int32(pods), PerPod: allot.Resources{"gpu": 1}, Flavor: "f"}}}
	for range pods {
		w.PodSets[0].Nodes = append(w.PodSets[0].Nodes, "n0")
	}
	return w
}

// elastic is a request for count one-GPU pods, down to min.
func elastic(id string, priority int32, count, min int32) allot.Request {
	return allot.Request{ID: id, Queue: "q", Priority: priority,
		PodSets: []allot.PodSet{{Name: "workers", Count: count, MinCount: min, PerPod: allot.Resources{"gpu": 1}}}}
}

func TestPartialCommitBooksTheAdmittedCount(t *testing.T) {
	s := partialCluster(t, onePodsOn("old", 0, 3))
	d := allot.Decide(s, elastic("e", 0, 8, 2))
	if n, _ := d.CountOf("workers"); d.Verdict != allot.VerdictAdmit || n != 5 || len(d.Placement) != 5 || d.Flavors[0].Count != 5 {
		t.Fatalf("want 5 of 8 admitted, got %v %v count %d, %d pods placed: %s", d.Verdict, d.Reason, n, len(d.Placement), d.Message)
	}
	if r := d.Request(); r.PodSets[0].Count != 8 || r.PodSets[0].MinCount != 2 {
		t.Fatalf("the decision's request is %+v, want the request as asked", r.PodSets[0])
	}
	// The count travels in the decision's JSON, with the request as asked,
	// and the decoded decision commits as the one Decide made.
	var back allot.Decision
	if err := json.Unmarshal(mustJSON(t, d), &back); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Flavors, d.Flavors) || back.Flavors[0].Count != 5 || back.Request().PodSets[0].MinCount != 2 {
		t.Fatalf("after a JSON round trip: flavors %+v, request %+v", back.Flavors, back.Request())
	}
	for name, dec := range map[string]allot.Decision{"decided": d, "decoded": back} {
		next, err := allot.NewStore(s).Commit(dec)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w, _ := next.Running("e")
		if ps := w.PodSets[0]; ps.Count != 5 || ps.MinCount != 2 || len(ps.Nodes) != 5 {
			t.Fatalf("%s: running pod set %+v, want 5 pods with minCount 2", name, ps)
		}
		if got := next.Usage("q", "f", "gpu"); got != 8 || next.FreeGPUs() != 0 {
			t.Fatalf("%s: usage %d, free %d after the commit; want 8 and 0", name, got, next.FreeGPUs())
		}
	}
}

// TestPartialCommitRefusesCounts: Commit re-checks a decision's counts
// against its request, as Decide bounds them.
func TestPartialCommitRefusesCounts(t *testing.T) {
	s := partialCluster(t)
	for _, c := range []struct {
		name  string
		req   allot.Request
		count int32
		ok    bool
	}{
		{"below minCount", elastic("e", 0, 8, 4), 3, false},
		{"above count", elastic("e", 0, 6, 4), 7, false},
		{"negative", elastic("e", 0, 6, 4), -1, false},
		{"without minCount", elastic("e", 0, 6, 0), 5, false},
		{"whole without minCount", elastic("e", 0, 6, 0), 6, true},
		{"at minCount", elastic("e", 0, 8, 4), 4, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := allot.Decide(s, c.req)
			if d.Verdict != allot.VerdictAdmit {
				t.Fatalf("test premise: %v %v: %s", d.Verdict, d.Reason, d.Message)
			}
			d.Flavors[0].Count = c.count
			if c.count >= 1 && c.count < int32(len(d.Placement)) {
				d.Placement = d.Placement[:c.count]
			}
			_, err := allot.NewStore(s).Commit(d)
			switch {
			case c.ok && err != nil:
				t.Fatalf("Commit: %v", err)
			case !c.ok && !errors.Is(err, allot.ErrInvalid):
				t.Fatalf("Commit: %v, want ErrInvalid", err)
			case !c.ok && !strings.Contains(err.Error(), `pod set "workers" admitted at`):
				t.Fatalf("Commit: %v, want it to name the pod set and its count", err)
			}
		})
	}
}

// TestPartialPreemptCommitKeepsItsCounts: a Preempt decision made on an
// older version is checked again at the counts it admits: room that came
// free since, enough for those counts without evicting, refuses it,
// although at the full count the victims would be needed again.
func TestPartialPreemptCommitKeepsItsCounts(t *testing.T) {
	s := partialCluster(t, onePodsOn("low", 0, 4), onePodsOn("high", 100, 2), onePodsOn("other", 100, 2))
	d := allot.Decide(s, elastic("e", 50, 8, 2))
	if n, _ := d.CountOf("workers"); d.Verdict != allot.VerdictPreempt || n != 4 || len(d.Victims) != 1 || d.Victims[0].ID != "low" {
		t.Fatalf("test premise: 4 pods by evicting low, got %v count %d: %s", d.Verdict, n, d.Message)
	}
	st := allot.NewStore(s)
	for _, id := range []string{"high", "other"} {
		if _, err := st.Apply(allot.Finish{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if full := allot.Decide(st.Load(), elastic("e", 50, 8, 2)); full.Verdict != allot.VerdictPreempt {
		t.Fatalf("test premise: at 8 pods low is a victim again, got %v: %s", full.Verdict, full.Message)
	}
	_, err := st.Commit(d)
	var ce *allot.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(ce.Detail, `fits now without evicting "low"`) {
		t.Fatalf("Commit: %v, want a conflict: 4 pods fit without evicting low", err)
	}
	// On its own version it commits, low evicted and 4 pods admitted, also
	// after a JSON round trip, which decides again at the counts it admits.
	var back allot.Decision
	if err := json.Unmarshal(mustJSON(t, d), &back); err != nil {
		t.Fatal(err)
	}
	for name, dec := range map[string]allot.Decision{"decided": d, "decoded": back} {
		next, err := allot.NewStore(s).Commit(dec)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if w, ok := next.Running("e"); !ok || w.PodSets[0].Count != 4 {
			t.Fatalf("%s: after the commit: running %v, pod set %+v", name, ok, w.PodSets)
		}
		if ev := next.Evictions(); len(ev) != 1 || ev[0].ID != "low" {
			t.Fatalf("%s: evictions %+v, want low", name, ev)
		}
	}
}

// TestPartialEvictedWaitsAtItsCount pins what an evicted, partially
// admitted workload waits for: its admitted count, its minCount kept.
func TestPartialEvictedWaitsAtItsCount(t *testing.T) {
	s := partialCluster(t, onePodsOn("old", 0, 3))
	st := allot.NewStore(s)
	if _, err := st.Commit(allot.Decide(s, elastic("e", 0, 8, 2))); err != nil {
		t.Fatal(err)
	}
	next, err := st.Apply(allot.Evict{ID: "e"})
	if err != nil {
		t.Fatal(err)
	}
	w, ok := next.Pending("e")
	if !ok || w.PodSets[0].Count != 5 || w.PodSets[0].MinCount != 2 {
		t.Fatalf("pending %v, pod set %+v; want 5 pods, minCount 2", ok, w.PodSets)
	}
}

// TestPartialDecisionShapes: the counts a decision names, with and
// without minCount, and the decisions that do not search.
func TestPartialDecisionShapes(t *testing.T) {
	s := partialCluster(t, onePodsOn("old", 0, 3))
	whole := allot.Decide(s, elastic("w", 0, 4, 0))
	if n, ok := whole.CountOf("workers"); whole.Flavors[0].Count != 0 || n != 4 || !ok {
		t.Fatalf("without minCount: flavor count %d, CountOf %d %t; want 0 (unset) and 4", whole.Flavors[0].Count, n, ok)
	}
	full := allot.Decide(s, elastic("f", 0, 4, 2))
	if full.Flavors[0].Count != 4 || slices.ContainsFunc(full.Trail, func(c allot.Check) bool { return c.Stage == allot.StagePartial }) {
		t.Fatalf("admitted whole with a minCount: flavor count %d, trail %+v; want 4 and no search", full.Flavors[0].Count, full.Trail)
	}
	if _, ok := full.CountOf("nope"); ok {
		t.Fatal("CountOf an unknown pod set")
	}
	// No count changes an unknown queue: no search.
	held := allot.Decide(s, allot.Request{ID: "h", Queue: "nope", PodSets: elastic("h", 0, 8, 2).PodSets})
	if held.Reason != allot.UnknownQueue || len(held.Trail) != 2 {
		t.Fatalf("unknown queue: %v, trail %+v", held.Reason, held.Trail)
	}
	// DecideInto on a decision that held another gives Decide's answer.
	var into allot.Decision
	allot.DecideInto(s, elastic("x", 0, 1, 0), &into)
	allot.DecideInto(s, elastic("e", 0, 8, 2), &into)
	if want := allot.Decide(s, elastic("e", 0, 8, 2)); !bytes.Equal(mustJSON(t, into), mustJSON(t, want)) {
		t.Fatalf("DecideInto gives\n%s\nDecide\n%s", mustJSON(t, into), mustJSON(t, want))
	}
	last := into.Trail[len(into.Trail)-1]
	if last.Stage != allot.StagePartial || !last.Passed ||
		last.Detail != `pod set "workers" (count 8, minCount 2): tried 8 QuotaExhausted, 5 Fits, 7 QuotaExhausted, 6 QuotaExhausted; admitted at 5; at 6: `+
			`queue "q" uses 3/8 gpu of f nominal quota, the request needs 6 and 5 are available` {
		t.Fatalf("the partial check: %+v", last)
	}
}

func TestPartialBuildRefusesMinCount(t *testing.T) {
	for _, c := range []struct {
		name    string
		pending []allot.Workload
		running []allot.Workload
		path    string
	}{
		{"pending negative", []allot.Workload{allot.Workload(elastic("p", 0, 4, -1))}, nil, "pending[0].podSets[0].minCount"},
		{"pending above count", []allot.Workload{allot.Workload(elastic("p", 0, 4, 5))}, nil, "pending[0].podSets[0].minCount"},
		{"running above count", nil, []allot.Workload{func() allot.Workload {
			w := onePodsOn("r", 0, 2)
			w.PodSets[0].MinCount = 3
			return w
		}()}, "running[0].podSets[0].minCount"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := allot.Builder{Resources: []string{"gpu"}, Flavors: []allot.Flavor{{Name: "f"}},
				Nodes:  []allot.Node{{Name: "n0", Flavor: "f", Capacity: allot.Resources{"gpu": 8}}},
				Queues: []allot.Queue{{Name: "q"}}, Pending: c.pending, Running: c.running}
			_, err := b.Build()
			var be *allot.BuildError
			if !errors.As(err, &be) || !errors.Is(err, allot.ErrInvalid) || !strings.Contains(err.Error(), c.path) {
				t.Fatalf("Build: %v, want ErrInvalid at %s", err, c.path)
			}
		})
	}
}

// A pod set of 8 one-GPU pods that may start with as few as 2, in a queue
// with 5 of its 8 GPUs free: the full count waits for quota, and the
// search admits 5, saying why 6 is not; committed, the workload runs with
// 5 pods.
func ExampleDecide_partialAdmission() {
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "a100"}},
		Nodes:     []allot.Node{{Name: "n0", Flavor: "a100", Capacity: allot.Resources{"gpu": 8}}},
		Queues: []allot.Queue{{Name: "team-a", Quota: []allot.FlavorQuota{{Flavor: "a100",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}}},
		Running: []allot.Workload{{ID: "old", Queue: "team-a", PodSets: []allot.PodSet{{Name: "main", Count: 1,
			PerPod: allot.Resources{"gpu": 3}, Flavor: "a100", Nodes: []string{"n0"}}}}},
	}
	snap, err := b.Build()
	if err != nil {
		panic(err)
	}
	d := allot.Decide(snap, allot.Request{ID: "elastic", Queue: "team-a", PodSets: []allot.PodSet{{
		Name: "workers", Count: 8, MinCount: 2, PerPod: allot.Resources{"gpu": 1}}}})
	n, _ := d.CountOf("workers")
	fmt.Println(d.Verdict, d.Reason, n, "pods")
	fmt.Println(d.Message)
	last := d.Trail[len(d.Trail)-1]
	fmt.Println(last.Stage, last.Detail)

	next, err := allot.NewStore(snap).Commit(d)
	if err != nil {
		panic(err)
	}
	w, _ := next.Running("elastic")
	fmt.Println(w.PodSets[0].Count, "pods running, minCount", w.PodSets[0].MinCount)
	// Output:
	// Admit Fits 5 pods
	// admitted on a100: gpu 8/8 of nominal after admission; 5 pods on 1 node n0; partial admission: pod set "workers" 5 of 8 pods (minCount 2), 6 not admitted: QuotaExhausted
	// partial pod set "workers" (count 8, minCount 2): tried 8 QuotaExhausted, 5 Fits, 7 QuotaExhausted, 6 QuotaExhausted; admitted at 5; at 6: queue "team-a" uses 3/8 gpu of a100 nominal quota, the request needs 6 and 5 are available
	// 5 pods running, minCount 2
}
