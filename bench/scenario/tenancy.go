package scenario

import (
	"slices"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/labels"
)

// The operators of a namespace selector's matchExpressions.
var selectorOperators = []string{string(labels.In), string(labels.NotIn), string(labels.Exists), string(labels.DoesNotExist)}

// namespaceList reads the namespaces; names must be distinct.
func (p *parser) namespaceList(n node) []allot.Namespace {
	return distinct(p, n, "namespace", &p.namespaces, p.namespace, func(ns allot.Namespace) string { return ns.Name })
}

// distinct reads the array n of named values with read, each name
// recorded in seen, and refuses a name seen before ("duplicate WHAT").
func distinct[T any](p *parser, n node, what string, seen *[]string, read func(node) T, name func(T) string) []T {
	var out []T
	for _, e := range p.array(n) {
		v := read(e)
		if p.err == nil && slices.Contains(*seen, name(v)) {
			p.failf(e.field("name"), "duplicate %s %q", what, name(v))
		}
		*seen = append(*seen, name(v))
		out = append(out, v)
	}
	return out
}

// namespace reads one namespace: {"name": "ml", "labels": {"team": "ml"}}.
func (p *parser) namespace(n node) allot.Namespace {
	o := p.object(n, "name", "labels")
	return allot.Namespace{Name: p.name(p.need(o, "name")), Labels: p.labels(o.get("labels"))}
}

// localQueueList reads the local queues, each in a namespace and pointing
// at a queue of the file.
func (p *parser) localQueueList(n node) []allot.LocalQueue {
	var out []allot.LocalQueue
	for _, e := range p.array(n) {
		lq, o := p.localQueue(e)
		switch {
		case p.err != nil:
		case !slices.Contains(p.namespaces, lq.Namespace):
			p.failf(o.field("namespace"), "unknown namespace %q", lq.Namespace)
		case !slices.Contains(p.queues, lq.ClusterQueue):
			p.failf(o.field("clusterQueue"), "unknown queue %q", lq.ClusterQueue)
		case slices.Contains(out, lq):
			p.failf(o.field("name"), "duplicate local queue %q of namespace %q", lq.Name, lq.Namespace)
		}
		out = append(out, lq)
	}
	return out
}

// localQueue reads one local queue: {"namespace": "ml", "name": "train",
// "clusterQueue": "team-ml"}.
func (p *parser) localQueue(n node) (allot.LocalQueue, object) {
	o := p.object(n, "namespace", "name", "clusterQueue")
	return allot.LocalQueue{Namespace: p.name(p.need(o, "namespace")), Name: p.name(p.need(o, "name")),
		ClusterQueue: p.name(p.need(o, "clusterQueue"))}, o
}

// priorityClassList reads the priority classes; names must be distinct.
func (p *parser) priorityClassList(n node) []allot.PriorityClass {
	return distinct(p, n, "priority class", &p.classes, p.priorityClass, func(c allot.PriorityClass) string { return c.Name })
}

// priorityClass reads one priority class: {"name": "high", "value": 1000}.
func (p *parser) priorityClass(n node) allot.PriorityClass {
	o := p.object(n, "name", "value")
	return allot.PriorityClass{Name: p.name(p.need(o, "name")), Value: p.int32(p.need(o, "value"))}
}

// queueClasses reads a queue's priorityClasses: classes of the file.
func (p *parser) queueClasses(n node) []string {
	out := p.strs(n)
	for i, c := range out {
		if p.err == nil && !slices.Contains(p.classes, c) {
			p.failf(n.index(i), "unknown priority class %q", c)
		}
	}
	return out
}

// selector reads a namespace selector: {"matchLabels": {...},
// "matchExpressions": [{"key": ..., "operator": ..., "values": [...]}]};
// absent is nil, and {} the selector that matches every namespace. The
// syntax of keys and values is Build's to check.
func (p *parser) selector(n node) *labels.Selector {
	if n.absent {
		return nil
	}
	o := p.object(n, "matchLabels", "matchExpressions")
	sel := &labels.Selector{MatchLabels: p.labels(o.get("matchLabels"))}
	for _, e := range p.array(o.get("matchExpressions")) {
		eo := p.object(e, "key", "operator", "values")
		sel.MatchExpressions = append(sel.MatchExpressions, labels.Requirement{
			Key:      p.str(p.need(eo, "key")),
			Operator: labels.Operator(p.oneOf(p.need(eo, "operator"), selectorOperators...)),
			Values:   p.strs(eo.get("values")),
		})
	}
	return sel
}

// tenancyStep reads the change of a setNamespace, removeNamespace,
// setLocalQueue, removeLocalQueue, setPriorityClass or removePriorityClass
// step. What it names is the store's to check when it runs.
func (p *parser) tenancyStep(kind StepKind, v node) allot.Event {
	switch kind {
	case StepSetNamespace:
		return allot.SetNamespace{Namespace: p.namespace(v)}
	case StepRemoveNamespace:
		return allot.RemoveNamespace{Name: p.name(v)}
	case StepSetLocalQueue:
		lq, _ := p.localQueue(v)
		return allot.SetLocalQueue{LocalQueue: lq}
	case StepRemoveLocalQueue:
		o := p.object(v, "namespace", "name")
		return allot.RemoveLocalQueue{Namespace: p.name(p.need(o, "namespace")), Name: p.name(p.need(o, "name"))}
	case StepSetPriorityClass:
		return allot.SetPriorityClass{PriorityClass: p.priorityClass(v)}
	case StepRemovePriorityClass:
		return allot.RemovePriorityClass{Name: p.name(v)}
	}
	return nil
}

// tenancyTarget names what a tenancy step changes, for its String.
func tenancyTarget(ev allot.Event) string {
	switch e := ev.(type) {
	case allot.SetNamespace:
		return e.Namespace.Name
	case allot.RemoveNamespace:
		return e.Name
	case allot.SetLocalQueue:
		return e.LocalQueue.Namespace + "/" + e.LocalQueue.Name
	case allot.RemoveLocalQueue:
		return e.Namespace + "/" + e.Name
	case allot.SetPriorityClass:
		return e.PriorityClass.Name
	case allot.RemovePriorityClass:
		return e.Name
	}
	return ""
}
