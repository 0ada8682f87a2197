// ClusterQueues, Cohorts and ResourceFlavors as allot's queues, cohorts and
// flavors; the resources their quotas cover.

package kueueconfig

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/allot-sched/allot/labels"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot"
)

// maxResources is how many resources a snapshot tracks (allot's resource
// vectors are fixed-size).
const maxResources = 8

// ResourceNames are the resources a configuration tracks.
type ResourceNames struct {
	// Names are the resources the ClusterQueues' and Cohorts' resource
	// groups cover: the GPU first, then cpu, memory and the others by name.
	Names []string
	// GPU is the one among them that looks like a GPU ("nvidia.com/gpu",
	// "amd.com/gpu", a name allot's GPU rule recognizes), empty if none.
	GPU string
}

// Resources returns the resources the quotas cover. Kueue admits a
// workload only if its queue covers every resource it requests, so the
// resources no quota covers are not tracked (nodes and pods carry them as
// ignored resources). More than allot's eight, or two that look like
// GPUs, is an error.
func (c *Config) Resources() (ResourceNames, error) {
	if c.covered == nil {
		names, err := c.resources()
		c.covered = &coveredMemo{names, err}
	}
	out := c.covered.names
	out.Names = slices.Clone(out.Names)
	return out, c.covered.err
}

// coveredMemo is what resources found, kept while the objects it reads
// cover the same resources (Config.covered).
type coveredMemo struct {
	names ResourceNames
	err   error
}

// sameCovered reports whether two versions of an object's resource
// groups cover the same resources in the same order: all Resources reads
// of them.
func sameCovered(a, b []kueue.ResourceGroup) bool {
	return slices.EqualFunc(a, b, func(x, y kueue.ResourceGroup) bool { return slices.Equal(x.CoveredResources, y.CoveredResources) })
}

// resources is Resources, found anew.
func (c *Config) resources() (ResourceNames, error) {
	// resource → the object that first covers it: the ClusterQueues
	// before the Cohorts, each kind by name. Found without sorting the
	// objects; named (objectName) only in an error.
	type coverer struct {
		rank int // 0 a ClusterQueue, 1 a Cohort
		name string
	}
	seen := map[string]coverer{}
	note := func(by coverer, rgs []kueue.ResourceGroup) {
		for _, rg := range rgs {
			for _, r := range rg.CoveredResources {
				if have, ok := seen[string(r)]; !ok || by.rank < have.rank || (by.rank == have.rank && by.name < have.name) {
					seen[string(r)] = by
				}
			}
		}
	}
	for name, cq := range c.clusterQueues {
		note(coverer{0, name}, cq.Spec.ResourceGroups)
	}
	for name, co := range c.cohorts {
		note(coverer{1, name}, co.Spec.ResourceGroups)
	}
	object := func(r string) string {
		kind := "ClusterQueue"
		if seen[r].rank == 1 {
			kind = "Cohort"
		}
		return objectName(kind, "", seen[r].name)
	}
	var out ResourceNames
	names := sortedKeys(seen)
	for _, n := range names {
		if gpuLike(n) {
			if out.GPU != "" {
				return out, c.fieldErr(object(n), ErrNotModelled, field.Forbidden(field.NewPath("spec", "resourceGroups"),
					fmt.Sprintf("not modelled: %s and %s both look like GPUs; allot tracks one GPU resource in a snapshot", out.GPU, n)))
			}
			out.GPU = n
		}
	}
	rank := func(n string) int {
		switch n {
		case out.GPU:
			return 0
		case "cpu":
			return 1
		case "memory":
			return 2
		}
		return 3
	}
	slices.SortStableFunc(names, func(a, b string) int { return rank(a) - rank(b) })
	if len(names) > maxResources {
		return out, c.fieldErr(object(names[maxResources]), ErrNotModelled, field.Forbidden(field.NewPath("spec", "resourceGroups"),
			fmt.Sprintf("not modelled: the quotas cover %d resources (%s); allot tracks at most %d", len(names), strings.Join(names, ", "), maxResources)))
	}
	if len(names) == 0 {
		// No quota covers anything: every request is inadmissible, and
		// the snapshot still declares its resources.
		names = []string{"cpu", "memory"}
	}
	out.Names = names
	return out, nil
}

// gpuLike is allot's rule for a resource name that counts GPUs (see
// allot.Builder.GPUResource).
func gpuLike(name string) bool {
	name = strings.ToLower(name)
	domain, local := "", name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		domain, local = name[:i], name[i+1:]
	}
	return local == "gpu" || strings.HasPrefix(local, "gpu.") || strings.HasPrefix(local, "mig-") || strings.HasPrefix(domain, "gpu.")
}

// BaseUnits is a quantity in allot's base units, as Kueue counts it: cpu
// in millicores, every other resource in whole units (rounded up).
func BaseUnits(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// Flavor returns a ResourceFlavor's description. A flavor with a
// topologyName is one of Kueue's topology-aware flavors: its nodes are
// placed on; any other is quota-only, as Kueue without topology-aware
// scheduling checks quota alone.
func (c *Config) Flavor(name string) (allot.Flavor, []Warning, error) {
	rf, ok := c.flavors[name]
	if !ok {
		return allot.Flavor{}, nil, fmt.Errorf("kueueconfig: no ResourceFlavor %q", name)
	}
	obj := objectName("ResourceFlavor", "", name)
	var warns []Warning
	for k, v := range rf.Annotations {
		if strings.HasPrefix(k, "kueue.x-k8s.io/") {
			warns = append(warns, Warning{Object: obj, Field: "metadata.annotations." + k, Message: fmt.Sprintf("%q not modelled", v)})
		}
	}
	return allot.Flavor{Name: name, NodeLabels: maps.Clone(rf.Spec.NodeLabels), NodeTaints: taints(rf.Spec.NodeTaints),
		Tolerations: tolerations(rf.Spec.Tolerations)}, warns, nil
}

// FlavorNames are the ResourceFlavors' names, sorted: the order of the
// Builder's flavors.
func (c *Config) FlavorNames() []string { return slices.Clone(c.derived().names) }

// FlavorCount is how many ResourceFlavors the configuration holds.
func (c *Config) FlavorCount() int { return len(c.flavors) }

// NodeNames are the names of the Nodes the configuration holds, sorted,
// whether or not a flavor's nodes (Node says).
func (c *Config) NodeNames() []string { return sortedKeys(c.nodes) }

// isTAS tells a topology-aware flavor.
func isTAS(rf *kueue.ResourceFlavor) bool { return rf != nil && rf.Spec.TopologyName != nil }

// quota reads the resource groups of a ClusterQueue or Cohort: allot gives
// one flavor all of a pod set's resources, so a second resource group
// (whose flavors Kueue's validation makes distinct from the first's) is
// not modelled.
func (c *Config) quota(object string, rgs []kueue.ResourceGroup) ([]allot.FlavorQuota, []string, error) {
	if len(rgs) > 1 {
		return nil, nil, c.fieldErr(object, ErrNotModelled, field.Forbidden(field.NewPath("spec", "resourceGroups").Index(1),
			"not modelled: a second resource group gives some resources other flavors than the first's; allot gives one flavor all of a pod set's resources"))
	}
	var out []allot.FlavorQuota
	var order []string
	for _, rg := range rgs {
		for _, f := range rg.Flavors {
			fq := allot.FlavorQuota{Flavor: string(f.Name)}
			for _, r := range f.Resources {
				rq := allot.ResourceQuota{Name: string(r.Name), Nominal: BaseUnits(r.Name, r.NominalQuota)}
				if r.BorrowingLimit != nil {
					v := BaseUnits(r.Name, *r.BorrowingLimit)
					rq.BorrowingLimit = &v
				}
				if r.LendingLimit != nil {
					v := BaseUnits(r.Name, *r.LendingLimit)
					rq.LendingLimit = &v
				}
				fq.Resources = append(fq.Resources, rq)
			}
			out = append(out, fq)
			order = append(order, string(f.Name))
		}
	}
	return out, order, nil
}

// weight reads a fairSharing weight (defaulted to 1 by the CRD).
func weight(fs *kueue.FairSharing) *allot.QueueFairSharing {
	if fs == nil || fs.Weight == nil {
		return nil
	}
	w := fs.Weight.AsApproximateFloat64()
	return &allot.QueueFairSharing{Weight: &w}
}

// CohortNames are the Cohort objects' names and the names ClusterQueues
// and Cohorts name without an object: Kueue makes such a cohort
// implicitly, with no quota of its own.
func (c *Config) CohortNames() []string {
	names := map[string]bool{}
	for name, co := range c.cohorts {
		names[name] = true
		if p := co.Spec.ParentName; p != "" {
			names[string(p)] = true
		}
	}
	for _, cq := range c.clusterQueues {
		if cq.Spec.CohortName != "" {
			names[string(cq.Spec.CohortName)] = true
		}
	}
	return sortedKeys(names)
}

// Cohort returns a cohort's description: a Cohort object's, or the
// implicit cohort a ClusterQueue or Cohort names.
func (c *Config) Cohort(name string) (allot.Cohort, []Warning, error) {
	co, ok := c.cohorts[name]
	if !ok {
		return allot.Cohort{Name: name}, nil, nil
	}
	obj := objectName("Cohort", "", name)
	q, _, err := c.quota(obj, co.Spec.ResourceGroups)
	if err != nil {
		return allot.Cohort{}, nil, err
	}
	q, warns := c.knownFlavors(obj, q)
	return allot.Cohort{Name: name, Parent: string(co.Spec.ParentName), Quota: q, FairSharing: weight(co.Spec.FairSharing)}, warns, nil
}

// knownFlavors drops the quota of flavors without a ResourceFlavor, with a
// warning each.
func (c *Config) knownFlavors(obj string, q []allot.FlavorQuota) ([]allot.FlavorQuota, []Warning) {
	var warns []Warning
	out := q[:0:0]
	for i, fq := range q {
		if _, ok := c.flavors[fq.Flavor]; !ok {
			warns = append(warns, Warning{Object: obj, Field: fmt.Sprintf("spec.resourceGroups[0].flavors[%d].name", i),
				Message: fmt.Sprintf("ResourceFlavor %q not found: its quota is left out", fq.Flavor)})
			continue
		}
		out = append(out, fq)
	}
	return out, warns
}

// ClusterQueueNames are the ClusterQueues' names, sorted.
func (c *Config) ClusterQueueNames() []string { return sortedKeys(c.clusterQueues) }

// HasClusterQueue reports whether a ClusterQueue of the name was read.
func (c *Config) HasClusterQueue(name string) bool {
	_, ok := c.clusterQueues[name]
	return ok
}

// Queue returns a ClusterQueue's description. A ClusterQueue Kueue keeps
// inactive (a flavor or a flavor's Topology not found) is held, with a
// warning: Kueue admits nothing through it.
func (c *Config) Queue(name string) (allot.Queue, []Warning, error) {
	cq, ok := c.clusterQueues[name]
	if !ok {
		return allot.Queue{}, nil, fmt.Errorf("kueueconfig: no ClusterQueue %q", name)
	}
	obj := objectName("ClusterQueue", "", name)
	var warns []Warning
	w := func(f, format string, args ...any) {
		warns = append(warns, Warning{Object: obj, Field: f, Message: fmt.Sprintf(format, args...)})
	}
	s := &cq.Spec
	q := allot.Queue{Name: name, Cohort: string(s.CohortName), QueueingStrategy: string(s.QueueingStrategy)}
	quota, order, err := c.quota(obj, s.ResourceGroups)
	if err != nil {
		return allot.Queue{}, nil, err
	}
	for i, f := range order {
		rf, ok := c.flavors[f]
		switch {
		case !ok:
			w(fmt.Sprintf("spec.resourceGroups[0].flavors[%d].name", i), "ResourceFlavor %q not found: Kueue keeps the ClusterQueue inactive (FlavorNotFound); held", f)
			q.Hold = true
		case isTAS(rf):
			if _, ok := c.topologies[string(*rf.Spec.TopologyName)]; !ok {
				w(fmt.Sprintf("spec.resourceGroups[0].flavors[%d].name", i), "the Topology %q of ResourceFlavor %q not found: Kueue keeps the ClusterQueue inactive (TopologyNotFound); held", *rf.Spec.TopologyName, f)
				q.Hold = true
			}
		}
	}
	quota, _ = c.knownFlavors(obj, quota)
	q.Quota = quota
	for _, fq := range quota {
		q.FlavorOrder = append(q.FlavorOrder, fq.Flavor)
	}
	if ff := s.FlavorFungibility; ff != nil {
		q.FlavorFungibility = allot.FlavorFungibility{WhenCanBorrow: string(ff.WhenCanBorrow), WhenCanPreempt: string(ff.WhenCanPreempt)}
		if ff.Preference != nil && *ff.Preference != kueue.BorrowingOverPreemption {
			w("spec.flavorFungibility.preference", "%s not modelled: allot prefers borrowing over preemption (BorrowingOverPreemption)", *ff.Preference)
		}
	}
	if p := s.Preemption; p != nil {
		q.Preemption = allot.QueuePreemption{WithinQueue: string(p.WithinClusterQueue), ReclaimWithinCohort: string(p.ReclaimWithinCohort)}
		if b := p.BorrowWithinCohort; b != nil {
			q.Preemption.BorrowWithinCohort = allot.BorrowWithinCohort{Policy: string(b.Policy), MaxPriorityThreshold: b.MaxPriorityThreshold}
		}
	}
	q.FairSharing = weight(s.FairSharing)
	if s.StopPolicy != nil {
		switch *s.StopPolicy {
		case kueue.Hold:
			q.Hold = true
		case kueue.HoldAndDrain:
			q.Hold = true
			w("spec.stopPolicy", "HoldAndDrain: held; allot does not evict the admitted workloads Kueue drains (they stay running)")
		}
	}
	if acs := s.AdmissionChecksStrategy; acs != nil && len(acs.AdmissionChecks) > 0 {
		w("spec.admissionChecksStrategy", "not modelled: admission checks are not run; a workload counts as admitted once its quota is reserved")
	}
	if as := s.AdmissionScope; as != nil && as.AdmissionMode == kueue.UsageBasedAdmissionFairSharing {
		w("spec.admissionScope", "UsageBasedAdmissionFairSharing not modelled: the LocalQueues' usage does not order admission")
	}
	sel, tw, err := c.namespaceSelector(obj, s.NamespaceSelector)
	if err != nil {
		return allot.Queue{}, nil, err
	}
	q.NamespaceSelector = sel
	warns = append(warns, tw...)
	return q, warns, nil
}

// namespaceSelector is a ClusterQueue's namespaceSelector as allot's
// (the snapshot's namespaces carry their labels; a request's tenant is its
// namespace). Kueue's nil selects no namespace: allot's selector
// kubernetes.io/metadata.name DoesNotExist, which no namespace matches.
// Kueue's {} selects every namespace: allot's nil, which admits any
// tenant, those not read too. A selector that selects none of the
// namespaces read is kept, with a warning.
func (c *Config) namespaceSelector(obj string, sel *metav1.LabelSelector) (*labels.Selector, []Warning, error) {
	if sel == nil {
		return &labels.Selector{MatchExpressions: []labels.Requirement{{Key: corev1.LabelMetadataName, Operator: labels.DoesNotExist}}},
			[]Warning{{Object: obj, Field: "spec.namespaceSelector", Message: "not set: Kueue admits workloads from no namespace"}}, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, nil, c.fieldErr(obj, ErrInvalid, field.Invalid(field.NewPath("spec", "namespaceSelector"), sel.String(), err.Error()))
	}
	if s.Empty() {
		return nil, nil, nil
	}
	out := &labels.Selector{MatchLabels: maps.Clone(sel.MatchLabels)}
	for _, r := range sel.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, labels.Requirement{Key: r.Key, Operator: labels.Operator(r.Operator), Values: slices.Clone(r.Values)})
	}
	if !c.selectsSome(out) {
		return out, []Warning{{Object: obj, Field: "spec.namespaceSelector",
			Message: fmt.Sprintf("%s selects none of the %d namespaces read: nothing is admitted until one matches", s, len(c.namespaces))}}, nil
	}
	return out, nil, nil
}

// selectsSome tells whether a selector selects one of the namespaces read.
// A selector with matchLabels reads only the namespaces with its first
// label (through an index of the namespaces by label, made once until a
// namespace changes), so that a thousand ClusterQueues over a thousand
// namespaces are not a million matches.
func (c *Config) selectsSome(sel *labels.Selector) bool {
	names := c.namespaceNames()
	if len(sel.MatchLabels) > 0 {
		k := slices.Min(slices.Collect(maps.Keys(sel.MatchLabels)))
		if c.nsByLabel == nil {
			c.nsByLabel = map[string][]string{}
			for _, name := range names {
				for lk, lv := range c.namespaceLabels(name) {
					c.nsByLabel[lk+"="+lv] = append(c.nsByLabel[lk+"="+lv], name)
				}
			}
		}
		names = c.nsByLabel[k+"="+sel.MatchLabels[k]]
	}
	for _, name := range names {
		if sel.Matches(c.namespaceLabels(name)) {
			return true
		}
	}
	return false
}

// namespaceLabels are a namespace's labels as a selector judges them, with
// kubernetes.io/metadata.name, which Kubernetes sets on every namespace.
func (c *Config) namespaceLabels(name string) map[string]string {
	ls := c.namespaces[name].Labels
	if ls[corev1.LabelMetadataName] == name {
		return ls
	}
	out := maps.Clone(ls)
	if out == nil {
		out = map[string]string{}
	}
	out[corev1.LabelMetadataName] = name
	return out
}

// Namespaces are the namespaces read, by name, with their labels: the
// snapshot's tenants.
func (c *Config) Namespaces() []allot.Namespace {
	var out []allot.Namespace
	for _, name := range c.namespaceNames() {
		ns, _ := c.Namespace(name)
		out = append(out, ns)
	}
	return out
}

// NamespaceCount is how many namespaces were read.
func (c *Config) NamespaceCount() int { return len(c.namespaces) }

// LocalQueues are the LocalQueues read that allot can hold, by namespace
// then name: those whose namespace and ClusterQueue were read (Kueue keeps
// one whose ClusterQueue is missing, and admits nothing through it; a
// request through it is refused as Kueue's is, its queue not found).
func (c *Config) LocalQueues() []allot.LocalQueue {
	var out []allot.LocalQueue
	for _, key := range sortedKeys(c.localQueues) {
		if lq, ok := c.localQueue(c.localQueues[key]); ok {
			out = append(out, lq)
		}
	}
	return out
}

// LocalQueue is the local queue of a namespace and name as LocalQueues
// lists it, false when it does not (not read, or its namespace or
// ClusterQueue not read).
func (c *Config) LocalQueue(namespace, name string) (allot.LocalQueue, bool) {
	lq, ok := c.localQueues[namespace+"/"+name]
	if !ok {
		return allot.LocalQueue{}, false
	}
	return c.localQueue(lq)
}

// localQueue is a LocalQueue read as the store has it, false while its
// namespace or ClusterQueue is not read.
func (c *Config) localQueue(lq *kueue.LocalQueue) (allot.LocalQueue, bool) {
	_, ns := c.namespaces[lq.Namespace]
	_, cq := c.clusterQueues[string(lq.Spec.ClusterQueue)]
	if !ns || !cq {
		return allot.LocalQueue{}, false
	}
	return allot.LocalQueue{Namespace: lq.Namespace, Name: lq.Name, ClusterQueue: string(lq.Spec.ClusterQueue)}, true
}

// LocalQueuesIn yields the names of the LocalQueues read in a namespace,
// in no order.
func (c *Config) LocalQueuesIn(namespace string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, lq := range c.localQueues {
			if lq.Namespace == namespace && !yield(lq.Name) {
				return
			}
		}
	}
}

// Namespace is a namespace as Namespaces lists it, false when it was not
// read.
func (c *Config) Namespace(name string) (allot.Namespace, bool) {
	ns, ok := c.namespaces[name]
	if !ok {
		return allot.Namespace{}, false
	}
	return allot.Namespace{Name: name, Labels: maps.Clone(ns.Labels)}, true
}

// namespaceNames are the namespaces' names in order, kept between calls
// until a namespace is added: every ClusterQueue's selector reads them.
func (c *Config) namespaceNames() []string {
	if len(c.nsNames) != len(c.namespaces) {
		c.nsNames = sortedKeys(c.namespaces)
	}
	return c.nsNames
}
