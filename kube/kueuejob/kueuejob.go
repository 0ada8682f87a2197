package kueuejob

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// The annotations of Kueue's job framework read here.
const (
	JobMinParallelismAnnotation = "kueue.x-k8s.io/job-min-parallelism"
)

// ErrNoJob: the objects given hold no job to decide, or more than one.
var ErrNoJob = errors.New("kueuejob: no single job")

// A PodGroup is the pods of one Kueue pod group (the pods sharing a
// kueue.x-k8s.io/pod-group-name label in a namespace), or one plain pod.
type PodGroup []*corev1.Pod

// Request translates a job into the request Kueue would consider for it:
// Workload, then c.WorkloadRequest.
func Request(c *kueueconfig.Config, job any) (allot.Request, []kueueconfig.Warning, error) {
	// The Workload is read, never kept: it shares the job's pod
	// templates instead of copying them.
	wl, warns, err := workload(c, job)
	if err != nil {
		return allot.Request{}, nil, err
	}
	req, w, err := c.WorkloadRequest(wl)
	if err != nil {
		// Kueue's no is said of what the user submitted, not of the
		// Workload made for it.
		var inad *kueueconfig.InadmissibleError
		if errors.As(err, &inad) {
			if m, kind := jobMeta(job); m != nil {
				inad.Object = objectName(kind, m)
			}
		}
	}
	return req, append(warns, w...), err
}

// jobMeta is the metadata and kind of what was submitted.
func jobMeta(job any) (*metav1.ObjectMeta, string) {
	switch j := job.(type) {
	case *batchv1.Job:
		return &j.ObjectMeta, "Job"
	case *jobset.JobSet:
		return &j.ObjectMeta, "JobSet"
	case *rayv1.RayJob:
		return &j.ObjectMeta, "RayJob"
	case *kueue.Workload:
		return &j.ObjectMeta, "Workload"
	case PodGroup:
		if len(j) > 0 {
			return &j[0].ObjectMeta, "Pod"
		}
	}
	return nil, ""
}

// Workload builds the Kueue Workload of a *batchv1.Job, *jobset.JobSet,
// *rayv1.RayJob, *kueue.Workload (returned as a copy, its priority
// resolved) or PodGroup, with its queue name and priority resolved
// against c as Kueue's job framework resolves them.
func Workload(c *kueueconfig.Config, job any) (*kueue.Workload, []kueueconfig.Warning, error) {
	wl, warns, err := workload(c, job)
	if err != nil {
		return nil, nil, err
	}
	return wl.DeepCopy(), warns, nil
}

// workload is Workload's Workload before its copy: it shares the job's
// pod templates and metadata.
func workload(c *kueueconfig.Config, job any) (*kueue.Workload, []kueueconfig.Warning, error) {
	var (
		meta    *metav1.ObjectMeta
		kind    string
		podSets []kueue.PodSet
		warns   []kueueconfig.Warning
		err     error
	)
	switch j := job.(type) {
	case *batchv1.Job:
		meta, kind = &j.ObjectMeta, "Job"
		podSets, err = jobPodSets(j)
	case *jobset.JobSet:
		meta, kind = &j.ObjectMeta, "JobSet"
		podSets, err = jobSetPodSets(j)
	case *rayv1.RayJob:
		meta, kind = &j.ObjectMeta, "RayJob"
		podSets, err = rayJobPodSets(j)
	case PodGroup:
		if len(j) == 0 {
			return nil, nil, fmt.Errorf("%w: an empty pod group", ErrNoJob)
		}
		meta, kind = &j[0].ObjectMeta, "Pod"
		if g := j[0].Labels[kueueconfig.PodGroupNameLabel]; g != "" {
			// The group's workload is named for the group.
			m := *meta
			m.Name = g
			meta = &m
		}
		podSets, err = podGroupPodSets(j)
	case *kueue.Workload:
		wl := new(kueue.Workload)
		*wl = *j
		if wl.Spec.Priority == nil {
			p, err := workloadPriority(c, wl)
			if err != nil {
				return nil, nil, err
			}
			wl.Spec.Priority = &p
		}
		return wl, nil, nil
	default:
		return nil, nil, fmt.Errorf("%w: %T is not a Job, JobSet, RayJob, Workload or pod group", ErrNoJob, job)
	}
	if err != nil {
		obj := objectName(kind, meta)
		var fe *field.Error
		if errors.As(err, &fe) {
			return nil, nil, &kueueconfig.ObjectError{Object: obj, Errs: field.ErrorList{fe}, Err: kueueconfig.ErrInvalid}
		}
		var oe *kueueconfig.ObjectError
		if errors.As(err, &oe) {
			oe.Object = obj
			return nil, nil, oe
		}
		return nil, nil, fmt.Errorf("kueuejob: %s: %w", obj, err)
	}
	for _, a := range []string{kueue.PodSetRequiredTopologyAnnotation, kueue.PodSetPreferredTopologyAnnotation, kueue.PodSetUnconstrainedTopologyAnnotation} {
		if _, ok := meta.Annotations[a]; ok && kind != "Pod" {
			warns = append(warns, kueueconfig.Warning{Object: objectName(kind, meta), Field: "metadata.annotations." + a,
				Message: "Kueue reads topology annotations from the pod template's metadata, not the " + kind + "'s: ignored"})
		}
	}
	queue := meta.Labels[kueueconfig.QueueLabel]
	if queue == "" && c.HasLocalQueue(meta.Namespace, kueueconfig.DefaultLocalQueue) {
		queue = kueueconfig.DefaultLocalQueue
	}
	wl := &kueue.Workload{
		TypeMeta:   metav1.TypeMeta{APIVersion: workloadAPIVersion, Kind: "Workload"},
		ObjectMeta: metav1.ObjectMeta{Name: meta.Name, Namespace: meta.Namespace, CreationTimestamp: meta.CreationTimestamp},
		Spec:       kueue.WorkloadSpec{PodSets: podSets, QueueName: kueue.LocalQueueName(queue), Active: ptr.To(true)},
	}
	if name := meta.Labels[kueueconfig.WorkloadPriorityClassLabel]; name != "" {
		v, ok := c.PriorityOf(name)
		if !ok {
			return nil, nil, &kueueconfig.InadmissibleError{Object: objectName(kind, meta), Reason: "WorkloadPriorityClassNotFound",
				Message: fmt.Sprintf("workloadpriorityclasses.kueue.x-k8s.io %q not found", name)}
		}
		wl.Spec.PriorityClassRef = &kueue.PriorityClassRef{Group: kueue.WorkloadPriorityClassGroup, Kind: kueue.WorkloadPriorityClassKind, Name: name}
		wl.Spec.Priority = &v
	} else {
		v := int32(0)
		found := false
		for i := range podSets {
			if s := &podSets[i].Template.Spec; s.PriorityClassName != "" || s.Priority != nil {
				v, found = c.PodPriority(s), true
				break
			}
		}
		if !found {
			v = c.PodPriority(&corev1.PodSpec{})
		}
		wl.Spec.Priority = &v
	}
	return wl, warns, nil
}

func objectName(kind string, m *metav1.ObjectMeta) string {
	return kueueconfig.ObjectName(kind, m.Namespace, m.Name)
}

// workloadPriority resolves a Workload's priorityClassRef.
func workloadPriority(c *kueueconfig.Config, wl *kueue.Workload) (int32, error) {
	ref := wl.Spec.PriorityClassRef
	if ref != nil && ref.Kind == kueue.WorkloadPriorityClassKind {
		v, ok := c.PriorityOf(ref.Name)
		if !ok {
			return 0, &kueueconfig.InadmissibleError{Object: objectName("Workload", &wl.ObjectMeta), Reason: "WorkloadPriorityClassNotFound",
				Message: fmt.Sprintf("workloadpriorityclasses.kueue.x-k8s.io %q not found", ref.Name)}
		}
		return v, nil
	}
	if ref != nil {
		return c.PodPriority(&corev1.PodSpec{PriorityClassName: ref.Name}), nil
	}
	return c.PodPriority(&corev1.PodSpec{}), nil
}

// jobPodSets is Kueue's Job.PodSets: one pod set "main" of
// min(parallelism, completions) pods (parallelism defaults to 1), its
// minimum from the job-min-parallelism annotation.
func jobPodSets(j *batchv1.Job) ([]kueue.PodSet, error) {
	tmpl := &j.Spec.Template
	if err := validateTAS(jobTemplateAnnotations, &tmpl.ObjectMeta); err != nil {
		return nil, err
	}
	count := ptr.Deref(j.Spec.Parallelism, 1)
	if j.Spec.Completions != nil && *j.Spec.Completions < count {
		count = *j.Spec.Completions
	}
	ps := kueue.PodSet{Name: kueue.DefaultPodSetName, Template: *tmpl, Count: count}
	if s, ok := j.Annotations[JobMinParallelismAnnotation]; ok {
		if v, err := strconv.Atoi(s); err == nil {
			ps.MinCount = ptr.To(int32(v))
		}
	}
	tr, err := topologyRequest(&tmpl.ObjectMeta)
	if err != nil {
		return nil, err
	}
	ps.TopologyRequest = tr
	return []kueue.PodSet{ps}, nil
}

// jobSetPodSets is Kueue's JobSet.PodSets: one pod set per replicated job,
// of replicas × min(parallelism, completions) pods.
func jobSetPodSets(j *jobset.JobSet) ([]kueue.PodSet, error) {
	var out []kueue.PodSet
	for i := range j.Spec.ReplicatedJobs {
		rj := &j.Spec.ReplicatedJobs[i]
		tmpl := &rj.Template.Spec.Template
		if err := validateTAS(field.NewPath("spec", "replicatedJobs").Index(i).Child("template", "spec", "template", "metadata", "annotations"), &tmpl.ObjectMeta); err != nil {
			return nil, err
		}
		per := ptr.Deref(rj.Template.Spec.Parallelism, 1)
		if comp := ptr.Deref(rj.Template.Spec.Completions, per); comp < per {
			per = comp
		}
		tr, err := topologyRequest(&tmpl.ObjectMeta)
		if err != nil {
			return nil, err
		}
		out = append(out, kueue.PodSet{Name: kueue.PodSetReference(rj.Name), Template: *tmpl, Count: rj.Replicas * per, TopologyRequest: tr})
	}
	return out, nil
}

// rayJobPodSets is Kueue's RayJob.PodSets: the head (one pod), each worker
// group (replicas, default 1, × numOfHosts), and in K8sJobMode (the
// default) the submitter.
func rayJobPodSets(j *rayv1.RayJob) ([]kueue.PodSet, error) {
	rc := j.Spec.RayClusterSpec
	if rc == nil {
		return nil, field.Required(field.NewPath("spec", "rayClusterSpec"), "a RayJob that runs on an existing cluster (clusterSelector) is not queued by Kueue")
	}
	var out []kueue.PodSet
	add := func(name string, tmpl *corev1.PodTemplateSpec, count int32, p *field.Path) error {
		if err := validateTAS(p.Child("annotations"), &tmpl.ObjectMeta); err != nil {
			return err
		}
		tr, err := topologyRequest(&tmpl.ObjectMeta)
		if err != nil {
			return err
		}
		out = append(out, kueue.PodSet{Name: kueue.PodSetReference(name), Template: *tmpl, Count: count, TopologyRequest: tr})
		return nil
	}
	if err := add("head", &rc.HeadGroupSpec.Template, 1, field.NewPath("spec", "rayClusterSpec", "headGroupSpec", "template", "metadata")); err != nil {
		return nil, err
	}
	for i := range rc.WorkerGroupSpecs {
		wg := &rc.WorkerGroupSpecs[i]
		count := ptr.Deref(wg.Replicas, 1)
		if wg.NumOfHosts > 1 {
			count *= wg.NumOfHosts
		}
		if err := add(wg.GroupName, &wg.Template, count, field.NewPath("spec", "rayClusterSpec", "workerGroupSpecs").Index(i).Child("template", "metadata")); err != nil {
			return nil, err
		}
	}
	if j.Spec.SubmissionMode == "" || j.Spec.SubmissionMode == rayv1.K8sJobMode {
		tmpl := j.Spec.SubmitterPodTemplate
		if tmpl == nil {
			// KubeRay's default submitter, as Kueue accounts it.
			tmpl = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
				Name: "ray-job-submitter",
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("200Mi")},
				},
			}}}}
		}
		if err := add("submitter", tmpl, 1, field.NewPath("spec", "submitterPodTemplate", "metadata")); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// podGroupPodSets is Kueue's pod group: one pod set per role (the role
// hash), of as many pods as have it, sorted by role; a group whose pods
// are fewer than its kueue.x-k8s.io/pod-group-total-count is counted at
// the total when all its pods share one role (as Kueue's fast admission
// does) and refused otherwise. A pod without a group is a pod set "main"
// of one.
func podGroupPodSets(pods PodGroup) ([]kueue.PodSet, error) {
	first := pods[0]
	group := first.Labels[kueueconfig.PodGroupNameLabel]
	if group == "" {
		if len(pods) > 1 {
			return nil, fmt.Errorf("%w: %d pods without a %s label", ErrNoJob, len(pods), kueueconfig.PodGroupNameLabel)
		}
		tr, err := topologyRequest(&first.ObjectMeta)
		if err != nil {
			return nil, err
		}
		return []kueue.PodSet{{Name: kueue.DefaultPodSetName, Count: 1, Template: corev1.PodTemplateSpec{Spec: first.Spec}, TopologyRequest: tr}}, nil
	}
	total, err := strconv.Atoi(first.Annotations[kueueconfig.PodGroupTotalCountAnnotation])
	if err != nil || total < 1 {
		return nil, field.Invalid(field.NewPath("metadata", "annotations").Key(kueueconfig.PodGroupTotalCountAnnotation),
			first.Annotations[kueueconfig.PodGroupTotalCountAnnotation], "must be a positive integer")
	}
	var out []kueue.PodSet
	for _, p := range pods {
		if p.Labels[kueueconfig.PodGroupNameLabel] != group || p.Namespace != first.Namespace {
			return nil, fmt.Errorf("%w: pod %s/%s is not of pod group %s/%s", ErrNoJob, p.Namespace, p.Name, first.Namespace, group)
		}
		if p.Status.Phase == corev1.PodFailed {
			continue
		}
		role, err := kueueconfig.RoleHash(&p.Spec)
		if h, ok := p.Annotations[kueueconfig.RoleHashAnnotation]; ok {
			role, err = h, nil
		}
		if err != nil {
			return nil, err
		}
		if i := slices.IndexFunc(out, func(ps kueue.PodSet) bool { return string(ps.Name) == role }); i >= 0 {
			out[i].Count++
			continue
		}
		if err := validateTAS(field.NewPath("metadata", "annotations"), &p.ObjectMeta); err != nil {
			return nil, err
		}
		tr, err := topologyRequest(&p.ObjectMeta)
		if err != nil {
			return nil, err
		}
		out = append(out, kueue.PodSet{Name: kueue.PodSetReference(role), Count: 1, Template: corev1.PodTemplateSpec{Spec: p.Spec}, TopologyRequest: tr})
	}
	slices.SortFunc(out, func(a, b kueue.PodSet) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	n := 0
	for _, ps := range out {
		n += int(ps.Count)
	}
	switch {
	case n == total:
	case len(out) == 1 && n < total:
		out[0].Count = int32(total)
	default:
		return nil, fmt.Errorf("%w: pod group %s/%s has %d pods, its %s is %d", ErrNoJob, first.Namespace, group, n, kueueconfig.PodGroupTotalCountAnnotation, total)
	}
	return out, nil
}

// topologyRequest is Kueue's NewPodSetTopologyRequest(...).Build(): the
// first of the required, preferred and unconstrained annotations, the
// slice annotations, and the group name with required or preferred. The
// multi-layer slice annotation is alpha (TASMultiLayerTopology, off by
// default) and ignored, as Kueue ignores it by default.
func topologyRequest(m *metav1.ObjectMeta) (*kueue.PodSetTopologyRequest, error) {
	a := m.Annotations
	// The request and the values its pointers name, in one allocation.
	v := new(struct {
		req                               kueue.PodSetTopologyRequest
		required, preferred, slice, group string
		unconstrained                     bool
		size                              int32
	})
	req := &v.req
	var hasRequired, hasPreferred, hasUnconstrained, hasSlice, hasSize bool
	var unconstrained, sliceSize string
	v.required, hasRequired = a[kueue.PodSetRequiredTopologyAnnotation]
	v.preferred, hasPreferred = a[kueue.PodSetPreferredTopologyAnnotation]
	unconstrained, hasUnconstrained = a[kueue.PodSetUnconstrainedTopologyAnnotation]
	v.slice, hasSlice = a[kueue.PodSetSliceRequiredTopologyAnnotation]
	sliceSize, hasSize = a[kueue.PodSetSliceSizeAnnotation]
	switch {
	case hasRequired:
		req.Required = &v.required
	case hasPreferred:
		req.Preferred = &v.preferred
	case hasUnconstrained:
		b, err := strconv.ParseBool(unconstrained)
		if err != nil {
			return nil, err
		}
		v.unconstrained = b
		req.Unconstrained = &v.unconstrained
	}
	if hasSlice && hasSize {
		n, err := strconv.ParseInt(sliceSize, 10, 32)
		if err != nil {
			return nil, err
		}
		v.size = int32(n)
		req.PodSetSliceRequiredTopology = &v.slice
		req.PodSetSliceSize = &v.size
	}
	var hasGroup bool
	if v.group, hasGroup = a[kueue.PodSetGroupName]; hasGroup && (hasRequired || hasPreferred) {
		req.PodSetGroupName = &v.group
	}
	return req, nil
}

// workloadAPIVersion is the apiVersion of the Workloads built here.
var workloadAPIVersion = kueue.GroupVersion.String()

// jobTemplateAnnotations is where a Job's pod template keeps its
// annotations, built once: field paths are immutable.
var jobTemplateAnnotations = field.NewPath("spec", "template", "metadata", "annotations")

// validateTAS is Kueue's ValidateTASPodSetRequest, the job webhooks' check
// of a pod template's topology annotations; ap is the path of the
// annotations.
func validateTAS(ap *field.Path, m *metav1.ObjectMeta) error {
	a := m.Annotations
	required, hasRequired := a[kueue.PodSetRequiredTopologyAnnotation]
	preferred, hasPreferred := a[kueue.PodSetPreferredTopologyAnnotation]
	_, hasUnconstrained := a[kueue.PodSetUnconstrainedTopologyAnnotation]
	sliceLevel, hasSlice := a[kueue.PodSetSliceRequiredTopologyAnnotation]
	_, hasSize := a[kueue.PodSetSliceSizeAnnotation]
	var errs field.ErrorList
	n := 0
	for _, b := range []bool{hasRequired, hasPreferred, hasUnconstrained} {
		if b {
			n++
		}
	}
	if n > 1 {
		errs = append(errs, field.Invalid(ap, field.OmitValueType{}, fmt.Sprintf("must not contain more than one topology annotation: [%q, %q, %q]",
			kueue.PodSetRequiredTopologyAnnotation, kueue.PodSetPreferredTopologyAnnotation, kueue.PodSetUnconstrainedTopologyAnnotation)))
	}
	if hasRequired {
		errs = append(errs, metavalidation.ValidateLabelName(required, ap.Key(kueue.PodSetRequiredTopologyAnnotation))...)
	}
	if hasPreferred {
		errs = append(errs, metavalidation.ValidateLabelName(preferred, ap.Key(kueue.PodSetPreferredTopologyAnnotation))...)
	}
	if hasSlice {
		errs = append(errs, metavalidation.ValidateLabelName(sliceLevel, ap.Key(kueue.PodSetSliceRequiredTopologyAnnotation))...)
	}
	if g, ok := a[kueue.PodSetGroupName]; ok {
		gp := ap.Key(kueue.PodSetGroupName)
		if _, err := strconv.ParseUint(g, 10, 64); err == nil {
			errs = append(errs, field.Invalid(gp, g, "must not be a number"))
		}
		if hasSize {
			errs = append(errs, field.Forbidden(gp, fmt.Sprintf("may not be set when '%s' is specified", kueue.PodSetSliceSizeAnnotation)))
		}
		if hasSlice {
			errs = append(errs, field.Forbidden(gp, fmt.Sprintf("may not be set when '%s' is specified", kueue.PodSetSliceRequiredTopologyAnnotation)))
		}
		if !hasPreferred && !hasRequired {
			errs = append(errs, field.Forbidden(gp, fmt.Sprintf("may not be set when neither '%s' nor '%s' is specified", kueue.PodSetPreferredTopologyAnnotation, kueue.PodSetRequiredTopologyAnnotation)))
		}
	}
	if v, ok := a[kueue.PodSetUnconstrainedTopologyAnnotation]; ok {
		if _, err := strconv.ParseBool(v); err != nil {
			errs = append(errs, field.Invalid(ap.Key(kueue.PodSetUnconstrainedTopologyAnnotation), v, "must be a boolean value"))
		}
	}
	if v, ok := a[kueue.PodSetSliceSizeAnnotation]; ok {
		if n, err := strconv.ParseInt(v, 10, 32); err != nil {
			errs = append(errs, field.Invalid(ap.Key(kueue.PodSetSliceSizeAnnotation), v, "must be a numeric value"))
		} else if n < 1 {
			errs = append(errs, field.Invalid(ap.Key(kueue.PodSetSliceSizeAnnotation), v, "must be greater than or equal to 1"))
		}
	}
	if hasSlice && !hasSize {
		errs = append(errs, field.Required(ap.Key(kueue.PodSetSliceSizeAnnotation), fmt.Sprintf("must be set when '%s' is specified", kueue.PodSetSliceRequiredTopologyAnnotation)))
	}
	if !hasSlice && hasSize {
		errs = append(errs, field.Forbidden(ap.Key(kueue.PodSetSliceSizeAnnotation), fmt.Sprintf("may not be set when '%s' is not specified", kueue.PodSetSliceRequiredTopologyAnnotation)))
	}
	if len(errs) > 0 {
		return &kueueconfig.ObjectError{Errs: errs, Err: kueueconfig.ErrInvalid}
	}
	return nil
}

// FromObjects picks the job among decoded objects: the one Job, JobSet,
// RayJob or Workload, else the pods (of one pod group, or one pod).
func FromObjects(objs []kueueconfig.Object) (any, error) {
	var jobs []any
	var pods PodGroup
	for _, o := range objs {
		switch v := o.Value.(type) {
		case *batchv1.Job, *jobset.JobSet, *rayv1.RayJob, *kueue.Workload:
			jobs = append(jobs, v)
		case *corev1.Pod:
			pods = append(pods, v)
		}
	}
	switch {
	case len(jobs) == 1 && len(pods) == 0:
		return jobs[0], nil
	case len(jobs) == 0 && len(pods) > 0:
		return pods, nil
	}
	return nil, fmt.Errorf("%w: %d jobs and %d pods; give one Job, JobSet, RayJob or Workload, or the pods of one pod group", ErrNoJob, len(jobs), len(pods))
}
