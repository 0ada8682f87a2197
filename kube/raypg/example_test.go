package raypg_test

import (
	"fmt"

	"github.com/allot-sched/allot/kube/raypg"
)

// A placement group of a driver bundle and four GPU workers, packed
// strictly onto one node: two pod sets in one group, required on a node.
func ExampleRequest() {
	pg := raypg.PlacementGroup{Name: "train", Strategy: raypg.StrictPack, Bundles: []raypg.Bundle{
		{"CPU": 4}, {"GPU": 1, "CPU": 2}, {"GPU": 1, "CPU": 2}, {"GPU": 1, "CPU": 2}, {"GPU": 1, "CPU": 2},
	}}
	req, warns, err := raypg.Request(pg, "train", "team-a")
	if err != nil {
		panic(err)
	}
	for _, ps := range req.PodSets {
		fmt.Printf("%s: %d × %v, required %s, group %s\n", ps.Name, ps.Count, ps.PerPod, ps.Topology.Required, ps.Topology.Group)
	}
	fmt.Println(len(warns), "warnings")
	// Output:
	// bundle-0: 1 × map[cpu:4000], required node, group placement-group
	// bundle-1: 4 × map[cpu:2000 gpu:1], required node, group placement-group
	// 0 warnings
}
