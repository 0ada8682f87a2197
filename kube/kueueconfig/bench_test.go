package kueueconfig_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/allot-sched/allot/kube/kueueconfig"
)

// largeConfig is a configuration of cqs ClusterQueues (in cohorts of ten,
// each with a LocalQueue and a namespace) over nodes Nodes of one
// topology-aware flavor, 16 nodes a rack and 16 racks a block.
func largeConfig(cqs, nodes int) []byte {
	var b strings.Builder
	b.WriteString(`apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: t}
spec:
  levels: [{nodeLabel: block}, {nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec:
  nodeLabels: {gpu: h100}
  topologyName: t
`)
	for i := range cqs {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Namespace
metadata: {name: ns-%d, labels: {team: t%d}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-%d}
spec:
  cohortName: co-%d
  namespaceSelector: {matchLabels: {team: t%d}}
  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, cpu, memory]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 64, borrowingLimit: 32}
      - {name: cpu, nominalQuota: "512"}
      - {name: memory, nominalQuota: 4Ti}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns-%d}
spec: {clusterQueue: cq-%d}
`, i, i, i, i/10, i, i, i)
	}
	for i := range nodes {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Node
metadata:
  name: n%d
  labels: {gpu: h100, block: b%d, rack: r%d, kubernetes.io/hostname: n%d}
status:
  allocatable: {nvidia.com/gpu: "8", cpu: "192", memory: 2Ti, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
`, i, i/256, i/16, i)
	}
	return []byte(b.String())
}

// BenchmarkImport imports 1,000 ClusterQueues and 10,000 Nodes (the
// issue's budget: 1 s): from decoded objects (what informers hand over),
// Import alone, which describes the configuration and builds its
// snapshot; from YAML, decoding too.
func BenchmarkImport(b *testing.B) {
	data := largeConfig(1000, 10000)
	objs, err := kueueconfig.Decode("large", data)
	if err != nil {
		b.Fatal(err)
	}
	check := func(b *testing.B, c *kueueconfig.Config) {
		bld, _, err := c.Builder()
		if err != nil || len(bld.Queues) != 1000 || len(bld.Nodes) != 10000 {
			b.Fatalf("%d queues, %d nodes: %v", len(bld.Queues), len(bld.Nodes), err)
		}
	}
	b.Run("from=objects/clusterqueues=1000/nodes=10000", func(b *testing.B) {
		b.ReportAllocs()
		var c *kueueconfig.Config
		for b.Loop() {
			if c, err = kueueconfig.Import(objs, kueueconfig.Options{}); err != nil {
				b.Fatal(err)
			}
		}
		check(b, c)
	})
	b.Run("from=yaml/clusterqueues=1000/nodes=10000", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		var c *kueueconfig.Config
		for b.Loop() {
			objs, err := kueueconfig.Decode("large", data)
			if err != nil {
				b.Fatal(err)
			}
			if c, err = kueueconfig.Import(objs, kueueconfig.Options{}); err != nil {
				b.Fatal(err)
			}
		}
		check(b, c)
	})
}
