package allot_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench"
	"github.com/allot-sched/allot/quota"
)

func TestDecideRejectsInvalidRequests(t *testing.T) {
	s, err := func() (*allot.Snapshot, error) { b := baseBuilder(); return b.Build() }()
	if err != nil {
		t.Fatal(err)
	}
	ok := func() allot.Request {
		return allot.Request{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 1}}}}
	}
	cases := []struct {
		name   string
		mutate func(*allot.Request)
		field  string
	}{
		{"empty id", func(r *allot.Request) { r.ID = "" }, "id"},
		{"empty queue", func(r *allot.Request) { r.Queue = "" }, "queue"},
		{"no pod sets", func(r *allot.Request) { r.PodSets = nil }, "podSets"},
		{"negative count", func(r *allot.Request) { r.PodSets[0].Count = -2 }, "podSets[0].count"},
		{"zero count", func(r *allot.Request) { r.PodSets[0].Count = 0 }, "podSets[0].count"},
		{"negative quantity", func(r *allot.Request) { r.PodSets[0].PerPod["cpu"] = -1 }, "podSets[0].perPod.cpu"},
		{"overflowing quantity", func(r *allot.Request) { r.PodSets[0].PerPod["cpu"] = 1 << 62 }, "podSets[0].perPod.cpu"},
		{"overflowing product", func(r *allot.Request) { r.PodSets[0].Count = 1 << 20; r.PodSets[0].PerPod["cpu"] = 1 << 42 }, "podSets[0].perPod.cpu"},
		{"quantity just past the bound", func(r *allot.Request) { r.PodSets[0].PerPod["cpu"] = quota.MaxQuantity + 1 }, "podSets[0].perPod.cpu"},
		{"product just past the bound", func(r *allot.Request) { r.PodSets[0].Count = 2; r.PodSets[0].PerPod["cpu"] = quota.MaxQuantity/2 + 1 }, "podSets[0].perPod.cpu"},
		{"pod sets past the bound together", func(r *allot.Request) {
			r.PodSets[0].PerPod["cpu"] = quota.MaxQuantity/2 + 1
			r.PodSets = append(r.PodSets, allot.PodSet{Name: "second", Count: 1, PerPod: allot.Resources{"cpu": quota.MaxQuantity / 2}})
		}, "podSets[1].perPod.cpu"},
		{"unknown resource", func(r *allot.Request) { r.PodSets[0].PerPod["rdma"] = 1 }, "podSets[0].perPod.rdma"},
		{"unknown level", func(r *allot.Request) { r.PodSets[0].Topology.Required = "zone" }, "podSets[0].topology.required"},
		{"both levels", func(r *allot.Request) {
			r.PodSets[0].Topology.Required, r.PodSets[0].Topology.Preferred = "rack", "rack"
		}, "podSets[0].topology"},
		{"slice does not divide", func(r *allot.Request) {
			r.PodSets[0].Count = 6
			r.PodSets[0].Topology.Slices = []allot.Slice{{Level: "node", Size: 4}}
		}, "podSets[0].topology.slices[0].size"},
		{"duplicate pod set", func(r *allot.Request) { r.PodSets = append(r.PodSets, r.PodSets[0]) }, "podSets[1].name"},
		{"unknown flavor", func(r *allot.Request) { r.PodSets[0].Flavors = []string{"b200"} }, "podSets[0].flavors[0]"},
		{"tokens undeclared", func(r *allot.Request) { r.PodSets[0].Tokens = &allot.Tokens{Prompt: 1} }, "podSets[0].tokens"},
		{"placement in a request", func(r *allot.Request) { r.PodSets[0].Nodes = []string{"n0"} }, "podSets[0].nodes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ok()
			c.mutate(&r)
			d := allot.Decide(s, r)
			if d.Verdict != allot.VerdictReject || d.Reason != allot.InvalidRequest {
				t.Fatalf("got %v %v: %s", d.Verdict, d.Reason, d.Message)
			}
			if !strings.HasPrefix(d.Message, c.field+":") {
				t.Fatalf("message %q does not name %q", d.Message, c.field)
			}
			if len(d.Trail) != 1 || d.Trail[0].Stage != allot.StageValidate || d.Trail[0].Passed {
				t.Fatalf("trail %+v", d.Trail)
			}
		})
	}
	if d := allot.Decide(s, ok()); d.Verdict != allot.VerdictAdmit {
		t.Fatalf("the valid request: %v %s", d.Reason, d.Message)
	}
}

func TestDecisionJSON(t *testing.T) {
	b := baseBuilder()
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d := allot.Decide(s, allot.Request{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 2, PerPod: allot.Resources{"gpu": 2},
		Topology: allot.TopologyRequest{Required: "rack"}}}})
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Verdict   string `json:"verdict"`
		Reason    string `json:"reason"`
		Message   string `json:"message"`
		Placement []struct {
			Node string `json:"node"`
			GPUs []int  `json:"gpus"`
		} `json:"placement"`
		Trail []struct {
			Stage  string `json:"stage"`
			Passed bool   `json:"passed"`
		} `json:"trail"`
		Version uint64 `json:"version"`
	}
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back.Verdict != "Admit" || back.Reason != "Fits" || len(back.Placement) != 2 || len(back.Placement[0].GPUs) != 2 {
		t.Fatalf("%s", out)
	}
	stages := []string{}
	for _, c := range back.Trail {
		stages = append(stages, c.Stage)
		if !c.Passed {
			t.Fatalf("failed check in an admission: %s", out)
		}
	}
	if strings.Join(stages, ",") != "validate,authorize,hold,quota,placement" {
		t.Fatalf("trail stages %v", stages)
	}
	var again allot.Decision
	if err := json.Unmarshal(out, &again); err != nil {
		t.Fatalf("a decision must read back: %v", err)
	}
	if again.Verdict != d.Verdict || again.Reason != d.Reason || again.Placement[1] != d.Placement[1] {
		t.Fatalf("round trip: %+v", again)
	}
}

func TestReasonCodes(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range allot.Reasons() {
		name := r.String()
		if name == "" || strings.HasPrefix(name, "Reason(") || seen[name] {
			t.Fatalf("reason %d has name %q", r, name)
		}
		seen[name] = true
		var back allot.Reason
		if err := back.UnmarshalText([]byte(name)); err != nil || back != r {
			t.Fatalf("%s does not round-trip: %v", name, err)
		}
		if r.Verdict() == 0 {
			t.Fatalf("%s has no verdict", name)
		}
	}
	// DESIGN.md declares 22; PriorityNotAllowed came with priority
	// classes.
	if len(seen) != 23 {
		t.Fatalf("%d reason codes, want DESIGN.md's 22 and PriorityNotAllowed", len(seen))
	}
}

// TestDecideIntoDoesNotAllocate pins the hot path at zero allocations once
// the decision's memory has grown: a quota-only admission and one placed on
// the fragmented 1024-node cluster of bench's benchmarks, with and without
// pending workloads in the snapshot (measured: none of them allocates).
func TestDecideIntoDoesNotAllocate(t *testing.T) {
	quotaOnly := func(pending int) *allot.Snapshot {
		b := allot.Builder{Resources: []string{"gpu"}, Flavors: []allot.Flavor{{Name: "default"}}, Now: 1000,
			Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "default", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}}}}
		for i := range pending {
			b.Pending = append(b.Pending, allot.Workload{ID: fmt.Sprintf("p%03d", i), Queue: "q", SubmittedAt: int64(i),
				PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 4}}}})
		}
		s, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	placed := func(pending int) *allot.Snapshot {
		s, _ := allocCluster(t, pending)
		return s
	}
	quotaReq := allot.Request{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 4}}}}
	headReq := allot.Request{ID: "p000", Queue: "q", PodSets: quotaReq.PodSets} // the pending head itself
	gang := bench.GangRequest("g", 8, 8, "rack", "")
	for _, c := range []struct {
		name string
		s    *allot.Snapshot
		r    allot.Request
	}{
		{"quotaOnly/pending=0", quotaOnly(0), quotaReq},
		{"quotaOnly/pending=64", quotaOnly(64), quotaReq},
		{"quotaOnly/pending=64/request=head", quotaOnly(64), headReq},
		{"placed/pending=0", placed(0), gang},
		{"placed/pending=512", placed(512), gang},
	} {
		t.Run(c.name, func(t *testing.T) {
			var d allot.Decision
			allot.DecideInto(c.s, c.r, &d)
			if n := testing.AllocsPerRun(200, func() { allot.DecideInto(c.s, c.r, &d) }); n != 0 {
				t.Fatalf("%v allocations per decision", n)
			}
			if d.Reason != allot.Fits {
				t.Fatal(d.Message)
			}
		})
	}
}

func TestSnapshotFragmentation(t *testing.T) {
	// Two 8-GPU nodes, each with 3 GPUs free; pending: one 8-GPU pod and
	// one 2-GPU pod. No node holds the 8-GPU pod, both hold the 2-GPU one:
	// no node is stranded, and half the pending pods strand all 6 free GPUs.
	b := baseBuilder()
	b.Nodes[0].GPUGroups = nil
	b.Running = []allot.Workload{running("a", "n0", 5), running("b", "n1", 5)}
	b.Pending = []allot.Workload{
		{ID: "big", Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 8}}}},
		{ID: "small", Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 2}}}},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	f := s.Fragmentation()
	if f.NodesWithFree != 2 || f.StrandedNodes != 0 || f.FreeGPUs != 6 || f.ExpectedStranded != 3 || f.StrandedShare != 0.5 {
		t.Fatalf("%+v", f)
	}
	b.Pending = b.Pending[:1]
	s, err = b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if f := s.Fragmentation(); f.StrandedNodes != 2 || f.NodeShare != 1 || f.ExpectedStranded != 6 {
		t.Fatalf("only the big pod pending: %+v", f)
	}
}

// TestDecideRefusesARunningID: a request whose ID already runs is an
// invalid request, not a second admission that Commit would refuse.
func TestDecideRefusesARunningID(t *testing.T) {
	b := baseBuilder()
	b.Running = []allot.Workload{running("w", "n0", 2)}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d := allot.Decide(s, allot.Request{ID: "w", Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 1}}}})
	if d.Verdict != allot.VerdictReject || d.Reason != allot.InvalidRequest || !strings.Contains(d.Message, `"w" is already running`) {
		t.Fatalf("%v %v: %s", d.Verdict, d.Reason, d.Message)
	}
	if d := allot.Decide(s, allot.Request{ID: "v", Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 1}}}}); d.Verdict != allot.VerdictAdmit {
		t.Fatalf("another ID: %v %s", d.Reason, d.Message)
	}
}

// TestTryNextFlavorRemembersEveryDeferredFlavor: with whenCanBorrow
// TryNextFlavor, every flavor that fits only by borrowing waits for the
// second pass, however many there are. Here 20 flavors all need borrowing
// and only the last has a node the request fits on.
func TestTryNextFlavorRemembersEveryDeferredFlavor(t *testing.T) {
	const flavors = 20
	b := &allot.Builder{
		Resources: []string{"gpu"},
		Levels:    []string{"rack"},
		Cohorts:   []allot.Cohort{{Name: "co"}},
	}
	var mine, lent []allot.FlavorQuota
	for f := 0; f < flavors; f++ {
		name := fmt.Sprintf("f%02d", f)
		b.Flavors = append(b.Flavors, allot.Flavor{Name: name})
		gpus := int64(2) // too small for the request
		if f == flavors-1 {
			gpus = 8
		}
		b.Nodes = append(b.Nodes, allot.Node{Name: "n-" + name, Flavor: name, Labels: map[string]string{"rack": "r" + name},
			Capacity: allot.Resources{"gpu": gpus}})
		mine = append(mine, allot.FlavorQuota{Flavor: name, Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 0}}})
		lent = append(lent, allot.FlavorQuota{Flavor: name, Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}})
	}
	b.Queues = []allot.Queue{
		{Name: "q", Cohort: "co", Quota: mine, FlavorFungibility: allot.FlavorFungibility{WhenCanBorrow: "TryNextFlavor"}},
		{Name: "lender", Cohort: "co", Quota: lent},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d := allot.Decide(s, allot.Request{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 4}}}})
	if d.Verdict != allot.VerdictAdmit || len(d.Flavors) != 1 || d.Flavors[0].Flavor != fmt.Sprintf("f%02d", flavors-1) || len(d.Borrowing) == 0 {
		t.Fatalf("want admission on the last flavor, borrowing; got %v %v %+v borrowing=%v: %s", d.Verdict, d.Reason, d.Flavors, d.Borrowing, d.Message)
	}
}
