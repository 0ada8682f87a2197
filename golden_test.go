package allot_test

// The golden tests lock in what allot answers today, before code moves:
// every decision of the scenario files (the project's, the shared
// conformance scenarios and the Kueue parity cases), of a fixed-seed run
// of the preemption world generator and of fixed-seed scheduling loops,
// rendered in full, with the store's state wherever a step commits, applies
// an event or drains. A change to any of them fails the test with the
// first record that differs and where it comes from (file and step, or
// case). When a change is meant, regenerate the files and review their
// diff:
//
//	go test -run Golden . ./fuzz -rewrite
//
// The golden test of the fuzz corpora lives in package fuzz, whose
// generators are test code (fuzz/golden_test.go, fuzz/testdata/golden).

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/scenario"
	"github.com/allot-sched/allot/internal/golden"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files")

// record is one entry of a golden file.
type record = golden.Record

// renderDecision is a decision as a golden file of scenarios shows it.
func renderDecision(t *testing.T, d *allot.Decision) []byte {
	t.Helper()
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatalf("json.MarshalIndent(decision): %v", err)
	}
	return b
}

// storeState is what a golden record shows of a store after a commit, an
// event or a drain: cheap to render, and what a change in the store would
// move.
type storeState struct {
	Version   uint64           `json:"version"`
	FreeGPUs  int64            `json:"freeGPUs"`
	Running   []string         `json:"running"`
	Pending   []string         `json:"pending"`
	Evictions []allot.Eviction `json:"evictions,omitempty"`
}

// renderState renders s's storeState on one line.
func renderState(t *testing.T, s *allot.Snapshot) []byte {
	t.Helper()
	return mustJSON(t, storeState{Version: s.Version(), FreeGPUs: s.FreeGPUs(), Running: s.RunningIDs(),
		Pending: s.PendingIDs(), Evictions: s.Evictions()})
}

// checkGolden compares recs with the golden file testdata/golden/name, or
// writes them there with -rewrite.
func checkGolden(t *testing.T, name string, recs []record) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), recs, *rewrite)
}

// TestGoldenScenarios replays every scenario file as replayDecisions does
// and compares the records with a golden file per folder. Scenario files
// that do not load are recorded with their error; shared folders that are
// absent are skipped.
func TestGoldenScenarios(t *testing.T) {
	for _, g := range []struct{ name, dir, golden string }{
		{"own", "testdata/scenarios", "scenarios.golden"},
		{"shared", sharedScenarios, "shared-scenarios.golden"},
		{"kueue-parity", "../shared/kueue-parity", "kueue-parity.golden"},
	} {
		t.Run(g.name, func(t *testing.T) {
			if _, err := os.Stat(g.dir); err != nil {
				t.Skipf("no scenarios at %s: %v", g.dir, err)
			}
			files, err := filepath.Glob(filepath.Join(g.dir, "*.json"))
			if err != nil {
				t.Fatal(err)
			}
			if len(files) == 0 {
				t.Fatalf("no scenarios in %s", g.dir)
			}
			slices.Sort(files)
			var recs []record
			for _, f := range files {
				// shared/scenarios/x.json or testdata/scenarios/x.json,
				// wherever the test runs from.
				src := filepath.ToSlash(strings.TrimPrefix(f, ".."+string(filepath.Separator)))
				s, err := scenario.Load(f)
				if err != nil {
					recs = append(recs, record{Source: src + " load", Body: "error: " + strings.ReplaceAll(err.Error(), f, src)})
					continue
				}
				for _, r := range replayDecisions(t, s) {
					r.Source = src + " " + r.Source
					recs = append(recs, r)
				}
			}
			checkGolden(t, g.golden, recs)
		})
	}
}

// goldenPreemptCases is how many worlds of the preemption property
// generator TestGoldenPreemptProperty records.
const goldenPreemptCases = 500

// TestGoldenPreemptProperty records, for the first worlds
// TestPreemptionProperties generates (the same seed), the running
// workloads, the preemptor's decision (one line of JSON) and, for an Admit
// or a Preempt, the store after committing it.
func TestGoldenPreemptProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 11)) // TestPreemptionProperties' seed
	var recs []record
	for i := range goldenPreemptCases {
		pw := &pworld{}
		src := fmt.Sprintf("case %d", i)
		panicked := catch(func() {
			if err := genPreemptWorld(rng, pw); err != nil {
				t.Fatalf("%s: generated world does not build: %v", src, err)
			}
			recs = append(recs, record{Source: src + " world", Body: string(renderState(t, pw.s))})
			d := allot.Decide(pw.s, pw.req)
			recs = append(recs, record{Source: src + " decision", Body: string(mustJSON(t, d))})
			if d.Verdict != allot.VerdictAdmit && d.Verdict != allot.VerdictPreempt {
				return
			}
			st := allot.NewStore(pw.s)
			body := ""
			if _, err := st.Commit(d); err != nil {
				body = "error: " + err.Error()
			} else {
				body = string(renderState(t, st.Load()))
			}
			recs = append(recs, record{Source: src + " commit", Body: body})
		})
		if panicked != nil {
			t.Fatalf("%s: panic: %v\nworld: %s\nrequest: %s", src, panicked, mustJSON(t, pw.b), mustJSON(t, pw.req))
		}
	}
	checkGolden(t, "preempt-property.golden", recs)
}

// TestGoldenSchedule drains a seeded random world with ScheduleFunc, with
// fair sharing off and on (by progressive filling, and in Kueue's cycles in
// Kueue-exact mode), and records every decision handed over (one line of
// JSON each) and the store's state at the end.
func TestGoldenSchedule(t *testing.T) {
	var recs []record
	for _, c := range []struct {
		fair      bool
		semantics string
	}{{false, ""}, {true, ""}, {true, allot.SemanticsKueue}} {
		b := scheduleWorld(rand.New(rand.NewPCG(17, 4)))
		b.FairSharing.Enabled, b.Options.Semantics = c.fair, c.semantics
		s, err := b.Build()
		if err != nil {
			t.Fatalf("the world does not build: %v", err)
		}
		src := fmt.Sprintf("fairSharing=%t", c.fair)
		if c.semantics != "" {
			src += " semantics=" + c.semantics
		}
		recs = append(recs, record{Source: src + " start", Body: string(renderState(t, s))})
		st := allot.NewStore(s)
		k := 0
		allot.ScheduleFunc(st, func(d *allot.Decision) {
			k++
			recs = append(recs, record{Source: fmt.Sprintf("%s decision %d", src, k), Body: string(mustJSON(t, d))})
		})
		recs = append(recs, record{Source: src + " end", Body: string(renderState(t, st.Load()))})
	}
	checkGolden(t, "schedule.golden", recs)
}

// scheduleWorld is a random world for the scheduling loop, drawn from rng:
// 48 nodes of three flavors (one spot) in racks and blocks, some down or
// cordoned, a quota-only flavor, six queues of a cohort tree with random
// quotas, limits, preemption policies and queueing strategies, running
// workloads that fill part of the cluster and pending workloads of every
// shape, some asking for a rack or a block.
func scheduleWorld(rng *rand.Rand) allot.Builder {
	b := allot.Builder{Now: 10_000, Resources: []string{"gpu", "cpu"}, Levels: []string{"block", "rack"},
		Flavors: []allot.Flavor{{Name: "h100"}, {Name: "a100"}, {Name: "spot", Spot: true}, {Name: "burst"}}}
	free := map[string]int64{}
	nodesOf := map[string][]string{}
	for i := range 48 {
		f := []string{"h100", "h100", "a100", "spot"}[i%4]
		gpus := int64(8)
		if f == "a100" && i%3 == 0 {
			gpus = 4
		}
		n := allot.Node{Name: fmt.Sprintf("n%02d", i), Flavor: f,
			Labels:   map[string]string{"block": fmt.Sprintf("b%d", i/16), "rack": fmt.Sprintf("r%d", i/4)},
			Capacity: allot.Resources{"gpu": gpus, "cpu": 128_000}}
		switch rng.IntN(24) {
		case 0:
			n.Down = true
		case 1:
			n.Unschedulable = true
		}
		b.Nodes = append(b.Nodes, n)
		if !n.Down && !n.Unschedulable {
			free[n.Name] = gpus
			nodesOf[f] = append(nodesOf[f], n.Name)
		}
	}
	b.Cohorts = []allot.Cohort{{Name: "root"}, {Name: "left", Parent: "root"}, {Name: "right", Parent: "root"}}
	within := []string{"Never", "LowerPriority", "LowerOrNewerEqualPriority"}
	reclaim := []string{"Never", "LowerPriority", "Any"}
	for q := range 6 {
		qu := allot.Queue{Name: fmt.Sprintf("q%d", q), Cohort: []string{"left", "left", "right", "right", "root", "left"}[q]}
		for _, f := range b.Flavors {
			if rng.IntN(5) == 0 && len(qu.Quota) > 0 {
				continue
			}
			gpu := allot.ResourceQuota{Name: "gpu", Nominal: int64(8 + rng.IntN(33))}
			if rng.IntN(4) == 0 {
				v := int64(rng.IntN(int(gpu.Nominal) + 1))
				gpu.LendingLimit = &v
			}
			if rng.IntN(4) == 0 {
				v := int64(rng.IntN(17))
				gpu.BorrowingLimit = &v
			}
			qu.Quota = append(qu.Quota, allot.FlavorQuota{Flavor: f.Name, Resources: []allot.ResourceQuota{
				gpu, {Name: "cpu", Nominal: 1 << 30}}})
		}
		if rng.IntN(3) == 0 {
			qu.QueueingStrategy = allot.StrictFIFO
		}
		qu.FlavorFungibility.WhenCanPreempt = []string{"", "Preempt", "TryNextFlavor"}[rng.IntN(3)]
		if rng.IntN(3) == 0 {
			qu.FlavorFungibility.WhenCanBorrow = "TryNextFlavor"
		}
		qu.Preemption.WithinQueue = within[rng.IntN(3)]
		qu.Preemption.ReclaimWithinCohort = reclaim[rng.IntN(3)]
		if qu.Preemption.ReclaimWithinCohort != "Never" && rng.IntN(2) == 0 {
			qu.Preemption.BorrowWithinCohort.Policy = "LowerPriority"
		}
		w := float64(1 + rng.IntN(3))
		qu.FairSharing = &allot.QueueFairSharing{Weight: &w}
		b.Queues = append(b.Queues, qu)
	}
	class := func() allot.PreemptionSpec {
		switch rng.IntN(5) {
		case 0:
			return allot.PreemptionSpec{Class: allot.Never}
		case 1:
			return allot.PreemptionSpec{Class: allot.Checkpointable, LastCheckpointAt: b.Now - int64(rng.IntN(3000))}
		case 2:
			return allot.PreemptionSpec{Class: allot.Preemptible}
		}
		return allot.PreemptionSpec{}
	}
	for i := range 24 {
		f := []string{"h100", "a100", "spot"}[rng.IntN(3)]
		gpus := []int64{1, 2, 4, 8}[rng.IntN(4)]
		var fit []string
		for _, n := range nodesOf[f] {
			if free[n] >= gpus {
				fit = append(fit, n)
			}
		}
		if len(fit) == 0 {
			continue
		}
		n := fit[rng.IntN(len(fit))]
		free[n] -= gpus
		b.Running = append(b.Running, allot.Workload{ID: fmt.Sprintf("run%02d", i), Queue: b.Queues[rng.IntN(6)].Name,
			Priority: int32(rng.IntN(5)), SubmittedAt: int64(rng.IntN(5000)), AdmittedAt: 5000 + int64(rng.IntN(5000)),
			Preemption: class(), PodSets: []allot.PodSet{{Name: "main", Count: 1, Flavor: f, Nodes: []string{n},
				PerPod: allot.Resources{"gpu": gpus, "cpu": 4000 * gpus}}}})
	}
	for i := range 90 {
		w := allot.Workload{ID: fmt.Sprintf("p%03d", i), Queue: b.Queues[rng.IntN(6)].Name, Priority: int32(rng.IntN(5)),
			SubmittedAt: int64(rng.IntN(10_000)), Preemption: class()}
		for k := range 1 + rng.IntN(4)/3 {
			gpus := []int64{1, 2, 4, 8, 8}[rng.IntN(5)]
			ps := allot.PodSet{Name: fmt.Sprintf("ps%d", k), Count: int32(1 + rng.IntN(4)),
				PerPod: allot.Resources{"gpu": gpus, "cpu": 4000 * gpus}}
			if rng.IntN(12) == 0 {
				ps.Count = int32(8 + rng.IntN(9))
			}
			switch rng.IntN(6) {
			case 0:
				ps.Topology.Required = "rack"
			case 1:
				ps.Topology.Preferred = "rack"
			case 2:
				ps.Topology.Required = "block"
			}
			if rng.IntN(5) == 0 {
				ps.Flavors = []string{b.Flavors[rng.IntN(len(b.Flavors))].Name}
			}
			w.PodSets = append(w.PodSets, ps)
		}
		b.Pending = append(b.Pending, w)
	}
	return b
}
