// A Config holds the Kueue and Kubernetes objects read so far and turns
// each into its allot description.

package kueueconfig

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot"
)

// Options are the settings of Kueue's own Configuration (a file, not an
// API object) that change its answers, and the importer's choices.
type Options struct {
	// FairSharing is Kueue's fairSharing configuration; off by default, as
	// in Kueue.
	FairSharing allot.FairSharing
}

// UnmanagedQueue is the queue of running pods no LocalQueue admitted
// (pods without a kueue.x-k8s.io/queue-name label on themselves or their
// owners): they hold node capacity and no quota, and are nobody's victim,
// as Kueue's topology-aware scheduling counts such pods. No ClusterQueue
// can have the name: a ClusterQueue's name has no parentheses.
const UnmanagedQueue = "(unmanaged)"

// Config is a Kueue configuration and the cluster it runs on, as read. It
// is not safe for concurrent use: one goroutine adds objects and asks for
// descriptions.
type Config struct {
	opts Options

	flavors       map[string]*kueue.ResourceFlavor
	topologies    map[string]*kueue.Topology
	clusterQueues map[string]*kueue.ClusterQueue
	cohorts       map[string]*kueue.Cohort
	localQueues   map[string]*kueue.LocalQueue // by namespace/name
	wpcs          map[string]*kueue.WorkloadPriorityClass
	pcs           map[string]*schedulingv1.PriorityClass
	namespaces    map[string]*corev1.Namespace
	nodes         map[string]*corev1.Node
	pods          map[string]*corev1.Pod     // by namespace/name
	workloads     map[string]*kueue.Workload // by namespace/name
	owners        map[types.UID]owner        // every object's metadata, for owner chains
	sources       map[string]string          // object name → where it was read
	warnings      []Warning                  // of the objects themselves
	nsNames       []string                   // the namespaces sorted, see namespaceNames
	nsByLabel     map[string][]string        // "key=value" → the namespaces with it, see selectsSome; nil until needed
	flavorDerived *flavorDerived             // see derived; nil when a flavor or topology changed since
	// covered is what Resources last found, nil when a ClusterQueue or
	// Cohort came, went or came to cover other resources since.
	covered *coveredMemo
	// The pods by gang and by node, and each pod's gang as added, for a
	// live cluster's one-gang descriptions (RunningGang, GangsOn).
	gangPods map[string]keySet
	nodePods map[string]keySet
	podGang  map[string]string
	// podDescs is what a gang's description reads of each pod (its role,
	// its request), computed once when it is added: a gang described anew
	// as each of its pods binds reads its pods again, and a role hash
	// hashes an encoding of the spec.
	podDescs map[string]podDesc
}

// owner is what a pod's owner chain reads of an object.
type owner struct {
	kind string
	meta *metav1.ObjectMeta
}

// New returns an empty configuration.
func New(opts Options) *Config {
	return &Config{
		opts:          opts,
		flavors:       map[string]*kueue.ResourceFlavor{},
		topologies:    map[string]*kueue.Topology{},
		clusterQueues: map[string]*kueue.ClusterQueue{},
		cohorts:       map[string]*kueue.Cohort{},
		localQueues:   map[string]*kueue.LocalQueue{},
		wpcs:          map[string]*kueue.WorkloadPriorityClass{},
		pcs:           map[string]*schedulingv1.PriorityClass{},
		namespaces:    map[string]*corev1.Namespace{},
		nodes:         map[string]*corev1.Node{},
		pods:          map[string]*corev1.Pod{},
		workloads:     map[string]*kueue.Workload{},
		owners:        map[types.UID]owner{},
		sources:       map[string]string{},
		gangPods:      map[string]keySet{},
		nodePods:      map[string]keySet{},
		podGang:       map[string]string{},
		podDescs:      map[string]podDesc{},
	}
}

// Import reads the objects into a new configuration and checks that its
// description builds: the error is an *ObjectError (Kueue's validation, or
// a field allot cannot represent), an ErrDuplicate, or the *allot.BuildError
// of the description.
func Import(objs []Object, opts Options) (*Config, error) {
	c := New(opts)
	for _, o := range objs {
		if err := c.Add(o); err != nil {
			return nil, err
		}
	}
	b, _, err := c.Builder()
	if err != nil {
		return nil, err
	}
	if _, err := b.Build(); err != nil {
		return nil, fmt.Errorf("kueueconfig: the imported description does not build: %w", err)
	}
	return c, nil
}

// Add validates an object by Kueue's rules and records it, replacing an
// object of the same kind and name added before (as an informer's update
// does). The error of an object Kueue refuses is an *ObjectError wrapping
// ErrInvalid.
func (c *Config) Add(o Object) error {
	if errs := Validate(o); len(errs) > 0 {
		return &ObjectError{Object: o.Name(), Source: o.Source, Errs: errs, Err: ErrInvalid}
	}
	m, kind := metaOf(o.Value)
	name := o.Name()
	if c.sources[name] != o.Source {
		c.sources[name] = o.Source
	}
	if m.UID != "" {
		c.owners[m.UID] = owner{kind: kind, meta: m}
	}
	switch v := o.Value.(type) {
	case *kueue.ResourceFlavor:
		c.flavors[v.Name] = v
		c.flavorDerived = nil
	case *kueue.Topology:
		c.topologies[v.Name] = v
		c.flavorDerived = nil
	case *kueue.ClusterQueue:
		if old, ok := c.clusterQueues[v.Name]; !ok || !sameCovered(old.Spec.ResourceGroups, v.Spec.ResourceGroups) {
			c.covered = nil
		}
		c.clusterQueues[v.Name] = v
	case *kueue.Cohort:
		if old, ok := c.cohorts[v.Name]; !ok || !sameCovered(old.Spec.ResourceGroups, v.Spec.ResourceGroups) {
			c.covered = nil
		}
		c.cohorts[v.Name] = v
	case *kueue.LocalQueue:
		c.localQueues[v.Namespace+"/"+v.Name] = v
	case *kueue.WorkloadPriorityClass:
		c.wpcs[v.Name] = v
	case *schedulingv1.PriorityClass:
		c.pcs[v.Name] = v
	case *corev1.Namespace:
		c.namespaces[v.Name] = v
		c.nsNames, c.nsByLabel = nil, nil
	case *corev1.Node:
		c.nodes[v.Name] = v
	case *corev1.Pod:
		key := v.Namespace + "/" + v.Name
		gang := c.GangID(v)
		old, read := c.pods[key]
		// A pod's spec changes only with its generation: an update
		// that keeps it keeps the pod's description.
		desc, described := c.podDescs[key]
		if !read || !described || !sameSpec(old, v) {
			desc = describePod(v)
		}
		// An update that keeps the pod's gang and node (a status
		// heartbeat, say) keeps its place in the indexes.
		if !read || c.podGang[key] != gang || old.Spec.NodeName != v.Spec.NodeName {
			c.unindexPod(key)
			c.podGang[key] = gang
			addToSet(c.gangPods, gang, key)
			if v.Spec.NodeName != "" {
				addToSet(c.nodePods, v.Spec.NodeName, key)
			}
		}
		c.podDescs[key] = desc
		c.pods[key] = v
	case *kueue.Workload:
		c.workloads[v.Namespace+"/"+v.Name] = v
	case *batchv1.Job, *jobset.JobSet, *rayv1.RayJob:
		// Read for the owner chains of pods; a job to decide is the
		// request translation's.
	case *metav1.PartialObjectMetadata:
		what := "not modelled: only its metadata is read (for the owner chains of pods)"
		switch kind {
		case "LimitRange":
			what = "not modelled: its container defaults are not applied to requests"
		case "AdmissionCheck", "ProvisioningRequestConfig", "MultiKueueConfig", "MultiKueueCluster":
			what = "not modelled: admission checks are not run; a workload counts as admitted once its quota is reserved"
		}
		c.warn(name, "", "%s", what)
	default:
		return fmt.Errorf("kueueconfig: %s: kind %T is not read", name, o.Value)
	}
	return nil
}

// Remove forgets an object (of a kind Add reads: the value names its kind,
// namespace and name; only those are read), as an informer's delete does.
// An object not read is no error. Warnings Add gave about it stay.
func (c *Config) Remove(v any) error {
	m, kind := metaOf(v)
	key := m.Name
	if m.Namespace != "" {
		key = m.Namespace + "/" + m.Name
	}
	var uid types.UID
	forget := func(old types.UID) { uid = old }
	switch v.(type) {
	case *kueue.ResourceFlavor:
		removeKey(c.flavors, key, forget)
		c.flavorDerived = nil
	case *kueue.Topology:
		removeKey(c.topologies, key, forget)
		c.flavorDerived = nil
	case *kueue.ClusterQueue:
		removeKey(c.clusterQueues, key, forget)
		c.covered = nil
	case *kueue.Cohort:
		removeKey(c.cohorts, key, forget)
		c.covered = nil
	case *kueue.LocalQueue:
		removeKey(c.localQueues, key, forget)
	case *kueue.WorkloadPriorityClass:
		removeKey(c.wpcs, key, forget)
	case *schedulingv1.PriorityClass:
		removeKey(c.pcs, key, forget)
	case *corev1.Namespace:
		removeKey(c.namespaces, key, forget)
		c.nsNames, c.nsByLabel = nil, nil
	case *corev1.Node:
		removeKey(c.nodes, key, forget)
	case *corev1.Pod:
		c.unindexPod(key)
		removeKey(c.pods, key, forget)
	case *kueue.Workload:
		removeKey(c.workloads, key, forget)
	default:
		return fmt.Errorf("kueueconfig: %s: kind %s is not removed", objectName(kind, m.Namespace, m.Name), kind)
	}
	if uid != "" {
		delete(c.owners, uid)
	}
	delete(c.sources, objectName(kind, m.Namespace, m.Name))
	return nil
}

// removeKey deletes a typed object from its map, telling forget its UID.
func removeKey[T any, P interface {
	*T
	metav1.Object
}](m map[string]P, key string, forget func(types.UID)) {
	if old, ok := m[key]; ok {
		forget(old.GetUID())
		delete(m, key)
	}
}

// unindexPod takes a pod out of the gang and node indexes.
func (c *Config) unindexPod(key string) {
	old, ok := c.pods[key]
	if !ok {
		return
	}
	gang := c.podGang[key]
	delete(c.podGang, key)
	delete(c.podDescs, key)
	removeFromSet(c.gangPods, gang, key)
	if old.Spec.NodeName != "" {
		removeFromSet(c.nodePods, old.Spec.NodeName, key)
	}
}

func addToSet(m map[string]keySet, k, v string) {
	s := m[k]
	s.add(v)
	m[k] = s
}

func removeFromSet(m map[string]keySet, k, v string) {
	if s, ok := m[k]; ok {
		if s.remove(v); s.len() == 0 {
			delete(m, k)
		} else {
			m[k] = s
		}
	}
}

func (c *Config) warn(object, fieldPath, format string, args ...any) {
	c.warnings = append(c.warnings, Warning{Object: object, Field: fieldPath, Message: fmt.Sprintf(format, args...)})
}

// sortedKeys lists a map's keys in order, so that no description depends
// on a map's iteration.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// Builder returns the description of the whole configuration, in
// Kueue-exact mode (Options.Semantics "kueue"), and every warning, sorted.
func (c *Config) Builder() (allot.Builder, []Warning, error) {
	var warns []Warning
	add := func(w []Warning) { warns = append(warns, w...) }
	b := allot.Builder{Options: allot.Options{Semantics: allot.SemanticsKueue}, FairSharing: c.opts.FairSharing}
	res, err := c.Resources()
	if err != nil {
		return b, nil, err
	}
	b.Resources, b.GPUResource = res.Names, res.GPU
	if b.Levels, err = c.Levels(); err != nil {
		return b, nil, err
	}
	if len(c.flavors) == 0 {
		return b, nil, fmt.Errorf("%w: no ResourceFlavor read: a snapshot needs at least one flavor", ErrNotModelled)
	}
	for _, name := range c.derived().names {
		f, w, err := c.Flavor(name)
		if err != nil {
			return b, nil, err
		}
		add(w)
		b.Flavors = append(b.Flavors, f)
	}
	var outside []string
	for _, name := range sortedKeys(c.nodes) {
		n, ok, w, err := c.Node(name)
		if err != nil {
			return b, nil, err
		}
		add(w)
		if ok {
			b.Nodes = append(b.Nodes, n)
		} else {
			outside = append(outside, name)
		}
	}
	if len(outside) > 0 {
		warns = append(warns, Warning{Object: "nodes", Message: fmt.Sprintf("%d of %d nodes are of no ResourceFlavor with a topologyName (%s): as in Kueue, only quota is checked on their flavors",
			len(outside), len(c.nodes), abbreviate(outside, 5))})
	}
	for _, name := range c.CohortNames() {
		co, w, err := c.Cohort(name)
		if err != nil {
			return b, nil, err
		}
		add(w)
		b.Cohorts = append(b.Cohorts, co)
	}
	for _, name := range c.ClusterQueueNames() {
		q, w, err := c.Queue(name)
		if err != nil {
			return b, nil, err
		}
		add(w)
		b.Queues = append(b.Queues, q)
	}
	running, w, err := c.Running()
	if err != nil {
		return b, nil, err
	}
	add(w)
	b.Running = running
	if slices.ContainsFunc(running, func(r allot.Workload) bool { return r.Queue == UnmanagedQueue }) {
		b.Queues = append(b.Queues, allot.Queue{Name: UnmanagedQueue})
	}
	pending, w, err := c.Pending()
	if err != nil {
		return b, nil, err
	}
	add(w)
	b.Pending = pending
	for _, key := range sortedKeys(c.localQueues) {
		add(c.LocalQueueWarnings(key))
	}
	b.Namespaces, b.LocalQueues = c.Namespaces(), c.LocalQueues()
	b.Now = c.Now()
	b.IgnoredResources = c.ignoredResources(res.Names)
	warns = append(warns, c.warnings...)
	slices.SortStableFunc(warns, func(a, b Warning) int { return strings.Compare(a.String(), b.String()) })
	return b, slices.Compact(warns), nil
}

// abbreviate lists the first n names and how many more there are.
func abbreviate(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// source is where an object was read, for errors.
func (c *Config) source(object string) string { return c.sources[object] }

// fieldErr is an *ObjectError of one field.
func (c *Config) fieldErr(object string, err error, fe *field.Error) *ObjectError {
	return &ObjectError{Object: object, Source: c.source(object), Errs: field.ErrorList{fe}, Err: err}
}

// LocalQueueWarnings names what allot does not model of a LocalQueue
// (namespace/name): its fair-sharing weight (admission fair sharing
// orders a ClusterQueue's workloads by their LocalQueues' usage) and a
// HoldAndDrain stop policy's eviction. Its stop policy's hold is modelled:
// a request through a stopped LocalQueue is inadmissible.
func (c *Config) LocalQueueWarnings(key string) []Warning {
	lq, ok := c.localQueues[key]
	if !ok {
		return nil
	}
	obj := objectName("LocalQueue", lq.Namespace, lq.Name)
	var warns []Warning
	if lq.Spec.FairSharing != nil {
		warns = append(warns, Warning{Object: obj, Field: "spec.fairSharing", Message: "not modelled: admission fair sharing among LocalQueues does not order admission"})
	}
	if lq.Spec.StopPolicy != nil && *lq.Spec.StopPolicy == kueue.HoldAndDrain {
		warns = append(warns, Warning{Object: obj, Field: "spec.stopPolicy", Message: "HoldAndDrain: its requests are held; allot does not evict the admitted workloads Kueue drains"})
	}
	return warns
}
