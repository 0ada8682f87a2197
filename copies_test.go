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
	built, submitted, running := mk("built"), mk("submitted"), mk("running")
	running.PodSets[0].Flavor, running.PodSets[0].Nodes = "f", []string{"n0"}
	b := allot.Builder{
		Resources: []string{"gpu"},
		Levels:    []string{"rack"},
		Flavors:   []allot.Flavor{{Name: "f"}, {Name: "g"}},
		Nodes:     []allot.Node{{Name: "n0", Flavor: "f", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8}}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}}},
		Pending: []allot.Workload{built},
		Running: []allot.Workload{running},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(s)
	if _, err := st.Apply(allot.Submit{Workload: submitted}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []allot.Workload{built, submitted, running} {
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
	w, _ := st.Load().Running("running")
	if ps := w.PodSets[0]; ps.PerPod["gpu"] != 1 || ps.Flavors[0] != "f" || ps.Topology.Slices[0].Size != 1 {
		t.Fatalf("running: the caller's change reached the snapshot: %+v", ps)
	}
}

// TestBuilderAndEventsKeepNoCallerQueues changes the queues and cohorts
// given to Build, SetQueue and SetCohort afterwards: the configuration a
// later event resolves quota from stays as given.
func TestBuilderAndEventsKeepNoCallerQueues(t *testing.T) {
	w := 2.0
	quota := func(n int64) []allot.FlavorQuota {
		return []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: n}}}}
	}
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Cohorts:   []allot.Cohort{{Name: "c", Quota: quota(4), FairSharing: &allot.QueueFairSharing{Weight: &w}}},
		Queues:    []allot.Queue{{Name: "q", Cohort: "c", Quota: quota(8), Tenants: []string{"t"}}},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(s)
	set := allot.SetQueue{Queue: allot.Queue{Name: "r", Cohort: "c", Quota: quota(2)}}
	if _, err := st.Apply(set); err != nil {
		t.Fatal(err)
	}
	b.Queues[0].Quota[0].Resources[0].Nominal = 100
	b.Queues[0].Tenants[0] = "other"
	b.Cohorts[0].Quota[0].Resources[0].Nominal = 100
	w = 9
	set.Queue.Quota[0].Resources[0].Nominal = 100
	// A configuration change resolves every queue's quota again.
	snap, err := st.Apply(allot.SetCohort{Cohort: allot.Cohort{Name: "d"}})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := snap.Queue("q")
	r, _ := snap.Queue("r")
	if q.Quota[0].Resources[0].Nominal != 8 || q.Tenants[0] != "t" || r.Quota[0].Resources[0].Nominal != 2 {
		t.Fatalf("the caller's change reached the snapshot: q %+v, r %+v", q, r)
	}
	d := allot.Decide(snap, allot.Request{ID: "x", Queue: "q", Tenant: "t", PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 14}}}})
	if d.Verdict != allot.VerdictAdmit {
		t.Fatalf("14 of 8+2+4 gpu: %v %v: %s", d.Verdict, d.Reason, d.Message)
	}
}
