// The events that change who may submit where, at which priority:
// namespaces and their labels, local queues, priority classes. Each is
// checked as Build checks what it changes, and leaves the snapshot that
// building the new state afresh gives.

package allot

import (
	"maps"
)

// withTenancy gives s a copy of its tenancy to change: versions share it
// and its maps. The copy shares the maps too; each event copies the one
// it changes (namespaces, localQueues, priorityClasses), not the others.
func (s *Snapshot) withTenancy() *tenancy {
	t := *s.ten
	s.ten = &t
	return &t
}

// namespacesToChange, localQueuesToChange and priorityClassesToChange
// give s a tenancy whose map of that kind is its own to change.
func (s *Snapshot) namespacesToChange() map[string]map[string]string {
	t := s.withTenancy()
	if t.namespaces = maps.Clone(t.namespaces); t.namespaces == nil {
		t.namespaces = map[string]map[string]string{}
	}
	return t.namespaces
}

func (s *Snapshot) localQueuesToChange() map[localKey]string {
	t := s.withTenancy()
	if t.local = maps.Clone(t.local); t.local == nil {
		t.local = map[localKey]string{}
	}
	return t.local
}

func (s *Snapshot) priorityClassesToChange() map[string]int32 {
	t := s.withTenancy()
	if t.classes = maps.Clone(t.classes); t.classes == nil {
		t.classes = map[string]int32{}
	}
	return t.classes
}

// SetNamespace adds a namespace or replaces its labels. The queues'
// namespace selectors judge the next requests by the new labels; what is
// admitted runs on.
type SetNamespace struct{ Namespace Namespace }

func (e SetNamespace) apply(s *Snapshot) error {
	ls, err := namespaceLabels(e.Namespace, "namespace")
	if err != nil {
		return err
	}
	s.namespacesToChange()[e.Namespace.Name] = ls
	return nil
}

// RemoveNamespace removes a namespace, which no local queue may live in.
type RemoveNamespace struct{ Name string }

func (e RemoveNamespace) apply(s *Snapshot) error {
	if _, ok := s.ten.namespaces[e.Name]; !ok {
		return buildErr(ErrInvalid, "name", "no namespace %q", e.Name)
	}
	for k := range s.ten.local {
		if k.namespace == e.Name {
			// Any one of them names the fault; the smallest, for the
			// same error every time.
			return buildErr(ErrInvalid, "name", "local queue %q lives in namespace %q: remove it first", firstLocalQueue(s, e.Name), e.Name)
		}
	}
	delete(s.namespacesToChange(), e.Name)
	return nil
}

// firstLocalQueue is the first local queue of namespace ns by name.
func firstLocalQueue(s *Snapshot, ns string) string {
	first := ""
	for k := range s.ten.local {
		if k.namespace == ns && (first == "" || k.name < first) {
			first = k.name
		}
	}
	return first
}

// SetLocalQueue adds a local queue. One that exists already stays as it
// is, and may not be pointed at another queue: what a LocalQueue points at
// never changes in Kueue; remove it and add it again. A workload that
// names the local queue must be in the queue it points at, as Build
// requires.
type SetLocalQueue struct{ LocalQueue LocalQueue }

func (e SetLocalQueue) apply(s *Snapshot) error {
	lq := e.LocalQueue
	if err := checkLocalQueue(s, lq, "localQueue"); err != nil {
		return err
	}
	key := localKey{lq.Namespace, lq.Name}
	if old, ok := s.ten.local[key]; ok {
		if old != lq.ClusterQueue {
			return buildErr(ErrInvalid, "localQueue.clusterQueue", "local queue %q of namespace %q points at queue %q, and what a local queue points at does not change: remove it and add it again", lq.Name, lq.Namespace, old)
		}
		return nil
	}
	if id, queue, ok := s.elsewhere(key, lq.ClusterQueue); ok {
		return buildErr(ErrInvalid, "localQueue.clusterQueue", "workload %q names local queue %q of namespace %q and is in queue %q", id, lq.Name, lq.Namespace, queue)
	}
	s.localQueuesToChange()[key] = lq.ClusterQueue
	return nil
}

// elsewhere finds the first workload, pending then running by ID, that
// names local queue key and is in another queue than target.
func (s *Snapshot) elsewhere(key localKey, target string) (id, queue string, found bool) {
	s.pending.Scan(func(w *Workload) bool {
		if w.LocalQueue == key.name && w.Tenant == key.namespace && w.Queue != target {
			id, queue, found = w.ID, w.Queue, true
		}
		return !found
	})
	if found {
		return id, queue, true
	}
	s.running.Scan(func(r *running) bool {
		if m := r.w.more; m != nil && m.LocalQueue == key.name && r.w.Tenant == key.namespace && r.w.Queue != target {
			id, queue, found = r.ID, r.w.Queue, true
		}
		return !found
	})
	return id, queue, found
}

// pointedAt refuses to remove queue q while a local queue points at it
// (RemoveQueue): naming the first by namespace and name.
func (s *Snapshot) pointedAt(q string) error {
	var first *localKey
	for k, target := range s.ten.local {
		if target == q && (first == nil || k.namespace < first.namespace || k.namespace == first.namespace && k.name < first.name) {
			k := k
			first = &k
		}
	}
	if first == nil {
		return nil
	}
	return buildErr(ErrInUse, "queue", "local queue %q of namespace %q points at queue %q: remove it first", first.name, first.namespace, q)
}

// RemoveLocalQueue removes a local queue. The workloads that name it keep
// the queue they are in, as Kueue keeps the workloads of a deleted
// LocalQueue; a request naming it is UnknownQueue from now on.
type RemoveLocalQueue struct{ Namespace, Name string }

func (e RemoveLocalQueue) apply(s *Snapshot) error {
	key := localKey{e.Namespace, e.Name}
	if _, ok := s.ten.local[key]; !ok {
		return buildErr(ErrUnknownQueue, "name", "no local queue %q in namespace %q", e.Name, e.Namespace)
	}
	delete(s.localQueuesToChange(), key)
	return nil
}

// SetPriorityClass adds a priority class or changes its value. Requests
// are judged by the value in force when they are decided: admitted work
// keeps its priority.
type SetPriorityClass struct{ PriorityClass PriorityClass }

func (e SetPriorityClass) apply(s *Snapshot) error {
	if e.PriorityClass.Name == "" {
		return buildErr(ErrInvalid, "priorityClass.name", "empty name")
	}
	s.priorityClassesToChange()[e.PriorityClass.Name] = e.PriorityClass.Value
	return nil
}

// RemovePriorityClass removes a priority class, which no queue may allow.
// Workloads claiming it stay; a request claiming it is PriorityNotAllowed.
type RemovePriorityClass struct{ Name string }

func (e RemovePriorityClass) apply(s *Snapshot) error {
	if _, ok := s.ten.classes[e.Name]; !ok {
		return buildErr(ErrInvalid, "name", "no priority class %q", e.Name)
	}
	for q := range s.admission {
		if has(s.admission[q].classes, e.Name) {
			return buildErr(ErrInvalid, "name", "queue %q allows priority class %q: take it off the queue first", s.queues[q].Name, e.Name)
		}
	}
	delete(s.priorityClassesToChange(), e.Name)
	return nil
}
