package fuzz

import (
	"math"
	"testing"

	"github.com/allot-sched/allot"
)

// Minimal reproductions of bugs the fuzz targets found. Those still open
// skip unless ALLOT_KNOWN_BUGS=1; drop the skip when the bug is fixed.

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
	// its own Placer.Place call; the placer keeps a call's last pod set out
	// of its overlay, so the second pod set saw the first one's GPUs free.
	if !showKnownBugs {
		t.Skip("known bug: later pod sets of a request do not see earlier ones (gang.Placer.Place keep); ALLOT_KNOWN_BUGS=1 to run")
	}
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
	// A cluster without GPUs and a running pod on its node: Build booked
	// the pod's (empty) GPU mask by writing the free-GPU word of the node's
	// first GPU, which does not exist, and panicked with an index out of
	// range (topology.State.setGPUs).
	if !showKnownBugs {
		t.Skip("known bug: topology.State.setGPUs on a node without GPUs past the last word; ALLOT_KNOWN_BUGS=1 to run")
	}
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
	// AdvanceTime adds its seconds to the clock without an overflow check:
	// MaxInt64 seconds wrap the clock to a negative time. A node whose
	// cooldown had ended is cooling again, but the per-domain counters
	// still count it, so the placer promised pods it then could not place
	// and Decide indexed past its assignments (a panic in decider.admit).
	if !showKnownBugs {
		t.Skip("known bug: AdvanceTime overflows the clock; ALLOT_KNOWN_BUGS=1 to run")
	}
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
	// Decide borrows scratch memory from a sync.Pool. Its placers kept
	// minFree entries beyond the snapshot's resource count from whatever
	// snapshot they served before (gang.Placer.setPodSet resets only the
	// first t.Resource entries), and Placer.Never, seeing them, declined
	// to prove a never-fit that a fresh placer proves: the same request on
	// the same snapshot got a different message depending on what the
	// process had decided before.
	if !showKnownBugs {
		t.Skip("known bug: stale gang.Placer.minFree across snapshots makes Decide depend on earlier decisions; ALLOT_KNOWN_BUGS=1 to run")
	}
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
