package allot_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench"
	"github.com/allot-sched/allot/bench/scenario"
)

// scenarioDirs are the scenario files a snapshot's Builder is tried on.
var scenarioDirs = []string{"testdata/scenarios", sharedScenarios, "../shared/kueue-parity"}

// scenarioState is one snapshot a scenario passes through, with the
// requests to decide on it.
type scenarioState struct {
	label string
	snap  *allot.Snapshot
	reqs  []allot.Request
}

// scenarioStates loads every scenario file of dirs and returns the
// snapshots each passes through: the one it builds and the store's after
// every step that changes it (commits, events, drains), each with the
// file's requests, its pending workloads as requests, and probes of every
// queue at every level.
func scenarioStates(t *testing.T, dirs []string) []scenarioState {
	t.Helper()
	var out []scenarioState
	for _, dir := range dirs {
		if _, err := os.Stat(dir); err != nil {
			t.Logf("no scenarios at %s: %v", dir, err)
			continue
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			sc, err := scenario.Load(f)
			if err != nil {
				continue // the golden tests record why
			}
			snap, err := sc.Build()
			if err != nil {
				continue
			}
			var reqs []allot.Request
			if sc.Request != nil {
				reqs = append(reqs, *sc.Request)
			}
			for _, st := range sc.Steps {
				if st.Kind == scenario.StepDecide {
					reqs = append(reqs, st.Request)
				}
			}
			add := func(label string, s *allot.Snapshot) {
				rs := append(slices.Clone(reqs), probesFor(s)...)
				for _, w := range s.PendingWorkloads() {
					rs = append(rs, allot.Request(w))
				}
				out = append(out, scenarioState{f + " " + label, s, rs})
			}
			add("build", snap)
			store := allot.NewStore(snap)
			for i, st := range sc.Steps {
				switch st.Kind {
				case scenario.StepDecide:
					d := allot.Decide(store.Load(), st.Request)
					if !st.Commit || d.Verdict != allot.VerdictAdmit && d.Verdict != allot.VerdictPreempt {
						continue
					}
					if _, err := store.Commit(d); err != nil {
						continue
					}
				case scenario.StepDrain:
					allot.Schedule(store)
				case scenario.StepExpectState:
					continue
				default:
					ev, _ := st.Event()
					if _, err := store.Apply(ev); err != nil {
						continue
					}
				}
				add(fmt.Sprintf("step %d", i+1), store.Load())
			}
		}
	}
	return out
}

// probesFor are requests for every queue of s: one pod of one GPU, and a
// gang that requires each level in turn.
func probesFor(s *allot.Snapshot) []allot.Request {
	var out []allot.Request
	gpu := slices.Contains(s.Resources(), "gpu")
	per := allot.Resources{}
	if gpu {
		per["gpu"] = 1
	} else {
		per[s.Resources()[0]] = 1
	}
	for _, q := range s.Queues() {
		out = append(out, allot.Request{ID: "probe-" + q.Name, Queue: q.Name, Priority: 1000,
			PodSets: []allot.PodSet{{Name: "p", Count: 1, PerPod: per}}})
		for _, l := range append(s.Levels(), "node") {
			out = append(out, allot.Request{ID: "probe-" + q.Name + "-" + l, Queue: q.Name,
				PodSets: []allot.PodSet{{Name: "p", Count: 3, PerPod: per, Topology: allot.TopologyRequest{Required: l}}}})
		}
	}
	return out
}

// roundTrip builds s's Builder and checks that the snapshot built reads as
// s, decides reqs as s does, runs the scheduling loop as s does, and has s's
// Builder for its own.
func roundTrip(t *testing.T, label string, s *allot.Snapshot, reqs []allot.Request) {
	t.Helper()
	b := s.Builder()
	again, err := b.Build()
	if err != nil {
		t.Fatalf("%s: its Builder does not build: %v", label, err)
	}
	sameState(t, label, again, s, reqs)
	if !jsonEqual(t, again.Builder(), b) {
		t.Fatalf("%s: the Builder of the rebuilt snapshot is not the Builder it was built from", label)
	}
	sameSchedule(t, label, again, s)
}

// TestBuilderRoundTripScenarios: every snapshot the scenario files pass
// through is built again from its Builder.
func TestBuilderRoundTripScenarios(t *testing.T) {
	states := scenarioStates(t, scenarioDirs)
	if len(states) < 100 {
		t.Fatalf("only %d snapshots from the scenario files", len(states))
	}
	for _, st := range states {
		roundTrip(t, st.label, st.snap, st.reqs)
	}
}

// TestBuilderRoundTripBenchCluster: the fragmented benchmark cluster of
// 10,240 nodes, its running workloads on every kind of node, after a few
// admissions and a node's removal.
func TestBuilderRoundTripBenchCluster(t *testing.T) {
	n := 10240
	if testing.Short() {
		n = 1024
	}
	s, err := bench.Cluster(n, true).Build()
	if err != nil {
		t.Fatal(err)
	}
	var reqs []allot.Request
	for _, c := range bench.GangCases() {
		reqs = append(reqs, c.Req)
	}
	roundTrip(t, "built", s, reqs)
	st := allot.NewStore(s)
	for i, c := range bench.GangCases() {
		c.Req.ID = fmt.Sprintf("gang-%d", i)
		if d := allot.Decide(st.Load(), c.Req); d.Verdict == allot.VerdictAdmit {
			if _, err := st.Commit(d); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, ev := range []allot.Event{allot.RemoveNode{Node: "n3"}, allot.NodeDown{Node: "n9"}, allot.AdvanceTime{Seconds: 600},
		allot.NodeCooldown{Node: "n10", Until: 5000}} {
		if _, err := st.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	roundTrip(t, "after commits and events", st.Load(), reqs)
}

// TestBuilderKeepsHistoryExactly: fairness debt decays to fractions and
// must come back as it is; usage to the whole second.
func TestBuilderKeepsHistoryExactly(t *testing.T) {
	b := churnBuilder()
	b.History.HalfLife = 7000
	st := allot.NewStore(buildAt(t, b, 0))
	for _, ev := range []allot.Event{allot.AdvanceTime{Seconds: 1234}, allot.AdvanceTime{Seconds: 777}} {
		if _, err := st.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	s := st.Load()
	debt := s.Debt("train")
	if debt == float64(int64(debt)) {
		t.Fatalf("debt %v did not decay to a fraction: the test tests nothing", debt)
	}
	back := s.Builder()
	again, err := back.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Debt("train"); got != debt {
		t.Fatalf("debt %v rebuilt as %v", debt, got)
	}
	for _, q := range []string{"train", "infer", "batch"} {
		if got, want := again.HistoricalUsage(q), s.HistoricalUsage(q); got < want-0.5 || got > want+0.5 {
			t.Fatalf("%s: usage %v rebuilt as %v", q, want, got)
		}
	}
	// Decisions read the debt, not the usage: they come out the same.
	for _, r := range churnProbes() {
		if a, b := allot.Decide(again, r), allot.Decide(s, r); !jsonEqual(t, a, b) {
			t.Fatalf("%s decided otherwise on the rebuilt snapshot:\n%+v\n%+v", r.ID, a, b)
		}
	}
	if !jsonEqual(t, again.Builder(), back) {
		t.Fatal("the Builder of the rebuilt snapshot is not the Builder it was built from")
	}
}
