package fuzz

import (
	"math"
	"testing"

	"github.com/allot-sched/allot"
)

// Minimal reproductions of bugs the fuzz targets found, kept as regression
// tests: each pins the behaviour that the fix established.

// oneNode is a snapshot of one 8-GPU node and a queue with room for 16.
func oneNode(t *testing.T, running ...allot.Workload) *allot.Snapshot {
	t.Helper()
	b := allot.Builder{
		Flavors: []allot.Flavor{{Name: "f"}},
		Nodes:   []allot.Node{{Name: "n0", Flavor: "f", Capacity: allot.Resources{"gpu": 8, "cpu": 8000}}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{
			{Name: "gpu", Nominal: 16}, {Name: "cpu", Nominal: 16000}}}}}},
		Running: running,
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRegressTwoPodSetsShareNoGPU(t *testing.T) {
	// Two pod sets of one 8-GPU pod each on a single 8-GPU node: only one
	// fits, so the request must wait. The decider places each pod set with
	// its own Placer.Place call, and a later call must see the pods of the
	// earlier ones in the placer's overlay rather than their GPUs free.
	s := oneNode(t)
	r := allot.Request{ID: "r", Queue: "q", PodSets: []allot.PodSet{
		{Name: "a", Count: 1, PerPod: allot.Resources{"gpu": 8}},
		{Name: "b", Count: 1, PerPod: allot.Resources{"gpu": 8}},
	}}
	d := allot.Decide(s, r)
	if d.Verdict == allot.VerdictAdmit {
		t.Fatalf("admitted 16 GPUs on an 8-GPU node: %+v", d.Placement)
	}
}

func TestRegressBuildRunningOnGPUlessNode(t *testing.T) {
	// A cluster without GPUs and a running pod on its node: booking the
	// pod's empty GPU mask touches no GPU, so Build succeeds and records
	// the pod as running.
	b := allot.Builder{
		Flavors: []allot.Flavor{{Name: "f"}},
		Nodes:   []allot.Node{{Name: "n0", Flavor: "f", Capacity: allot.Resources{"cpu": 1000}}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{
			{Name: "cpu", Nominal: 1000}}}}}},
		Running: []allot.Workload{{ID: "w", Queue: "q", PodSets: []allot.PodSet{
			{Name: "ps", Count: 1, PerPod: allot.Resources{"cpu": 100}, Flavor: "f", Nodes: []string{"n0"}}}}},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := s.RunningOn("n0"); len(got) != 1 {
		t.Errorf("running on n0: %v", got)
	}
}

func TestRegressAdvanceTimeOverflow(t *testing.T) {
	// AdvanceTime must refuse seconds that take the clock past MaxInt64.
	// A wrapped, negative clock would make a node whose cooldown had ended
	// cool again while the per-domain counters still count it, so the
	// placer would promise pods it could not place and Decide would index
	// past its assignments (a panic in decider.admit). Deciding afterwards
	// must not panic.
	b := allot.Builder{
		Now:     100_000,
		Flavors: []allot.Flavor{{Name: "f"}},
		Nodes:   []allot.Node{{Name: "n0", Flavor: "f", Capacity: allot.Resources{"gpu": 8}, CooldownUntil: 99_995}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{
			{Name: "gpu", Nominal: 8}}}}}},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	store := allot.NewStore(s)
	if _, err := store.Apply(allot.AdvanceTime{Seconds: math.MaxInt64}); err == nil {
		t.Errorf("AdvanceTime(MaxInt64) from %d accepted: now %d", s.Now(), store.Load().Now())
	}
	r := allot.Request{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 4}}}}
	d := allot.Decide(store.Load(), r)
	t.Logf("%v %v: %s", d.Verdict, d.Reason, d.Message)
}

func TestRegressDecideIndependentOfEarlierDecisions(t *testing.T) {
	// Decide borrows scratch memory from a sync.Pool, whose placers may
	// last have served a snapshot with more resources. gang.Placer.setPodSet
	// must clear all of minFree, not only the snapshot's t.Resource
	// entries, or Placer.Never, seeing stale ones, declines to prove a
	// never-fit that a fresh placer proves. The same request on the same
	// snapshot must get the same message whatever the process decided
	// before.
	// Snapshot A has cpu and memory; a decision on it leaves the pooled
	// placers with minFree set for them.
	a := oneNode(t)
	allot.Decide(a, allot.Request{ID: "a", Queue: "q", PodSets: []allot.PodSet{
		{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 1, "cpu": 1000}}}})
	// Snapshot B declares only gpu: nodes of 1 and 4 GPUs never hold three
	// 4-GPU pods.
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Nodes: []allot.Node{{Name: "n1", Flavor: "f", Capacity: allot.Resources{"gpu": 1}},
			{Name: "n4", Flavor: "f", Capacity: allot.Resources{"gpu": 4}}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{
			{Name: "gpu", Nominal: 16}}}}}},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := allot.Request{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 3, PerPod: allot.Resources{"gpu": 4}}}}
	pooled := allot.Decide(s, r)
	var fresh allot.Decision
	allot.DecideInto(s, r, &fresh)
	if pooled.Message != fresh.Message {
		t.Errorf("the same request on the same snapshot:\n Decide:     %s\n DecideInto: %s", pooled.Message, fresh.Message)
	}
}
