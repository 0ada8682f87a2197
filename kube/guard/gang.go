package guard

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot/kube/kueueconfig"
	"github.com/allot-sched/allot/kube/kueuejob"
)

// gangOf names the gang an object belongs to and gives the job that
// stands for it (what kueuejob.Request takes). owned says the object is
// made by a controller for a job the guard judges at its own CREATE (a
// Job's pods, a JobSet's Jobs): it is not judged again, since the guard
// cannot see its siblings. known is false for a kind the guard does not
// judge.
//
// A pod of a pod group is its group, decided at the group's total count;
// a Workload made for a job is keyed by its job, so that it shares the
// job's cached answer.
func gangOf(v any) (key string, job any, owned, known bool) {
	switch o := v.(type) {
	case *corev1.Pod:
		if g := o.Labels[kueueconfig.PodGroupNameLabel]; g != "" {
			return o.Namespace + "/PodGroup/" + g, kueuejob.PodGroup{o}, false, true
		}
		if metav1.GetControllerOf(o) != nil {
			return "", nil, true, true
		}
		return o.Namespace + "/Pod/" + o.Name, kueuejob.PodGroup{o}, false, true
	case *batchv1.Job:
		if ref := metav1.GetControllerOf(o); ref != nil && judgedKind(ref.Kind) {
			return "", nil, true, true
		}
		return o.Namespace + "/Job/" + o.Name, o, false, true
	case *jobset.JobSet:
		return o.Namespace + "/JobSet/" + o.Name, o, false, true
	case *rayv1.RayJob:
		return o.Namespace + "/RayJob/" + o.Name, o, false, true
	case *kueue.Workload:
		if ref := metav1.GetControllerOf(o); ref != nil {
			return o.Namespace + "/" + ref.Kind + "/" + ref.Name, o, false, true
		}
		return o.Namespace + "/Workload/" + o.Name, o, false, true
	}
	return "", nil, false, false
}

// judgedKind is a kind whose CREATE the guard judges as a whole gang.
func judgedKind(kind string) bool {
	switch kind {
	case "Job", "JobSet", "RayJob", "RayCluster":
		return true
	}
	return false
}
