// Writing the tests' objects as a user's kubectl would have them.

package kubetest

import (
	"context"
	"testing"

	"github.com/allot-sched/allot/kube/kueueconfig"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Create creates a copy of an object as the API server takes it: the
// metadata the server sets cleared, then the status of a Node or Pod
// written through its subresource (a create ignores it).
func Create(ctx context.Context, t testing.TB, cl client.Client, obj client.Object) {
	t.Helper()
	obj = obj.DeepCopyObject().(client.Object)
	obj.SetResourceVersion("")
	obj.SetUID("")
	obj.SetCreationTimestamp(metav1.Time{})
	status := statusOf(obj)
	if err := cl.Create(ctx, obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	if status != nil {
		status(obj)
		if err := cl.Status().Update(ctx, obj); err != nil {
			t.Fatalf("status of %T %s: %v", obj, obj.GetName(), err)
		}
	}
	if n, ok := obj.(*corev1.Node); ok {
		liftNotReady(ctx, t, cl, n)
	}
}

// liftNotReady does for a Ready node what Kubernetes' node lifecycle
// controller, which does not run here, would: the API server's
// TaintNodesByCondition admission taints every new node not-ready, and
// the controller lifts the taint once the node reports Ready.
func liftNotReady(ctx context.Context, t testing.TB, cl client.Client, n *corev1.Node) {
	t.Helper()
	ready := false
	for _, c := range n.Status.Conditions {
		ready = ready || c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
	}
	if !ready {
		return
	}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(n), n); err != nil {
		t.Fatalf("get node %s: %v", n.Name, err)
	}
	kept := n.Spec.Taints[:0]
	for _, taint := range n.Spec.Taints {
		if taint.Key != corev1.TaintNodeNotReady {
			kept = append(kept, taint)
		}
	}
	if len(kept) == len(n.Spec.Taints) {
		return
	}
	n.Spec.Taints = kept
	if err := cl.Update(ctx, n); err != nil {
		t.Fatalf("lift node %s's not-ready taint: %v", n.Name, err)
	}
}

// Update writes an object's new version, its spec and metadata, then its
// status.
func Update(ctx context.Context, t testing.TB, cl client.Client, obj client.Object) {
	t.Helper()
	status := statusOf(obj)
	if err := cl.Update(ctx, obj); err != nil {
		t.Fatalf("update %T %s: %v", obj, obj.GetName(), err)
	}
	if status != nil {
		status(obj)
		if err := cl.Status().Update(ctx, obj); err != nil {
			t.Fatalf("status of %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// statusOf returns what puts an object's status back after a write that
// dropped it, nil for the kinds without a status the tests set.
func statusOf(obj client.Object) func(client.Object) {
	switch o := obj.(type) {
	case *corev1.Node:
		st := *o.Status.DeepCopy()
		return func(v client.Object) { v.(*corev1.Node).Status = st }
	case *corev1.Pod:
		st := *o.Status.DeepCopy()
		return func(v client.Object) { v.(*corev1.Pod).Status = st }
	}
	return nil
}

// CreateAll creates objects in the order an API server takes them — the
// Namespaces, then every other object but Pods, then the Pods — each as
// Create does, and points the Pods' owner references at the owners
// created (the server gives every object a new UID, so the UID a file
// wrote names nothing). It returns what it created, with the server's
// metadata.
func CreateAll(ctx context.Context, t testing.TB, cl client.Client, objs []client.Object) []client.Object {
	t.Helper()
	rank := func(o client.Object) int {
		switch o.(type) {
		case *corev1.Namespace:
			return 0
		case *corev1.Pod:
			return 2
		}
		return 1
	}
	uids := map[string]types.UID{} // kind/namespace/name → the UID given
	var out []client.Object
	for r := range 3 {
		for _, o := range objs {
			if rank(o) != r {
				continue
			}
			o = o.DeepCopyObject().(client.Object)
			if p, ok := o.(*corev1.Pod); ok {
				for i, ref := range p.OwnerReferences {
					if uid, ok := uids[ref.Kind+"/"+p.Namespace+"/"+ref.Name]; ok {
						p.OwnerReferences[i].UID = uid
					}
				}
			}
			Create(ctx, t, cl, o)
			if err := cl.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
				t.Fatalf("get %T %s: %v", o, o.GetName(), err)
			}
			gvk, err := cl.GroupVersionKindFor(o)
			if err != nil {
				t.Fatalf("kind of %T: %v", o, err)
			}
			uids[gvk.Kind+"/"+o.GetNamespace()+"/"+o.GetName()] = o.GetUID()
			out = append(out, o)
		}
	}
	return out
}

// Objects are the values of objects read by kueueconfig, for CreateAll.
func Objects(t testing.TB, objs []kueueconfig.Object) []client.Object {
	t.Helper()
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		v, ok := o.Value.(client.Object)
		if !ok {
			t.Fatalf("%s: %T is not an API object", o.Name(), o.Value)
		}
		out = append(out, v)
	}
	return out
}
