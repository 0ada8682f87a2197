package kueueconfig

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelpers "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"
)

// referencePodRequests is a pod's effective request as Kueue computes it,
// through component-helpers: each container's limits copied into the
// requests it leaves out, then resource.PodRequests. PodRequests must
// agree with it resource by resource.
func referencePodRequests(spec *corev1.PodSpec) corev1.ResourceList {
	pod := corev1.Pod{Spec: *spec.DeepCopy()}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			r := &cs[i].Resources
			for name, q := range r.Limits {
				if _, ok := r.Requests[name]; !ok {
					if r.Requests == nil {
						r.Requests = corev1.ResourceList{}
					}
					r.Requests[name] = q
				}
			}
		}
	}
	return resourcehelpers.PodRequests(&pod, resourcehelpers.PodResourcesOptions{})
}

// sameRequests checks PodRequests and describePod's request against the
// reference, and that neither wrote the spec.
func sameRequests(t *testing.T, spec *corev1.PodSpec) {
	t.Helper()
	before := spec.DeepCopy()
	want := referencePodRequests(spec)
	got := PodRequests(spec)
	if !maps.EqualFunc(got, want, func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }) {
		t.Errorf("PodRequests = %v, component-helpers says %v", got, want)
	}
	if per, wantPer := describePod(&corev1.Pod{Spec: *spec}).per, perPod(want); !maps.Equal(per, wantPer) {
		t.Errorf("describePod's request = %v, component-helpers' in base units %v", per, wantPer)
	}
	if !reflect.DeepEqual(spec, before) {
		t.Errorf("the spec was written: %v, was %v", spec, before)
	}
}

// TestPodRequestsTable: the rules of an effective request one by one,
// each against component-helpers.
func TestPodRequestsTable(t *testing.T) {
	q := resource.MustParse
	always := ptr.To(corev1.ContainerRestartPolicyAlways)
	ctr := func(req, lim corev1.ResourceList) corev1.Container {
		return corev1.Container{Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
	}
	sidecar := func(req corev1.ResourceList) corev1.Container {
		c := ctr(req, nil)
		c.RestartPolicy = always
		return c
	}
	gpu := func(n string) corev1.ResourceList { return corev1.ResourceList{"nvidia.com/gpu": q(n)} }
	cpu := func(n string) corev1.ResourceList { return corev1.ResourceList{"cpu": q(n)} }
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want corev1.ResourceList // checked too, where the rule is the point
	}{
		{"empty", corev1.PodSpec{}, corev1.ResourceList{}},
		{"containers summed", corev1.PodSpec{Containers: []corev1.Container{ctr(gpu("2"), nil), ctr(gpu("3"), nil)}}, gpu("5")},
		{"limits stand in", corev1.PodSpec{Containers: []corev1.Container{ctr(cpu("1"), gpu("4"))}},
			corev1.ResourceList{"cpu": q("1"), "nvidia.com/gpu": q("4")}},
		{"a request beats its limit", corev1.PodSpec{Containers: []corev1.Container{ctr(cpu("1"), cpu("3"))}}, cpu("1")},
		{"zero request kept", corev1.PodSpec{Containers: []corev1.Container{ctr(gpu("0"), nil)}}, gpu("0")},
		{"init peak above", corev1.PodSpec{InitContainers: []corev1.Container{ctr(cpu("8"), nil)}, Containers: []corev1.Container{ctr(cpu("2"), nil)}}, cpu("8")},
		{"init peak below", corev1.PodSpec{InitContainers: []corev1.Container{ctr(cpu("1"), nil)}, Containers: []corev1.Container{ctr(cpu("2"), nil)}}, cpu("2")},
		{"init limits stand in", corev1.PodSpec{InitContainers: []corev1.Container{ctr(nil, gpu("8"))}, Containers: []corev1.Container{ctr(gpu("1"), nil)}}, gpu("8")},
		{"sidecar summed", corev1.PodSpec{InitContainers: []corev1.Container{sidecar(cpu("1"))}, Containers: []corev1.Container{ctr(cpu("2"), nil)}}, cpu("3")},
		{"init after a sidecar", corev1.PodSpec{InitContainers: []corev1.Container{sidecar(cpu("1")), ctr(cpu("4"), nil)},
			Containers: []corev1.Container{ctr(cpu("2"), nil)}}, cpu("5")},
		{"init before a sidecar", corev1.PodSpec{InitContainers: []corev1.Container{ctr(cpu("4"), nil), sidecar(cpu("1"))},
			Containers: []corev1.Container{ctr(cpu("2"), nil)}}, cpu("4")},
		{"sidecars", corev1.PodSpec{InitContainers: []corev1.Container{sidecar(gpu("1")), sidecar(cpu("1")), ctr(cpu("1"), gpu("1"))},
			Containers: []corev1.Container{ctr(cpu("1"), nil)}}, corev1.ResourceList{"cpu": q("2"), "nvidia.com/gpu": q("2")}},
		{"overhead", corev1.PodSpec{Containers: []corev1.Container{ctr(cpu("1"), nil)}, Overhead: corev1.ResourceList{"cpu": q("250m"), "memory": q("1Gi")}},
			corev1.ResourceList{"cpu": q("1250m"), "memory": q("1Gi")}},
		{"pod-level requests", corev1.PodSpec{Containers: []corev1.Container{ctr(corev1.ResourceList{"cpu": q("1"), "nvidia.com/gpu": q("2")}, nil)},
			Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("6"), "nvidia.com/gpu": q("7")}}},
			corev1.ResourceList{"cpu": q("6"), "nvidia.com/gpu": q("2")}},
		{"pod-level requests and overhead", corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": q("2Gi"), "hugepages-2Mi": q("4Mi")}},
			Overhead: corev1.ResourceList{"memory": q("1Gi")}}, corev1.ResourceList{"memory": q("3Gi"), "hugepages-2Mi": q("4Mi")}},
		{"pod-level limits only", corev1.PodSpec{Containers: []corev1.Container{ctr(cpu("1"), nil)}, Resources: &corev1.ResourceRequirements{Limits: cpu("4")}}, cpu("1")},
		{"pod-level requests unsupported", corev1.PodSpec{Containers: []corev1.Container{ctr(cpu("1"), nil)}, Resources: &corev1.ResourceRequirements{Requests: gpu("4")}}, cpu("1")},
		{"past int64", corev1.PodSpec{Containers: []corev1.Container{ctr(corev1.ResourceList{"memory": q("9E")}, nil), ctr(corev1.ResourceList{"memory": q("9E")}, nil)}},
			corev1.ResourceList{"memory": q("18E")}},
		{"many resources", corev1.PodSpec{Containers: []corev1.Container{ctr(corev1.ResourceList{"a": q("1"), "b": q("1"), "c": q("1"), "d": q("1"), "e": q("1")},
			corev1.ResourceList{"f": q("1"), "g": q("1"), "h": q("1"), "i": q("1"), "j": q("1")})}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameRequests(t, &tc.spec)
			if tc.want != nil {
				if got := PodRequests(&tc.spec); !maps.EqualFunc(got, tc.want, func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }) {
					t.Errorf("PodRequests = %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestPodRequestsProperty: random specs — containers, init containers and
// sidecars, limits without requests, overhead, pod-level resources,
// quantities past int64 — give component-helpers' answer.
func TestPodRequestsProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 10))
	for i := range 3000 {
		spec := randomSpec(r)
		for k := range spec.InitContainers {
			if r.IntN(2) == 0 {
				spec.InitContainers[k].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			}
		}
		if r.IntN(3) == 0 {
			spec.Resources = &corev1.ResourceRequirements{Requests: randomPodLevel(r), Limits: randomPodLevel(r)}
		}
		if r.IntN(8) == 0 && len(spec.Containers) > 0 {
			spec.Containers[0].Resources.Requests = corev1.ResourceList{"memory": resource.MustParse("8E"), "cpu": resource.MustParse("9223372036854775807")}
		}
		if t.Failed() {
			return
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { sameRequests(t, spec) })
	}
}

func randomPodLevel(r *rand.Rand) corev1.ResourceList {
	names := []corev1.ResourceName{"cpu", "memory", "hugepages-2Mi", "nvidia.com/gpu"}
	l := corev1.ResourceList{}
	for range r.IntN(3) {
		l[names[r.IntN(len(names))]] = *resource.NewMilliQuantity(r.Int64N(100_000), resource.DecimalSI)
	}
	return l
}

// TestDescribePodAllocs pins the cost of describing a GPU pod (its role
// hash and its request): the role's hex string, the hash's buffer and the
// request's map (its header and its one group); the request is summed on
// the stack.
func TestDescribePodAllocs(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(4, resource.DecimalSI), "cpu": resource.MustParse("4")},
		Limits:   corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(4, resource.DecimalSI)}}}}}}
	if n := testing.AllocsPerRun(100, func() {
		if d := describePod(p); d.roleErr != nil || d.per["nvidia.com/gpu"] != 4 || d.per["cpu"] != 4000 {
			t.Fatalf("described %+v", d)
		}
	}); n > 4 {
		t.Errorf("describePod allocates %v times, want at most 4", n)
	}
}
