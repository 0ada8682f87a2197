// A Kueue Workload as allot's request: its queue through its LocalQueue,
// its priority, and each pod set's count, effective request, topology
// request and the flavors Kueue would consider for it.

package kueueconfig

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot"
)

// ErrInadmissible is wrapped by every *InadmissibleError.
var ErrInadmissible = errors.New("kueueconfig: inadmissible")

// The reasons of an InadmissibleError.
const (
	// ReasonNoQueue: the workload names no LocalQueue; Kueue does not
	// manage it.
	ReasonNoQueue = "NoQueueName"
	// ReasonLocalQueueNotFound and ReasonClusterQueueNotFound: the queue it
	// names does not exist; Kueue keeps it pending.
	ReasonLocalQueueNotFound   = "LocalQueueNotFound"
	ReasonClusterQueueNotFound = "ClusterQueueNotFound"
	// ReasonLocalQueueStopped: its LocalQueue's stopPolicy holds it.
	ReasonLocalQueueStopped = "LocalQueueStopped"
	// ReasonResourceNotCovered: it requests a resource its ClusterQueue's
	// quota does not cover.
	ReasonResourceNotCovered = "ResourceNotCovered"
	// ReasonNoFlavor: no flavor of its ClusterQueue can hold a pod set
	// (topology-aware scheduling asked of a flavor without it, or the
	// reverse; an untolerated taint; a node selector or affinity the
	// flavor's labels do not match).
	ReasonNoFlavor = "NoFlavor"
)

// An InadmissibleError is Kueue's "no" to a workload before quota and
// placement are looked at: it stays pending (or is not Kueue's at all)
// whatever the cluster's state, with Kueue's reason.
type InadmissibleError struct {
	Object  string
	Reason  string
	Message string
}

func (e *InadmissibleError) Error() string { return e.Object + ": " + e.Reason + ": " + e.Message }
func (e *InadmissibleError) Unwrap() error { return ErrInadmissible }

// DefaultLocalQueue is the LocalQueue a job without a queue-name label is
// queued to when its namespace has one by that name (Kueue's
// LocalQueueDefaulting, on in v0.17).
const DefaultLocalQueue = "default"

// ClusterQueueOf resolves a workload's LocalQueue (namespace and name) to
// its ClusterQueue, as Kueue's queue manager does.
func (c *Config) ClusterQueueOf(object, namespace, localQueue string) (string, error) {
	return c.clusterQueueOf(func() string { return object }, namespace, localQueue)
}

// clusterQueueOf is ClusterQueueOf with the object's name built only for
// an error.
func (c *Config) clusterQueueOf(object func() string, namespace, localQueue string) (string, error) {
	if localQueue == "" {
		return "", &InadmissibleError{Object: object(), Reason: ReasonNoQueue, Message: "no " + QueueLabel + " label: not managed by Kueue"}
	}
	lq, ok := c.localQueues[namespace+"/"+localQueue]
	if !ok {
		return "", &InadmissibleError{Object: object(), Reason: ReasonLocalQueueNotFound, Message: fmt.Sprintf("LocalQueue %s doesn't exist", localQueue)}
	}
	if lq.Spec.StopPolicy != nil && *lq.Spec.StopPolicy != kueue.None {
		return "", &InadmissibleError{Object: object(), Reason: ReasonLocalQueueStopped,
			Message: fmt.Sprintf("LocalQueue %s is stopped (stopPolicy %s)", localQueue, *lq.Spec.StopPolicy)}
	}
	cq := string(lq.Spec.ClusterQueue)
	if _, ok := c.clusterQueues[cq]; !ok {
		return "", &InadmissibleError{Object: object(), Reason: ReasonClusterQueueNotFound, Message: fmt.Sprintf("ClusterQueue %s doesn't exist", cq)}
	}
	return cq, nil
}

// HasLocalQueue tells whether a namespace has a LocalQueue of that name.
func (c *Config) HasLocalQueue(namespace, name string) bool {
	_, ok := c.localQueues[namespace+"/"+name]
	return ok
}

// PriorityOf is the priority of a WorkloadPriorityClass, and false when
// there is none by that name.
func (c *Config) PriorityOf(workloadPriorityClass string) (int32, bool) {
	w, ok := c.wpcs[workloadPriorityClass]
	if !ok {
		return 0, false
	}
	return w.Value, true
}

// PodPriority is a pod spec's priority as Kubernetes resolves it (its own,
// its PriorityClass's, the global default's, 0).
func (c *Config) PodPriority(s *corev1.PodSpec) int32 { return c.podPriority(s) }

// WorkloadRequest translates a Workload into the request Kueue's scheduler
// would consider: ID namespace/name, its ClusterQueue, its namespace as
// tenant, its priority (spec.priority, else its priorityClassRef's value,
// else the default's), and one pod set per Kueue pod set with its count,
// its effective request per pod, its topology request (required,
// preferred, slices, group; kubernetes.io/hostname as allot's node level)
// and the flavors of the ClusterQueue Kueue would try for it, in order.
// The error is an *InadmissibleError when Kueue would never admit it, or
// an *ObjectError when Kueue's validation refuses it.
func (c *Config) WorkloadRequest(wl *kueue.Workload) (allot.Request, []Warning, error) {
	// The object's name is said only in errors and warnings: built when
	// one is.
	obj := func() string { return objectName("Workload", wl.Namespace, wl.Name) }
	if errs := Validate(Object{Value: wl, Version: "kueue.x-k8s.io/v1beta2"}); len(errs) > 0 {
		return allot.Request{}, nil, &ObjectError{Object: obj(), Errs: errs, Err: ErrInvalid}
	}
	cqName, err := c.clusterQueueOf(obj, wl.Namespace, string(wl.Spec.QueueName))
	if err != nil {
		return allot.Request{}, nil, err
	}
	cq := c.clusterQueues[cqName]
	var warns []Warning
	w := func(f, format string, args ...any) {
		warns = append(warns, Warning{Object: obj(), Field: f, Message: fmt.Sprintf(format, args...)})
	}
	req := allot.Request{ID: wl.Namespace + "/" + wl.Name, Queue: cqName, Tenant: wl.Namespace}
	switch {
	case wl.Spec.Priority != nil:
		req.Priority = *wl.Spec.Priority
	case wl.Spec.PriorityClassRef != nil && wl.Spec.PriorityClassRef.Kind == kueue.WorkloadPriorityClassKind:
		req.Priority, _ = c.PriorityOf(wl.Spec.PriorityClassRef.Name)
	case wl.Spec.PriorityClassRef != nil:
		if pc, ok := c.pcs[wl.Spec.PriorityClassRef.Name]; ok {
			req.Priority = pc.Value
		}
	default:
		req.Priority = c.defaultPriority()
	}
	if wl.Spec.MaximumExecutionTimeSeconds != nil {
		req.ExpectedRuntime = int64(*wl.Spec.MaximumExecutionTimeSeconds)
		w("spec.maximumExecutionTimeSeconds", "read as the expected runtime; Kueue's eviction at the limit is not modelled")
	}
	if len(wl.Spec.PreemptionGates) > 0 {
		w("spec.preemptionGates", "not modelled: the workload may preempt at once")
	}
	covered := func(name corev1.ResourceName) bool {
		for _, rg := range cq.Spec.ResourceGroups {
			if slices.Contains(rg.CoveredResources, name) {
				return true
			}
		}
		return false
	}
	if len(wl.Spec.PodSets) > 0 {
		req.PodSets = make([]allot.PodSet, 0, len(wl.Spec.PodSets))
	}
	for i := range wl.Spec.PodSets {
		ps := &wl.Spec.PodSets[i]
		p := func() string { return fmt.Sprintf("spec.podSets[%d]", i) }
		reqs := PodRequests(&ps.Template.Spec)
		// The first resource by name that is requested and not covered.
		var uncovered corev1.ResourceName
		for name, q := range reqs {
			if !q.IsZero() && !covered(name) && (uncovered == "" || name < uncovered) {
				uncovered = name
			}
		}
		if uncovered != "" {
			return allot.Request{}, nil, &InadmissibleError{Object: obj(), Reason: ReasonResourceNotCovered,
				Message: fmt.Sprintf("resource %s unavailable in ClusterQueue", uncovered)}
		}
		out := allot.PodSet{Name: string(ps.Name), Count: ps.Count, PerPod: perPod(reqs), Tolerations: tolerations(ps.Template.Spec.Tolerations)}
		for name := range out.PerPod {
			if !covered(corev1.ResourceName(name)) {
				delete(out.PerPod, name) // a zero request of a resource no quota covers
			}
		}
		if tr := ps.TopologyRequest; tr != nil {
			if tr.Required != nil {
				out.Topology.Required = LevelName(*tr.Required)
			}
			if tr.Preferred != nil {
				out.Topology.Preferred = LevelName(*tr.Preferred)
			}
			if tr.PodSetSliceRequiredTopology != nil && tr.PodSetSliceSize != nil {
				out.Topology.Slices = []allot.Slice{{Level: LevelName(*tr.PodSetSliceRequiredTopology), Size: *tr.PodSetSliceSize}}
			}
			if tr.PodSetGroupName != nil {
				out.Topology.Group = *tr.PodSetGroupName
			}
			if len(tr.PodsetSliceRequiredTopologyConstraints) > 0 {
				w(p()+".topologyRequest.podsetSliceRequiredTopologyConstraints", "ignored, as Kueue ignores it with its default feature gates (TASMultiLayerTopology is alpha)")
			}
		}
		// Partial admission (Kueue's PartialAdmission gate is on by
		// default): allot refuses a minimum below the count beside slices.
		if m := ps.MinCount; m != nil {
			if *m < ps.Count && len(out.Topology.Slices) > 0 {
				w(p()+".minCount", "partial admission does not combine with slices in allot: decided at the full count %d", ps.Count)
			} else {
				out.MinCount = *m
			}
		}
		flavors, reasons := c.eligibleFlavors(cq, ps)
		if len(flavors) == 0 {
			return allot.Request{}, nil, &InadmissibleError{Object: obj(), Reason: ReasonNoFlavor,
				Message: fmt.Sprintf("couldn't assign flavors to pod set %s: %s", ps.Name, strings.Join(reasons, ", "))}
		}
		out.Flavors = flavors
		req.PodSets = append(req.PodSets, out)
	}
	return req, warns, nil
}

// explicitTAS is Kueue's IsExplicitlyRequestingTAS for one pod set.
func explicitTAS(ps *kueue.PodSet) bool {
	tr := ps.TopologyRequest
	return tr != nil && (tr.Unconstrained != nil || tr.Required != nil || tr.Preferred != nil ||
		tr.PodSetSliceRequiredTopology != nil || tr.PodSetSliceSize != nil || len(tr.PodsetSliceRequiredTopologyConstraints) > 0)
}

// eligibleFlavors are the flavors of a ClusterQueue, in order, that Kueue's
// flavor assigner would try for a pod set, and why each other one is not.
func (c *Config) eligibleFlavors(cq *kueue.ClusterQueue, ps *kueue.PodSet) ([]string, []string) {
	var buf [8]string // most ClusterQueues have a few flavors
	names := buf[:0]
	tasOnly := true
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			rf, ok := c.flavors[string(f.Name)]
			if !ok {
				continue
			}
			names = append(names, string(f.Name))
			tasOnly = tasOnly && isTAS(rf)
		}
	}
	tasOnly = tasOnly && len(names) > 0
	tasRequested := explicitTAS(ps) || tasOnly
	// A pod that selects no nodes matches every flavor: its selector is
	// built only when it has one.
	spec := &ps.Template.Spec
	var selector *nodeaffinity.RequiredNodeAffinity
	if len(spec.NodeSelector) != 0 || (spec.Affinity != nil && spec.Affinity.NodeAffinity != nil && spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil) {
		keys := sets.New[string]()
		for _, name := range names {
			for k := range c.flavors[name].Spec.NodeLabels {
				keys.Insert(k)
			}
		}
		s := flavorSelector(spec, keys)
		selector = &s
	}
	var ok, reasons []string
	for _, name := range names {
		rf := c.flavors[name]
		if msg := c.tasMismatch(rf, ps, tasRequested, tasOnly && !explicitTAS(ps)); msg != "" {
			reasons = append(reasons, msg)
			continue
		}
		if len(rf.Spec.NodeTaints) > 0 {
			tolerations := append(slices.Clone(spec.Tolerations), rf.Spec.Tolerations...)
			if taint, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logr.Discard(), rf.Spec.NodeTaints, tolerations, func(t *corev1.Taint) bool {
				return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
			}, true); untolerated {
				reasons = append(reasons, fmt.Sprintf("untolerated taint %s in flavor %s", taint.ToString(), name))
				continue
			}
		}
		if selector != nil {
			if match, err := selector.Match(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: rf.Spec.NodeLabels}}); err != nil || !match {
				reasons = append(reasons, fmt.Sprintf("flavor %s doesn't match node affinity", name))
				continue
			}
		}
		if ok == nil {
			ok = make([]string, 0, len(names))
		}
		ok = append(ok, name)
	}
	return ok, reasons
}

// tasMismatch is Kueue's checkPodSetAndFlavorMatchForTAS: a pod set that
// asks for topology-aware scheduling (or is in a ClusterQueue of only
// topology-aware flavors) needs a topology-aware flavor with the level it
// names; one that does not ask cannot use a topology-aware flavor.
func (c *Config) tasMismatch(rf *kueue.ResourceFlavor, ps *kueue.PodSet, requested, implied bool) string {
	if !requested {
		if isTAS(rf) {
			return fmt.Sprintf("Flavor %q supports only TopologyAwareScheduling", rf.Name)
		}
		return ""
	}
	if implied {
		return ""
	}
	if !isTAS(rf) {
		return fmt.Sprintf("Flavor %q does not support TopologyAwareScheduling", rf.Name)
	}
	t, ok := c.topologies[string(*rf.Spec.TopologyName)]
	if !ok {
		return fmt.Sprintf("Flavor %q information missing in TAS cache", rf.Name)
	}
	tr := ps.TopologyRequest
	for _, level := range []*string{tr.Required, tr.Preferred, tr.PodSetSliceRequiredTopology} {
		if level == nil {
			continue
		}
		if !slices.ContainsFunc(t.Spec.Levels, func(l kueue.TopologyLevel) bool { return l.NodeLabel == *level }) {
			return fmt.Sprintf("Flavor %q does not contain the requested level", rf.Name)
		}
	}
	return ""
}

// flavorSelector is Kueue's: the pod's node selector and required node
// affinity, kept to the label keys the ClusterQueue's flavors use.
func flavorSelector(spec *corev1.PodSpec, allowed sets.Set[string]) nodeaffinity.RequiredNodeAffinity {
	var cp corev1.PodSpec
	if len(spec.NodeSelector) != 0 {
		cp.NodeSelector = map[string]string{}
		for k, v := range spec.NodeSelector {
			if allowed.Has(k) {
				cp.NodeSelector[k] = v
			}
		}
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		var terms []corev1.NodeSelectorTerm
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			var exps []corev1.NodeSelectorRequirement
			for _, e := range t.MatchExpressions {
				if allowed.Has(e.Key) {
					exps = append(exps, e)
				}
			}
			if len(exps) == 0 {
				terms = nil
				break
			}
			terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: exps})
		}
		if len(terms) != 0 {
			cp.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
		}
	}
	return nodeaffinity.GetRequiredNodeAffinity(&corev1.Pod{Spec: cp})
}

// Pending returns the Workloads read that wait: active and without quota
// reserved, in Kueue's queue order's inputs (priority, then creation).
// An admitted Workload is counted by its bound pods (Running); one Kueue
// would never admit is left out with a warning naming why.
func (c *Config) Pending() ([]allot.Workload, []Warning, error) {
	var out []allot.Workload
	var warns []Warning
	now := c.Now()
	for _, key := range sortedKeys(c.workloads) {
		wl := c.workloads[key]
		if meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) ||
			meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) ||
			(wl.Spec.Active != nil && !*wl.Spec.Active) {
			continue
		}
		req, w, err := c.WorkloadRequest(wl)
		var inad *InadmissibleError
		if errors.As(err, &inad) {
			warns = append(warns, Warning{Object: inad.Object, Message: "left out of the pending workloads: " + inad.Reason + ": " + inad.Message})
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		warns = append(warns, w...)
		req.SubmittedAt = min(c.created(&wl.ObjectMeta), now)
		out = append(out, allot.Workload(req))
	}
	return out, warns, nil
}
