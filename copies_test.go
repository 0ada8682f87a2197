package allot_test

import (
	"testing"

	"github.com/allot-sched/allot"
)

// TestEvictionLogIsCopied writes into what Evictions and EvictionsSince
// return: the log every version shares stays as it was.
func TestEvictionLogIsCopied(t *testing.T) {
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Nodes:     []allot.Node{{Name: "n0", Flavor: "f", Capacity: allot.Resources{"gpu": 8}}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}}},
		Running: []allot.Workload{{ID: "a", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 1,
			PerPod: allot.Resources{"gpu": 8}, Flavor: "f", Nodes: []string{"n0"}}}}},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(s)
	snap, err := st.Apply(allot.Evict{ID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if n := snap.NumEvictions(); n != 1 {
		t.Fatalf("NumEvictions = %d, want 1", n)
	}
	snap.Evictions()[0].ID = "changed"
	snap.EvictionsSince(0)[0].Queue = "changed"
	if e := snap.Evictions()[0]; e.ID != "a" || e.Queue != "q" {
		t.Fatalf("a reader changed the shared eviction log: %+v", e)
	}
	if got := snap.EvictionsSince(1); len(got) != 0 {
		t.Fatalf("EvictionsSince(1) = %v, want none", got)
	}
	if got := snap.EvictionsSince(-1); len(got) != 0 {
		t.Fatalf("EvictionsSince(-1) = %v, want none", got)
	}
}

// TestBuilderAndSubmitKeepNoCallerMemory changes the maps and slices of
// the workloads given to Build and Submit afterwards: no version sees it.
func TestBuilderAndSubmitKeepNoCallerMemory(t *testing.T) {
	mk := func(id string) allot.Workload {
		return allot.Workload{ID: id, Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 1,
			PerPod: allot.Resources{"gpu": 1}, Flavors: []string{"f"}, Tokens: nil,
			Topology: allot.TopologyRequest{Slices: []allot.Slice{{Level: "rack", Size: 1}}}}}}
	}
	built, submitted := mk("built"), mk("submitted")
	b := allot.Builder{
		Resources: []string{"gpu"},
		Levels:    []string{"rack"},
		Flavors:   []allot.Flavor{{Name: "f"}, {Name: "g"}},
		Nodes:     []allot.Node{{Name: "n0", Flavor: "f", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8}}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}}},
		Pending: []allot.Workload{built},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(s)
	if _, err := st.Apply(allot.Submit{Workload: submitted}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []allot.Workload{built, submitted} {
		w.PodSets[0].PerPod["gpu"] = 7
		w.PodSets[0].Flavors[0] = "g"
		w.PodSets[0].Topology.Slices[0].Size = 9
	}
	for _, id := range []string{"built", "submitted"} {
		w, ok := st.Load().Pending(id)
		if !ok {
			t.Fatalf("%s is not pending", id)
		}
		ps := w.PodSets[0]
		if ps.PerPod["gpu"] != 1 || ps.Flavors[0] != "f" || ps.Topology.Slices[0].Size != 1 {
			t.Fatalf("%s: the caller's change reached the snapshot: %+v", id, ps)
		}
	}
}
