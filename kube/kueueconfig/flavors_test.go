package kueueconfig_test

import (
	"errors"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/yaml"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// taintedCluster is a topology-aware ResourceFlavor selecting its nodes by
// label, with a nodeTaint and a toleration of its own, and two of its
// nodes: one tainted only as the flavor says, one also under maintenance.
const taintedCluster = `apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: t}
spec:
  levels:
  - nodeLabel: rack
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec:
  topologyName: t
  nodeLabels: {pool: h100}
  nodeTaints:
  - {key: dedicated, value: research, effect: NoSchedule}
  tolerations:
  - {key: zone, operator: Exists, effect: NoSchedule}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 16}
---
apiVersion: v1
kind: Namespace
metadata: {name: ns}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ns}
spec: {clusterQueue: cq}
---
apiVersion: v1
kind: Node
metadata:
  name: h-0
  labels: {pool: h100, rack: r0, kubernetes.io/hostname: h-0, unrelated: x}
spec:
  taints:
  - {key: dedicated, value: research, effect: NoSchedule}
  - {key: zone, value: cold, effect: NoSchedule}
status:
  allocatable: {nvidia.com/gpu: "8", pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Node
metadata:
  name: h-1
  labels: {pool: h100, rack: r0, kubernetes.io/hostname: h-1}
spec:
  taints:
  - {key: dedicated, value: research, effect: NoSchedule}
  - {key: maintenance, effect: NoExecute}
status:
  allocatable: {nvidia.com/gpu: "8", pods: "110"}
  conditions: [{type: Ready, status: "True"}]
`

// TestFlavorNodeSelection maps a ResourceFlavor's nodeLabels, nodeTaints
// and tolerations onto the flavor, the nodes' taints onto the nodes (no
// longer cordoned for a taint the flavor does not tolerate) and a pod
// set's tolerations onto the request; a decision then keeps the pods off
// the node whose taint they do not tolerate.
func TestFlavorNodeSelection(t *testing.T) {
	c := importTainted(t)
	b, _, err := c.Builder()
	if err != nil {
		t.Fatal(err)
	}
	wantFlavor := allot.Flavor{Name: "h100", NodeLabels: map[string]string{"pool": "h100"},
		NodeTaints:  []allot.Taint{{Key: "dedicated", Value: "research", Effect: "NoSchedule"}},
		Tolerations: []allot.Toleration{{Key: "zone", Operator: "Exists", Effect: "NoSchedule"}}}
	if len(b.Flavors) != 1 || !reflect.DeepEqual(b.Flavors[0], wantFlavor) {
		t.Fatalf("flavors %+v, want [%+v]", b.Flavors, wantFlavor)
	}
	if len(b.Nodes) != 2 {
		t.Fatalf("nodes %+v", b.Nodes)
	}
	for _, n := range b.Nodes {
		if n.Unschedulable || n.Labels["pool"] != "h100" || n.Labels["unrelated"] != "" || len(n.Taints) != 2 {
			t.Errorf("node %+v: want schedulable, its pool label kept, no other, its two taints", n)
		}
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		tolerations string
		want        allot.Verdict
		node        string
	}{
		{"no toleration", "", allot.VerdictReject, ""},
		{"the flavor's taint", "        tolerations: [{key: dedicated, operator: Equal, value: research, effect: NoSchedule}]\n", allot.VerdictAdmit, "h-0"},
		{"and maintenance", "        tolerations: [{key: dedicated, operator: Exists}, {key: maintenance, operator: Exists, effect: NoExecute}]\n", allot.VerdictAdmit, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var wl kueue.Workload
			if err := yaml.Unmarshal([]byte(`metadata: {name: w, namespace: ns}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 2
    template:
      spec:
        containers:
        - name: c
          resources: {requests: {nvidia.com/gpu: "4"}}
`+tc.tolerations), &wl); err != nil {
				t.Fatal(err)
			}
			req, _, err := c.WorkloadRequest(&wl)
			if tc.want == allot.VerdictReject {
				// Kueue's flavor assigner finds no flavor: inadmissible.
				var ie *kueueconfig.InadmissibleError
				if !errors.As(err, &ie) || ie.Reason != kueueconfig.ReasonNoFlavor {
					t.Fatalf("request %+v, %v: want the workload inadmissible for its flavors", req, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(req.PodSets[0].Tolerations) == 0 {
				t.Fatalf("request %+v carries no tolerations", req)
			}
			d := allot.Decide(s, req)
			if d.Verdict != tc.want {
				t.Fatalf("%v %v: %s", d.Verdict, d.Reason, d.Message)
			}
			for _, p := range d.Placement {
				if tc.node != "" && p.Node != tc.node {
					t.Errorf("pod %d on %s, want %s", p.Pod, p.Node, tc.node)
				}
			}
		})
	}
}

// importTainted is the configuration of taintedCluster.
func importTainted(t *testing.T) *kueueconfig.Config {
	t.Helper()
	objs, err := kueueconfig.Decode("tainted", []byte(taintedCluster))
	if err != nil {
		t.Fatal(err)
	}
	c, err := kueueconfig.Import(objs, kueueconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestNodeRule: NodeRule stays through the flavor changes that describe
// every node as it was, and moves with each one that may not.
func TestNodeRule(t *testing.T) {
	rf := func(y string) *kueue.ResourceFlavor {
		var f kueue.ResourceFlavor
		if err := yaml.Unmarshal([]byte(y), &f); err != nil {
			t.Fatal(err)
		}
		return &f
	}
	for _, tc := range []struct {
		name  string
		edit  any // an object added or replaced
		moves bool
	}{
		{"quota-only flavor, known key", rf(`{metadata: {name: a100}, spec: {nodeLabels: {pool: a100}}}`), false},
		{"quota-only flavor, no labels", rf(`{metadata: {name: spare}}`), false},
		{"tolerations changed", rf(`{metadata: {name: h100}, spec: {topologyName: t, nodeLabels: {pool: h100}}}`), false},
		{"quota-only flavor, new key", rf(`{metadata: {name: a100}, spec: {nodeLabels: {zone: a}}}`), true},
		{"topology-aware flavor added", rf(`{metadata: {name: b200}, spec: {topologyName: t, nodeLabels: {pool: b200}}}`), true},
		{"nodeLabels changed", rf(`{metadata: {name: h100}, spec: {topologyName: t, nodeLabels: {pool: h200}}}`), true},
		{"topology gone", rf(`{metadata: {name: h100}, spec: {topologyName: other, nodeLabels: {pool: h100}}}`), true},
		{"levels changed", &kueue.Topology{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Spec: kueue.TopologySpec{Levels: []kueue.TopologyLevel{{NodeLabel: "kubernetes.io/hostname"}}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := importTainted(t)
			before := c.NodeRule()
			if err := c.Add(kueueconfig.Object{Source: "edit", Value: tc.edit}); err != nil {
				t.Fatal(err)
			}
			if moved := c.NodeRule() != before; moved != tc.moves {
				t.Fatalf("rule moved %v, want %v:\n%s\n%s", moved, tc.moves, before, c.NodeRule())
			}
		})
	}
}
