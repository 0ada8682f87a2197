package kueueconfig_test

import (
	"fmt"

	"github.com/allot-sched/allot/kube/kueueconfig"
)

// Kueue refuses a ClusterQueue that may borrow without a cohort to borrow
// from; so does the importer, with Kueue's message at Kueue's field.
func ExampleImport_refused() {
	objs, err := kueueconfig.Decode("training-cq.yaml", []byte(`
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: training-cq
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: a100-80gb
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 32
        borrowingLimit: 8
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = kueueconfig.Import(objs, kueueconfig.Options{})
	fmt.Println(err)
	// Output:
	// training-cq.yaml#0: clusterqueues/training-cq: spec: Invalid value: "object": borrowingLimit must be nil when cohort is empty
}

// A ClusterQueue as allot's queue, and what it does not model.
func ExampleConfig_Queue() {
	objs, _ := kueueconfig.Decode("team-a.yaml", []byte(`
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {team: a}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a-cq}
spec:
  cohortName: research
  namespaceSelector: {matchLabels: {team: a}}
  stopPolicy: HoldAndDrain
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, cpu]
    flavors:
    - name: a100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 16, lendingLimit: 8}
      - {name: cpu, nominalQuota: 250500m}
`))
	c, err := kueueconfig.Import(objs, kueueconfig.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	q, warns, _ := c.Queue("team-a-cq")
	fmt.Println(q.Cohort, q.NamespaceSelector, q.Hold, q.Quota[0].Resources[0].Nominal, *q.Quota[0].Resources[0].LendingLimit, q.Quota[0].Resources[1].Nominal)
	for _, w := range warns {
		fmt.Println(w)
	}
	// Output:
	// research team=a true 16 8 250500
	// clusterqueues/team-a-cq: spec.stopPolicy: HoldAndDrain: held; allot does not evict the admitted workloads Kueue drains (they stay running)
}
