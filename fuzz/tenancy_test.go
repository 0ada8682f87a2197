package fuzz

import (
	"slices"
	"testing"

	gofuzz "github.com/google/gofuzz"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/labels"
)

// The tenancy of a generated world: namespaces with labels, local queues,
// priority classes, the queues' namespace selectors and priority classes,
// requests and pending workloads that name them, and the events that
// change them. FuzzDecide checks each world as generated and again with a
// tenancy drawn from the same bytes (tenanted), so that the worlds of the
// golden records stay as they are.

var (
	namespaceNames = []string{"ml", "web", "data"}
	localNames     = []string{"train", "serve"}
	classPool      = []allot.PriorityClass{{Name: "low", Value: 10}, {Name: "normal", Value: 100}, {Name: "high", Value: 1000}}
	// selectorPool mixes every operator, the empty selector, Kueue's nil
	// written as allot has it, and (hostile) selectors Build refuses.
	selectorPool = []*labels.Selector{
		{MatchLabels: map[string]string{"team": "ml"}},
		{},
		{MatchExpressions: []labels.Requirement{{Key: "team", Operator: labels.In, Values: []string{"ml", "data"}}}},
		{MatchExpressions: []labels.Requirement{{Key: "tier", Operator: labels.NotIn, Values: []string{"free"}}}},
		{MatchExpressions: []labels.Requirement{{Key: "team", Operator: labels.Exists}, {Key: "tier", Operator: labels.DoesNotExist}}},
		{MatchExpressions: []labels.Requirement{{Key: "kubernetes.io/metadata.name", Operator: labels.DoesNotExist}}},
		{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "web"}},
	}
	badSelectors = []*labels.Selector{
		{MatchExpressions: []labels.Requirement{{Key: "", Operator: labels.Exists}}},
		{MatchExpressions: []labels.Requirement{{Key: "team", Operator: labels.In}}},
		{MatchExpressions: []labels.Requirement{{Key: "team", Operator: "Equals", Values: []string{"ml"}}}},
		{MatchLabels: map[string]string{"team": "not valid"}},
	}
)

// tenancyPlan is what gofuzz fills through plan.fill.
type tenancyPlan struct {
	w       *world
	c       gofuzz.Continue
	hostile bool
	queues  []string
}

// tenanted returns w with a tenancy drawn from data (read backwards, so
// that its draws are not gen's), sharing nothing it changes with w.
func tenanted(data []byte, w world) world {
	rev := slices.Clone(data)
	slices.Reverse(rev)
	out := w
	out.B.Queues = slices.Clone(w.B.Queues)
	out.B.Pending = slices.Clone(w.B.Pending)
	out.Requests = slices.Clone(w.Requests)
	out.Events = slices.Clone(w.Events)
	plan := tenancyPlan{w: &out}
	for _, q := range out.B.Queues {
		plan.queues = append(plan.queues, q.Name)
	}
	f := gofuzz.NewFromGoFuzz(rev).NilChance(0).Funcs(func(p *tenancyPlan, c gofuzz.Continue) {
		p.c = c
		p.fill()
	})
	f.Fuzz(&plan)
	return out
}

func (p *tenancyPlan) bad(n int) bool { return p.hostile && p.c.Intn(n) == 0 }

func (p *tenancyPlan) pick(xs []string) string { return xs[p.c.Intn(len(xs))] }

func (p *tenancyPlan) fill() {
	c, b := p.c, &p.w.B
	p.hostile = c.Intn(4) == 0
	for _, name := range namespaceNames {
		if c.Intn(5) == 0 {
			continue
		}
		b.Namespaces = append(b.Namespaces, p.namespace(name))
	}
	for _, pc := range classPool {
		if c.Intn(5) == 0 {
			continue
		}
		if p.bad(10) {
			pc.Name = p.pick([]string{"", "low"}) // empty, or maybe twice
		}
		b.PriorityClasses = append(b.PriorityClasses, pc)
	}
	for i := range b.Queues {
		q := &b.Queues[i]
		if c.Intn(3) == 0 {
			q.NamespaceSelector = selectorPool[c.Intn(len(selectorPool))]
			if p.bad(6) {
				q.NamespaceSelector = badSelectors[c.Intn(len(badSelectors))]
			}
		}
		if c.Intn(4) == 0 {
			q.PriorityClasses = p.classNames(1 + c.Intn(2))
		}
	}
	for _, ns := range namespaceNames {
		declared := slices.ContainsFunc(b.Namespaces, func(n allot.Namespace) bool { return n.Name == ns })
		for _, name := range localNames {
			if c.Intn(2) == 0 || len(p.queues) == 0 || !declared && !p.bad(3) {
				continue
			}
			lq := allot.LocalQueue{Namespace: ns, Name: name, ClusterQueue: p.pick(p.queues)}
			if p.bad(10) {
				lq.ClusterQueue = "unknown"
			}
			b.LocalQueues = append(b.LocalQueues, lq)
		}
	}
	for i := range p.w.Requests {
		w := allot.Workload(p.w.Requests[i])
		p.submitter(&w, true)
		p.w.Requests[i] = allot.Request(w)
	}
	for i := range b.Pending {
		p.submitter(&b.Pending[i], false)
	}
	for i := range p.w.Events {
		if c.Intn(3) == 0 {
			p.w.Events[i] = p.event()
		}
	}
}

// namespace draws a namespace's labels: a team, maybe a tier; hostile, a
// name or label Build refuses.
func (p *tenancyPlan) namespace(name string) allot.Namespace {
	c := p.c
	ns := allot.Namespace{Name: name}
	if c.Intn(4) != 0 {
		ns.Labels = map[string]string{"team": p.pick(namespaceNames)}
		if c.Intn(3) == 0 {
			ns.Labels["tier"] = p.pick([]string{"free", "gold"})
		}
	}
	switch {
	case p.bad(12):
		ns.Name = p.pick([]string{"ML", "", "a b"})
	case p.bad(12):
		ns.Labels = map[string]string{p.pick([]string{"bad key", "kubernetes.io/metadata.name"}): "x"}
	}
	return ns
}

// classNames draws n of the snapshot's classes' names, hostile one it may
// not have.
func (p *tenancyPlan) classNames(n int) []string {
	classes := p.w.B.PriorityClasses
	if len(classes) == 0 || p.bad(6) {
		classes = classPool
	}
	var out []string
	for range n {
		name := classes[p.c.Intn(len(classes))].Name
		if p.bad(6) {
			name = "urgent"
		}
		if !slices.Contains(out, name) || p.bad(4) {
			out = append(out, name)
		}
	}
	return out
}

// submitter draws who submits w where, at which priority: a tenant, a
// local queue (mostly one the snapshot has, in the tenant's namespace;
// the queue then often left out), a class (mostly the snapshot's) with a
// priority at, just around or far above its value. A request may name a
// local queue that does not exist; a pending workload, which Build would
// refuse for it, rarely does.
func (p *tenancyPlan) submitter(w *allot.Workload, request bool) {
	c, b := p.c, &p.w.B
	if c.Intn(2) == 0 {
		w.Tenant = p.pick(append([]string{"", "outsider"}, namespaceNames...))
	}
	if c.Intn(2) == 0 {
		switch {
		case len(b.LocalQueues) > 0 && c.Intn(4) != 0:
			lq := b.LocalQueues[c.Intn(len(b.LocalQueues))]
			w.Tenant, w.LocalQueue = lq.Namespace, lq.Name
			if c.Intn(2) == 0 {
				w.Queue = ""
			} else if c.Intn(4) != 0 || !request && !p.bad(3) {
				w.Queue = lq.ClusterQueue
			}
		case request || p.bad(4):
			w.LocalQueue = p.pick(append([]string{"gone"}, localNames...))
			if w.Tenant == "" && !p.bad(4) {
				w.Tenant = p.pick(namespaceNames)
			}
			if c.Intn(2) == 0 {
				w.Queue = ""
			}
		}
	}
	if c.Intn(2) == 0 {
		pc := classPool[c.Intn(len(classPool))]
		if len(b.PriorityClasses) > 0 && c.Intn(4) != 0 {
			pc = b.PriorityClasses[c.Intn(len(b.PriorityClasses))]
		}
		if p.bad(8) {
			pc.Name = "urgent"
		}
		w.PriorityClass = pc.Name
		w.Priority = pc.Value + []int32{0, 0, 0, -1, 1, 5000}[c.Intn(6)]
	}
}

// event draws an event that changes the tenancy, naming mostly what
// exists.
func (p *tenancyPlan) event() allot.Event {
	c := p.c
	switch c.Intn(7) {
	case 0:
		return allot.SetNamespace{Namespace: p.namespace(p.pick(append([]string{"new"}, namespaceNames...)))}
	case 1:
		return allot.RemoveNamespace{Name: p.pick(namespaceNames)}
	case 2:
		if len(p.queues) == 0 {
			return nil
		}
		return allot.SetLocalQueue{LocalQueue: allot.LocalQueue{Namespace: p.pick(namespaceNames), Name: p.pick(localNames), ClusterQueue: p.pick(p.queues)}}
	case 3:
		return allot.RemoveLocalQueue{Namespace: p.pick(namespaceNames), Name: p.pick(localNames)}
	case 4:
		pc := classPool[c.Intn(len(classPool))]
		pc.Value += int32(c.Intn(3)-1) * 50
		return allot.SetPriorityClass{PriorityClass: pc}
	case 5:
		return allot.RemovePriorityClass{Name: classPool[c.Intn(len(classPool))].Name}
	}
	if len(p.w.B.Queues) == 0 {
		return nil
	}
	q := p.w.B.Queues[c.Intn(len(p.w.B.Queues))]
	q.NamespaceSelector = selectorPool[c.Intn(len(selectorPool))]
	q.PriorityClasses = p.classNames(c.Intn(2))
	return allot.SetQueue{Queue: q}
}

// naiveEntry is, from the rule's words rather than its code, the reason
// Decide must give r on s for where r asks to go: UnknownQueue (no such
// queue or local queue), InvalidRequest (its queue is not its local
// queue's), Unauthorized (a tenant its queue's tenants or namespace
// selector refuse), PriorityNotAllowed (a class the snapshot or its queue
// does not allow, none where the queue lists classes, a priority above
// the class's value), or 0 when r may enter; and the queue r enters, ""
// when none is found.
func naiveEntry(s *allot.Snapshot, r allot.Request) (allot.Reason, string) {
	queue := r.Queue
	if r.LocalQueue != "" {
		i := slices.IndexFunc(s.LocalQueues(), func(lq allot.LocalQueue) bool { return lq.Namespace == r.Tenant && lq.Name == r.LocalQueue })
		if i < 0 {
			return allot.UnknownQueue, ""
		}
		target := s.LocalQueues()[i].ClusterQueue
		if queue != "" && queue != target {
			return allot.InvalidRequest, ""
		}
		queue = target
	}
	q, ok := s.Queue(queue)
	if !ok {
		return allot.UnknownQueue, ""
	}
	if len(q.Tenants) > 0 && !slices.Contains(q.Tenants, r.Tenant) {
		return allot.Unauthorized, queue
	}
	if q.NamespaceSelector != nil {
		ls, declared := s.NamespaceLabels(r.Tenant)
		if r.Tenant == "" || !declared || !naiveMatch(q.NamespaceSelector, ls) {
			return allot.Unauthorized, queue
		}
	}
	if r.PriorityClass == "" {
		if len(q.PriorityClasses) > 0 {
			return allot.PriorityNotAllowed, queue
		}
		return 0, queue
	}
	i := slices.IndexFunc(s.PriorityClasses(), func(c allot.PriorityClass) bool { return c.Name == r.PriorityClass })
	switch {
	case i < 0,
		len(q.PriorityClasses) > 0 && !slices.Contains(q.PriorityClasses, r.PriorityClass),
		r.Priority > s.PriorityClasses()[i].Value:
		return allot.PriorityNotAllowed, queue
	}
	return 0, queue
}

// naiveMatch reads a selector as Kubernetes documents it: every
// matchLabels entry present with its value, every expression holding.
func naiveMatch(sel *labels.Selector, ls map[string]string) bool {
	for k, v := range sel.MatchLabels {
		if got, ok := ls[k]; !ok || got != v {
			return false
		}
	}
	for _, e := range sel.MatchExpressions {
		v, ok := ls[e.Key]
		in := ok && slices.Contains(e.Values, v)
		switch e.Operator {
		case labels.In:
			if !in {
				return false
			}
		case labels.NotIn:
			if in {
				return false
			}
		case labels.Exists:
			if !ok {
				return false
			}
		case labels.DoesNotExist:
			if ok {
				return false
			}
		}
	}
	return true
}

// checkEntry holds decision d of r on s to naiveEntry: a request refused
// where it asks to go is refused for that reason, one that may go there
// is refused for none of them, and the decision names the queue entered.
// Validation comes first: a request it refuses is InvalidRequest whatever
// else.
func checkEntry(s *allot.Snapshot, r allot.Request, d *allot.Decision, fail func(string, ...any)) {
	want, queue := naiveEntry(s, r)
	if d.Reason == allot.InvalidRequest && len(d.Trail) == 1 {
		return // validation's, before the queue is looked for
	}
	switch {
	case want != 0 && d.Reason != want:
		fail("the rule of entry says %v, Decide %v", want, d.Reason)
	case want == 0 && (d.Reason == allot.UnknownQueue || d.Reason == allot.Unauthorized || d.Reason == allot.PriorityNotAllowed):
		fail("the rule of entry lets the request into queue %q, Decide says %v", queue, d.Reason)
	case queue != "" && d.Queue != queue:
		fail("the request enters queue %q, the decision names %q", queue, d.Queue)
	}
}

// FuzzChurnTenancy is FuzzChurn on the worlds with a tenancy (tenanted),
// with events that change it among the steps: after every step the
// snapshot's own Builder builds it again and answers alike, namespaces,
// local queues, classes and the queues' rules included.
func FuzzChurnTenancy(f *testing.F) {
	for _, seed := range decideSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkChurn(t, tenantedChurn(data))
	})
}

// tenantedChurn is genChurn's world with a tenancy, a third of its steps
// drawn anew as events that change the tenancy, and a few more of them
// at the end.
func tenantedChurn(data []byte) churnWorld {
	w := genChurn(data)
	w.world = tenanted(data, w.world)
	steps := slices.Clone(w.Steps)
	plan := tenancyPlan{w: &w.world}
	for _, q := range w.B.Queues {
		plan.queues = append(plan.queues, q.Name)
	}
	gofuzz.NewFromGoFuzz(data).NilChance(0).Funcs(func(p *tenancyPlan, c gofuzz.Continue) {
		p.c, p.hostile = c, c.Intn(4) == 0
		for i := range steps {
			if c.Intn(3) == 0 {
				steps[i] = p.event()
			}
		}
		for range c.Intn(4) {
			steps = append(steps, p.event())
		}
	}).Fuzz(&plan)
	w.Steps = steps
	return w
}

// TestChurnTenancyGeneratedWorlds runs FuzzChurnTenancy's checks on a
// fixed set of pseudo-random inputs, and checks that each event of the
// tenancy is applied, and each that can be refused is refused, somewhere.
func TestChurnTenancyGeneratedWorlds(t *testing.T) {
	applied, refused, n := generatedWorlds(t, 19, 23, tenantedChurn)
	t.Logf("applied %v; refused %v", applied, refused)
	for _, ev := range []string{"SetNamespace", "RemoveNamespace", "SetLocalQueue", "RemoveLocalQueue", "SetPriorityClass", "RemovePriorityClass"} {
		k := "allot." + ev
		if applied[k] == 0 || refused[k] == 0 && ev != "SetPriorityClass" {
			t.Errorf("%s: %d applied, %d refused in %d worlds", ev, applied[k], refused[k], n)
		}
	}
}
