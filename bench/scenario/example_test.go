package scenario_test

import (
	"fmt"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/scenario"
)

// A snapshot saved as a scenario file, with the request to decide on it:
// Parse reads the file back to a snapshot that decides as the original
// does, a production state turned into a repro (allot export, allot
// decide).
func ExampleMarshal() {
	b := allot.Builder{
		Now:         3600,
		Resources:   []string{"nvidia.com/gpu"},
		GPUResource: "nvidia.com/gpu",
		Flavors:     []allot.Flavor{{Name: "h100"}},
		Nodes:       []allot.Node{{Name: "n0", Flavor: "h100", Capacity: allot.Resources{"nvidia.com/gpu": 8}}},
		Queues: []allot.Queue{{Name: "team-a", Quota: []allot.FlavorQuota{{Flavor: "h100",
			Resources: []allot.ResourceQuota{{Name: "nvidia.com/gpu", Nominal: 8}}}}}},
		Running: []allot.Workload{{ID: "train", Queue: "team-a", PodSets: []allot.PodSet{{Name: "w", Count: 1, Flavor: "h100",
			Nodes: []string{"n0"}, PerPod: allot.Resources{"nvidia.com/gpu": 2}}}}},
	}
	snap, err := b.Build()
	if err != nil {
		panic(err)
	}
	req := allot.Request{ID: "eval", Queue: "team-a", PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"nvidia.com/gpu": 4}}}}
	data, err := scenario.Marshal("saved", snap.Builder(), &req)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s", data)

	s, err := scenario.Parse("saved.json", data)
	if err != nil {
		panic(err)
	}
	d, err := s.Decide()
	fmt.Println(d.Verdict, d.Reason, "|", allot.Decide(snap, req).Message == d.Message, err)
	// Output:
	// {
	//   "name": "saved",
	//   "now": 3600,
	//   "resources": [
	//     "nvidia.com/gpu"
	//   ],
	//   "gpuResource": "nvidia.com/gpu",
	//   "flavors": [
	//     {
	//       "name": "h100"
	//     }
	//   ],
	//   "nodes": [
	//     {
	//       "name": "n0",
	//       "flavor": "h100",
	//       "capacity": {
	//         "nvidia.com/gpu": 8
	//       }
	//     }
	//   ],
	//   "queues": [
	//     {
	//       "name": "team-a",
	//       "quota": {
	//         "h100": {
	//           "nvidia.com/gpu": {
	//             "nominal": 8
	//           }
	//         }
	//       }
	//     }
	//   ],
	//   "running": [
	//     {
	//       "id": "train",
	//       "queue": "team-a",
	//       "podSets": [
	//         {
	//           "name": "w",
	//           "count": 1,
	//           "perPod": {
	//             "nvidia.com/gpu": 2
	//           },
	//           "flavor": "h100",
	//           "nodes": [
	//             "n0"
	//           ],
	//           "gpuIndices": [
	//             [
	//               0,
	//               1
	//             ]
	//           ]
	//         }
	//       ]
	//     }
	//   ],
	//   "request": {
	//     "id": "eval",
	//     "queue": "team-a",
	//     "podSets": [
	//       {
	//         "name": "w",
	//         "count": 1,
	//         "perPod": {
	//           "nvidia.com/gpu": 4
	//         }
	//       }
	//     ]
	//   }
	// }
	// Admit Fits | true <nil>
}
