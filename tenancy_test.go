package allot_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/labels"
)

// tenancyBuilder is one flavor of two 8-GPU nodes; namespaces ml (team
// ml), research (team research, restricted) and bare (no labels); local
// queues into each kind of queue; classes low 10, normal 100, high 1000;
// queues: open (no rule), named (tenants ml and outsider), ml (selector
// team=ml), expr (team In (ml, research), restricted DoesNotExist),
// everyone (the empty selector), nobody (Kueue's nil: metadata.name
// DoesNotExist), leveled (classes low and normal).
func tenancyBuilder() allot.Builder {
	quota := []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 16}}}}
	q := func(name string, mod func(*allot.Queue)) allot.Queue {
		out := allot.Queue{Name: name, Quota: quota, Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"}}
		if mod != nil {
			mod(&out)
		}
		return out
	}
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Nodes: []allot.Node{{Name: "n0", Flavor: "f", Capacity: allot.Resources{"gpu": 8}},
			{Name: "n1", Flavor: "f", Capacity: allot.Resources{"gpu": 8}}},
		Namespaces: []allot.Namespace{{Name: "ml", Labels: map[string]string{"team": "ml"}},
			{Name: "research", Labels: map[string]string{"team": "research", "restricted": "true"}}, {Name: "bare"}},
		PriorityClasses: []allot.PriorityClass{{Name: "low", Value: 10}, {Name: "normal", Value: 100}, {Name: "high", Value: 1000}},
		Queues: []allot.Queue{
			q("open", nil),
			q("named", func(q *allot.Queue) { q.Tenants = []string{"outsider", "ml"} }),
			q("ml", func(q *allot.Queue) {
				q.NamespaceSelector = &labels.Selector{MatchLabels: map[string]string{"team": "ml"}}
			}),
			q("expr", func(q *allot.Queue) {
				q.NamespaceSelector = &labels.Selector{MatchExpressions: []labels.Requirement{
					{Key: "team", Operator: labels.In, Values: []string{"ml", "research"}}, {Key: "restricted", Operator: labels.DoesNotExist}}}
			}),
			q("everyone", func(q *allot.Queue) { q.NamespaceSelector = &labels.Selector{} }),
			q("nobody", func(q *allot.Queue) {
				q.NamespaceSelector = &labels.Selector{MatchExpressions: []labels.Requirement{
					{Key: "kubernetes.io/metadata.name", Operator: labels.DoesNotExist}}}
			}),
			q("leveled", func(q *allot.Queue) { q.PriorityClasses = []string{"normal", "low"} }),
		},
		LocalQueues: []allot.LocalQueue{{Namespace: "ml", Name: "train", ClusterQueue: "ml"},
			{Namespace: "bare", Name: "train", ClusterQueue: "ml"}, {Namespace: "research", Name: "lab", ClusterQueue: "expr"},
			{Namespace: "ml", Name: "batch", ClusterQueue: "leveled"}},
	}
	return b
}

func tenancySnapshot(t *testing.T) *allot.Snapshot {
	t.Helper()
	b := tenancyBuilder()
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ask is a one-pod request of gpus GPUs.
func ask(id, queue, tenant, localQueue, class string, priority int32, gpus int64) allot.Request {
	return allot.Request{ID: id, Queue: queue, Tenant: tenant, LocalQueue: localQueue, PriorityClass: class, Priority: priority,
		PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": gpus}}}}
}

// TestEnter decides one request per row of the rule: the queue named or
// found through a local queue, the tenant judged by name and by labels,
// the priority by the queue's classes and the class's value.
func TestEnter(t *testing.T) {
	s := tenancySnapshot(t)
	for _, c := range []struct {
		name   string
		req    allot.Request
		reason allot.Reason
		queue  string // the decision's queue
		msg    string
	}{
		{"open queue, any tenant", ask("r", "open", "anyone", "", "", 5000, 1), allot.Fits, "open", ""},
		{"open queue, no tenant", ask("r", "open", "", "", "", 0, 1), allot.Fits, "open", ""},
		{"named tenant", ask("r", "named", "ml", "", "", 0, 1), allot.Fits, "named", ""},
		{"named tenant, not declared", ask("r", "named", "outsider", "", "", 0, 1), allot.Fits, "named", ""},
		{"not named", ask("r", "named", "bare", "", "", 0, 1), allot.Unauthorized, "named", `tenant "bare" may not submit to queue "named"`},
		{"selector matches", ask("r", "ml", "ml", "", "", 0, 1), allot.Fits, "ml", ""},
		{"selector, label missing", ask("r", "ml", "bare", "", "", 0, 1), allot.Unauthorized, "ml",
			`tenant "bare" may not submit to queue "ml": its namespace's labels do not satisfy team=ml of the queue's namespace selector team=ml`},
		{"selector, other value", ask("r", "ml", "research", "", "", 0, 1), allot.Unauthorized, "ml", "do not satisfy team=ml"},
		{"selector, no tenant", ask("r", "ml", "", "", "", 0, 1), allot.Unauthorized, "ml",
			`a request with no tenant may not submit to queue "ml": it admits only the namespaces its namespace selector matches`},
		{"selector, undeclared namespace", ask("r", "everyone", "outsider", "", "", 0, 1), allot.Unauthorized, "everyone",
			`the snapshot declares no namespace "outsider"`},
		{"empty selector, declared", ask("r", "everyone", "bare", "", "", 0, 1), allot.Fits, "everyone", ""},
		{"nothing selector", ask("r", "nobody", "ml", "", "", 0, 1), allot.Unauthorized, "nobody", "do not satisfy !kubernetes.io/metadata.name"},
		{"nothing selector, no tenant", ask("r", "nobody", "", "", "", 0, 1), allot.Unauthorized, "nobody", "no tenant"},
		{"expressions match", ask("r", "expr", "ml", "", "", 0, 1), allot.Fits, "expr", ""},
		{"expressions, restricted", ask("r", "expr", "research", "", "", 0, 1), allot.Unauthorized, "expr",
			"do not satisfy !restricted of the queue's namespace selector !restricted,team in (ml,research)"},
		{"expressions, no team", ask("r", "expr", "bare", "", "", 0, 1), allot.Unauthorized, "expr", "do not satisfy team in (ml,research)"},
		{"local queue", ask("r", "", "ml", "train", "", 0, 1), allot.Fits, "ml", ""},
		{"local queue and its queue", ask("r", "ml", "ml", "train", "", 0, 1), allot.Fits, "ml", ""},
		{"local queue of a namespace the queue refuses", ask("r", "", "bare", "train", "", 0, 1), allot.Unauthorized, "ml", "do not satisfy team=ml"},
		{"local queue, other queue", ask("r", "open", "ml", "train", "", 0, 1), allot.InvalidRequest, "open",
			`queue: "open", but local queue "train" of namespace "ml" points at queue "ml"`},
		{"local queue of another namespace", ask("r", "", "research", "train", "", 0, 1), allot.UnknownQueue, "",
			`local queue "train" of namespace "research" does not exist`},
		{"local queue without tenant", ask("r", "", "", "train", "", 0, 1), allot.InvalidRequest, "", `tenant: must name the namespace of local queue "train"`},
		{"no queue at all", ask("r", "", "ml", "", "", 0, 1), allot.InvalidRequest, "", "queue: must not be empty"},
		{"unknown queue", ask("r", "gone", "ml", "", "", 0, 1), allot.UnknownQueue, "gone", `queue "gone" does not exist`},
		{"class at its value", ask("r", "open", "", "", "high", 1000, 1), allot.Fits, "open", ""},
		{"class below its value", ask("r", "open", "", "", "high", -5, 1), allot.Fits, "open", ""},
		{"class above its value", ask("r", "open", "", "", "normal", 101, 1), allot.PriorityNotAllowed, "open",
			`priority 101 is above the value of priority class "normal" (100)`},
		{"unknown class", ask("r", "open", "", "", "urgent", 0, 1), allot.PriorityNotAllowed, "open", `priority class "urgent" does not exist`},
		{"allowed class", ask("r", "leveled", "", "", "normal", 100, 1), allot.Fits, "leveled", ""},
		{"class the queue does not allow", ask("r", "leveled", "", "", "high", 1000, 1), allot.PriorityNotAllowed, "leveled",
			`queue "leveled" does not allow priority class "high": it allows "low", "normal"`},
		{"no class where the queue requires one", ask("r", "leveled", "", "", "", 0, 1), allot.PriorityNotAllowed, "leveled",
			`queue "leveled" admits only requests that claim one of its priority classes ("low", "normal"), and the request claims none`},
		{"through a local queue, above the class", ask("r", "", "ml", "batch", "low", 11, 1), allot.PriorityNotAllowed, "leveled", "above"},
		{"tenant before priority", ask("r", "ml", "bare", "", "high", 5000, 1), allot.Unauthorized, "ml", "team=ml"},
	} {
		d := allot.Decide(s, c.req)
		if d.Reason != c.reason || d.Queue != c.queue || !strings.Contains(d.Message, c.msg) {
			t.Errorf("%s: %v (queue %q) %s; want %v (queue %q) containing %q", c.name, d.Reason, d.Queue, d.Message, c.reason, c.queue, c.msg)
			continue
		}
		if d.Reason.Verdict() == allot.VerdictReject && len(d.Placement) != 0 {
			t.Errorf("%s: refused with a placement", c.name)
		}
		if d.Reason == allot.Fits {
			if _, err := allot.NewStore(s).Commit(d); err != nil {
				t.Errorf("%s: Commit: %v", c.name, err)
			}
		}
	}
}

// TestEnterStages: the queue is found while validating, tenant and
// priority are authorize's.
func TestEnterStages(t *testing.T) {
	s := tenancySnapshot(t)
	for req, stage := range map[*allot.Request]allot.Stage{
		ptr(ask("r", "", "research", "train", "", 0, 1)): allot.StageValidate,
		ptr(ask("r", "ml", "bare", "", "", 0, 1)):        allot.StageAuthorize,
		ptr(ask("r", "leveled", "", "", "", 0, 1)):       allot.StageAuthorize,
	} {
		d := allot.Decide(s, *req)
		if last := d.Trail[len(d.Trail)-1]; last.Stage != stage || last.Passed {
			t.Errorf("%+v: trail ends %+v, want a failed %v", *req, last, stage)
		}
	}
	d := allot.Decide(s, ask("r", "", "ml", "train", "normal", 10, 1))
	if d.Trail[1].Stage != allot.StageAuthorize || !d.Trail[1].Passed {
		t.Errorf("trail %+v", d.Trail)
	}
}

func ptr[T any](v T) *T { return &v }

// TestTenancyBuildErrors: each malformed part of the rule is a
// *BuildError naming its field.
func TestTenancyBuildErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(b *allot.Builder)
		err  error
		path string
	}{
		{"namespace name", func(b *allot.Builder) { b.Namespaces[0].Name = "ML" }, allot.ErrInvalid, "namespaces[0].name"},
		{"namespace twice", func(b *allot.Builder) { b.Namespaces[1].Name = "ml" }, allot.ErrDuplicateID, "namespaces[1].name"},
		{"label key", func(b *allot.Builder) { b.Namespaces[0].Labels = map[string]string{"a b": "x"} }, allot.ErrInvalid, `namespaces[0].labels["a b"]`},
		{"label value", func(b *allot.Builder) { b.Namespaces[0].Labels = map[string]string{"team": "-x"} }, allot.ErrInvalid, "namespaces[0].labels.team"},
		{"metadata name", func(b *allot.Builder) {
			b.Namespaces[0].Labels = map[string]string{"kubernetes.io/metadata.name": "web"}
		},
			allot.ErrInvalid, `namespaces[0].labels["kubernetes.io/metadata.name"]`},
		{"class name", func(b *allot.Builder) { b.PriorityClasses[0].Name = "" }, allot.ErrInvalid, "priorityClasses[0].name"},
		{"class twice", func(b *allot.Builder) { b.PriorityClasses[2].Name = "low" }, allot.ErrDuplicateID, "priorityClasses[2].name"},
		{"queue class unknown", func(b *allot.Builder) { b.Queues[6].PriorityClasses = []string{"urgent"} }, allot.ErrInvalid, "queues[6].priorityClasses[0]"},
		{"queue class twice", func(b *allot.Builder) { b.Queues[6].PriorityClasses = []string{"low", "low"} }, allot.ErrDuplicateID, "queues[6].priorityClasses[1]"},
		{"selector key", func(b *allot.Builder) { b.Queues[2].NamespaceSelector.MatchLabels = map[string]string{"/team": "ml"} },
			allot.ErrInvalid, `queues[2].namespaceSelector.matchLabels["/team"]`},
		{"selector operator", func(b *allot.Builder) { b.Queues[3].NamespaceSelector.MatchExpressions[1].Operator = "Missing" },
			allot.ErrInvalid, "queues[3].namespaceSelector.matchExpressions[1].operator"},
		{"selector values", func(b *allot.Builder) { b.Queues[3].NamespaceSelector.MatchExpressions[0].Values = nil },
			allot.ErrInvalid, "queues[3].namespaceSelector.matchExpressions[0].values"},
		{"local queue namespace", func(b *allot.Builder) { b.LocalQueues[0].Namespace = "web" }, allot.ErrInvalid, "localQueues[0].namespace"},
		{"local queue queue", func(b *allot.Builder) { b.LocalQueues[0].ClusterQueue = "gone" }, allot.ErrUnknownQueue, "localQueues[0].clusterQueue"},
		{"local queue name", func(b *allot.Builder) { b.LocalQueues[0].Name = "" }, allot.ErrInvalid, "localQueues[0].name"},
		{"local queue twice", func(b *allot.Builder) { b.LocalQueues[1].Namespace = "ml" }, allot.ErrDuplicateID, "localQueues[1].name"},
		{"pending through an unknown local queue", func(b *allot.Builder) {
			b.Pending = []allot.Workload{allot.Workload(ask("p", "", "ml", "gone", "", 0, 1))}
		}, allot.ErrUnknownQueue, "pending[0].localQueue"},
		{"pending in another queue than its local queue's", func(b *allot.Builder) {
			b.Pending = []allot.Workload{allot.Workload(ask("p", "open", "ml", "train", "", 0, 1))}
		}, allot.ErrInvalid, "pending[0].queue"},
		{"pending local queue without tenant", func(b *allot.Builder) {
			b.Pending = []allot.Workload{allot.Workload(ask("p", "ml", "", "train", "", 0, 1))}
		}, allot.ErrInvalid, "pending[0].tenant"},
		{"running through an unknown local queue", func(b *allot.Builder) {
			w := allot.Workload(ask("w", "", "ml", "gone", "", 0, 1))
			w.PodSets[0].Flavor = "f"
			b.Running = []allot.Workload{w}
		}, allot.ErrUnknownQueue, "running[0].localQueue"},
	} {
		b := tenancyBuilder()
		c.mod(&b)
		_, err := b.Build()
		var be *allot.BuildError
		if !errors.As(err, &be) || !errors.Is(err, c.err) || be.Path != c.path {
			t.Errorf("%s: %v, want %v at %s", c.name, err, c.err, c.path)
		}
	}
}

// TestWorkloadsKeepTheirLocalQueue: a pending workload naming a local
// queue is filed under the queue it points at, one whose local queue is
// gone keeps its queue, and an admitted one keeps its local queue and
// class through eviction.
func TestWorkloadsKeepTheirLocalQueue(t *testing.T) {
	b := tenancyBuilder()
	b.Pending = []allot.Workload{allot.Workload(ask("p", "", "ml", "train", "normal", 100, 1)),
		allot.Workload(ask("gone", "open", "ml", "removed", "", 0, 1))}
	w := allot.Workload(ask("w", "", "ml", "batch", "low", 10, 2))
	w.PodSets[0].Flavor, w.PodSets[0].Nodes = "f", []string{"n0"}
	b.Running = []allot.Workload{w}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := s.Pending("p"); p.Queue != "ml" || p.LocalQueue != "train" || p.PriorityClass != "normal" {
		t.Fatalf("pending %+v", p)
	}
	if d := allot.Decide(s, allot.Request(b.Pending[1])); d.Reason != allot.UnknownQueue {
		t.Fatalf("a pending workload of a removed local queue: %v %s", d.Reason, d.Message)
	}
	r, _ := s.Running("w")
	if r.Queue != "leveled" || r.LocalQueue != "batch" || r.PriorityClass != "low" {
		t.Fatalf("running %+v", r)
	}
	st := allot.NewStore(s)
	if _, err := st.Apply(allot.Evict{ID: "w"}); err != nil {
		t.Fatal(err)
	}
	if p, _ := st.Load().Pending("w"); p.Queue != "leveled" || p.LocalQueue != "batch" || p.PriorityClass != "low" {
		t.Fatalf("evicted %+v", p)
	}
}

// TestCommitRechecksEntry: a decision made before the rule changed is
// refused by Commit, with the words Decide would use now.
func TestCommitRechecksEntry(t *testing.T) {
	for _, c := range []struct {
		name   string
		req    allot.Request
		ev     allot.Event
		detail string
	}{
		{"labels changed", ask("r", "", "ml", "train", "", 0, 1), allot.SetNamespace{Namespace: allot.Namespace{Name: "ml"}},
			`the request may no longer enter its queue: tenant "ml" may not submit to queue "ml": its namespace's labels do not satisfy team=ml`},
		{"local queue removed", ask("r", "", "ml", "train", "", 0, 1), allot.RemoveLocalQueue{Namespace: "ml", Name: "train"},
			`local queue "train" of namespace "ml" does not exist`},
		{"class lowered", ask("r", "", "ml", "batch", "normal", 100, 1), allot.SetPriorityClass{PriorityClass: allot.PriorityClass{Name: "normal", Value: 50}},
			`priority 100 is above the value of priority class "normal" (50)`},
	} {
		s := tenancySnapshot(t)
		d := allot.Decide(s, c.req)
		if d.Verdict != allot.VerdictAdmit {
			t.Fatalf("%s: %v %s", c.name, d.Reason, d.Message)
		}
		st := allot.NewStore(s)
		if _, err := st.Apply(c.ev); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, err := st.Commit(d)
		var ce *allot.ConflictError
		if !errors.As(err, &ce) || !strings.Contains(ce.Detail, c.detail) {
			t.Errorf("%s: %v, want a conflict saying %q", c.name, err, c.detail)
		}
		if again := allot.Decide(st.Load(), c.req); again.Verdict != allot.VerdictReject || !strings.Contains(again.Message, strings.TrimPrefix(c.detail, "the request may no longer enter its queue: ")) {
			t.Errorf("%s: deciding again: %v %s", c.name, again.Reason, again.Message)
		}
	}
}

// TestRefusedWorkHoldsNothingBack: a pending workload that may not enter
// its queue at its priority neither stops a request over its soft cap nor
// gets a backfill reservation, and the loop admits only what may enter.
func TestRefusedWorkHoldsNothingBack(t *testing.T) {
	// Over the soft cap of queue open, in a cohort with queue ml, a
	// request waits for higher-priority work of the cohort only if that
	// work may enter its queue at its priority: one claims more than its
	// class, one comes from a namespace its queue refuses.
	for _, c := range []struct {
		name           string
		waiting        allot.Request
		allowed        func(*allot.Request)
		refused, holds allot.Reason
	}{
		{"priority above its class", ask("inflated", "open", "", "", "low", 9000, 8),
			func(r *allot.Request) { r.PriorityClass, r.Priority = "high", 1000 }, allot.OverSoftCap, allot.HigherPriorityPending},
		{"namespace refused", ask("outside", "ml", "bare", "", "", 9000, 8),
			func(r *allot.Request) { r.Tenant = "ml" }, allot.OverSoftCap, allot.HigherPriorityPending},
	} {
		for _, allowed := range []bool{false, true} {
			b := tenancyBuilder()
			soft := int64(4)
			b.Cohorts = []allot.Cohort{{Name: "all"}}
			for i := range b.Queues {
				b.Queues[i].Cohort = "all"
				b.Queues[i].Quota[0].Resources[0].Soft = &soft
			}
			w := c.waiting
			if allowed {
				c.allowed(&w)
			}
			w.PodSets[0].Count = 2
			b.Pending = []allot.Workload{allot.Workload(w)}
			s, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			want := c.refused
			if allowed {
				want = c.holds
			}
			if d := allot.Decide(s, ask("r", "open", "", "", "", 0, 8)); d.Reason != want {
				t.Errorf("%s, allowed %v: %v %s, want %v", c.name, allowed, d.Reason, d.Message, want)
			}
		}
	}

	// The loop: of four waiting, the two that may enter are admitted.
	b := tenancyBuilder()
	b.Pending = []allot.Workload{allot.Workload(ask("ml-1", "", "ml", "train", "", 0, 4)), allot.Workload(ask("bare-1", "", "bare", "train", "", 0, 4)),
		allot.Workload(ask("ml-2", "", "ml", "batch", "normal", 100, 4)), allot.Workload(ask("ml-3", "", "ml", "batch", "normal", 500, 4))}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(s)
	allot.Schedule(st)
	if got := st.Load().RunningIDs(); strings.Join(got, ",") != "ml-1,ml-2" {
		t.Fatalf("the loop admitted %v", got)
	}
	if st.Load().FreeGPUs() != 8 {
		t.Fatalf("%d GPUs free", st.Load().FreeGPUs())
	}
}

// TestEnterDoesNotAllocate: a request through a local queue, judged by a
// selector and a class, decides without allocating, as any does.
func TestEnterDoesNotAllocate(t *testing.T) {
	s := tenancySnapshot(t)
	for _, r := range []allot.Request{ask("r", "", "ml", "train", "", 0, 1), ask("r", "expr", "ml", "", "", 0, 1),
		ask("r", "", "ml", "batch", "low", 10, 1), ask("r", "open", "", "", "high", 1000, 1)} {
		var d allot.Decision
		allot.DecideInto(s, r, &d)
		if d.Verdict != allot.VerdictAdmit {
			t.Fatalf("%+v: %v %s", r, d.Reason, d.Message)
		}
		if n := testing.AllocsPerRun(100, func() { allot.DecideInto(s, r, &d) }); n != 0 {
			t.Errorf("%+v: %v allocations", r, n)
		}
	}
}

// TestLocalQueueDecisionTravels: a decision on a request through a local
// queue carries the queue it resolved to in its JSON, and the decoded
// decision commits a workload in that queue, of that local queue and
// class.
func TestLocalQueueDecisionTravels(t *testing.T) {
	s := tenancySnapshot(t)
	d := allot.Decide(s, ask("r", "", "ml", "batch", "low", 10, 2))
	if d.Verdict != allot.VerdictAdmit {
		t.Fatalf("%v %s", d.Reason, d.Message)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back allot.Decision
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	next, err := allot.NewStore(s).Commit(back)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	w, _ := next.Running("r")
	if w.Queue != "leveled" || w.Tenant != "ml" || w.LocalQueue != "batch" || w.PriorityClass != "low" || w.Priority != 10 {
		t.Fatalf("committed %+v", w)
	}
}
