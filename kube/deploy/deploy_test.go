package deploy

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
)

// manifests decodes every document of every manifest strictly (an unknown
// field is an error) into its typed object.
func manifests(t *testing.T) []runtime.Object {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	var out []runtime.Object
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			obj, _, err := dec.Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("%s#%d: %v", f, i, err)
			}
			out = append(out, obj)
		}
	}
	return out
}

func only[T runtime.Object](t *testing.T, objs []runtime.Object) T {
	t.Helper()
	var found []T
	for _, o := range objs {
		if v, ok := o.(T); ok {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("%d objects of %T, want 1", len(found), zero)
	}
	return found[0]
}

func TestManifests(t *testing.T) {
	objs := manifests(t)
	ns := only[*corev1.Namespace](t, objs)
	sa := only[*corev1.ServiceAccount](t, objs)
	dep := only[*appsv1.Deployment](t, objs)
	svc := only[*corev1.Service](t, objs)
	vwc := only[*admissionregistrationv1.ValidatingWebhookConfiguration](t, objs)
	role := only[*rbacv1.ClusterRole](t, objs)
	binding := only[*rbacv1.ClusterRoleBinding](t, objs)

	for _, m := range []string{sa.Namespace, dep.Namespace, svc.Namespace} {
		if m != ns.Name {
			t.Errorf("namespace %q, want the guard's %q", m, ns.Name)
		}
	}
	// Read-only.
	for _, r := range role.Rules {
		for _, v := range r.Verbs {
			if !slices.Contains([]string{"get", "list", "watch"}, v) {
				t.Errorf("ClusterRole verb %q on %v: the guard only reads", v, r.Resources)
			}
		}
	}
	if binding.RoleRef.Name != role.Name || len(binding.Subjects) != 1 || binding.Subjects[0].Name != sa.Name || binding.Subjects[0].Namespace != ns.Name {
		t.Errorf("ClusterRoleBinding %+v does not bind %s to %s/%s", binding, role.Name, ns.Name, sa.Name)
	}

	// Two replicas of the guard, probed on the manager's probe port.
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Errorf("replicas %v, want 2", dep.Spec.Replicas)
	}
	pod := dep.Spec.Template
	if pod.Spec.ServiceAccountName != sa.Name {
		t.Errorf("service account %q, want %q", pod.Spec.ServiceAccountName, sa.Name)
	}
	c := pod.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--cert-dir=/etc/allot/tls", "--port=9443", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8080"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %s", args, want)
		}
	}
	port := func(name string) int32 {
		for _, p := range c.Ports {
			if p.Name == name {
				return p.ContainerPort
			}
		}
		t.Fatalf("no container port %s", name)
		return 0
	}
	if port("webhook") != 9443 || port("probes") != 8081 || port("metrics") != 8080 {
		t.Errorf("ports %+v", c.Ports)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("probes %+v %+v", c.ReadinessProbe, c.LivenessProbe)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v", c.Resources)
	}
	mounted := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounted[m.Name] = m.MountPath
	}
	if mounted["tls"] != "/etc/allot/tls" {
		t.Errorf("the certificate is mounted at %q", mounted["tls"])
	}
	for k, v := range svc.Spec.Selector {
		if pod.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, the pods are %v", k, v, pod.Labels)
		}
	}

	// The webhook: fail-open, on CREATE only, exempting the guard's
	// namespace and kube-system, through the Service.
	if len(vwc.Webhooks) != 1 {
		t.Fatalf("%d webhooks", len(vwc.Webhooks))
	}
	w := vwc.Webhooks[0]
	if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Ignore {
		t.Errorf("failurePolicy %v, want Ignore", w.FailurePolicy)
	}
	if w.SideEffects == nil || *w.SideEffects != admissionregistrationv1.SideEffectClassNone {
		t.Errorf("sideEffects %v, want None", w.SideEffects)
	}
	if w.TimeoutSeconds == nil || *w.TimeoutSeconds < 1 || *w.TimeoutSeconds > 10 {
		t.Errorf("timeoutSeconds %v, want 1..10", w.TimeoutSeconds)
	}
	ref := w.ClientConfig.Service
	if ref == nil || ref.Name != svc.Name || ref.Namespace != ns.Name || ref.Path == nil || *ref.Path != "/validate" || ref.Port == nil || *ref.Port != svc.Spec.Ports[0].Port {
		t.Errorf("clientConfig %+v does not reach the Service's /validate", ref)
	}
	exempt := false
	for _, e := range w.NamespaceSelector.MatchExpressions {
		if e.Key == corev1.LabelMetadataName && e.Operator == "NotIn" && slices.Contains(e.Values, ns.Name) && slices.Contains(e.Values, "kube-system") {
			exempt = true
		}
	}
	if !exempt {
		t.Errorf("namespaceSelector %+v does not exempt %s and kube-system", w.NamespaceSelector, ns.Name)
	}
	resources := map[string]bool{}
	for _, r := range w.Rules {
		if len(r.Operations) != 1 || r.Operations[0] != admissionregistrationv1.Create {
			t.Errorf("rule %+v: want CREATE only", r)
		}
		for _, res := range r.Resources {
			resources[res] = true
		}
	}
	for _, want := range []string{"pods", "jobs", "jobsets", "workloads"} {
		if !resources[want] {
			t.Errorf("no rule for %s", want)
		}
	}
}
