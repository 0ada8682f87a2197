package kueueconfig

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// naiveRoleHash is Kueue's role hash written as Kueue writes it: the shape
// of the spec as maps, encoded by encoding/json. RoleHash must agree with
// it byte for byte.
func naiveRoleHash(spec *corev1.PodSpec) (string, error) {
	containers := func(cs []corev1.Container) []map[string]any {
		var out []map[string]any
		for _, c := range cs {
			out = append(out, map[string]any{"resources": map[string]any{"requests": c.Resources.Requests}, "ports": c.Ports})
		}
		return out
	}
	shape := map[string]any{"spec": map[string]any{
		"initContainers":            containers(spec.InitContainers),
		"containers":                containers(spec.Containers),
		"nodeSelector":              spec.NodeSelector,
		"affinity":                  spec.Affinity,
		"tolerations":               spec.Tolerations,
		"runtimeClassName":          spec.RuntimeClassName,
		"priority":                  spec.Priority,
		"topologySpreadConstraints": spec.TopologySpreadConstraints,
		"overhead":                  spec.Overhead,
		"resourceClaims":            spec.ResourceClaims,
	}}
	js, err := json.Marshal(shape)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", sha256.Sum256(js))[:8], nil
}

// TestRoleHashTable: the specs whose encoding has a corner (nil against
// empty, omitted fields, escaped strings, quantities in every format)
// hash as encoding/json's shape does.
func TestRoleHashTable(t *testing.T) {
	gpu := func(q string) corev1.ResourceList {
		return corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(q)}
	}
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
	}{
		{"empty", corev1.PodSpec{}},
		{"empty lists", corev1.PodSpec{Containers: []corev1.Container{}, Tolerations: []corev1.Toleration{}, NodeSelector: map[string]string{},
			Overhead: corev1.ResourceList{}, ResourceClaims: []corev1.PodResourceClaim{}, TopologySpreadConstraints: []corev1.TopologySpreadConstraint{}}},
		{"container without requests", corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}},
		{"empty requests and ports", corev1.PodSpec{Containers: []corev1.Container{{Ports: []corev1.ContainerPort{}, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}}}},
		{"gpu pod", corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(4, resource.DecimalSI), "cpu": resource.MustParse("4"), "memory": resource.MustParse("64Gi")}}}}}},
		{"quantities", corev1.PodSpec{Containers: []corev1.Container{
			{Resources: corev1.ResourceRequirements{Requests: gpu("100m")}},
			{Resources: corev1.ResourceRequirements{Requests: gpu("1.5")}},
			{Resources: corev1.ResourceRequirements{Requests: gpu("1e3")}},
			{Resources: corev1.ResourceRequirements{Requests: gpu("0")}},
			{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": resource.MustParse("1500Mi")}}},
			{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": *resource.NewQuantity(1<<40, resource.BinarySI)}}},
			{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": *resource.NewMilliQuantity(2500, resource.DecimalSI)}}},
			{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": *resource.NewScaledQuantity(12, 9)}}},
		}}},
		{"ports", corev1.PodSpec{Containers: []corev1.Container{{Ports: []corev1.ContainerPort{
			{ContainerPort: 8080}, {Name: "http", HostPort: 80, ContainerPort: 8080, Protocol: corev1.ProtocolTCP, HostIP: "10.0.0.1"}, {Protocol: corev1.ProtocolUDP}}}}}},
		{"init containers", corev1.PodSpec{InitContainers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: gpu("1")}}}}},
		{"escaped strings", corev1.PodSpec{NodeSelector: map[string]string{"a<b": "x&y", "q\"": "back\\slash", "ctl": "\x01\n", "ünï": "código", "sep": "\u2028\u2029", "bad": "\xff"},
			RuntimeClassName: ptr.To("<nvidia>")}},
		{"tolerations", corev1.PodSpec{Tolerations: []corev1.Toleration{{}, {Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v&", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(-30))}, {TolerationSeconds: ptr.To(int64(0))}}}},
		{"priority and runtime class", corev1.PodSpec{Priority: ptr.To(int32(-7)), RuntimeClassName: ptr.To("")}},
		{"affinity", corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "gpu", Operator: corev1.NodeSelectorOpIn, Values: []string{"h100"}}}}}}}}}},
		{"empty affinity", corev1.PodSpec{Affinity: &corev1.Affinity{}}},
		{"topology spread and claims", corev1.PodSpec{
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "rack", WhenUnsatisfiable: corev1.DoNotSchedule}},
			ResourceClaims:            []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: ptr.To("tmpl")}},
			Overhead:                  corev1.ResourceList{"cpu": resource.MustParse("250m")}}},
	} {
		t.Run(tc.name, func(t *testing.T) { sameRoleHash(t, &tc.spec) })
	}
}

// TestRoleHashProperty: random specs, of every field the shape reads,
// hash as encoding/json's shape does.
func TestRoleHashProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 6))
	for i := range 3000 {
		spec := randomSpec(r)
		if t.Failed() {
			return
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { sameRoleHash(t, spec) })
	}
}

func sameRoleHash(t *testing.T, spec *corev1.PodSpec) {
	t.Helper()
	want, err := naiveRoleHash(spec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := RoleHash(spec)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		js, _ := appendRoleShape(nil, spec)
		t.Errorf("RoleHash = %s, encoding/json's shape hashes to %s; written:\n%s", got, want, js)
	}
}

func randomSpec(r *rand.Rand) *corev1.PodSpec {
	pick := func(vals ...string) string { return vals[r.IntN(len(vals))] }
	str := func() string {
		return pick("", "a", "gpu", "nvidia.com/gpu", "rack-1", "x<y>", "a&b", "q\"t", "tab\t", "ü", "\u2028", "\xfe", "10.0.0.1")
	}
	quantity := func() resource.Quantity {
		switch r.IntN(5) {
		case 0:
			return *resource.NewQuantity(r.Int64N(1<<20), resource.DecimalSI)
		case 1:
			return *resource.NewMilliQuantity(r.Int64N(100_000), resource.DecimalSI)
		case 2:
			return *resource.NewQuantity(r.Int64N(1<<42), resource.BinarySI)
		case 3:
			return *resource.NewScaledQuantity(r.Int64N(1000), resource.Scale(r.IntN(19)-9))
		}
		return resource.MustParse(pick("0", "1", "4", "1.5", "100m", "64Gi", "1500Mi", "1e3", "2k", "0.25"))
	}
	list := func() corev1.ResourceList {
		if r.IntN(4) == 0 {
			return nil
		}
		l := corev1.ResourceList{}
		for range r.IntN(5) {
			l[corev1.ResourceName(pick("cpu", "memory", "nvidia.com/gpu", "ephemeral-storage", "example.com/<odd>"))] = quantity()
		}
		return l
	}
	containers := func() []corev1.Container {
		if r.IntN(4) == 0 {
			return nil
		}
		cs := make([]corev1.Container, r.IntN(4))
		for i := range cs {
			cs[i].Name = str()
			cs[i].Resources.Requests = list()
			cs[i].Resources.Limits = list() // not in the shape
			if r.IntN(2) == 0 {
				cs[i].Ports = make([]corev1.ContainerPort, r.IntN(3))
				for k := range cs[i].Ports {
					cs[i].Ports[k] = corev1.ContainerPort{Name: str(), HostPort: r.Int32N(3) * 80, ContainerPort: r.Int32N(65536),
						Protocol: corev1.Protocol(pick("", "TCP", "UDP")), HostIP: str()}
				}
			}
		}
		return cs
	}
	s := &corev1.PodSpec{Containers: containers(), InitContainers: containers(), Overhead: list()}
	if r.IntN(2) == 0 {
		s.NodeSelector = map[string]string{}
		for range r.IntN(12) {
			s.NodeSelector[str()] = str()
		}
	}
	if r.IntN(2) == 0 {
		s.Tolerations = make([]corev1.Toleration, r.IntN(4))
		for i := range s.Tolerations {
			s.Tolerations[i] = corev1.Toleration{Key: str(), Operator: corev1.TolerationOperator(pick("", "Exists", "Equal")), Value: str(),
				Effect: corev1.TaintEffect(pick("", "NoSchedule", "NoExecute"))}
			if r.IntN(2) == 0 {
				s.Tolerations[i].TolerationSeconds = ptr.To(r.Int64N(7200) - 3600)
			}
		}
	}
	if r.IntN(2) == 0 {
		s.Priority = ptr.To(r.Int32() - 1<<30)
	}
	if r.IntN(2) == 0 {
		s.RuntimeClassName = ptr.To(str())
	}
	if r.IntN(3) == 0 {
		s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: str(), Operator: corev1.NodeSelectorOpIn, Values: []string{str()}}}}}}}}
	}
	if r.IntN(3) == 0 {
		s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: r.Int32N(4), TopologyKey: str(), WhenUnsatisfiable: corev1.ScheduleAnyway}}
	}
	if r.IntN(3) == 0 {
		s.ResourceClaims = []corev1.PodResourceClaim{{Name: str(), ResourceClaimName: ptr.To(str())}}
	}
	// Fields outside the shape change nothing.
	s.NodeName, s.ServiceAccountName = str(), str()
	return s
}

// TestRoleHashAllocs pins the cost of a GPU pod's role hash: the hex
// string it returns and the buffer its JSON is written in, nothing else.
func TestRoleHashAllocs(t *testing.T) {
	spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(4, resource.DecimalSI), "cpu": resource.MustParse("4")}}}},
		Tolerations:  []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		NodeSelector: map[string]string{"gpu": "h100"}}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := RoleHash(spec); err != nil {
			t.Fatal(err)
		}
	}); n > 2 {
		t.Errorf("RoleHash allocates %v times, want at most 2", n)
	}
}
