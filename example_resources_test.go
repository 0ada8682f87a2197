package allot_test

import (
	"encoding/json"
	"fmt"

	"github.com/allot-sched/allot"
)

// A cluster described in Kubernetes' terms: the GPU is nvidia.com/gpu,
// quantities are Kubernetes strings, and nodes and pods carry
// ephemeral-storage, which the snapshot ignores.
func ExampleBuilder_kubernetes() {
	var node allot.Node
	_ = json.Unmarshal([]byte(`{"name": "n0", "flavor": "h100", "labels": {"rack": "r0"},
		"capacity": {"nvidia.com/gpu": "8", "cpu": "96", "memory": "1536Gi", "ephemeral-storage": "3Ti"}}`), &node)
	b := allot.Builder{
		Resources:        []string{"nvidia.com/gpu", "cpu", "memory"},
		GPUResource:      "nvidia.com/gpu",
		IgnoredResources: []string{"ephemeral-storage"},
		Levels:           []string{"rack"},
		Flavors:          []allot.Flavor{{Name: "h100"}},
		Nodes:            []allot.Node{node},
		Queues: []allot.Queue{{Name: "team-a", Quota: []allot.FlavorQuota{{Flavor: "h100", Resources: []allot.ResourceQuota{
			{Name: "nvidia.com/gpu", Nominal: 8}, {Name: "cpu", Nominal: 96_000}, {Name: "memory", Nominal: 1536 << 30}}}}}},
	}
	snap, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	var req allot.Request
	_ = json.Unmarshal([]byte(`{"id": "train", "queue": "team-a", "podSets": [{"name": "main", "count": 1,
		"perPod": {"nvidia.com/gpu": "4", "cpu": "1500m", "memory": "64Gi", "ephemeral-storage": "10Gi"}}]}`), &req)
	d := allot.Decide(snap, req)
	fmt.Println(d.Verdict, d.Message)
	fmt.Println("GPUs", d.Placement[0].GPUs, "of", snap.FreeGPUs(), "free")

	// Left undeclared as the GPU, nvidia.com/gpu would be an ordinary
	// resource and its GPUs never placed: Build refuses that.
	b.GPUResource = ""
	_, err = b.Build()
	fmt.Println(err)
	// Output:
	// Admit admitted on h100: nvidia.com/gpu 4/8 of nominal after admission; 1 pod on 1 node n0
	// GPUs [0 1 2 3] of 8 free
	// allot: a GPU under a resource not declared as the GPU: nodes[0].capacity.nvidia.com/gpu: node "n0" has 8 nvidia.com/gpu, which names a GPU, but the snapshot has no GPU resource: set gpuResource to "nvidia.com/gpu", or ignore it
}
