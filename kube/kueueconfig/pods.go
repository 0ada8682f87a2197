// Bound pods as allot's running workloads, grouped into gangs as Kueue
// admits them: a pod group, or the pods of one top-level owner.

package kueueconfig

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelpers "k8s.io/component-helpers/resource"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot"
)

// The labels and annotations of Kueue's job framework.
const (
	QueueLabel                   = "kueue.x-k8s.io/queue-name"
	WorkloadPriorityClassLabel   = "kueue.x-k8s.io/priority-class"
	PodGroupNameLabel            = "kueue.x-k8s.io/pod-group-name"
	PodGroupTotalCountAnnotation = "kueue.x-k8s.io/pod-group-total-count"
	// RoleHashAnnotation names a pod group member's role, where a pod
	// carries it; else the role is the hash of its spec's shape.
	RoleHashAnnotation = "kueue.x-k8s.io/role-hash"
)

// maxOwnerDepth bounds an owner chain, so that a cycle of owner references
// in the input ends; ownerChain is the longest chain, the pod included.
const (
	maxOwnerDepth = 8
	ownerChain    = maxOwnerDepth + 1
)

// PodRequests is a pod's effective request as Kueue computes it: a
// container's limits stand in for the requests it leaves out, then
// Kubernetes' rule (component-helpers' resource.PodRequests: the larger
// of the init containers' peak and the containers' sum, sidecars counted,
// the pod-level requests of cpu, memory and hugepages in their place, plus
// the pod's overhead).
func PodRequests(spec *corev1.PodSpec) corev1.ResourceList {
	var stack [8]request
	reqs := podRequests(spec, stack[:0])
	out := make(corev1.ResourceList, len(reqs))
	for _, r := range reqs {
		out[r.name] = r.q
	}
	return out
}

// A request is one resource of a pod's effective request.
type request struct {
	name corev1.ResourceName
	q    resource.Quantity
}

// requestOf finds a resource's request in reqs, -1 if none: a pod asks for
// a few resources, read in turn.
func requestOf(reqs []request, name corev1.ResourceName) int {
	for i := range reqs {
		if reqs[i].name == name {
			return i
		}
	}
	return -1
}

// addRequest adds q to the request of name, the resource added when new
// (with a zero quantity, too: a zero request is still a resource asked
// for).
func addRequest(reqs []request, name corev1.ResourceName, q resource.Quantity) []request {
	if i := requestOf(reqs, name); i >= 0 {
		reqs[i].q.Add(q)
		return reqs
	}
	// A copy of its own: Add writes an inf.Dec in place.
	return append(reqs, request{name, q.DeepCopy()})
}

// maxRequest raises the request of name to q.
func maxRequest(reqs []request, name corev1.ResourceName, q resource.Quantity) []request {
	i := requestOf(reqs, name)
	if i < 0 {
		return append(reqs, request{name, q.DeepCopy()})
	}
	if q.Cmp(reqs[i].q) > 0 {
		reqs[i].q = q.DeepCopy()
	}
	return reqs
}

// addContainer adds a container's requests to reqs, its limits standing
// in for the requests it leaves out.
func addContainer(reqs []request, c *corev1.Container) []request {
	r := &c.Resources
	for name, q := range r.Requests {
		reqs = addRequest(reqs, name, q)
	}
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			reqs = addRequest(reqs, name, q)
		}
	}
	return reqs
}

// podRequests appends a pod's effective request to reqs (PodRequests'
// rule), summed over the spec's containers without a ResourceList made
// for each: a live cluster describes every pod it reads. The reference is
// component-helpers' resource.PodRequests, which a property test holds it
// to.
func podRequests(spec *corev1.PodSpec, reqs []request) []request {
	for i := range spec.Containers {
		reqs = addContainer(reqs, &spec.Containers[i])
	}
	if len(spec.InitContainers) > 0 {
		// An init container runs alone, after the sidecars started
		// before it; a sidecar (restartPolicy Always) runs on beside
		// the containers. The peak of the init phase counts when it is
		// above the containers' sum.
		var sideStack, peakStack, oneStack [8]request
		sidecars, peak := sideStack[:0], peakStack[:0]
		for i := range spec.InitContainers {
			c := &spec.InitContainers[i]
			one := addContainer(oneStack[:0], c)
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				for _, r := range one {
					reqs = addRequest(reqs, r.name, r.q)
					sidecars = addRequest(sidecars, r.name, r.q)
				}
				one = sidecars
			} else {
				for _, r := range sidecars {
					one = addRequest(one, r.name, r.q)
				}
			}
			for _, r := range one {
				peak = maxRequest(peak, r.name, r.q)
			}
		}
		for _, r := range peak {
			reqs = maxRequest(reqs, r.name, r.q)
		}
	}
	if spec.Resources != nil && podLevelRequests(spec.Resources.Requests) {
		for name, q := range spec.Resources.Requests {
			if podLevelResource(name) {
				if i := requestOf(reqs, name); i >= 0 {
					reqs[i].q = q.DeepCopy()
				} else {
					reqs = append(reqs, request{name, q.DeepCopy()})
				}
			}
		}
	}
	for name, q := range spec.Overhead {
		reqs = addRequest(reqs, name, q)
	}
	return reqs
}

// podLevelResource tells a resource a pod's own requests may set (cpu,
// memory, hugepages), component-helpers' IsSupportedPodLevelResource.
func podLevelResource(name corev1.ResourceName) bool {
	return resourcehelpers.IsSupportedPodLevelResource(name)
}

// podLevelRequests tells whether pod-level requests set a resource they
// may.
func podLevelRequests(l corev1.ResourceList) bool {
	for name := range l {
		if podLevelResource(name) {
			return true
		}
	}
	return false
}

// perPod turns requests into allot's base units.
func perPod(req corev1.ResourceList) allot.Resources {
	out := make(allot.Resources, len(req))
	for name, q := range req {
		out[string(name)] = BaseUnits(name, q)
	}
	return out
}

// perPodOf is perPod of a pod's effective request as podRequests lists
// it.
func perPodOf(reqs []request) allot.Resources {
	out := make(allot.Resources, len(reqs))
	for _, r := range reqs {
		out[string(r.name)] = BaseUnits(r.name, r.q)
	}
	return out
}

func roleOf(p *corev1.Pod) (string, error) {
	if h, ok := p.Annotations[RoleHashAnnotation]; ok {
		return h, nil
	}
	return RoleHash(&p.Spec)
}

// podDesc is what a gang's description reads of one of its pods.
type podDesc struct {
	role    string
	roleErr error           // of its role hash, reported by gang
	per     allot.Resources // its effective request in base units; read-only
}

func describePod(p *corev1.Pod) podDesc {
	role, err := roleOf(p)
	var stack [8]request
	return podDesc{role: role, roleErr: err, per: perPodOf(podRequests(&p.Spec, stack[:0]))}
}

// sameSpec tells whether a pod's update p of old keeps what describePod
// reads: the same pod (UID), the same generation (the API server bumps a
// pod's metadata.generation on every change to its spec but the binding
// to a node, which describePod does not read; a generation of 0, from a
// file or an older server, tells nothing) and the same role-hash
// annotation.
func sameSpec(old, p *corev1.Pod) bool {
	if p.Generation == 0 || old.Generation != p.Generation || old.UID != p.UID {
		return false
	}
	h, ok := p.Annotations[RoleHashAnnotation]
	oh, ook := old.Annotations[RoleHashAnnotation]
	return h == oh && ok == ook
}

// PodUnchanged tells whether adding p, an update of a pod already read,
// would leave its gang's running workload as it is: its spec as before
// (sameSpec), and the same node, activity, start and creation times,
// labels and controller. A running pod's status heartbeat is such an
// update, and a live cluster applies nothing for it. False for a pod not
// read.
func (c *Config) PodUnchanged(p *corev1.Pod) bool {
	old, ok := c.pods[p.Namespace+"/"+p.Name]
	if !ok || !sameSpec(old, p) {
		return false
	}
	return old.Spec.NodeName == p.Spec.NodeName && active(old) == active(p) &&
		c.started(old) == c.started(p) && old.CreationTimestamp.Equal(&p.CreationTimestamp) &&
		maps.Equal(old.Labels, p.Labels) && sameController(old, p)
}

// sameController tells whether two versions of an object name the same
// controller.
func sameController(a, b *corev1.Pod) bool {
	ra, rb := metav1.GetControllerOf(a), metav1.GetControllerOf(b)
	if ra == nil || rb == nil {
		return ra == rb
	}
	return ra.UID == rb.UID && ra.Kind == rb.Kind && ra.Name == rb.Name
}

// chain appends a pod's owner chain among the objects read to out, the
// pod first. A caller's array of ownerChain owners holds any chain.
func (c *Config) chain(p *corev1.Pod, out []owner) []owner {
	out = append(out, owner{kind: "Pod", meta: &p.ObjectMeta})
	m := &p.ObjectMeta
	for range maxOwnerDepth {
		ref := metav1.GetControllerOf(m)
		if ref == nil {
			break
		}
		o, ok := c.owners[ref.UID]
		if !ok {
			// An owner not read still groups its pods.
			out = append(out, owner{kind: ref.Kind, meta: &metav1.ObjectMeta{Name: ref.Name, Namespace: p.Namespace, UID: ref.UID}})
			break
		}
		out = append(out, o)
		m = o.meta
	}
	return out
}

// gangKey names the workload a pod belongs to: its pod group, else its
// top-level owner, else itself.
func gangKey(p *corev1.Pod, ch []owner) string {
	if g := p.Labels[PodGroupNameLabel]; g != "" {
		return p.Namespace + "/" + g
	}
	top := ch[len(ch)-1]
	if len(ch) == 1 {
		return p.Namespace + "/" + p.Name
	}
	return p.Namespace + "/" + strings.ToLower(top.kind) + "/" + top.meta.Name
}

// label is the first value of a label along an owner chain.
func label(ch []owner, key string) string {
	for _, o := range ch {
		if v := o.meta.Labels[key]; v != "" {
			return v
		}
	}
	return ""
}

// active tells a pod that holds its node: bound and neither succeeded nor
// failed.
func active(p *corev1.Pod) bool {
	return p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// Running returns the running workloads: the active bound pods grouped
// into gangs (a pod group by its kueue.x-k8s.io/pod-group-name label, else
// the pods of one top-level owner — a JobSet's Jobs' pods are one gang —,
// else the pod alone), each gang's pods grouped into pod sets by their
// role (Kueue's role hash) and flavor. A gang's queue is the ClusterQueue
// of the LocalQueue its queue-name label names (on the pod or an owner);
// without one it is UnmanagedQueue's. Its priority is its
// WorkloadPriorityClass's, else the pods' priority. A pod on a node of no
// topology-aware flavor charges quota to the first flavor of its queue
// whose nodeLabels the node carries, and holds no node in the snapshot.
func (c *Config) Running() ([]allot.Workload, []Warning, error) {
	placed := map[string]string{} // node → flavor, for the nodes placed on
	for _, name := range sortedKeys(c.nodes) {
		if n, ok, _, err := c.Node(name); err != nil {
			return nil, nil, err
		} else if ok {
			placed[name] = n.Flavor
		}
	}
	onNode := func(node string) (string, bool, error) { f, ok := placed[node]; return f, ok, nil }
	gangs := map[string][]*corev1.Pod{}
	for _, key := range sortedKeys(c.pods) {
		if p := c.pods[key]; active(p) {
			k := c.GangID(p)
			gangs[k] = append(gangs[k], p)
		}
	}
	var out []allot.Workload
	var warns []Warning
	for _, id := range sortedKeys(gangs) {
		wl, ok, w, err := c.gang(id, gangs[id], onNode, nil)
		if err != nil {
			return nil, nil, err
		}
		warns = append(warns, w...)
		if ok {
			out = append(out, wl)
		}
	}
	return out, warns, nil
}

// GangID names the running workload a pod belongs to, as Running groups
// pods: its pod group, else its top-level owner among the objects read,
// else itself.
func (c *Config) GangID(p *corev1.Pod) string {
	var stack [ownerChain]owner
	return gangKey(p, c.chain(p, stack[:0]))
}

// RunningGang returns the running workload of one gang (a GangID), as
// Running describes it, and false when none of its pods is active on a
// node it can count. Its pods are those added under the ID: a pod's gang
// is its GangID when it was added (an owner added after its pods does not
// regroup them here, as it does in Running). The cost is the gang's pods,
// not the cluster's: one object's change, one gang described anew.
func (c *Config) RunningGang(id string) (allot.Workload, bool, []Warning, error) {
	return c.RunningGangReads(id, nil)
}

// RunningGangReads is RunningGang, and sets *r (when r is not nil) to
// what the description read (GangReads), from the same pods and owners.
func (c *Config) RunningGangReads(id string, r *Reads) (allot.Workload, bool, []Warning, error) {
	var one [1]*corev1.Pod
	pods := c.activePods(id, one[:0])
	if r != nil {
		*r = Reads{}
	}
	if len(pods) == 0 {
		return allot.Workload{}, false, nil, nil
	}
	return c.gang(id, pods, func(node string) (string, bool, error) {
		n, read := c.nodes[node]
		if !read {
			return "", false, nil
		}
		flavor, _, ok, _, err := c.placement(n)
		return flavor, ok, err
	}, r)
}

// activePods appends to out the active pods added under a gang's ID,
// sorted by key: the pods RunningGang describes.
func (c *Config) activePods(id string, out []*corev1.Pod) []*corev1.Pod {
	keys := c.gangPods[id]
	switch keys.len() {
	case 0:
	case 1:
		// A gang of one pod, the most common: nothing to sort.
		if p := c.pods[keys.only()]; active(p) {
			out = append(out, p)
		}
	default:
		for _, key := range keys.sorted() {
			if p := c.pods[key]; active(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// Reads names the objects, beyond a gang's pods, their owners, their
// nodes and the flavors, whose change may describe its running workload
// anew: the LocalQueue its pods name and the ClusterQueue that one names
// (its queue, and the flavors a pod on a node no flavor holds charges),
// the WorkloadPriorityClass and PriorityClass its priority may come from.
// Each is a name, "" for none; the names are read whether or not the
// objects exist, so that one created later is found to be read. Reads may
// name more than the description ends up using, never less. (Names, not
// Keys: a map holds a value this small in place.)
type Reads struct {
	Namespace             string // the LocalQueue's
	LocalQueue            string
	ClusterQueue          string
	WorkloadPriorityClass string
	PriorityClass         string
	// DefaultPriority: its priority may be the global default
	// PriorityClass's, which any PriorityClass's change may move.
	DefaultPriority bool
}

// Key names an object by kind, namespace and name, as a map key.
type Key struct{ Kind, Namespace, Name string }

// KeyOf is the key of an object of a kind the configuration reads.
func KeyOf(v any) Key {
	m, kind := metaOf(v)
	return Key{kind, m.Namespace, m.Name}
}

// DefaultPriorityKey is the key Reads.Objects gives the global default
// PriorityClass, whichever it is.
var DefaultPriorityKey = Key{Kind: "PriorityClass"}

// Objects yields the keys of the objects r names, DefaultPriorityKey
// among them when its priority may be the global default's.
func (r Reads) Objects() iter.Seq[Key] {
	return func(yield func(Key) bool) {
		for _, k := range [...]Key{{"LocalQueue", r.Namespace, r.LocalQueue}, {Kind: "ClusterQueue", Name: r.ClusterQueue},
			{Kind: "WorkloadPriorityClass", Name: r.WorkloadPriorityClass}, {Kind: "PriorityClass", Name: r.PriorityClass}} {
			if k.Name != "" && !yield(k) {
				return
			}
		}
		if r.DefaultPriority {
			yield(DefaultPriorityKey)
		}
	}
}

// View is what a running gang's description reads of an object that
// Reads.Objects names, as a value: "" while it does not exist, and two
// views alike describe the gangs alike. A ClusterQueue's quotas, a
// LocalQueue's stop policy, a class's description are not read; its
// existence, the ClusterQueue a LocalQueue names, the flavors a
// ClusterQueue lists (in order) and a class's value are.
func (c *Config) View(k Key) string {
	switch k.Kind {
	case "LocalQueue":
		if lq, ok := c.localQueues[k.Namespace+"/"+k.Name]; ok {
			return "clusterQueue " + string(lq.Spec.ClusterQueue)
		}
	case "ClusterQueue":
		if cq, ok := c.clusterQueues[k.Name]; ok {
			var b strings.Builder
			b.WriteString("flavors")
			for f := range flavorsListed(cq) {
				b.WriteString(" " + f)
			}
			return b.String()
		}
	case "WorkloadPriorityClass":
		if w, ok := c.wpcs[k.Name]; ok {
			return "value " + strconv.Itoa(int(w.Value))
		}
	case "PriorityClass":
		if k == DefaultPriorityKey {
			return "value " + strconv.Itoa(int(c.defaultPriority()))
		}
		if pc, ok := c.pcs[k.Name]; ok {
			return "value " + strconv.Itoa(int(pc.Value))
		}
	}
	return ""
}

// flavorsListed yields the names of the flavors a ClusterQueue's resource
// groups list, in order; none for nil.
func flavorsListed(cq *kueue.ClusterQueue) iter.Seq[string] {
	return func(yield func(string) bool) {
		if cq == nil {
			return
		}
		for _, rg := range cq.Spec.ResourceGroups {
			for _, f := range rg.Flavors {
				if !yield(string(f.Name)) {
					return
				}
			}
		}
	}
}

// GangReads is what RunningGang's description of a gang reads (Reads),
// the zero Reads for a gang with no active pod.
func (c *Config) GangReads(id string) Reads {
	var one [1]*corev1.Pod
	pods := c.activePods(id, one[:0])
	if len(pods) == 0 {
		return Reads{}
	}
	first := pods[0] // as gang reads it
	var stack [ownerChain]owner
	return c.readsOf(first, c.chain(first, stack[:0]))
}

// readsOf is what a gang's description reads (Reads), from its first
// pod and that pod's owner chain.
func (c *Config) readsOf(first *corev1.Pod, ch []owner) Reads {
	var r Reads
	if name := label(ch, QueueLabel); name != "" {
		r.Namespace, r.LocalQueue = first.Namespace, name
		if lq, ok := c.localQueues[first.Namespace+"/"+name]; ok {
			r.ClusterQueue = string(lq.Spec.ClusterQueue)
		}
	}
	r.WorkloadPriorityClass = label(ch, WorkloadPriorityClassLabel)
	if first.Spec.Priority == nil {
		r.PriorityClass = first.Spec.PriorityClassName
		r.DefaultPriority = true
	}
	return r
}

// PodGang is the gang a pod (namespace and name) was added under, false
// for a pod not read.
func (c *Config) PodGang(namespace, name string) (string, bool) {
	g, ok := c.podGang[namespace+"/"+name]
	return g, ok
}

// GangsOn lists the gangs with a pod bound to a node, sorted: the ones a
// node's change may describe anew.
func (c *Config) GangsOn(node string) []string {
	ids := map[string]bool{}
	for key := range c.nodePods[node].all() {
		ids[c.podGang[key]] = true
	}
	return sortedKeys(ids)
}

// GangsOff lists the gangs with an active pod bound to a node placed does
// not hold, sorted: the pods that charge the first flavor of their
// ClusterQueue whose nodeLabels their node carries, which a
// ResourceFlavor's change may move while every node stays as described.
func (c *Config) GangsOff(placed func(node string) bool) []string {
	ids := map[string]bool{}
	for node, keys := range c.nodePods {
		if placed(node) {
			continue
		}
		for key := range keys.all() {
			if active(c.pods[key]) {
				ids[c.podGang[key]] = true
			}
		}
	}
	return sortedKeys(ids)
}

// keySet is a set of keys (the pods of a gang, or of a node): the one key
// of a set of one, the most common, held without a map.
type keySet struct {
	one  string          // while many is nil; "" for none
	many map[string]bool // once two keys were in at once
}

func (s *keySet) add(k string) {
	switch {
	case s.many != nil:
		s.many[k] = true
	case s.one == "" || s.one == k:
		s.one = k
	default:
		s.many = map[string]bool{s.one: true, k: true}
		s.one = ""
	}
}

func (s *keySet) remove(k string) {
	if s.many != nil {
		delete(s.many, k)
	} else if s.one == k {
		s.one = ""
	}
}

func (s keySet) len() int {
	switch {
	case s.many != nil:
		return len(s.many)
	case s.one != "":
		return 1
	}
	return 0
}

// only is the key of a set of one.
func (s keySet) only() string {
	if s.many != nil {
		for k := range s.many {
			return k
		}
	}
	return s.one
}

// all yields the keys, in no order.
func (s keySet) all() iter.Seq[string] {
	return func(yield func(string) bool) {
		if s.many == nil {
			if s.one != "" {
				yield(s.one)
			}
			return
		}
		for k := range s.many {
			if !yield(k) {
				return
			}
		}
	}
}

// sorted lists the keys in order.
func (s keySet) sorted() []string {
	if s.many != nil {
		return sortedKeys(s.many)
	}
	if s.one != "" {
		return []string{s.one}
	}
	return nil
}

// Gangs lists every gang with a pod read, sorted.
func (c *Config) Gangs() []string { return sortedKeys(c.gangPods) }

// gang describes the running workload of a gang's active pods (sorted by
// key); onNode gives the flavor of a node placed on. It sets *r, when r
// is not nil, to what the description reads.
func (c *Config) gang(id string, pods []*corev1.Pod, onNode func(string) (string, bool, error), r *Reads) (allot.Workload, bool, []Warning, error) {
	first := pods[0]
	var stack [ownerChain]owner
	ch := c.chain(first, stack[:0])
	if r != nil {
		*r = c.readsOf(first, ch)
	}
	var warns []Warning
	queue, w := c.queueOf(first.Namespace, label(ch, QueueLabel), first)
	warns = append(warns, w...)
	wl := allot.Workload{ID: id, Queue: queue, Tenant: first.Namespace}
	if queue == UnmanagedQueue {
		wl.Preemption.Class = allot.Never
	}
	prio, w := c.runningPriority(ch, first)
	warns = append(warns, w...)
	wl.Priority = prio
	wl.SubmittedAt = c.created(ch[len(ch)-1].meta)
	var sets map[podSetKey]int // by role and flavor, once there are many
	for _, p := range pods {
		flavor, placed, err := onNode(p.Spec.NodeName)
		if err != nil {
			return allot.Workload{}, false, nil, err
		}
		if !placed {
			if queue == UnmanagedQueue {
				continue // neither quota nor a node of the snapshot
			}
			if flavor = c.quotaFlavor(queue, p); flavor == "" {
				warns = append(warns, Warning{Object: objectName("Pod", p.Namespace, p.Name), Field: "spec.nodeName",
					Message: fmt.Sprintf("node %q matches no flavor of ClusterQueue %q: left out", p.Spec.NodeName, queue)})
				continue
			}
		}
		d, ok := c.podDescs[p.Namespace+"/"+p.Name]
		if !ok {
			d = describePod(p)
		}
		if d.roleErr != nil {
			return allot.Workload{}, false, nil, fmt.Errorf("kueueconfig: %s: role hash: %w", objectName("Pod", p.Namespace, p.Name), d.roleErr)
		}
		i := podSetIndex(wl.PodSets, &sets, podSetKey{d.role, flavor})
		if i < 0 {
			i = len(wl.PodSets)
			wl.PodSets = append(wl.PodSets, allot.PodSet{Name: d.role, Flavor: flavor, PerPod: maps.Clone(d.per)})
			if sets != nil {
				sets[podSetKey{d.role, flavor}] = i
			}
		}
		ps := &wl.PodSets[i]
		ps.Count++
		if placed {
			ps.Nodes = append(ps.Nodes, p.Spec.NodeName)
		}
		if t := c.started(p); wl.AdmittedAt == 0 || t < wl.AdmittedAt {
			wl.AdmittedAt = t
		}
	}
	if len(wl.PodSets) == 0 {
		return allot.Workload{}, false, warns, nil
	}
	// A role on two flavors is two pod sets; their names tell them apart.
	// The names are compared before any is changed.
	if len(wl.PodSets) > 1 {
		twice := make([]bool, len(wl.PodSets))
		for i := range wl.PodSets {
			for j := range i {
				if wl.PodSets[i].Name == wl.PodSets[j].Name {
					twice[i], twice[j] = true, true
				}
			}
		}
		for i := range wl.PodSets {
			if twice[i] {
				wl.PodSets[i].Name += "-" + wl.PodSets[i].Flavor
			}
		}
	}
	if wl.SubmittedAt > wl.AdmittedAt {
		wl.SubmittedAt = wl.AdmittedAt
	}
	return wl, true, warns, nil
}

// podSetKey is a pod set of a running gang: its pods' role and flavor.
type podSetKey struct{ role, flavor string }

// manyPodSets is where a gang's pod sets are found by a map rather than
// read in turn.
const manyPodSets = 8

// podSetIndex finds the pod set of key among sets, -1 if none: read in
// turn while they are few, then through *index, made then and kept up to
// date by the caller.
func podSetIndex(sets []allot.PodSet, index *map[podSetKey]int, key podSetKey) int {
	if *index == nil && len(sets) >= manyPodSets {
		*index = make(map[podSetKey]int, 2*len(sets))
		for i := range sets {
			(*index)[podSetKey{sets[i].Name, sets[i].Flavor}] = i
		}
	}
	if *index != nil {
		if i, ok := (*index)[key]; ok {
			return i
		}
		return -1
	}
	for i := range sets {
		if sets[i].Name == key.role && sets[i].Flavor == key.flavor {
			return i
		}
	}
	return -1
}

// queueOf resolves a LocalQueue name in a namespace to its ClusterQueue;
// UnmanagedQueue, with a warning when a name was given, when it does not
// resolve.
func (c *Config) queueOf(ns, lq string, p *corev1.Pod) (string, []Warning) {
	if lq == "" {
		return UnmanagedQueue, nil
	}
	q, ok := c.localQueues[ns+"/"+lq]
	if !ok {
		return UnmanagedQueue, []Warning{{Object: objectName("Pod", p.Namespace, p.Name), Field: "metadata.labels." + QueueLabel,
			Message: fmt.Sprintf("LocalQueue %s/%s not found: counted as not managed by Kueue", ns, lq)}}
	}
	if _, ok := c.clusterQueues[string(q.Spec.ClusterQueue)]; !ok {
		return UnmanagedQueue, []Warning{{Object: objectName("Pod", p.Namespace, p.Name), Field: "metadata.labels." + QueueLabel,
			Message: fmt.Sprintf("ClusterQueue %q of LocalQueue %s/%s not found: counted as not managed by Kueue", q.Spec.ClusterQueue, ns, lq)}}
	}
	return string(q.Spec.ClusterQueue), nil
}

// quotaFlavor is the flavor a pod on a node no topology-aware flavor holds
// charges: the first of its ClusterQueue's that exists, is not
// topology-aware and whose nodeLabels the node carries (the pod's node
// selector when the node was not read).
func (c *Config) quotaFlavor(queue string, p *corev1.Pod) string {
	labels := p.Spec.NodeSelector
	if n, ok := c.nodes[p.Spec.NodeName]; ok {
		labels = n.Labels
	}
	for name := range flavorsListed(c.clusterQueues[queue]) {
		rf, ok := c.flavors[name]
		if ok && !isTAS(rf) && matchesLabels(labels, rf.Spec.NodeLabels) {
			return name
		}
	}
	return ""
}

// runningPriority is a gang's priority: its WorkloadPriorityClass's value,
// else the pod's priority (set from its PriorityClass when it was
// created), else the PriorityClass it names, else the global default's.
func (c *Config) runningPriority(ch []owner, p *corev1.Pod) (int32, []Warning) {
	if name := label(ch, WorkloadPriorityClassLabel); name != "" {
		if w, ok := c.wpcs[name]; ok {
			return w.Value, nil
		}
		return c.podPriority(&p.Spec), []Warning{{Object: objectName("Pod", p.Namespace, p.Name), Field: "metadata.labels." + WorkloadPriorityClassLabel,
			Message: fmt.Sprintf("WorkloadPriorityClass %q not found: the pod's priority counts", name)}}
	}
	return c.podPriority(&p.Spec), nil
}

// podPriority is a pod spec's priority: its own, its PriorityClass's, the
// global default PriorityClass's, or 0, as Kubernetes resolves it.
func (c *Config) podPriority(s *corev1.PodSpec) int32 {
	if s.Priority != nil {
		return *s.Priority
	}
	if pc, ok := c.pcs[s.PriorityClassName]; ok && s.PriorityClassName != "" {
		return pc.Value
	}
	return c.defaultPriority()
}

// defaultPriority is the value of the PriorityClass marked globalDefault
// (the lowest, if several), or 0. The lowest is the same in any order.
func (c *Config) defaultPriority() int32 {
	var v *int32
	for _, pc := range c.pcs {
		if pc.GlobalDefault && (v == nil || pc.Value < *v) {
			v = &pc.Value
		}
	}
	if v == nil {
		return 0
	}
	return *v
}

// created and started are times in seconds since the Unix epoch, allot's
// clock for imported objects.
func (c *Config) created(m *metav1.ObjectMeta) int64 {
	return m.CreationTimestamp.Unix() * boolInt(!m.CreationTimestamp.IsZero())
}

func (c *Config) started(p *corev1.Pod) int64 {
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Unix()
	}
	return c.created(&p.ObjectMeta)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Now is the snapshot's time: the latest time the objects read carry (a
// pod's start or creation, a Workload's creation), 0 when none does.
func (c *Config) Now() int64 {
	var now int64
	for _, p := range c.pods {
		now = max(now, c.started(p), c.created(&p.ObjectMeta))
	}
	for _, w := range c.workloads {
		now = max(now, c.created(&w.ObjectMeta))
	}
	return now
}

// ignoredResources are the resources nodes and pods carry that no quota
// covers (ephemeral-storage, hugepages, other accelerators): carried, not
// tracked. "pods" is read as nodes' maxPods.
func (c *Config) ignoredResources(declared []string) []string {
	seen := map[string]bool{}
	note := func(l corev1.ResourceList) {
		for name := range l {
			if n := string(name); n != string(corev1.ResourcePods) && !slices.Contains(declared, n) {
				seen[n] = true
			}
		}
	}
	for _, n := range c.nodes {
		note(n.Status.Allocatable)
		note(n.Status.Capacity)
	}
	for _, p := range c.pods {
		note(PodRequests(&p.Spec))
	}
	for _, w := range c.workloads {
		for i := range w.Spec.PodSets {
			note(PodRequests(&w.Spec.PodSets[i].Template.Spec))
		}
	}
	return sortedKeys(seen)
}
