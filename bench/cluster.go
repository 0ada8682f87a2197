package bench

import (
	"fmt"
	"math/rand/v2"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/quota"
)

const (
	gpusPerNode   = 8
	nodesPerRack  = 16
	racksPerBlock = 8
)

// Cluster describes the benchmark cluster of n nodes, fragmented or not, with
// one queue "train" on flavor "h100" whose nominal quota is the whole
// cluster. A node has 2 TiB of memory, less where the cluster's total would
// pass quota.MaxQuantity (past about a million nodes): no benchmark request
// asks for memory, so only the quota's figure changes.
func Cluster(n int, fragmented bool) *allot.Builder {
	mem := int64(2 << 40)
	if n > 0 && int64(n)*mem > quota.MaxQuantity {
		mem = quota.MaxQuantity / int64(n)
	}
	b := &allot.Builder{
		Levels:  []string{"block", "rack"},
		Flavors: []allot.Flavor{{Name: "h100"}},
		Queues: []allot.Queue{{Name: "train", Quota: []allot.FlavorQuota{{Flavor: "h100", Resources: []allot.ResourceQuota{
			{Name: "gpu", Nominal: int64(n) * gpusPerNode}, {Name: "cpu", Nominal: int64(n) * 192_000}, {Name: "memory", Nominal: int64(n) * mem},
		}}}}},
	}
	b.Nodes = make([]allot.Node, n)
	for i := range b.Nodes {
		rack := i / nodesPerRack
		b.Nodes[i] = allot.Node{
			Name:     fmt.Sprintf("n%d", i),
			Flavor:   "h100",
			Labels:   map[string]string{"block": fmt.Sprintf("b%d", rack/racksPerBlock), "rack": fmt.Sprintf("r%d", rack)},
			Capacity: allot.Resources{"gpu": gpusPerNode, "cpu": 192_000, "memory": mem},
		}
	}
	if !fragmented {
		return b
	}
	rng := rand.New(rand.NewPCG(42, 7))
	for i := range b.Nodes {
		used := 0
		switch x := rng.IntN(10); {
		case x < 6:
		case x < 8:
			used = gpusPerNode
		default:
			used = 1 + rng.IntN(7)
		}
		if used == 0 {
			continue
		}
		b.Running = append(b.Running, allot.Workload{
			ID: fmt.Sprintf("run-%d", i), Queue: "train",
			PodSets: []allot.PodSet{{Name: "main", Count: 1, Flavor: "h100", Nodes: []string{b.Nodes[i].Name},
				PerPod: allot.Resources{"gpu": int64(used), "cpu": 4_000}}},
		})
	}
	return b
}

// GangRequest is a benchmark request: pods pods of gpus GPUs each (and 4
// CPU per GPU), with a required or preferred level ("" for none).
func GangRequest(name string, pods, gpus int, required, preferred string) allot.Request {
	return allot.Request{
		ID: name, Queue: "train",
		PodSets: []allot.PodSet{{Name: "workers", Count: int32(pods),
			PerPod:   allot.Resources{"gpu": int64(gpus), "cpu": int64(4_000 * gpus)},
			Topology: allot.TopologyRequest{Required: required, Preferred: preferred}}},
	}
}

// GangCase is one benchmark request and whether it must be admitted.
type GangCase struct {
	Name  string
	Req   allot.Request
	Admit bool
}

// GangCases are the requests of BenchmarkDecideGang.
func GangCases() []GangCase {
	return []GangCase{
		{"1pod_x8gpu_pref_rack", GangRequest("g", 1, 8, "", "rack"), true},
		{"8pod_x8gpu_req_rack", GangRequest("g", 8, 8, "rack", ""), true},
		{"64pod_x8gpu_req_block", GangRequest("g", 64, 8, "block", ""), true},
		{"256pod_x8gpu_pref_block", GangRequest("g", 256, 8, "", "block"), true},
		{"64pod_x1gpu_pref_rack", GangRequest("g", 64, 1, "", "rack"), true},
		{"17pod_x8gpu_req_rack", GangRequest("g", 17, 8, "rack", ""), false},
	}
}
