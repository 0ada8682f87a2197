// Turning one object's change into store events: the descriptions applied
// so far, compared with what the configuration describes now.

package cluster

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// state is what the current store was told: the descriptions of its
// nodes, cohorts, queues and running workloads, as the configuration gave
// them, so that a change is found by comparing descriptions rather than
// reading the snapshot.
type state struct {
	store     *allot.Store
	resources kueueconfig.ResourceNames
	levels    []string
	// nodeRule is the configuration's NodeRule its nodes were described
	// under; "" while a resync has not finished.
	nodeRule string
	// flavorsRead is the configuration's FlavorsRead its queues and gangs
	// were described under.
	flavorsRead string
	nodes       map[string]allot.Node
	cohorts     map[string]allot.Cohort
	queues      map[string]allot.Queue
	spaces      map[string]allot.Namespace  // by name
	locals      map[string]allot.LocalQueue // by namespace/name
	running     map[string]allot.Workload
	unmanaged   int // running workloads of kueueconfig.UnmanagedQueue
	// reads is what each gang's description read when it was last
	// described (kueueconfig.Reads), readers the gangs by object read,
	// views what they read of it (kueueconfig.Config.View): a queue's or
	// a priority class's change describes anew the gangs that read what
	// changed.
	reads   map[string]kueueconfig.Reads
	readers map[kueueconfig.Key]map[string]bool
	views   map[kueueconfig.Key]string
}

// setReads records what a gang's description reads now, and the views of
// objects it is the first to read.
func (c *Cluster) setReads(id string, r kueueconfig.Reads) {
	l := c.live
	old := l.reads[id]
	if old == r {
		return
	}
	for obj := range old.Objects() {
		if set := l.readers[obj]; set != nil {
			delete(set, id)
			if len(set) == 0 {
				delete(l.readers, obj)
				delete(l.views, obj)
			}
		}
	}
	if r == (kueueconfig.Reads{}) {
		delete(l.reads, id)
		return
	}
	l.reads[id] = r
	for obj := range r.Objects() {
		set := l.readers[obj]
		if set == nil {
			set = map[string]bool{}
			l.readers[obj] = set
			l.views[obj] = c.cfg.View(obj)
		}
		set[id] = true
	}
}

// readersChanged lists, sorted, the gangs that read what changed of an
// object (for a PriorityClass, of the global default too), and records
// the views anew.
func (c *Cluster) readersChanged(obj any) []string {
	l := c.live
	objs := []kueueconfig.Key{kueueconfig.KeyOf(obj)}
	if _, ok := obj.(*schedulingv1.PriorityClass); ok {
		objs = append(objs, kueueconfig.DefaultPriorityKey)
	}
	var ids map[string]bool
	for _, o := range objs {
		set := l.readers[o]
		if len(set) == 0 {
			continue
		}
		if v := c.cfg.View(o); v != l.views[o] {
			l.views[o] = v
			if ids == nil {
				ids = map[string]bool{}
			}
			maps.Copy(ids, set)
		}
	}
	return slices.Sorted(maps.Keys(ids))
}

// source names where the objects of a live cluster come from, in the
// importer's messages.
const source = "apiserver"

// Upsert records an object added or changed (an informer's add or update)
// and, once the first snapshot is built, applies the store events its
// change makes. An object Kueue's validation refuses is logged, counted
// and left out (its previous version, if any, stays).
func (c *Cluster) Upsert(obj any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	oldGang, quiet := "", false
	if p, ok := obj.(*corev1.Pod); ok {
		oldGang, _ = c.cfg.PodGang(p.Namespace, p.Name)
		quiet = c.cfg.PodUnchanged(p)
	}
	o := kueueconfig.Object{Source: source, Value: obj}
	if err := c.cfg.Add(o); err != nil {
		c.invalid.Add(1)
		c.log.Error(err, "object left out", "object", o.Name())
		return
	}
	if quiet && c.live != nil && !c.broken {
		return // a status heartbeat: nothing its gang's workload reads
	}
	c.changed(obj, oldGang, false)
}

// Delete forgets an object (an informer's delete) and applies the store
// events its going makes.
func (c *Cluster) Delete(obj any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	oldGang := ""
	if p, ok := obj.(*corev1.Pod); ok {
		oldGang, _ = c.cfg.PodGang(p.Namespace, p.Name)
	}
	if err := c.cfg.Remove(obj); err != nil {
		c.log.Error(err, "delete of an object not read")
		return
	}
	c.changed(obj, oldGang, true)
}

// changed applies the events of one object's change.
func (c *Cluster) changed(obj any, oldGang string, deleted bool) {
	if c.live == nil {
		if c.started() {
			_ = c.rebuild("the first snapshot could not be built")
		}
		return
	}
	if c.broken {
		c.resync()
		return
	}
	switch v := obj.(type) {
	case *corev1.Node:
		want, ok, read := c.nodeNow(v.Name, deleted)
		if !read {
			break // marked for a resync
		}
		if ok && c.movesFlavor(v.Name, &want) {
			c.resync() // its gangs finish, to run again on its new flavor
			return
		}
		c.setNode(v.Name, want, ok)
		for _, id := range c.cfg.GangsOn(v.Name) {
			c.syncGang(id)
		}
	case *corev1.Pod:
		newGang, _ := c.cfg.PodGang(v.Namespace, v.Name)
		if oldGang != "" && oldGang != newGang {
			c.syncGang(oldGang)
		}
		if newGang != "" {
			c.syncGang(newGang)
		}
	case *batchv1.Job:
		// Its pods' gang reads its labels (the queue, the priority
		// class): described anew. A Job a JobSet owns is read for its
		// pods' owner chain, their gang the JobSet's.
		c.syncGang(v.Namespace + "/job/" + v.Name)
		if ref := metav1.GetControllerOf(v); ref != nil {
			c.syncGang(v.Namespace + "/" + strings.ToLower(ref.Kind) + "/" + ref.Name)
		}
	case *corev1.Namespace:
		// The queues' selectors judge the namespaces' labels: a
		// namespace's change is its own event, the queues' stay.
		c.syncNamespace(v.Name)
	case *kueue.ResourceFlavor, *kueue.Topology:
		switch {
		case c.cfg.NodeRule() == c.live.nodeRule:
			c.flavorsOnly()
		case !c.flavorsStay():
			c.resync()
		}
	case *kueue.ClusterQueue, *kueue.Cohort, *kueue.LocalQueue, *kueue.WorkloadPriorityClass, *schedulingv1.PriorityClass:
		// What the gangs read of it: those that read it are described
		// anew, the others stay.
		c.syncQueues(kueueconfig.KeyOf(obj), c.readersChanged(obj))
	}
	if c.broken {
		c.resync() // once: a refusal again waits for the next change
	}
}

// movesFlavor reports whether a node the store has, with gangs running
// on it, now serves another flavor: a pod stays on its node's flavor, so
// they cannot stay as they are while the node moves.
// want is how the configuration describes it now.
func (c *Cluster) movesFlavor(name string, want *allot.Node) bool {
	// The flavor first: a node event is on the informers' hot path, and
	// the workloads are walked only for a node that moves.
	if have, in := c.live.nodes[name]; !in || want.Flavor == have.Flavor {
		return false
	}
	for _, w := range c.live.running {
		if runsOn(w, name) {
			return true
		}
	}
	return false
}

// flavorsStay reports whether, after a ResourceFlavor or Topology
// changed, the store's flavors, levels and nodes are described as they
// are: an update of nothing allot reads (Kueue's finalizer, a label, a
// Topology whose levels stay) is then nothing, without the resync's
// description of the whole configuration. O(flavors + nodes).
func (c *Cluster) flavorsStay() bool {
	l := c.live
	if levels, err := c.cfg.Levels(); err != nil || !slices.Equal(levels, l.levels) {
		return false
	}
	have := l.store.Load().Flavors()
	if c.cfg.FlavorCount() != len(have) {
		return false
	}
	for _, h := range have {
		if f, _, err := c.cfg.Flavor(h.Name); err != nil || !sameFlavor(f, h) {
			return false
		}
	}
	// A ResourceFlavor's topologyName set or cleared moves its nodes.
	for _, name := range c.cfg.NodeNames() {
		now, ok, _, err := c.cfg.Node(name)
		n, in := l.nodes[name]
		if err != nil || ok != in || (ok && !now.Equal(&n)) {
			return false
		}
	}
	return true
}

// flavorsOnly applies a ResourceFlavor's or Topology's change that
// leaves every node described as it was (NodeRule stays: the levels, the
// labels flavors select by, the topology-aware flavors and their
// nodeLabels), without the resync's description of the whole
// configuration: AddFlavor for each flavor new (no node can serve it),
// SetFlavor for each described anew (its tolerations, say), the queues
// (a flavor found or lost holds or frees them, its quota kept or left
// out) and the gangs whose pods charge a flavor by their node's labels
// described anew (GangsOff), then RemoveFlavor for each flavor gone. An
// update of nothing allot reads, the flavors and FlavorsRead as they were,
// applies and describes nothing. O(flavors + queues + nodes with pods),
// the store's events aside.
func (c *Cluster) flavorsOnly() {
	l := c.live
	cur := l.store.Load()
	have := map[string]allot.Flavor{}
	for _, f := range cur.Flavors() {
		have[f.Name] = f
	}
	names := c.cfg.FlavorNames()
	applied := false
	for i, name := range names {
		f, _, err := c.cfg.Flavor(name)
		if err != nil {
			c.fail(err, "resourceflavors/"+name)
			return
		}
		h, ok := have[name]
		switch {
		case !ok:
			before := ""
			for _, g := range names[i+1:] {
				if _, ok := have[g]; ok {
					before = g
					break
				}
			}
			if !c.apply(allot.AddFlavor{Flavor: f, Before: before}) {
				return
			}
		case !sameFlavor(h, f):
			if !c.apply(allot.SetFlavor{Flavor: f}) {
				return
			}
		default:
			continue
		}
		have[name], applied = f, true
	}
	read := c.cfg.FlavorsRead()
	if !applied && len(names) == len(cur.Flavors()) && read == l.flavorsRead {
		return // an update of nothing allot reads: Kueue's finalizer, a label
	}
	c.syncQueues(kueueconfig.Key{}, c.cfg.GangsOff(func(node string) bool { _, ok := l.nodes[node]; return ok }))
	if c.broken {
		return
	}
	// The store's flavors now, not cur's: a resync the queues' sync
	// fell back to has removed the flavors gone already.
	for _, f := range l.store.Load().Flavors() {
		if !slices.Contains(names, f.Name) && !c.apply(allot.RemoveFlavor{Flavor: f.Name}) {
			return
		}
	}
	l.flavorsRead = read
}

// started tells whether Start has run (the caches synced).
func (c *Cluster) started() bool { return c.startedFlag }

// apply applies one store event; a refusal is counted and logged, and
// marks the store for a resync.
func (c *Cluster) apply(ev allot.Event) bool {
	_, err := c.live.store.Apply(ev)
	if c.opts.OnEvent != nil {
		c.opts.OnEvent(ev, err)
	}
	if err != nil {
		c.refused.Add(1)
		c.log.Error(err, "store event refused", "event", fmt.Sprintf("%T", ev))
		c.broken = true
		return false
	}
	return true
}

// fail marks the store for a resync after the configuration could not
// describe an object.
func (c *Cluster) fail(err error, what string) {
	c.log.Error(err, "cannot describe", "object", what)
	c.broken = true
}

// syncNode makes the store's node the configuration's.
func (c *Cluster) syncNode(name string, deleted bool) {
	if want, ok, read := c.nodeNow(name, deleted); read {
		c.setNode(name, want, ok)
	}
}

// nodeNow is how the configuration describes a node now: ok when the
// store should have it (not deleted, and serving a flavor); read false
// when it cannot be described, the store marked for a resync.
func (c *Cluster) nodeNow(name string, deleted bool) (want allot.Node, ok, read bool) {
	if deleted {
		return want, false, true
	}
	want, ok, _, err := c.cfg.Node(name)
	if err != nil {
		c.fail(err, "nodes/"+name)
		return want, false, false
	}
	return want, ok, true
}

// setNode makes the store's node want (ok), or takes it out (not ok).
func (c *Cluster) setNode(name string, want allot.Node, ok bool) {
	l := c.live
	have, in := l.nodes[name]
	switch {
	case ok && !in:
		if c.apply(allot.AddNode{Node: want}) {
			l.nodes[name] = want
		}
	case !ok && in:
		// Its workloads are evicted (pending again): each gang on it is
		// described anew next, running elsewhere or withdrawn.
		if c.apply(allot.RemoveNode{Node: name}) {
			delete(l.nodes, name)
			for _, id := range c.cfg.GangsOn(name) {
				c.forgetRunning(id)
			}
		}
	case ok && in && !have.Equal(&want):
		var ev allot.Event
		cond := have
		cond.Unschedulable, cond.Down = want.Unschedulable, want.Down
		switch {
		case !cond.Equal(&want):
			ev = allot.SetNode{Node: want}
		case have.Unschedulable != want.Unschedulable && have.Down == want.Down:
			ev = allot.NodeCordon{Node: name, Cordoned: want.Unschedulable}
		case have.Down != want.Down && have.Unschedulable == want.Unschedulable && want.Down:
			ev = allot.NodeDown{Node: name}
		case have.Down != want.Down && have.Unschedulable == want.Unschedulable:
			ev = allot.NodeUp{Node: name}
		default:
			ev = allot.SetNode{Node: want}
		}
		if c.apply(ev) {
			l.nodes[name] = want
		}
	}
}

// syncGang makes the store's running workload of a gang the
// configuration's.
func (c *Cluster) syncGang(id string) {
	var reads kueueconfig.Reads
	want, ok, _, err := c.cfg.RunningGangReads(id, &reads)
	if err != nil {
		c.fail(err, "gang "+id)
		return
	}
	l := c.live
	c.setReads(id, reads)
	have, in := l.running[id]
	switch {
	case ok && in && reflect.DeepEqual(have, want):
		return
	case ok:
		if want.Queue == kueueconfig.UnmanagedQueue {
			if _, exists := l.queues[want.Queue]; !exists {
				q := allot.Queue{Name: kueueconfig.UnmanagedQueue}
				if !c.apply(allot.SetQueue{Queue: q}) {
					return
				}
				l.queues[q.Name] = q
			}
		}
		if d := want.AdmittedAt - l.store.Load().Now(); d > 0 {
			if !c.apply(allot.AdvanceTime{Seconds: d}) {
				return
			}
		}
		if c.apply(allot.SetRunning{Workload: want}) {
			c.forgetRunning(id)
			l.running[id] = want
			if want.Queue == kueueconfig.UnmanagedQueue {
				l.unmanaged++
			}
		}
	case in:
		if c.apply(allot.Finish{ID: id}) {
			c.forgetRunning(id)
		}
	default:
		// A gang a node's deletion evicted, with nothing left running.
		if _, pending := l.store.Load().Pending(id); pending {
			c.apply(allot.Withdraw{ID: id})
		}
	}
	c.dropUnmanaged()
}

// forgetRunning drops a gang from what the store was told runs.
func (c *Cluster) forgetRunning(id string) {
	l := c.live
	if w, ok := l.running[id]; ok {
		if w.Queue == kueueconfig.UnmanagedQueue {
			l.unmanaged--
		}
		delete(l.running, id)
	}
}

// dropUnmanaged removes the queue of unmanaged pods once none runs, as a
// fresh import has it only while some do.
func (c *Cluster) dropUnmanaged() {
	l := c.live
	if _, ok := l.queues[kueueconfig.UnmanagedQueue]; ok && l.unmanaged == 0 {
		if c.apply(allot.RemoveQueue{Queue: kueueconfig.UnmanagedQueue}) {
			delete(l.queues, kueueconfig.UnmanagedQueue)
		}
	}
}

// syncQueues makes the store's cohorts and queues the configuration's
// after a change to the object changed (the zero Key: any object, as a
// resync has it): SetCohort (parents first) and SetQueue for what is new
// or changed, then the gangs named described anew (their queue or
// priority may have changed), then RemoveQueue and RemoveCohort (children
// first) for what went. What the change cannot touch is not compared: a
// ClusterQueue's change, that queue alone of the queues; a LocalQueue's,
// the local queues alone; a priority class's, the gangs alone. The quotas
// coming to cover other resources are a resync.
func (c *Cluster) syncQueues(changed kueueconfig.Key, gangs []string) {
	all := changed == (kueueconfig.Key{})
	quotas := all || changed.Kind == "ClusterQueue" || changed.Kind == "Cohort"
	l := c.live
	if quotas {
		res, err := c.cfg.Resources()
		if err != nil {
			c.fail(err, "resources")
			return
		}
		if !reflect.DeepEqual(res, l.resources) {
			c.resync() // the resources anew, then the queues
			return
		}
	}
	if all && !c.setNamespaces() {
		return
	}
	// A ClusterQueue's update: its description, nil once it went. Its
	// coming or going moves the local queues that name it, and with its
	// cohort's change the cohorts (one named by queues alone comes and
	// goes with them); its update moves neither.
	var cq *allot.Queue
	if changed.Kind == "ClusterQueue" && c.cfg.HasClusterQueue(changed.Name) {
		q, _, err := c.cfg.Queue(changed.Name)
		if err != nil {
			c.fail(err, "clusterqueues/"+changed.Name)
			return
		}
		cq = &q
	}
	have, had := l.queues[changed.Name]
	moved := changed.Kind == "ClusterQueue" && had != (cq != nil)
	cohortsToo := all || changed.Kind == "Cohort" || moved || (cq != nil && cq.Cohort != have.Cohort)
	var cohorts map[string]allot.Cohort
	if cohortsToo {
		cohorts = map[string]allot.Cohort{}
		for _, name := range c.cfg.CohortNames() {
			co, _, err := c.cfg.Cohort(name)
			if err != nil {
				c.fail(err, "cohorts/"+name)
				return
			}
			cohorts[name] = co
		}
		for _, name := range byDepth(cohorts) {
			if have, ok := l.cohorts[name]; !ok || !reflect.DeepEqual(have, cohorts[name]) {
				if !c.apply(allot.SetCohort{Cohort: cohorts[name]}) {
					return
				}
				l.cohorts[name] = cohorts[name]
			}
		}
	}
	setQueue := func(q allot.Queue) bool {
		if have, ok := l.queues[q.Name]; ok && reflect.DeepEqual(have, q) {
			return true
		}
		if !c.apply(allot.SetQueue{Queue: q}) {
			return false
		}
		l.queues[q.Name] = q
		return true
	}
	switch {
	case all || changed.Kind == "Cohort":
		for _, name := range c.cfg.ClusterQueueNames() {
			q, _, err := c.cfg.Queue(name)
			if err != nil {
				c.fail(err, "clusterqueues/"+name)
				return
			}
			if !setQueue(q) {
				return
			}
		}
	case cq != nil:
		if !setQueue(*cq) {
			return
		}
	}
	switch {
	case all || changed.Kind == "Cohort" || moved:
		if !c.syncLocalQueues() {
			return
		}
	case changed.Kind == "LocalQueue":
		if !c.syncLocalQueue(changed.Namespace, changed.Name) {
			return
		}
	}
	for _, id := range gangs {
		c.syncGang(id)
	}
	var gone []string // the queues to remove
	switch {
	case all || changed.Kind == "Cohort":
		for _, name := range slices.Sorted(maps.Keys(l.queues)) {
			if name != kueueconfig.UnmanagedQueue && !c.cfg.HasClusterQueue(name) {
				gone = append(gone, name)
			}
		}
	case changed.Kind == "ClusterQueue" && changed.Name != kueueconfig.UnmanagedQueue && !c.cfg.HasClusterQueue(changed.Name):
		if _, ok := l.queues[changed.Name]; ok {
			gone = append(gone, changed.Name)
		}
	}
	for _, name := range gone {
		if !c.apply(allot.RemoveQueue{Queue: name}) {
			return
		}
		delete(l.queues, name)
	}
	if cohortsToo {
		went := map[string]allot.Cohort{}
		for name, co := range l.cohorts {
			if _, ok := cohorts[name]; !ok {
				went[name] = co
			}
		}
		order := byDepth(went)
		for i := len(order) - 1; i >= 0; i-- {
			if !c.apply(allot.RemoveCohort{Cohort: order[i]}) {
				return
			}
			delete(l.cohorts, order[i])
		}
	}
	if all {
		c.removeNamespaces()
	}
}

// syncNamespace makes the store's namespace of a name the
// configuration's: added or relabelled, or, once the local queues in it
// are removed, removed. A namespace that comes or goes moves the local
// queues in it.
func (c *Cluster) syncNamespace(name string) {
	l := c.live
	want, ok := c.cfg.Namespace(name)
	have, in := l.spaces[name]
	if ok && (!in || !maps.Equal(have.Labels, want.Labels)) {
		if !c.apply(allot.SetNamespace{Namespace: want}) {
			return
		}
		l.spaces[name] = want
	}
	if ok == in {
		return // relabelled or nothing: its local queues stay
	}
	lqs := map[string]bool{}
	for lq := range c.cfg.LocalQueuesIn(name) {
		lqs[lq] = true
	}
	for key, lq := range l.locals {
		if lq.Namespace == name {
			lqs[strings.TrimPrefix(key, name+"/")] = true
		}
	}
	for _, lq := range slices.Sorted(maps.Keys(lqs)) {
		if !c.syncLocalQueue(name, lq) {
			return
		}
	}
	if !ok && in && c.apply(allot.RemoveNamespace{Name: name}) {
		delete(l.spaces, name)
	}
}

// syncLocalQueue makes the store's local queue of a namespace and name
// the configuration's; false once an event is refused.
func (c *Cluster) syncLocalQueue(namespace, name string) bool {
	l := c.live
	key := namespace + "/" + name
	want, ok := c.cfg.LocalQueue(namespace, name)
	have, in := l.locals[key]
	if in && (!ok || have != want) {
		if !c.apply(allot.RemoveLocalQueue{Namespace: namespace, Name: name}) {
			return false
		}
		delete(l.locals, key)
		in = false
	}
	if ok && !in {
		if !c.apply(allot.SetLocalQueue{LocalQueue: want}) {
			return false
		}
		l.locals[key] = want
	}
	return true
}

// setNamespaces adds the namespaces read that the store lacks and
// relabels those whose labels changed; false once an event is refused.
func (c *Cluster) setNamespaces() bool {
	l := c.live
	for _, ns := range c.cfg.Namespaces() {
		if have, ok := l.spaces[ns.Name]; ok && maps.Equal(have.Labels, ns.Labels) {
			continue
		}
		if !c.apply(allot.SetNamespace{Namespace: ns}) {
			return false
		}
		l.spaces[ns.Name] = ns
	}
	return true
}

// syncLocalQueues makes the store's local queues the configuration's:
// those gone (or whose ClusterQueue or namespace went) removed, the new
// ones added. The store's queues and namespaces are in place for the new
// ones; the queues and namespaces to go are removed after.
func (c *Cluster) syncLocalQueues() bool {
	l := c.live
	want := map[string]allot.LocalQueue{}
	for _, lq := range c.cfg.LocalQueues() {
		want[lq.Namespace+"/"+lq.Name] = lq
	}
	for _, key := range slices.Sorted(maps.Keys(l.locals)) {
		if w, ok := want[key]; ok && w == l.locals[key] {
			continue
		}
		have := l.locals[key]
		if !c.apply(allot.RemoveLocalQueue{Namespace: have.Namespace, Name: have.Name}) {
			return false
		}
		delete(l.locals, key)
	}
	for _, key := range slices.Sorted(maps.Keys(want)) {
		if _, ok := l.locals[key]; ok {
			continue
		}
		if !c.apply(allot.SetLocalQueue{LocalQueue: want[key]}) {
			return false
		}
		l.locals[key] = want[key]
	}
	return true
}

// removeNamespaces removes the store's namespaces no longer read (their
// local queues went first).
func (c *Cluster) removeNamespaces() {
	l := c.live
	if len(l.spaces) == c.cfg.NamespaceCount() {
		return
	}
	read := map[string]bool{}
	for _, ns := range c.cfg.Namespaces() {
		read[ns.Name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(l.spaces)) {
		if !read[name] {
			if !c.apply(allot.RemoveNamespace{Name: name}) {
				return
			}
			delete(l.spaces, name)
		}
	}
}

// byDepth orders cohorts parents first (by depth in the tree they form,
// then by name); a cycle's members come last.
func byDepth(cohorts map[string]allot.Cohort) []string {
	depth := func(name string) int {
		d := 0
		for seen := 0; seen <= len(cohorts); seen++ {
			co, ok := cohorts[name]
			if !ok || co.Parent == "" {
				return d
			}
			name, d = co.Parent, d+1
		}
		return len(cohorts) + 1
	}
	names := slices.Sorted(maps.Keys(cohorts))
	slices.SortStableFunc(names, func(a, b string) int { return depth(a) - depth(b) })
	return names
}

// rebuild builds the snapshot from the whole configuration and starts a
// new store at it: the first snapshot, the only one built (every change
// after it is a store event, resync's included). On an error the next
// change tries again.
func (c *Cluster) rebuild(reason string) error {
	c.startedFlag = true
	b, warns, err := c.cfg.Builder()
	var snap *allot.Snapshot
	if err == nil {
		b.Options.NodeRoom = max(0, cmp.Or(c.opts.NodeRoom, DefaultNodeRoom))
		snap, err = b.Build()
	}
	var st *allot.Store
	if err == nil {
		st, err = allot.NewStoreWith(snap, c.opts.Store)
	}
	if err != nil {
		c.broken = true
		c.log.Error(err, "the snapshot cannot be built from the cluster's objects", "reason", reason)
		return fmt.Errorf("cluster: %s: %w", reason, err)
	}
	l := &state{store: st, levels: b.Levels, nodes: map[string]allot.Node{}, cohorts: map[string]allot.Cohort{},
		queues: map[string]allot.Queue{}, running: map[string]allot.Workload{},
		reads: map[string]kueueconfig.Reads{}, readers: map[kueueconfig.Key]map[string]bool{}, views: map[kueueconfig.Key]string{}}
	l.resources, _ = c.cfg.Resources() // Builder read them without an error
	l.nodeRule, l.flavorsRead = c.cfg.NodeRule(), c.cfg.FlavorsRead()
	for _, n := range b.Nodes {
		l.nodes[n.Name] = n
	}
	for _, co := range b.Cohorts {
		l.cohorts[co.Name] = co
	}
	for _, q := range b.Queues {
		l.queues[q.Name] = q
	}
	l.spaces, l.locals = map[string]allot.Namespace{}, map[string]allot.LocalQueue{}
	for _, ns := range b.Namespaces {
		l.spaces[ns.Name] = ns
	}
	for _, lq := range b.LocalQueues {
		l.locals[lq.Namespace+"/"+lq.Name] = lq
	}
	for _, w := range b.Running {
		l.running[w.ID] = w
		if w.Queue == kueueconfig.UnmanagedQueue {
			l.unmanaged++
		}
	}
	c.live, c.broken = l, false
	for _, id := range c.cfg.Gangs() {
		c.setReads(id, c.cfg.GangReads(id))
	}
	c.store.Store(st)
	c.rebuilds.Add(1)
	c.log.Info("snapshot built", "reason", reason, "nodes", len(b.Nodes), "queues", len(b.Queues), "running", len(b.Running), "warnings", len(warns))
	c.readyOne.Do(func() { close(c.ready) })
	return nil
}

// resync brings the store in step with the whole configuration by store
// events, from what the store was told (state): after a ResourceFlavor or
// Topology changed, the quotas came to cover other resources, or a store
// event was refused. Its batch is ordered so that each event is valid on
// the store the ones before it leave:
//
//  1. SetResources with the resources of both the store and the
//     configuration, so that neither a node nor a quota names one the
//     store lacks; the nodes and gangs that carry one newly declared are
//     described anew below (SetNode, SetRunning), the store having
//     dropped it from them;
//  2. the gangs with a pod on a node that comes to serve another flavor
//     Finish (a pod stays on its node's flavor), to run again below;
//  3. RemoveNode for the nodes the configuration no longer places on;
//  4. SetNode for the nodes described anew that stay on a flavor whose
//     description stays, while the levels stay;
//  5. AddFlavor for the new flavors (where their names sort), with the
//     nodes that come to serve them;
//  6. SetLevels with the levels anew, and the nodes described anew so far
//     left;
//  7. SetFlavor for the flavors described anew, with the nodes that
//     serve them described anew (their labels for the labels they select
//     by);
//  8. AddNode for the nodes new to the store;
//  9. the queues, cohorts and gangs (syncQueues), then RemoveFlavor for
//     the flavors gone, and SetResources with the configuration's
//     resources alone (those the quotas no longer cover ignored, as a
//     fresh import ignores those nodes and pods carry untracked).
//
// A refusal stops the batch, the store keeping what it applied; the
// next change resyncs again.
func (c *Cluster) resync() {
	c.broken = false
	l := c.live
	l.nodeRule = "" // until the batch is through
	rule, read := c.cfg.NodeRule(), c.cfg.FlavorsRead()
	b, _, err := c.cfg.Builder()
	if err != nil {
		c.fail(err, "the configuration")
		return
	}
	cur := l.store.Load()
	// 1. The resources of both.
	union := slices.Clone(b.Resources)
	for _, r := range cur.Resources() {
		if !slices.Contains(union, r) {
			union = append(union, r)
		}
	}
	gpu := cmp.Or(b.GPUResource, cur.GPUResource())
	ignoredAll := func(declared []string) []string {
		var out []string
		for _, r := range slices.Concat(cur.IgnoredResources(), b.IgnoredResources, cur.Resources()) {
			if !slices.Contains(declared, r) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(union, cur.Resources()) || !slices.Equal(ignoredAll(union), sorted(cur.IgnoredResources())) {
		if !c.apply(allot.SetResources{Resources: union, GPUResource: gpu, IgnoredResources: ignoredAll(union)}) {
			return
		}
	}
	// A resource newly declared is one the store dropped from the nodes'
	// and pods' descriptions as it read them: those that carry it are
	// described anew (stale), though what the store was told is the same.
	stale := map[string]bool{}
	carries := func(rs allot.Resources) bool {
		return slices.ContainsFunc(union, func(r string) bool { _, ok := rs[r]; return ok && !slices.Contains(cur.Resources(), r) })
	}
	for name, n := range l.nodes {
		stale[name] = carries(n.Capacity)
	}
	for id, w := range l.running {
		if slices.ContainsFunc(w.PodSets, func(ps allot.PodSet) bool { return carries(ps.PerPod) }) {
			c.forgetRunning(id) // SetRunning below books it anew
		}
	}
	want := map[string]allot.Node{}
	for _, n := range b.Nodes {
		want[n.Name] = n
	}
	flavorOf := map[string]string{} // a node the store has: its flavor there
	for name := range l.nodes {
		if st, ok := l.store.Load().NodeStatus(name); ok {
			flavorOf[name] = st.Flavor
		}
	}
	have := map[string]allot.Flavor{}
	for _, f := range l.store.Load().Flavors() {
		have[f.Name] = f
	}
	wantFlavor := map[string]allot.Flavor{}
	for _, f := range b.Flavors {
		wantFlavor[f.Name] = f
	}
	redescribed := func(f allot.Flavor) bool { // a flavor kept, described anew
		h, ok := have[f.Name]
		return ok && !sameFlavor(h, f)
	}
	// 2. The gangs on a node that changes flavor finish, to run again.
	for _, name := range slices.Sorted(maps.Keys(l.nodes)) {
		if n, ok := want[name]; ok && n.Flavor != flavorOf[name] {
			for _, id := range slices.Sorted(maps.Keys(l.running)) {
				if runsOn(l.running[id], name) {
					if !c.apply(allot.Finish{ID: id}) {
						return
					}
					c.forgetRunning(id)
				}
			}
		}
	}
	// 3. The nodes that go.
	for _, name := range slices.Sorted(maps.Keys(l.nodes)) {
		if _, ok := want[name]; !ok {
			c.syncNode(name, true)
			if c.broken {
				return
			}
		}
	}
	levels := !slices.Equal(b.Levels, l.levels)
	// 4. The nodes described anew on a flavor whose description stays.
	var later []string // the nodes described anew by the events below
	for _, name := range slices.Sorted(maps.Keys(l.nodes)) {
		n, ok := want[name]
		if h := l.nodes[name]; !ok || h.Equal(&n) {
			continue // a stale one too: step 8
		}
		if _, kept := have[n.Flavor]; !kept || levels || redescribed(wantFlavor[n.Flavor]) {
			later = append(later, name)
			continue
		}
		c.syncNode(name, false)
		if c.broken {
			return
		}
		stale[name] = false
	}
	// with applies ev carrying the nodes of later that pick selects, and
	// takes them from later once it applied.
	with := func(pick func(n allot.Node) bool, ev func(nodes []allot.Node) allot.Event) bool {
		var nodes []allot.Node
		for _, name := range later {
			if pick(want[name]) {
				nodes = append(nodes, want[name])
			}
		}
		if !c.apply(ev(nodes)) {
			return false
		}
		for _, n := range nodes {
			l.nodes[n.Name], stale[n.Name] = n, false
		}
		later = slices.DeleteFunc(later, func(name string) bool { return pick(want[name]) })
		return true
	}
	// 5. The new flavors, where their names sort, with their nodes.
	for i, f := range b.Flavors {
		if _, ok := have[f.Name]; ok {
			continue
		}
		before := ""
		for _, g := range b.Flavors[i+1:] {
			if _, ok := have[g.Name]; ok {
				before = g.Name
				break
			}
		}
		if !with(func(n allot.Node) bool { return n.Flavor == f.Name && !levels }, func(nodes []allot.Node) allot.Event {
			return allot.AddFlavor{Flavor: f, Before: before, Nodes: nodes}
		}) {
			return
		}
		have[f.Name] = f
	}
	// 6. The levels anew.
	if levels {
		if !with(func(n allot.Node) bool { return !redescribed(wantFlavor[n.Flavor]) }, func(nodes []allot.Node) allot.Event {
			return allot.SetLevels{Levels: b.Levels, Nodes: nodes}
		}) {
			return
		}
		l.levels = b.Levels
	}
	// 7. The flavors described anew, with their nodes.
	for _, f := range b.Flavors {
		if !redescribed(f) {
			continue
		}
		if !with(func(n allot.Node) bool { return n.Flavor == f.Name }, func(nodes []allot.Node) allot.Event {
			return allot.SetFlavor{Flavor: f, Nodes: nodes}
		}) {
			return
		}
		have[f.Name] = f
	}
	// 8. The nodes new to the store (and any described anew still left).
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if h, n := l.nodes[name], want[name]; !h.Equal(&n) || stale[name] {
			if stale[name] && h.Equal(&n) {
				if !c.apply(allot.SetNode{Node: n}) {
					return
				}
				l.nodes[name] = n
				continue
			}
			c.syncNode(name, false)
			if c.broken {
				return
			}
		}
	}
	// 9. The queues and gangs, the flavors gone, the resources alone.
	l.resources, _ = c.cfg.Resources() // Builder read them without an error
	c.syncQueues(kueueconfig.Key{}, c.cfg.Gangs())
	if c.broken {
		return
	}
	for _, f := range l.store.Load().Flavors() {
		if _, ok := wantFlavor[f.Name]; !ok && !c.apply(allot.RemoveFlavor{Flavor: f.Name}) {
			return
		}
	}
	if now := l.store.Load(); !slices.Equal(b.Resources, now.Resources()) || !slices.Equal(ignoredAll(b.Resources), sorted(now.IgnoredResources())) {
		c.apply(allot.SetResources{Resources: b.Resources, GPUResource: b.GPUResource, IgnoredResources: ignoredAll(b.Resources)})
	}
	if !c.broken {
		l.nodeRule, l.flavorsRead = rule, read
	}
}

// sameFlavor reports whether two descriptions of a flavor are alike in
// what allot reads of them.
func sameFlavor(a, b allot.Flavor) bool {
	return a.Name == b.Name && a.Spot == b.Spot && maps.Equal(a.NodeLabels, b.NodeLabels) &&
		slices.Equal(a.NodeTaints, b.NodeTaints) && slices.Equal(a.Tolerations, b.Tolerations)
}

// sorted is names sorted, a copy.
func sorted(names []string) []string { return slices.Sorted(slices.Values(names)) }

// runsOn reports whether a running workload has a pod on the node.
func runsOn(w allot.Workload, node string) bool {
	return slices.ContainsFunc(w.PodSets, func(ps allot.PodSet) bool { return slices.Contains(ps.Nodes, node) })
}
