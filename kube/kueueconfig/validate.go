// Kueue's validation, applied on import: every rule of Kueue's CRDs (their
// OpenAPI schemas and CEL x-kubernetes-validations) and of its validating
// webhooks that can refuse an object when it is created, with Kueue's
// messages and field paths. The API server checks the CRD's schema first
// and calls the webhook only for an object that passes, so Validate
// reports the webhook's errors only when the CRD's rules pass.
//
// Rules that compare an object with its previous version (the CEL
// transition rules: "field is immutable", "nodeLabels are immutable when
// topologyName is set", the Workload's "... is immutable while workload
// quota reserved") cannot refuse a create and are not applied; nor are
// the rules on a Workload's status, which the API server drops when an
// object is created (status is a subresource).

package kueueconfig

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// The patterns of Kueue's CRD schemas.
var (
	// A reference to a cluster-scoped Kueue object (a DNS subdomain).
	referencePattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	referenceRE      = regexp.MustCompile(referencePattern)
	// A Topology level's node label.
	nodeLabelPattern = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	nodeLabelRE      = regexp.MustCompile(nodeLabelPattern)
	// A pod set's name (a DNS label).
	podSetNamePattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	podSetNameRE      = regexp.MustCompile(podSetNamePattern)
)

// The messages of Kueue's webhooks.
const (
	limitIsEmptyErrorMsgTemplate = `must be nil when %s is empty`
	lendingLimitErrorMsg         = `must be less than or equal to the nominalQuota`
)

// Validate applies Kueue's validation to a Kueue object (*kueue.ClusterQueue,
// *kueue.Cohort, *kueue.ResourceFlavor, *kueue.LocalQueue, *kueue.Topology,
// *kueue.WorkloadPriorityClass, *kueue.Workload) written in apiVersion
// version; any other object has no Kueue rules and passes. The object is
// expected defaulted, as Decode leaves it.
func Validate(o Object) field.ErrorList {
	errs := append(field.ErrorList(nil), o.schemaErrs...)
	errs = append(errs, crdRules(o.Value, o.Version)...)
	if len(errs) > 0 {
		return errs
	}
	return webhookRules(o.Value)
}

func crdRules(v any, version string) field.ErrorList {
	switch o := v.(type) {
	case *kueue.ClusterQueue:
		return clusterQueueCRD(o)
	case *kueue.Cohort:
		return cohortCRD(o)
	case *kueue.ResourceFlavor:
		return resourceFlavorCRD(o)
	case *kueue.LocalQueue:
		return localQueueCRD(o)
	case *kueue.Topology:
		return topologyCRD(o)
	case *kueue.WorkloadPriorityClass:
		return workloadPriorityClassCRD(o)
	case *kueue.Workload:
		return workloadCRD(o, version)
	}
	return nil
}

func webhookRules(v any) field.ErrorList {
	switch o := v.(type) {
	case *kueue.ClusterQueue:
		return clusterQueueWebhook(o)
	case *kueue.Cohort:
		return cohortWebhook(o)
	case *kueue.ResourceFlavor:
		return resourceFlavorWebhook(o)
	case *kueue.Workload:
		return workloadWebhook(o)
	}
	return nil
}

// --- helpers for the schema's rules, written as the API server writes them.

// cel is a failed CEL rule: the API server names the rule's field, the
// type of the value and the rule's message.
func cel(p *field.Path, typ, msg string) *field.Error { return field.Invalid(p, typ, msg) }

func enum[T ~string](errs *field.ErrorList, p *field.Path, v T, allowed ...T) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	s := make([]string, len(allowed))
	for i, a := range allowed {
		s[i] = string(a)
	}
	*errs = append(*errs, field.NotSupported(p, string(v), s))
}

func pattern(errs *field.ErrorList, p *field.Path, v string, re *regexp.Regexp, pat string) {
	if !re.MatchString(v) {
		*errs = append(*errs, field.Invalid(p, v, fmt.Sprintf("%s in body should match '%s'", p, pat)))
	}
}

func maxLength(errs *field.ErrorList, p *field.Path, v string, n int) {
	if len(v) > n {
		*errs = append(*errs, field.TooLong(p, v, n))
	}
}

func reference[T ~string](errs *field.ErrorList, p *field.Path, v T) {
	if v == "" {
		return
	}
	maxLength(errs, p, string(v), 253)
	pattern(errs, p, string(v), referenceRE, referencePattern)
}

func items(errs *field.ErrorList, p *field.Path, n, lo, hi int) {
	switch {
	case n > hi:
		*errs = append(*errs, field.TooMany(p, n, hi))
	case n < lo:
		*errs = append(*errs, field.Invalid(p, n, fmt.Sprintf("%s in body should have at least %d items", p, lo)))
	}
}

// --- ClusterQueue and Cohort

func clusterQueueCRD(cq *kueue.ClusterQueue) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	s := &cq.Spec
	reference(&errs, spec.Child("cohortName"), s.CohortName)
	enum(&errs, spec.Child("queueingStrategy"), s.QueueingStrategy, kueue.StrictFIFO, kueue.BestEffortFIFO)
	if s.StopPolicy != nil {
		enum(&errs, spec.Child("stopPolicy"), *s.StopPolicy, kueue.None, kueue.Hold, kueue.HoldAndDrain)
	}
	if ff := s.FlavorFungibility; ff != nil {
		p := spec.Child("flavorFungibility")
		enum(&errs, p.Child("whenCanBorrow"), ff.WhenCanBorrow, kueue.MayStopSearch, kueue.TryNextFlavor)
		enum(&errs, p.Child("whenCanPreempt"), ff.WhenCanPreempt, kueue.MayStopSearch, kueue.TryNextFlavor)
		if ff.Preference != nil {
			enum(&errs, p.Child("preference"), *ff.Preference, kueue.BorrowingOverPreemption, kueue.PreemptionOverBorrowing)
			if ff.WhenCanBorrow != kueue.TryNextFlavor || ff.WhenCanPreempt != kueue.TryNextFlavor {
				errs = append(errs, cel(p, "object", "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor"))
			}
		}
	}
	if pr := s.Preemption; pr != nil {
		p := spec.Child("preemption")
		enum(&errs, p.Child("reclaimWithinCohort"), pr.ReclaimWithinCohort, kueue.PreemptionPolicyNever, kueue.PreemptionPolicyLowerPriority, kueue.PreemptionPolicyAny)
		enum(&errs, p.Child("withinClusterQueue"), pr.WithinClusterQueue, kueue.PreemptionPolicyNever, kueue.PreemptionPolicyLowerPriority, kueue.PreemptionPolicyLowerOrNewerEqualPriority)
		if b := pr.BorrowWithinCohort; b != nil {
			enum(&errs, p.Child("borrowWithinCohort", "policy"), b.Policy, kueue.BorrowWithinCohortPolicyNever, kueue.BorrowWithinCohortPolicyLowerPriority)
		}
		if pr.ReclaimWithinCohort == kueue.PreemptionPolicyNever && pr.BorrowWithinCohort != nil && pr.BorrowWithinCohort.Policy != kueue.BorrowWithinCohortPolicyNever {
			errs = append(errs, cel(p, "object", "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"))
		}
	}
	if as := s.AdmissionScope; as != nil {
		p := spec.Child("admissionScope", "admissionMode")
		if as.AdmissionMode == "" {
			errs = append(errs, field.Required(p, ""))
		} else {
			enum(&errs, p, as.AdmissionMode, kueue.UsageBasedAdmissionFairSharing, kueue.NoAdmissionFairSharing)
		}
	}
	if acs := s.AdmissionChecksStrategy; acs != nil {
		p := spec.Child("admissionChecksStrategy", "admissionChecks")
		if acs.AdmissionChecks == nil {
			errs = append(errs, field.Required(p, ""))
		} else {
			items(&errs, p, len(acs.AdmissionChecks), 1, 64)
		}
		seen := sets.New[kueue.AdmissionCheckReference]()
		for i, r := range acs.AdmissionChecks {
			rp := p.Index(i)
			switch {
			case r.Name == "":
				errs = append(errs, field.Required(rp.Child("name"), ""))
			case len(r.Name) > 316:
				errs = append(errs, field.TooLong(rp.Child("name"), r.Name, 316))
			case seen.Has(r.Name):
				errs = append(errs, field.Duplicate(rp, map[string]any{"name": string(r.Name)}))
			}
			seen.Insert(r.Name)
			items(&errs, rp.Child("onFlavors"), len(r.OnFlavors), 0, 64)
			for j, f := range r.OnFlavors {
				reference(&errs, rp.Child("onFlavors").Index(j), f)
			}
		}
	}
	errs = append(errs, resourceGroupsCRD(s.ResourceGroups, spec.Child("resourceGroups"))...)
	if s.CohortName == "" && len(s.ResourceGroups) > 0 && anyBorrowingLimit(s.ResourceGroups) {
		errs = append(errs, cel(spec, "object", "borrowingLimit must be nil when cohort is empty"))
	}
	return errs
}

func anyBorrowingLimit(rgs []kueue.ResourceGroup) bool {
	for _, rg := range rgs {
		for _, f := range rg.Flavors {
			for _, r := range f.Resources {
				if r.BorrowingLimit != nil {
					return true
				}
			}
		}
	}
	return false
}

// resourceGroupsCRD is the schema of resourceGroups, shared by ClusterQueue
// and Cohort.
func resourceGroupsCRD(rgs []kueue.ResourceGroup, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	items(&errs, p, len(rgs), 0, 16)
	for i, rg := range rgs {
		rp := p.Index(i)
		if rg.CoveredResources == nil {
			errs = append(errs, field.Required(rp.Child("coveredResources"), ""))
		} else {
			items(&errs, rp.Child("coveredResources"), len(rg.CoveredResources), 1, 64)
		}
		if rg.Flavors == nil {
			errs = append(errs, field.Required(rp.Child("flavors"), ""))
		} else {
			items(&errs, rp.Child("flavors"), len(rg.Flavors), 1, 64)
		}
		flavors := sets.New[kueue.ResourceFlavorReference]()
		for j, f := range rg.Flavors {
			fp := rp.Child("flavors").Index(j)
			if f.Name == "" {
				errs = append(errs, field.Required(fp.Child("name"), ""))
			} else {
				reference(&errs, fp.Child("name"), f.Name)
				if flavors.Has(f.Name) {
					errs = append(errs, field.Duplicate(fp, map[string]any{"name": string(f.Name)}))
				}
				flavors.Insert(f.Name)
			}
			if f.Resources == nil {
				errs = append(errs, field.Required(fp.Child("resources"), ""))
			} else {
				items(&errs, fp.Child("resources"), len(f.Resources), 1, 64)
			}
			names := sets.New[corev1.ResourceName]()
			for k, r := range f.Resources {
				if r.Name == "" {
					errs = append(errs, field.Required(fp.Child("resources").Index(k).Child("name"), ""))
					continue
				}
				if names.Has(r.Name) {
					errs = append(errs, field.Duplicate(fp.Child("resources").Index(k), map[string]any{"name": string(r.Name)}))
				}
				names.Insert(r.Name)
			}
		}
		for _, f := range rg.Flavors {
			if len(f.Resources) != len(rg.CoveredResources) {
				errs = append(errs, cel(rp, "object", "flavors must have the same number of resources as the coveredResources"))
				break
			}
		}
	}
	return errs
}

// validationConfig is the webhook's: whether the object has a parent
// (a ClusterQueue's cohort, a Cohort's parent) and whether a lending
// limit may exceed the nominal quota.
type validationConfig struct {
	hasParent                        bool
	enforceNominalGreaterThanLending bool
}

func clusterQueueWebhook(cq *kueue.ClusterQueue) field.ErrorList {
	path := field.NewPath("spec")
	config := validationConfig{hasParent: cq.Spec.CohortName != "", enforceNominalGreaterThanLending: true}
	var errs field.ErrorList
	errs = append(errs, webhookResourceGroups(cq.Spec.ResourceGroups, config, path.Child("resourceGroups"), false)...)
	errs = append(errs, metavalidation.ValidateLabelSelector(cq.Spec.NamespaceSelector, metavalidation.LabelSelectorValidationOptions{}, path.Child("namespaceSelector"))...)
	if pr := cq.Spec.Preemption; pr != nil && pr.ReclaimWithinCohort == kueue.PreemptionPolicyNever &&
		pr.BorrowWithinCohort != nil && pr.BorrowWithinCohort.Policy != kueue.BorrowWithinCohortPolicyNever {
		errs = append(errs, field.Invalid(path.Child("preemption"), pr, "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"))
	}
	if ff := cq.Spec.FlavorFungibility; ff != nil && ff.Preference != nil &&
		(ff.WhenCanBorrow != kueue.TryNextFlavor || ff.WhenCanPreempt != kueue.TryNextFlavor) {
		errs = append(errs, field.Invalid(path.Child("flavorFungibility", "preference"), *ff.Preference,
			fmt.Sprintf("preference %q requires both whenCanBorrow and whenCanPreempt to be TryNextFlavor", *ff.Preference)))
	}
	errs = append(errs, webhookFairSharing(cq.Spec.FairSharing, path.Child("fairSharing"))...)
	rgp := path.Child("resourceGroups")
	flavors, covered := 0, 0
	for i, rg := range cq.Spec.ResourceGroups {
		flavors += len(rg.Flavors)
		covered += len(rg.CoveredResources)
		combos := 0
		for _, f := range rg.Flavors {
			combos += len(f.Resources)
		}
		if combos > 512 {
			errs = append(errs, field.Invalid(rgp.Index(i), combos, fmt.Sprintf("number of flavor-resource combinations in a resourceGroup must be ≤ 512, got %d", combos)))
		}
	}
	if flavors > 256 {
		errs = append(errs, field.Invalid(rgp, flavors, fmt.Sprintf("total number of flavors across all resourceGroups must be ≤ 256, got %d", flavors)))
	}
	if covered > 256 {
		errs = append(errs, field.Invalid(rgp, covered, fmt.Sprintf("total number of covered resources across all resourceGroups must be ≤ 256, got %d", covered)))
	}
	return errs
}

func webhookResourceGroups(rgs []kueue.ResourceGroup, config validationConfig, path *field.Path, isCohort bool) field.ErrorList {
	var errs field.ErrorList
	seenResources := sets.New[corev1.ResourceName]()
	seenFlavors := sets.New[kueue.ResourceFlavorReference]()
	for i, rg := range rgs {
		path := path.Index(i)
		for j, name := range rg.CoveredResources {
			path := path.Child("coveredResources").Index(j)
			for _, msg := range content.IsLabelKey(string(name)) {
				errs = append(errs, field.Invalid(path, name, msg))
			}
			if seenResources.Has(name) {
				errs = append(errs, field.Duplicate(path, name))
			} else {
				seenResources.Insert(name)
			}
		}
		for j, fqs := range rg.Flavors {
			path := path.Child("flavors").Index(j)
			errs = append(errs, webhookFlavorQuotas(fqs, rg.CoveredResources, config, path, isCohort)...)
			if seenFlavors.Has(fqs.Name) {
				errs = append(errs, field.Duplicate(path.Child("name"), fqs.Name))
			} else {
				seenFlavors.Insert(fqs.Name)
			}
		}
	}
	return errs
}

func webhookFlavorQuotas(fq kueue.FlavorQuotas, covered []corev1.ResourceName, config validationConfig, path *field.Path, isCohort bool) field.ErrorList {
	var errs field.ErrorList
	for i, rq := range fq.Resources {
		if i >= len(covered) {
			break
		}
		path := path.Child("resources").Index(i)
		if rq.Name != covered[i] {
			errs = append(errs, field.Invalid(path.Child("name"), rq.Name, "must match the name in coveredResources"))
		}
		errs = append(errs, nonNegative(rq.NominalQuota, path.Child("nominalQuota"))...)
		if rq.BorrowingLimit != nil {
			p := path.Child("borrowingLimit")
			errs = append(errs, limitNeedsParent(*rq.BorrowingLimit, config, p, isCohort)...)
			errs = append(errs, nonNegative(*rq.BorrowingLimit, p)...)
		}
		if rq.LendingLimit != nil {
			p := path.Child("lendingLimit")
			errs = append(errs, nonNegative(*rq.LendingLimit, p)...)
			errs = append(errs, limitNeedsParent(*rq.LendingLimit, config, p, isCohort)...)
			if config.enforceNominalGreaterThanLending && rq.LendingLimit.Cmp(rq.NominalQuota) > 0 {
				errs = append(errs, field.Invalid(p, rq.LendingLimit.String(), lendingLimitErrorMsg))
			}
		}
	}
	return errs
}

func nonNegative(q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(p, q.String(), "must be greater than or equal to 0")}
	}
	return nil
}

func limitNeedsParent(limit resource.Quantity, config validationConfig, p *field.Path, isCohort bool) field.ErrorList {
	if config.hasParent {
		return nil
	}
	what := "cohort"
	if isCohort {
		what = "parent"
	}
	return field.ErrorList{field.Invalid(p, limit.String(), fmt.Sprintf(limitIsEmptyErrorMsgTemplate, what))}
}

func webhookFairSharing(fs *kueue.FairSharing, p *field.Path) field.ErrorList {
	if fs == nil || fs.Weight == nil {
		return nil
	}
	var errs field.ErrorList
	if fs.Weight.Sign() < 0 {
		errs = append(errs, field.Invalid(p, fs.Weight.String(), "must be greater than or equal to 0"))
	}
	if fs.Weight.Sign() > 0 && fs.Weight.Cmp(resource.MustParse("1n")) <= 0 {
		errs = append(errs, field.Invalid(p, fs.Weight.String(), "When not 0, weight must be > 10e-9"))
	}
	return errs
}

func cohortCRD(c *kueue.Cohort) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	reference(&errs, spec.Child("parentName"), c.Spec.ParentName)
	return append(errs, resourceGroupsCRD(c.Spec.ResourceGroups, spec.Child("resourceGroups"))...)
}

func cohortWebhook(c *kueue.Cohort) field.ErrorList {
	path := field.NewPath("spec")
	config := validationConfig{hasParent: c.Spec.ParentName != ""}
	errs := webhookFairSharing(c.Spec.FairSharing, path.Child("fairSharing"))
	return append(errs, webhookResourceGroups(c.Spec.ResourceGroups, config, path.Child("resourceGroups"), true)...)
}

// --- ResourceFlavor

var taintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

func resourceFlavorCRD(rf *kueue.ResourceFlavor) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	s := &rf.Spec
	if len(s.NodeLabels) > 8 {
		errs = append(errs, field.TooMany(spec.Child("nodeLabels"), len(s.NodeLabels), 8))
	}
	items(&errs, spec.Child("nodeTaints"), len(s.NodeTaints), 0, 8)
	items(&errs, spec.Child("tolerations"), len(s.Tolerations), 0, 8)
	if s.TopologyName != nil {
		reference(&errs, spec.Child("topologyName"), *s.TopologyName)
		if len(s.NodeLabels) < 1 {
			errs = append(errs, cel(spec, "object", "at least one nodeLabel is required when topology is set"))
		}
	}
	taints := spec.Child("nodeTaints")
	for i, t := range s.NodeTaints {
		if t.Key == "" {
			errs = append(errs, field.Required(taints.Index(i).Child("key"), ""))
		}
		if t.Effect == "" {
			errs = append(errs, field.Required(taints.Index(i).Child("effect"), ""))
		}
	}
	for _, t := range s.NodeTaints {
		if !inEffects(t.Effect) {
			errs = append(errs, cel(taints, "array", "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"))
			break
		}
	}
	errs = append(errs, tolerationRules(s.Tolerations, spec.Child("tolerations"))...)
	return errs
}

func inEffects(e corev1.TaintEffect) bool {
	for _, a := range taintEffects {
		if e == a {
			return true
		}
	}
	return false
}

// tolerationRules are the five CEL rules of a ResourceFlavor's
// tolerations, each judged over the whole list as CEL's all() is.
func tolerationRules(ts []corev1.Toleration, p *field.Path) field.ErrorList {
	rules := []struct {
		ok  func(corev1.Toleration) bool
		msg string
	}{
		{func(t corev1.Toleration) bool { return t.Key != "" || t.Operator == corev1.TolerationOpExists },
			"operator must be Exists when 'key' is empty, which means 'match all values and all keys'"},
		{func(t corev1.Toleration) bool {
			return t.TolerationSeconds == nil || t.Effect == corev1.TaintEffectNoExecute
		},
			"effect must be 'NoExecute' when 'tolerationSeconds' is set"},
		{func(t corev1.Toleration) bool {
			return t.Operator == "" || t.Operator == corev1.TolerationOpEqual || t.Operator == corev1.TolerationOpExists
		}, "supported toleration values: 'Equal'(default), 'Exists'"},
		{func(t corev1.Toleration) bool { return t.Operator != corev1.TolerationOpExists || t.Value == "" },
			"a value must be empty when 'operator' is 'Exists'"},
		{func(t corev1.Toleration) bool { return t.Effect == "" || inEffects(t.Effect) },
			"supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"},
	}
	var errs field.ErrorList
	for _, r := range rules {
		for _, t := range ts {
			if !r.ok(t) {
				errs = append(errs, cel(p, "array", r.msg))
				break
			}
		}
	}
	return errs
}

func resourceFlavorWebhook(rf *kueue.ResourceFlavor) field.ErrorList {
	spec := field.NewPath("spec")
	errs := metavalidation.ValidateLabels(rf.Spec.NodeLabels, spec.Child("nodeLabels"))
	unique := map[corev1.TaintEffect]sets.Set[string]{}
	for i, t := range rf.Spec.NodeTaints {
		p := spec.Child("nodeTaints").Index(i)
		errs = append(errs, metavalidation.ValidateLabelName(t.Key, p.Child("key"))...)
		if msgs := content.IsLabelValue(t.Value); len(msgs) != 0 {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, strings.Join(msgs, ";")))
		}
		if unique[t.Effect].Has(t.Key) {
			dup := field.Duplicate(p, t)
			dup.Detail = "taints must be unique by key and effect pair"
			errs = append(errs, dup)
			continue
		}
		if unique[t.Effect] == nil {
			unique[t.Effect] = sets.New[string]()
		}
		unique[t.Effect].Insert(t.Key)
	}
	for i, t := range rf.Spec.Tolerations {
		if t.Key != "" {
			errs = append(errs, metavalidation.ValidateLabelName(t.Key, spec.Child("tolerations").Index(i).Child("key"))...)
		}
	}
	return errs
}

// --- LocalQueue, Topology, WorkloadPriorityClass

func localQueueCRD(lq *kueue.LocalQueue) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	reference(&errs, spec.Child("clusterQueue"), lq.Spec.ClusterQueue)
	if lq.Spec.StopPolicy != nil {
		enum(&errs, spec.Child("stopPolicy"), *lq.Spec.StopPolicy, kueue.None, kueue.Hold, kueue.HoldAndDrain)
	}
	return errs
}

func topologyCRD(t *kueue.Topology) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "levels")
	if t.Spec.Levels == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	items(&errs, p, len(t.Spec.Levels), 1, 16)
	for i, l := range t.Spec.Levels {
		lp := p.Index(i).Child("nodeLabel")
		switch {
		case l.NodeLabel == "":
			errs = append(errs, field.Required(lp, ""))
		case len(l.NodeLabel) > 316:
			errs = append(errs, field.TooLong(lp, l.NodeLabel, 316))
		default:
			pattern(&errs, lp, l.NodeLabel, nodeLabelRE, nodeLabelPattern)
		}
	}
	seen := sets.New[string]()
	for _, l := range t.Spec.Levels {
		if seen.Has(l.NodeLabel) {
			errs = append(errs, cel(p, "array", "must be unique"))
			break
		}
		seen.Insert(l.NodeLabel)
	}
	for i, l := range t.Spec.Levels {
		if l.NodeLabel == corev1.LabelHostname && i != len(t.Spec.Levels)-1 {
			errs = append(errs, cel(p, "array", "the kubernetes.io/hostname label can only be used at the lowest level of topology"))
			break
		}
	}
	return errs
}

func workloadPriorityClassCRD(w *kueue.WorkloadPriorityClass) field.ErrorList {
	var errs field.ErrorList
	maxLength(&errs, field.NewPath("description"), w.Description, 2048)
	return errs
}

// --- Workload

// The paths of a Workload's spec, built once (a path is immutable): the
// guard validates a Workload for every job it decides.
var (
	workloadSpec    = field.NewPath("spec")
	workloadPodSets = workloadSpec.Child("podSets")
)

func workloadCRD(w *kueue.Workload, version string) field.ErrorList {
	var errs field.ErrorList
	spec := workloadSpec
	s := &w.Spec
	items(&errs, workloadPodSets, len(s.PodSets), 1, 8)
	for i := range s.PodSets {
		ps := &s.PodSets[i]
		p := workloadPodSets.Index(i)
		name := p.Child("name")
		maxLength(&errs, name, string(ps.Name), 63)
		pattern(&errs, name, string(ps.Name), podSetNameRE, podSetNamePattern)
		if ps.Count < 0 {
			errs = append(errs, field.Invalid(p.Child("count"), ps.Count, fmt.Sprintf("%s in body should be greater than or equal to 0", p.Child("count"))))
		}
		if ps.MinCount != nil {
			if *ps.MinCount < 1 {
				errs = append(errs, field.Invalid(p.Child("minCount"), *ps.MinCount, fmt.Sprintf("%s in body should be greater than or equal to 1", p.Child("minCount"))))
			}
			if *ps.MinCount > ps.Count {
				errs = append(errs, cel(p, "object", "minCount should be positive and less or equal to count"))
			}
		}
	}
	if m := s.MaximumExecutionTimeSeconds; m != nil && *m < 1 {
		p := spec.Child("maximumExecutionTimeSeconds")
		errs = append(errs, field.Invalid(p, *m, fmt.Sprintf("%s in body should be greater than or equal to 1", p)))
	}
	if ref := s.PriorityClassRef; ref != nil {
		p := spec.Child("priorityClassRef")
		enum(&errs, p.Child("group"), ref.Group, kueue.WorkloadPriorityClassGroup, kueue.PodPriorityClassGroup)
		enum(&errs, p.Child("kind"), ref.Kind, kueue.WorkloadPriorityClassKind, kueue.PodPriorityClassKind)
		if ref.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			reference(&errs, p.Child("name"), ref.Name)
		}
		if ref.Group == kueue.PodPriorityClassGroup && ref.Kind != kueue.PodPriorityClassKind {
			errs = append(errs, cel(p, "object", "only the PriorityClass kind is allowed for the scheduling.k8s.io group"))
		}
		if ref.Group == kueue.WorkloadPriorityClassGroup && ref.Kind != kueue.WorkloadPriorityClassKind {
			errs = append(errs, cel(p, "object", "only the WorkloadPriorityClass kind is allowed for the kueue.x-k8s.io group"))
		}
		if s.Priority == nil {
			// v1beta1 names the reference by its priorityClassName.
			msg := "priority should not be nil when priorityClassRef is set"
			if version == "kueue.x-k8s.io/v1beta1" {
				msg = "priority should not be nil when priorityClassName is set"
			}
			errs = append(errs, cel(spec, "object", msg))
		}
	}
	return errs
}

func workloadWebhook(w *kueue.Workload) field.ErrorList {
	var errs field.ErrorList
	spec := workloadSpec
	variable := 0
	for i := range w.Spec.PodSets {
		ps := &w.Spec.PodSets[i]
		for _, c := range []struct {
			list []corev1.Container
			name string
		}{{ps.Template.Spec.InitContainers, "initContainers"}, {ps.Template.Spec.Containers, "containers"}} {
			for ci := range c.list {
				if _, ok := c.list[ci].Resources.Requests[corev1.ResourcePods]; ok {
					rp := workloadPodSets.Index(i).Child("template", "spec", c.name).Index(ci).Child("resources", "requests")
					errs = append(errs, field.Invalid(rp.Key(string(corev1.ResourcePods)), corev1.ResourcePods, "the key is reserved for internal kueue use"))
				}
			}
		}
		if ps.MinCount != nil {
			variable++
		}
	}
	if variable > 1 {
		errs = append(errs, field.Invalid(spec.Child("podSets"), variable, "at most one podSet can use minCount"))
	}
	return errs
}

// --- fields whose absence the typed objects cannot show

// rawSchema checks, on the object's JSON, the required fields and defaults
// that decode to a zero value indistinguishable from an absent one: a
// resource quota's nominalQuota, a WorkloadPriorityClass's value, a
// Workload pod set's count (default 1). It fills in the count's default.
func rawSchema(v any, js []byte) (field.ErrorList, error) {
	switch v.(type) {
	case *kueue.ClusterQueue, *kueue.Cohort, *kueue.WorkloadPriorityClass, *kueue.Workload:
	default:
		return nil, nil
	}
	var tree map[string]any
	if err := json.Unmarshal(js, &tree); err != nil {
		return nil, err
	}
	var errs field.ErrorList
	spec, _ := tree["spec"].(map[string]any)
	switch o := v.(type) {
	case *kueue.ClusterQueue, *kueue.Cohort:
		rgs, _ := spec["resourceGroups"].([]any)
		for i, rg := range rgs {
			fs, _ := asMap(rg)["flavors"].([]any)
			for j, f := range fs {
				rs, _ := asMap(f)["resources"].([]any)
				for k, r := range rs {
					if _, ok := asMap(r)["nominalQuota"]; !ok {
						errs = append(errs, field.Required(field.NewPath("spec", "resourceGroups").Index(i).Child("flavors").Index(j).Child("resources").Index(k).Child("nominalQuota"), ""))
					}
				}
			}
		}
	case *kueue.WorkloadPriorityClass:
		if _, ok := tree["value"]; !ok {
			errs = append(errs, field.Required(field.NewPath("value"), ""))
		}
	case *kueue.Workload:
		pss, _ := spec["podSets"].([]any)
		for i, ps := range pss {
			if _, ok := asMap(ps)["count"]; !ok && i < len(o.Spec.PodSets) {
				o.Spec.PodSets[i].Count = 1
			}
		}
	}
	return errs, nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
