// Who may submit where, at which priority: the snapshot's namespaces with
// their labels, its local queues and its priority classes, and each
// queue's part of the rule (its tenants, namespace selector and priority
// classes), validated for Build and for the events that change them.

package allot

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/allot-sched/allot/labels"
)

// Namespace is a tenant: the Kubernetes namespace a workload is submitted
// from, with its labels. Workload.Tenant names it.
//
// Who may submit to a queue is one rule, over the tenant: the queue's
// Tenants admit tenants by name, and its NamespaceSelector by their
// namespace's labels; a request passes when both admit it (either unset
// admits everyone). Tenants is the selector term kubernetes.io/metadata.name
// In (tenants), which Kubernetes sets on every namespace, so it holds of a
// tenant the snapshot does not declare as well. A selector judges labels,
// so it admits only a tenant the snapshot declares here, with the labels
// given and kubernetes.io/metadata.name set to its name (a request naming
// no tenant, or one the snapshot does not declare, is refused, as Kueue
// refuses a workload whose namespace it cannot read). Selectors follow
// Kubernetes exactly (package labels), but for nil: a queue without one
// admits any tenant, where Kueue's ClusterQueue without a
// namespaceSelector admits none; write Kueue's nil as the selector
// kubernetes.io/metadata.name DoesNotExist, which no namespace matches. A
// request the rule refuses is rejected (Unauthorized), never admitted and
// never placed; Kueue keeps such a workload pending until the namespace's
// labels change, and an embedder resubmits it then.
type Namespace struct {
	// Name is a DNS label (lower-case alphanumerics and '-', at most 63).
	Name string `json:"name"`
	// Labels are the namespace's labels, keys qualified names and values
	// label values, as Kubernetes allows them. kubernetes.io/metadata.name
	// is the namespace's name whether given or not.
	Labels map[string]string `json:"labels,omitempty"`
}

// LocalQueue is a namespace's queue (Kueue's LocalQueue): a request that
// names it (Workload.LocalQueue, with Workload.Tenant its namespace) is a
// request to the queue it points at. Its namespace must be declared and
// its queue must exist; what it points at never changes, as in Kueue.
type LocalQueue struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// ClusterQueue names the queue (Kueue's ClusterQueue) it points at.
	ClusterQueue string `json:"clusterQueue"`
}

// PriorityClass is a named priority level (Kueue's WorkloadPriorityClass).
//
// A request that claims a class (Workload.PriorityClass) may carry a
// priority up to the class's value: above it, the request is rejected
// (PriorityNotAllowed), not clamped, so that a workload has one priority,
// the one it was sent with, everywhere it is ranked (queue order, victims,
// the soft cap); name the class's value as the priority, as Kueue sets it.
// A queue with PriorityClasses admits only requests that claim one of
// them: a request claiming another, or none, is rejected too, so that no
// raw priority reaches a queue that restricts its levels. Classes are
// judged as they are when the request is decided: a class whose value is
// lowered refuses the work that waits above it (Kueue keeps a workload's
// priority as it was when created).
type PriorityClass struct {
	Name  string `json:"name"`
	Value int32  `json:"value"`
}

// metadataName is the label Kubernetes sets on every namespace to its name.
const metadataName = "kubernetes.io/metadata.name"

// tenancy holds the snapshot's namespaces, local queues and priority
// classes. Versions share it: an event that changes it makes a new one
// (withTenancy).
type tenancy struct {
	// namespaces maps a namespace to its labels, metadataName among them.
	namespaces map[string]map[string]string
	// local maps a local queue to the queue it points at.
	local   map[localKey]string
	classes map[string]int32
}

type localKey struct{ namespace, name string }

// queueAdmission is a queue's part of the rule of who may submit to it, at
// which priority (Snapshot.enter).
type queueAdmission struct {
	tenants  []string         // sorted; empty admits any tenant
	selector *labels.Selector // nil admits any tenant
	classes  []string         // sorted; empty allows any class, and none
}

// open reports whether the queue admits every tenant.
func (a *queueAdmission) open() bool { return len(a.tenants) == 0 && a.selector == nil }

// buildTenancy validates the namespaces and priority classes: the queues
// name the classes, so they come first.
func buildTenancy(s *Snapshot, nss []Namespace, classes []PriorityClass) error {
	t := &tenancy{namespaces: make(map[string]map[string]string, len(nss)), local: map[localKey]string{},
		classes: make(map[string]int32, len(classes))}
	for i, n := range nss {
		p := fmt.Sprintf("namespaces[%d]", i)
		if _, dup := t.namespaces[n.Name]; dup {
			return buildErr(ErrDuplicateID, p+".name", "namespace %q twice", n.Name)
		}
		ls, err := namespaceLabels(n, p)
		if err != nil {
			return err
		}
		t.namespaces[n.Name] = ls
	}
	for i, c := range classes {
		p := fmt.Sprintf("priorityClasses[%d]", i)
		if c.Name == "" {
			return buildErr(ErrInvalid, p+".name", "empty name")
		}
		if _, dup := t.classes[c.Name]; dup {
			return buildErr(ErrDuplicateID, p+".name", "priority class %q twice", c.Name)
		}
		t.classes[c.Name] = c.Value
	}
	s.ten = t
	return nil
}

// namespaceLabels validates a namespace and returns its labels as the
// selectors read them, metadataName among them.
func namespaceLabels(n Namespace, p string) (map[string]string, error) {
	if why := labels.DNSLabelFault(n.Name); why != "" {
		return nil, buildErr(ErrInvalid, p+".name", "%s", why)
	}
	if err := labels.ValidateSet(n.Labels); err != nil {
		var le *labels.Error
		errors.As(err, &le)
		return nil, buildErr(ErrInvalid, p+".labels"+le.Field, "%s", le.Reason)
	}
	if v, ok := n.Labels[metadataName]; ok && v != n.Name {
		return nil, buildErr(ErrInvalid, p+`.labels["`+metadataName+`"]`, "%q: Kubernetes sets it to the namespace's name, %q", v, n.Name)
	}
	ls := make(map[string]string, len(n.Labels)+1)
	maps.Copy(ls, n.Labels)
	ls[metadataName] = n.Name
	return ls, nil
}

// buildLocalQueues validates the local queues once the queues are built.
func buildLocalQueues(s *Snapshot, lqs []LocalQueue) error {
	for i, lq := range lqs {
		p := fmt.Sprintf("localQueues[%d]", i)
		if _, dup := s.ten.local[localKey{lq.Namespace, lq.Name}]; dup {
			return buildErr(ErrDuplicateID, p+".name", "local queue %q of namespace %q twice", lq.Name, lq.Namespace)
		}
		if err := checkLocalQueue(s, lq, p); err != nil {
			return err
		}
		s.ten.local[localKey{lq.Namespace, lq.Name}] = lq.ClusterQueue
	}
	return nil
}

// checkLocalQueue validates a local queue against s's namespaces and queues.
func checkLocalQueue(s *Snapshot, lq LocalQueue, p string) error {
	switch _, ns := s.ten.namespaces[lq.Namespace]; {
	case lq.Name == "":
		return buildErr(ErrInvalid, p+".name", "empty name")
	case !ns:
		return buildErr(ErrInvalid, p+".namespace", "local queue %q lives in namespace %q, which the snapshot does not declare", lq.Name, lq.Namespace)
	}
	if _, ok := s.queueIdx[lq.ClusterQueue]; !ok {
		return buildErr(ErrUnknownQueue, p+".clusterQueue", "local queue %q of namespace %q points at queue %q", lq.Name, lq.Namespace, lq.ClusterQueue)
	}
	return nil
}

// resolveAdmission validates a queue's tenants, namespace selector and
// priority classes and returns its part of the rule.
func resolveAdmission(s *Snapshot, q *Queue, p string) (queueAdmission, error) {
	a := queueAdmission{tenants: slices.Sorted(slices.Values(q.Tenants)), selector: q.NamespaceSelector.Clone()}
	if err := q.NamespaceSelector.Validate(); err != nil {
		var le *labels.Error
		errors.As(err, &le)
		return a, buildErr(ErrInvalid, p+".namespaceSelector."+le.Field, "%s", le.Reason)
	}
	for i, c := range q.PriorityClasses {
		cp := fmt.Sprintf("%s.priorityClasses[%d]", p, i)
		if _, ok := s.ten.classes[c]; !ok {
			return a, buildErr(ErrInvalid, cp, "queue %q allows priority class %q, which the snapshot does not declare", q.Name, c)
		}
		if slices.Contains(q.PriorityClasses[:i], c) {
			return a, buildErr(ErrDuplicateID, cp, "priority class %q twice", c)
		}
	}
	if len(q.PriorityClasses) > 0 {
		a.classes = slices.Sorted(slices.Values(q.PriorityClasses))
	}
	return a, nil
}

// resolveLocal resolves the local queue of a running or pending workload of
// Build or Submit: an empty Queue becomes the queue it points at, and any
// other must be that queue. A workload naming a local queue that no longer
// exists keeps the queue it names, as Kueue keeps the workloads of a
// deleted LocalQueue.
func resolveLocal(s *Snapshot, w *Workload, p string) error {
	if w.LocalQueue == "" {
		return nil
	}
	if w.Tenant == "" {
		return buildErr(ErrInvalid, p+".tenant", "workload %q names local queue %q and no tenant, the namespace it lives in", w.ID, w.LocalQueue)
	}
	target, ok := s.ten.local[localKey{w.Tenant, w.LocalQueue}]
	switch {
	case !ok && w.Queue == "":
		return buildErr(ErrUnknownQueue, p+".localQueue", "workload %q names local queue %q of namespace %q, which does not exist", w.ID, w.LocalQueue, w.Tenant)
	case !ok:
	case w.Queue == "":
		w.Queue = target
	case w.Queue != target:
		return buildErr(ErrInvalid, p+".queue", "workload %q is in queue %q; its local queue %q of namespace %q points at %q", w.ID, w.Queue, w.LocalQueue, w.Tenant, target)
	}
	return nil
}

// Namespaces lists the snapshot's namespaces by name, each with its labels
// as given (kubernetes.io/metadata.name aside, which every one carries).
func (s *Snapshot) Namespaces() []Namespace {
	out := make([]Namespace, 0, len(s.ten.namespaces))
	for _, name := range slices.Sorted(maps.Keys(s.ten.namespaces)) {
		ls := maps.Clone(s.ten.namespaces[name])
		delete(ls, metadataName)
		if len(ls) == 0 {
			ls = nil
		}
		out = append(out, Namespace{Name: name, Labels: ls})
	}
	return out
}

// NamespaceLabels are the labels a namespace selector reads of a declared
// namespace, kubernetes.io/metadata.name among them, a copy.
func (s *Snapshot) NamespaceLabels(name string) (map[string]string, bool) {
	ls, ok := s.ten.namespaces[name]
	return maps.Clone(ls), ok
}

// LocalQueues lists the snapshot's local queues by namespace, then name.
func (s *Snapshot) LocalQueues() []LocalQueue {
	out := make([]LocalQueue, 0, len(s.ten.local))
	for k, q := range s.ten.local {
		out = append(out, LocalQueue{Namespace: k.namespace, Name: k.name, ClusterQueue: q})
	}
	slices.SortFunc(out, func(a, b LocalQueue) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// PriorityClasses lists the snapshot's priority classes by name.
func (s *Snapshot) PriorityClasses() []PriorityClass {
	out := make([]PriorityClass, 0, len(s.ten.classes))
	for _, name := range slices.Sorted(maps.Keys(s.ten.classes)) {
		out = append(out, PriorityClass{Name: name, Value: s.ten.classes[name]})
	}
	return out
}
