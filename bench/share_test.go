package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/allot-sched/allot"
)

// shareCluster is the fragmented benchmark cluster with every GPU
// shareable (GPU shares as gpu-milli) and, on a quarter of the nodes,
// fractional pods sharing their first free GPUs.
func shareCluster(b testing.TB, n int) *allot.Snapshot {
	b.Helper()
	bl := Cluster(n, true)
	bl.Resources = []string{"gpu", "gpu-milli", "cpu", "memory"}
	bl.GPUShareResource = "gpu-milli"
	q := &bl.Queues[0].Quota[0]
	q.Resources = append(q.Resources, allot.ResourceQuota{Name: "gpu-milli", Nominal: int64(n) * gpusPerNode * 1000})
	used := make(map[string]int64, len(bl.Running))
	for _, w := range bl.Running {
		used[w.PodSets[0].Nodes[0]] = w.PodSets[0].PerPod["gpu"]
	}
	rng := rand.New(rand.NewPCG(7, 42))
	for i := range bl.Nodes {
		bl.Nodes[i].ShareableGPUs = allot.GPUSet(1<<gpusPerNode - 1)
		name := bl.Nodes[i].Name
		if used[name] == gpusPerNode || rng.IntN(4) != 0 {
			continue
		}
		// The lowest free GPU, past those the node's whole-GPU pod holds.
		gpu := int(used[name])
		for k := range 1 + rng.IntN(3) {
			bl.Running = append(bl.Running, allot.Workload{ID: fmt.Sprintf("share-%d-%d", i, k), Queue: "train",
				PodSets: []allot.PodSet{{Name: "main", Count: 1, Flavor: "h100", Nodes: []string{name}, GPUIndices: [][]int{{gpu}},
					PerPod: allot.Resources{"gpu-milli": int64(100 + rng.IntN(200)), "cpu": 1_000}}}})
		}
	}
	s, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkDecideShare decides fractional requests on shareGPUs clusters:
// one pod (the best-fit GPU over every node), and a gang of pods that
// prefers one rack.
func BenchmarkDecideShare(b *testing.B) {
	for _, n := range []int{1024, 10240} {
		s := shareCluster(b, n)
		cases := []struct {
			name string
			req  allot.Request
		}{
			{"1pod_x250milli", allot.Request{ID: "r", Queue: "train", PodSets: []allot.PodSet{{Name: "main", Count: 1,
				PerPod: allot.Resources{"gpu-milli": 250, "cpu": 1_000}}}}},
			{"16pod_x500milli_pref_rack", allot.Request{ID: "r", Queue: "train", PodSets: []allot.PodSet{{Name: "main", Count: 16,
				PerPod: allot.Resources{"gpu-milli": 500, "cpu": 1_000}, Topology: allot.TopologyRequest{Preferred: "rack"}}}}},
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("nodes=%d/%s", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				var d allot.Decision
				for b.Loop() {
					allot.DecideInto(s, c.req, &d)
				}
				if d.Verdict != allot.VerdictAdmit {
					b.Fatalf("%v %v: %s", d.Verdict, d.Reason, d.Message)
				}
				for _, p := range d.Placement {
					if p.GPUs.Len() != 1 {
						b.Fatalf("a fractional pod on GPUs %v", p.GPUs)
					}
				}
			})
		}
	}
}
