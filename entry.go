// How a request enters a queue: the queue its Queue or LocalQueue names,
// whether its tenant may submit there, and whether it may claim its
// priority there. One rule, which Decide, Commit, backfill's planning and
// the soft cap's look at what waits all apply (Snapshot.enter), with its
// messages.

package allot

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// entry is how a request enters a queue: the queue, and why it may not
// enter (fault), zero when it may.
type entry struct {
	q     int32 // -1 when no queue is found
	fault entryFault
	// queue is the queue's name: the request's Queue, or what its local
	// queue points at.
	queue string
	// value is the value of the request's priority class (faultAboveClass).
	value int32
}

// entryFault is why a request may not enter its queue.
type entryFault uint8

const (
	entryOK entryFault = iota
	// UnknownQueue.
	faultNoQueue
	faultNoLocalQueue
	// InvalidRequest: Queue names another queue than its local queue's.
	faultLocalQueueElsewhere
	// Unauthorized.
	faultTenant      // not among the queue's tenants
	faultNoTenant    // none named, and the queue has a selector
	faultNoNamespace // the tenant's namespace is not declared
	faultSelector    // its labels do not match
	// PriorityNotAllowed.
	faultNoClass
	faultClassNotAllowed
	faultClassRequired
	faultAboveClass
)

// reason is the decision's reason for the fault.
func (e *entry) reason() Reason {
	switch {
	case e.fault == entryOK:
		return 0
	case e.fault <= faultNoLocalQueue:
		return UnknownQueue
	case e.fault == faultLocalQueueElsewhere:
		return InvalidRequest
	case e.fault <= faultSelector:
		return Unauthorized
	}
	return PriorityNotAllowed
}

// stage is the pipeline's stage that refuses the fault: finding the queue
// is part of validating the request.
func (e *entry) stage() Stage {
	if e.fault <= faultLocalQueueElsewhere {
		return StageValidate
	}
	return StageAuthorize
}

// enter resolves r's queue and judges whether r may enter it: its tenant
// by the queue's tenants and namespace selector, its priority by the
// queue's priority classes and its class's value. It allocates nothing.
func (s *Snapshot) enter(r *Request) entry {
	e := entry{q: -1, queue: r.Queue}
	if r.LocalQueue != "" {
		target, ok := s.ten.local[localKey{r.Tenant, r.LocalQueue}]
		switch {
		case !ok:
			e.fault = faultNoLocalQueue
			return e
		case r.Queue != "" && r.Queue != target:
			e.fault, e.queue = faultLocalQueueElsewhere, target
			return e
		}
		e.queue = target
	}
	q, ok := s.queueIdx[e.queue]
	if !ok {
		e.fault = faultNoQueue
		return e
	}
	e.q = q
	a := &s.admission[q]
	if !a.open() {
		e.fault = s.tenantFault(a, r.Tenant)
		if e.fault != entryOK {
			return e
		}
	}
	if r.PriorityClass == "" {
		if len(a.classes) > 0 {
			e.fault = faultClassRequired
		}
		return e
	}
	v, ok := s.ten.classes[r.PriorityClass]
	switch {
	case !ok:
		e.fault = faultNoClass
	case len(a.classes) > 0 && !has(a.classes, r.PriorityClass):
		e.fault = faultClassNotAllowed
	case r.Priority > v:
		e.fault, e.value = faultAboveClass, v
	}
	return e
}

// tenantFault judges a tenant by a queue's tenants and selector.
func (s *Snapshot) tenantFault(a *queueAdmission, tenant string) entryFault {
	if len(a.tenants) > 0 && !has(a.tenants, tenant) {
		return faultTenant
	}
	if a.selector == nil {
		return entryOK
	}
	if tenant == "" {
		return faultNoTenant
	}
	ls, ok := s.ten.namespaces[tenant]
	switch {
	case !ok:
		return faultNoNamespace
	case !a.selector.Matches(ls):
		return faultSelector
	}
	return entryOK
}

// has reports whether sorted holds x.
func has(sorted []string, x string) bool {
	_, ok := slices.BinarySearch(sorted, x)
	return ok
}

// appendEntryFault writes why r may not enter its queue.
func (s *Snapshot) appendEntryFault(b []byte, e *entry, r *Request) []byte {
	q := strconv.AppendQuote
	localQueue := func(b []byte) []byte {
		b = append(b, "local queue "...)
		b = q(b, r.LocalQueue)
		b = append(b, " of namespace "...)
		return q(b, r.Tenant)
	}
	switch e.fault {
	case faultNoQueue:
		b = append(b, "queue "...)
		b = q(b, e.queue)
		b = append(b, " does not exist"...)
	case faultNoLocalQueue:
		b = localQueue(b)
		b = append(b, " does not exist"...)
	case faultLocalQueueElsewhere:
		b = append(b, "queue: "...)
		b = q(b, r.Queue)
		b = append(b, ", but "...)
		b = localQueue(b)
		b = append(b, " points at queue "...)
		b = q(b, e.queue)
	case faultTenant, faultNoNamespace, faultSelector:
		b = append(b, "tenant "...)
		b = q(b, r.Tenant)
		b = append(b, " may not submit to queue "...)
		b = q(b, e.queue)
		switch e.fault {
		case faultNoNamespace:
			b = append(b, ": it admits the namespaces its namespace selector matches, and the snapshot declares no namespace "...)
			b = q(b, r.Tenant)
		case faultSelector:
			sel := s.admission[e.q].selector
			req, _ := sel.Mismatch(s.ten.namespaces[r.Tenant])
			b = append(b, ": its namespace's labels do not satisfy "...)
			b = append(b, req...)
			b = append(b, " of the queue's namespace selector "...)
			b = append(b, sel.String()...)
		}
	case faultNoTenant:
		b = append(b, "a request with no tenant may not submit to queue "...)
		b = q(b, e.queue)
		b = append(b, ": it admits only the namespaces its namespace selector matches"...)
	case faultNoClass:
		b = append(b, "priority class "...)
		b = q(b, r.PriorityClass)
		b = append(b, " does not exist"...)
	case faultClassNotAllowed:
		b = append(b, "queue "...)
		b = q(b, e.queue)
		b = append(b, " does not allow priority class "...)
		b = q(b, r.PriorityClass)
		b = append(b, ": it allows "...)
		b = appendQuoted(b, s.admission[e.q].classes)
	case faultClassRequired:
		b = append(b, "queue "...)
		b = q(b, e.queue)
		b = append(b, " admits only requests that claim one of its priority classes ("...)
		b = appendQuoted(b, s.admission[e.q].classes)
		b = append(b, "), and the request claims none"...)
	case faultAboveClass:
		b = append(b, "priority "...)
		b = strconv.AppendInt(b, int64(r.Priority), 10)
		b = append(b, " is above the value of priority class "...)
		b = q(b, r.PriorityClass)
		b = append(b, " ("...)
		b = strconv.AppendInt(b, int64(e.value), 10)
		b = append(b, ")"...)
	}
	return b
}

// appendQuoted writes names quoted, comma-separated.
func appendQuoted(b []byte, names []string) []byte {
	for i, n := range names {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendQuote(b, n)
	}
	return b
}

// entryConflict is Commit's text for a request that may no longer enter
// its queue.
func (s *Snapshot) entryConflict(e *entry, r *Request) string {
	switch e.fault {
	case faultNoQueue:
		return "queue " + strconv.Quote(e.queue) + " no longer exists"
	case faultTenant:
		return "tenant " + strconv.Quote(r.Tenant) + " may no longer submit to queue " + strconv.Quote(e.queue)
	}
	var b strings.Builder
	b.WriteString("the request may no longer enter its queue: ")
	b.Write(s.appendEntryFault(nil, e, r))
	return b.String()
}

// WayIn is how a workload may be submitted to a queue by this rule: the
// first of its local queues (by namespace, then name) in a namespace it
// admits, else the first
// declared namespace it admits, else, for a queue that names its tenants,
// the first of them, else no tenant at all for a queue open to anyone.
// ok is false when the queue does not exist or admits no one the snapshot
// can name. A simulator submitting a trace's jobs to a configuration's
// queues uses it to submit each as a member of a team would.
func (s *Snapshot) WayIn(queue string) (tenant, localQueue string, ok bool) {
	q, found := s.queueIdx[queue]
	if !found {
		return "", "", false
	}
	a := &s.admission[q]
	for _, lq := range s.LocalQueues() {
		if lq.ClusterQueue == queue && (a.open() || s.tenantFault(a, lq.Namespace) == entryOK) {
			return lq.Namespace, lq.Name, true
		}
	}
	if a.open() {
		return "", "", true
	}
	for _, ns := range slices.Sorted(maps.Keys(s.ten.namespaces)) {
		if s.tenantFault(a, ns) == entryOK {
			return ns, "", true
		}
	}
	if a.selector == nil {
		return a.tenants[0], "", true
	}
	return "", "", false
}
