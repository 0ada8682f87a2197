package allot_test

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

// ignoring is baseBuilder as a cluster's objects describe it: nodes with
// ephemeral-storage and pods, a running workload asking for
// ephemeral-storage, the snapshot ignoring both names when ignore is set.
func ignoring(ignore bool) allot.Builder {
	b := baseBuilder()
	b.Queues[0].Quota[0].Resources = append(b.Queues[0].Quota[0].Resources, allot.ResourceQuota{Name: "cpu", Nominal: 64_000})
	if ignore {
		b.IgnoredResources = []string{"ephemeral-storage", "pods"}
	}
	return b
}

func kubeRequest(id string) allot.Request {
	return allot.Request{ID: id, Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 1,
		PerPod: allot.Resources{"gpu": 4, "cpu": 1000, "ephemeral-storage": 10 << 30}}}}
}

// TestIgnoredResources: a request naming a resource the snapshot does not
// declare is InvalidRequest, unless the snapshot ignores the name; then it
// is decided, committed and scheduled as if it did not name it.
func TestIgnoredResources(t *testing.T) {
	sb := ignoring(false)
	strict, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	d := allot.Decide(strict, kubeRequest("r"))
	if d.Reason != allot.InvalidRequest || d.Message == "" {
		t.Fatalf("without IgnoredResources: %v %s; want InvalidRequest", d.Reason, d.Message)
	}

	b := ignoring(true)
	b.Nodes = slices.Clone(b.Nodes)
	for i := range b.Nodes {
		b.Nodes[i].Capacity = maps.Clone(b.Nodes[i].Capacity)
		b.Nodes[i].Capacity["ephemeral-storage"] = 1 << 40
		b.Nodes[i].Capacity["pods"] = 110
	}
	run := running("old", "n1", 2)
	run.PodSets[0].PerPod["ephemeral-storage"] = 1 << 30
	b.Running = []allot.Workload{run}
	b.Pending = []allot.Workload{allot.Workload(kubeRequest("waiting"))}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := s.IgnoredResources(); !slices.Equal(got, []string{"ephemeral-storage", "pods"}) {
		t.Errorf("IgnoredResources() = %v", got)
	}
	d = allot.Decide(s, kubeRequest("r"))
	want := allot.Decide(s, allot.Request{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 1,
		PerPod: allot.Resources{"gpu": 4, "cpu": 1000}}}})
	// The same decision, but for the request it carries: the caller's.
	if d.Reason != allot.Fits || string(withoutRequest(t, mustJSON(t, d))) != string(withoutRequest(t, mustJSON(t, want))) {
		t.Fatalf("with IgnoredResources: %s\nwant the decision without the name: %s", mustJSON(t, d), mustJSON(t, want))
	}
	store := allot.NewStore(s)
	if _, err := store.Commit(d); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if _, err := store.Apply(allot.Submit{Workload: allot.Workload(kubeRequest("later"))}); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	for _, sd := range allot.Schedule(store) {
		if sd.Verdict != allot.VerdictAdmit && sd.Verdict != allot.VerdictQueue {
			t.Errorf("Schedule: %s %v %s", sd.Workload, sd.Verdict, sd.Message)
		}
	}
	if got, ok := store.Load().Running("r"); !ok || maps.Equal(got.PodSets[0].PerPod, kubeRequest("r").PodSets[0].PerPod) {
		t.Errorf("the admitted workload keeps %v; want the ignored name dropped", got.PodSets[0].PerPod)
	}

	// Where a name is configuration, not a cluster object's, ignoring it
	// does not make it known.
	for _, c := range []struct {
		name   string
		mutate func(*allot.Builder)
		path   string
	}{
		{"quota", func(b *allot.Builder) {
			b.Queues[0].Quota[0].Resources = append(b.Queues[0].Quota[0].Resources, allot.ResourceQuota{Name: "pods", Nominal: 10})
		}, "queues[0].quota[0].resources[2].name"},
		{"user cap", func(b *allot.Builder) { b.Queues[0].UserCap = allot.Resources{"pods": 10} }, "queues[0].userCap.pods"},
		{"history", func(b *allot.Builder) { b.History.Usage = map[string]allot.Resources{"q": {"pods": 1}} }, "history.usage.q.pods"},
		{"an undeclared name beside the ignored ones", func(b *allot.Builder) {
			b.Nodes = slices.Clone(b.Nodes)
			b.Nodes[0].Capacity = allot.Resources{"gpu": 8, "pods": 110, "example.com/foo": 1}
		}, "nodes[0].capacity.example.com/foo"},
	} {
		b := ignoring(true)
		c.mutate(&b)
		_, err := b.Build()
		var be *allot.BuildError
		if !errors.Is(err, allot.ErrUnknownResource) || !errors.As(err, &be) || be.Path != c.path {
			t.Errorf("%s: Build: %v; want ErrUnknownResource at %s", c.name, err, c.path)
		}
	}
}

// TestIgnoredResourcesDoNotAllocate: a request carrying ignored names is
// decided without an allocation, as one without them.
func TestIgnoredResourcesDoNotAllocate(t *testing.T) {
	b := ignoring(true)
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := kubeRequest("r")
	var d allot.Decision
	allot.DecideInto(s, r, &d)
	if d.Reason != allot.Fits {
		t.Fatal(d.Message)
	}
	if n := testing.AllocsPerRun(200, func() { allot.DecideInto(s, r, &d) }); n != 0 {
		t.Fatalf("%v allocations per decision", n)
	}
}
