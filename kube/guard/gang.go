package guard

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/allot-sched/allot/kube/kueueconfig"
	"github.com/allot-sched/allot/kube/kueuejob"
)

// gangMeta is the part of an object's metadata that names its gang,
// decoded alone: its annotations and managed fields are left for the full
// decode, which a cached answer spares. Only a pod's labels name its
// gang: podMeta reads them, gangMeta does not.
type gangMeta struct {
	Metadata metaForGang `json:"metadata"`
}

type podMeta struct {
	Metadata struct {
		metaForGang
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
}

type metaForGang struct {
	Name            string                  `json:"name"`
	Namespace       string                  `json:"namespace"`
	Labels          map[string]string       `json:"-"`
	OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
}

// decodeGangMeta decodes the metadata that names the gang of an object of
// a kind.
func decodeGangMeta(kind string, js []byte) (metaForGang, error) {
	if kind == "Pod" {
		var p podMeta
		err := unmarshal(js, &p, func() { p = podMeta{} })
		m := p.Metadata.metaForGang
		m.Labels = p.Metadata.Labels
		return m, err
	}
	var g gangMeta
	err := unmarshal(js, &g, func() { g = gangMeta{} })
	return g.Metadata, err
}

// gangOf names the gang an object of a kind belongs to, from its
// metadata alone, so that the rest of a gang's pods are answered from the
// cache before their whole object is decoded. owned says the object is
// made by a controller for a job the guard judges at its own CREATE (a
// Job's pods, a JobSet's Jobs): it is not judged again, since the guard
// cannot see its siblings. known is false for a kind the guard does not
// judge.
//
// A pod of a pod group is its group, decided at the group's total count;
// a Workload made for a job is keyed by its job, so that it shares the
// job's cached answer.
func gangOf(kind string, m *metaForGang) (key string, owned, known bool) {
	ref := controllerOf(m.OwnerReferences)
	switch kind {
	case "Pod":
		if g := m.Labels[kueueconfig.PodGroupNameLabel]; g != "" {
			return m.Namespace + "/PodGroup/" + g, false, true
		}
		if ref != nil {
			return "", true, true
		}
	case "Job":
		if ref != nil && judgedKind(ref.Kind) {
			return "", true, true
		}
	case "JobSet", "RayJob":
	case "Workload":
		if ref != nil {
			return m.Namespace + "/" + ref.Kind + "/" + ref.Name, false, true
		}
	default:
		return "", false, false
	}
	return m.Namespace + "/" + kind + "/" + m.Name, false, true
}

// controllerOf is the owner that controls the object, as
// metav1.GetControllerOf finds it.
func controllerOf(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if r := &refs[i]; r.Controller != nil && *r.Controller {
			return r
		}
	}
	return nil
}

// jobOf is what kueuejob.Request takes for a decoded object: a pod stands
// for its group.
func jobOf(v any) any {
	if p, ok := v.(*corev1.Pod); ok {
		return kueuejob.PodGroup{p}
	}
	return v
}

// judgedKind is a kind whose CREATE the guard judges as a whole gang.
func judgedKind(kind string) bool {
	switch kind {
	case "Job", "JobSet", "RayJob", "RayCluster":
		return true
	}
	return false
}
