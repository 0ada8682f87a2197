package allot_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

// describe is the Builder of s's state as s describes it, checked against
// what its accessors say of who may submit where.
func describe(t *testing.T, s *allot.Snapshot) allot.Builder {
	t.Helper()
	b := s.Builder()
	if !reflect.DeepEqual(b.Namespaces, s.Namespaces()) || !reflect.DeepEqual(b.LocalQueues, s.LocalQueues()) ||
		!reflect.DeepEqual(b.PriorityClasses, s.PriorityClasses()) {
		t.Fatalf("the snapshot's Builder has %v %v %v, its accessors %v %v %v",
			b.Namespaces, b.LocalQueues, b.PriorityClasses, s.Namespaces(), s.LocalQueues(), s.PriorityClasses())
	}
	return b
}

// probes are requests across the rule: every tenant through every local
// queue and to every queue, claiming each class or none at a few
// priorities.
func probes(queues []string) []allot.Request {
	tenants := []string{"", "ml", "research", "bare", "web", "outsider"}
	classes := []string{"", "low", "normal", "high", "urgent"}
	var out []allot.Request
	for _, tn := range tenants {
		for _, lq := range []string{"train", "lab", "batch", "serve"} {
			for _, c := range classes {
				out = append(out, ask(fmt.Sprintf("lq-%s-%s-%s", tn, lq, c), "", tn, lq, c, 50, 2))
			}
		}
		for _, q := range queues {
			for _, c := range classes {
				for _, p := range []int32{0, 100, 5000} {
					out = append(out, ask(fmt.Sprintf("q-%s-%s-%s-%d", tn, q, c, p), q, tn, "", c, p, 2))
				}
			}
		}
	}
	return out
}

// sameAsFresh builds s's state afresh and compares: what the snapshot
// says of its tenancy, workloads and order, and every probe's decision.
func sameAsFresh(t *testing.T, at string, s *allot.Snapshot, base allot.Builder) {
	t.Helper()
	b := describe(t, s)
	f, err := b.Build()
	if err != nil {
		t.Fatalf("%s: building the state afresh: %v", at, err)
	}
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"namespaces", s.Namespaces(), f.Namespaces()},
		{"local queues", s.LocalQueues(), f.LocalQueues()},
		{"priority classes", s.PriorityClasses(), f.PriorityClasses()},
		{"pending", s.PendingWorkloads(), f.PendingWorkloads()},
		{"running", s.RunningIDs(), f.RunningIDs()},
		{"order", allot.Order(s), allot.Order(f)},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Fatalf("%s: %s %v, afresh %v", at, c.what, c.got, c.want)
		}
	}
	names := make([]string, len(base.Queues))
	for i, q := range base.Queues {
		names[i] = q.Name
	}
	for _, r := range probes(names) {
		got, want := allot.Decide(s, r), allot.Decide(f, r)
		if got.Reason != want.Reason || got.Message != want.Message || got.Queue != want.Queue {
			t.Fatalf("%s: %s: %v %q, afresh %v %q", at, r.ID, got.Reason, got.Message, want.Reason, want.Message)
		}
	}
}

// tenancyStore starts a store on tenancyBuilder's cluster with a workload
// running and two waiting through local queues, one of them removed.
func tenancyStore(t *testing.T) (*allot.Store, allot.Builder) {
	t.Helper()
	b := tenancyBuilder()
	run := allot.Workload(ask("run", "", "ml", "batch", "low", 10, 2))
	run.PodSets[0].Flavor, run.PodSets[0].Nodes = "f", []string{"n0"}
	b.Running = []allot.Workload{run}
	b.Pending = []allot.Workload{allot.Workload(ask("wait", "", "research", "lab", "normal", 100, 2)),
		allot.Workload(ask("orphan", "open", "web", "serve", "", 0, 2))}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return allot.NewStore(s), b
}

// TestTenancyEventsAsBuiltAfresh applies each event and compares the
// store's snapshot with the same state built afresh.
func TestTenancyEventsAsBuiltAfresh(t *testing.T) {
	st, base := tenancyStore(t)
	sameAsFresh(t, "start", st.Load(), base)
	leveled := base.Queues[6]
	leveled.PriorityClasses = []string{"urgent", "normal"}
	for i, ev := range []allot.Event{
		allot.SetNamespace{Namespace: allot.Namespace{Name: "bare", Labels: map[string]string{"team": "ml"}}},
		allot.SetNamespace{Namespace: allot.Namespace{Name: "research", Labels: map[string]string{"team": "research"}}},
		allot.SetNamespace{Namespace: allot.Namespace{Name: "web", Labels: map[string]string{"team": "web", "kubernetes.io/metadata.name": "web"}}},
		allot.SetLocalQueue{LocalQueue: allot.LocalQueue{Namespace: "web", Name: "serve", ClusterQueue: "open"}},
		allot.SetLocalQueue{LocalQueue: allot.LocalQueue{Namespace: "web", Name: "serve", ClusterQueue: "open"}},
		allot.RemoveLocalQueue{Namespace: "ml", Name: "train"},
		allot.SetLocalQueue{LocalQueue: allot.LocalQueue{Namespace: "ml", Name: "train", ClusterQueue: "expr"}},
		allot.SetPriorityClass{PriorityClass: allot.PriorityClass{Name: "normal", Value: 50}},
		allot.SetPriorityClass{PriorityClass: allot.PriorityClass{Name: "urgent", Value: 5000}},
		allot.SetQueue{Queue: leveled},
		allot.RemovePriorityClass{Name: "high"},
		allot.RemoveLocalQueue{Namespace: "web", Name: "serve"},
		allot.RemoveNamespace{Name: "web"},
	} {
		before := st.Load().Version()
		s, err := st.Apply(ev)
		if err != nil {
			t.Fatalf("event %d %#v: %v", i, ev, err)
		}
		if s.Version() != before+1 {
			t.Fatalf("event %d: version %d after %d", i, s.Version(), before)
		}
		sameAsFresh(t, fmt.Sprintf("after event %d (%T)", i, ev), s, base)
	}
	// What the events did, as requests see it.
	s := st.Load()
	for _, c := range []struct {
		req    allot.Request
		reason allot.Reason
	}{
		{ask("a", "ml", "bare", "", "", 0, 1), allot.Fits},                     // bare's labels now say team ml
		{ask("b", "expr", "research", "", "", 0, 1), allot.Fits},               // research is no longer restricted
		{ask("c", "", "ml", "train", "", 0, 1), allot.Fits},                    // train points at expr now
		{ask("d", "open", "", "", "normal", 100, 1), allot.PriorityNotAllowed}, // normal is worth 50
		{ask("e", "leveled", "", "", "urgent", 5000, 1), allot.Fits},
		{ask("f", "open", "", "", "high", 0, 1), allot.PriorityNotAllowed},
		{ask("g", "everyone", "web", "", "", 0, 1), allot.Unauthorized}, // web is gone
	} {
		if d := allot.Decide(s, c.req); d.Reason != c.reason {
			t.Errorf("%+v: %v %s, want %v", c.req, d.Reason, d.Message, c.reason)
		}
	}
}

// TestTenancyEventsRefused: an event Build's checks refuse changes
// nothing and names the field; the state it would make does not build
// either, but for pointing a local queue elsewhere, which is a rule of
// change (Kueue's LocalQueue is immutable), not of state.
func TestTenancyEventsRefused(t *testing.T) {
	for _, c := range []struct {
		name  string
		ev    allot.Event
		err   error
		path  string
		state func(*allot.Builder) // the state the event would make; nil when it is none
	}{
		{"namespace name", allot.SetNamespace{Namespace: allot.Namespace{Name: "Web"}}, allot.ErrInvalid, "namespace.name",
			func(b *allot.Builder) { b.Namespaces = append(b.Namespaces, allot.Namespace{Name: "Web"}) }},
		{"namespace label", allot.SetNamespace{Namespace: allot.Namespace{Name: "ml", Labels: map[string]string{"team": "a b"}}},
			allot.ErrInvalid, "namespace.labels.team", func(b *allot.Builder) { b.Namespaces[1].Labels = map[string]string{"team": "a b"} }},
		{"namespace metadata name", allot.SetNamespace{Namespace: allot.Namespace{Name: "ml", Labels: map[string]string{"kubernetes.io/metadata.name": "x"}}},
			allot.ErrInvalid, `namespace.labels["kubernetes.io/metadata.name"]`,
			func(b *allot.Builder) { b.Namespaces[1].Labels = map[string]string{"kubernetes.io/metadata.name": "x"} }},
		{"namespace with local queues", allot.RemoveNamespace{Name: "ml"}, allot.ErrInvalid, "name",
			func(b *allot.Builder) { b.Namespaces = slices.Delete(b.Namespaces, 1, 2) }},
		{"no such namespace", allot.RemoveNamespace{Name: "web"}, allot.ErrInvalid, "name", nil},
		{"local queue in no namespace", allot.SetLocalQueue{LocalQueue: allot.LocalQueue{Namespace: "web", Name: "q", ClusterQueue: "open"}},
			allot.ErrInvalid, "localQueue.namespace", func(b *allot.Builder) {
				b.LocalQueues = append(b.LocalQueues, allot.LocalQueue{Namespace: "web", Name: "q", ClusterQueue: "open"})
			}},
		{"local queue to no queue", allot.SetLocalQueue{LocalQueue: allot.LocalQueue{Namespace: "ml", Name: "q", ClusterQueue: "gone"}},
			allot.ErrUnknownQueue, "localQueue.clusterQueue", func(b *allot.Builder) {
				b.LocalQueues = append(b.LocalQueues, allot.LocalQueue{Namespace: "ml", Name: "q", ClusterQueue: "gone"})
			}},
		{"local queue without a name", allot.SetLocalQueue{LocalQueue: allot.LocalQueue{Namespace: "ml", ClusterQueue: "open"}},
			allot.ErrInvalid, "localQueue.name", func(b *allot.Builder) {
				b.LocalQueues = append(b.LocalQueues, allot.LocalQueue{Namespace: "ml", ClusterQueue: "open"})
			}},
		{"local queue pointed elsewhere", allot.SetLocalQueue{LocalQueue: allot.LocalQueue{Namespace: "ml", Name: "train", ClusterQueue: "open"}},
			allot.ErrInvalid, "localQueue.clusterQueue", nil},
		{"local queue its workloads are not in", allot.SetLocalQueue{LocalQueue: allot.LocalQueue{Namespace: "web", Name: "serve", ClusterQueue: "ml"}},
			allot.ErrInvalid, "localQueue.clusterQueue", func(b *allot.Builder) {
				b.Namespaces = append(b.Namespaces, allot.Namespace{Name: "web"})
				b.LocalQueues = append(b.LocalQueues, allot.LocalQueue{Namespace: "web", Name: "serve", ClusterQueue: "ml"})
			}},
		{"no such local queue", allot.RemoveLocalQueue{Namespace: "ml", Name: "serve"}, allot.ErrUnknownQueue, "name", nil},
		{"class without a name", allot.SetPriorityClass{PriorityClass: allot.PriorityClass{Value: 1}}, allot.ErrInvalid, "priorityClass.name",
			func(b *allot.Builder) { b.PriorityClasses = append(b.PriorityClasses, allot.PriorityClass{Value: 1}) }},
		{"class a queue allows", allot.RemovePriorityClass{Name: "low"}, allot.ErrInvalid, "name",
			func(b *allot.Builder) {
				b.PriorityClasses = slices.DeleteFunc(b.PriorityClasses, func(c allot.PriorityClass) bool { return c.Name == "low" })
			}},
		{"no such class", allot.RemovePriorityClass{Name: "urgent"}, allot.ErrInvalid, "name", nil},
		{"queue a local queue points at", allot.RemoveQueue{Queue: "ml"}, allot.ErrInUse, "queue",
			func(b *allot.Builder) {
				b.Queues = slices.DeleteFunc(b.Queues, func(q allot.Queue) bool { return q.Name == "ml" })
			}},
	} {
		st, _ := tenancyStore(t)
		if c.name == "local queue its workloads are not in" {
			// orphan names web/serve from queue open: web must exist.
			if _, err := st.Apply(allot.SetNamespace{Namespace: allot.Namespace{Name: "web"}}); err != nil {
				t.Fatal(err)
			}
		}
		before := st.Load()
		_, err := st.Apply(c.ev)
		var be *allot.BuildError
		if !errors.As(err, &be) || !errors.Is(err, c.err) || be.Path != c.path {
			t.Errorf("%s: %v, want %v at %s", c.name, err, c.err, c.path)
			continue
		}
		if st.Load() != before {
			t.Errorf("%s: refused, yet published version %d", c.name, st.Load().Version())
		}
		if c.state == nil {
			continue
		}
		b := describe(t, before)
		c.state(&b)
		if _, err := b.Build(); err == nil {
			t.Errorf("%s: the event is refused, but its state builds", c.name)
		}
	}
}

// TestTenancyVersionsShare: a published snapshot does not see the events
// after it.
func TestTenancyVersionsShare(t *testing.T) {
	st, _ := tenancyStore(t)
	old := st.Load()
	for _, ev := range []allot.Event{allot.SetNamespace{Namespace: allot.Namespace{Name: "bare", Labels: map[string]string{"team": "ml"}}},
		allot.RemoveLocalQueue{Namespace: "ml", Name: "train"}, allot.SetPriorityClass{PriorityClass: allot.PriorityClass{Name: "low", Value: 0}}} {
		if _, err := st.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	if ls, _ := old.NamespaceLabels("bare"); len(ls) != 1 || len(old.LocalQueues()) != 4 || old.PriorityClasses()[1].Value != 10 {
		t.Fatalf("the old version changed: %v %v %v", ls, old.LocalQueues(), old.PriorityClasses())
	}
	if d := allot.Decide(old, ask("r", "", "ml", "train", "", 0, 1)); d.Reason != allot.Fits {
		t.Fatalf("on the old version: %v %s", d.Reason, d.Message)
	}
}
