package allot_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/scenario"
)

// TestDecideIsDeterministic decides every scenario's requests twice on the
// same snapshot, and replays every scenario twice from a fresh build, and
// compares the rendered decisions byte for byte: Decide is a function of its
// inputs, so map iteration order, memory reuse or anything else must never
// reach its output (STYLE.md, conventions 1).
func TestDecideIsDeterministic(t *testing.T) {
	for _, file := range determinismScenarios(t) {
		// shared/x or testdata/x.
		name := filepath.Base(filepath.Dir(filepath.Dir(file))) + "/" + strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			s, err := scenario.Load(file)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			first := replayDecisions(t, s)
			second := replayDecisions(t, s)
			if len(first) != len(second) {
				t.Fatalf("first replay has %d records, the second %d", len(first), len(second))
			}
			for i := range first {
				if first[i] != second[i] {
					t.Errorf("record %d differs between two replays:\n%s\n%s\n%s\n%s", i, first[i].Source, first[i].Body, second[i].Source, second[i].Body)
				}
				if strings.HasSuffix(first[i].Source, ": panic") {
					t.Errorf("%s: %s", first[i].Source, first[i].Body)
				}
			}
		})
	}
}

// determinismScenarios lists the scenario files of the shared folder and of
// testdata/scenarios; it skips the test when there are none.
func determinismScenarios(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"../shared/scenarios", "testdata/scenarios"} {
		if _, err := os.Stat(dir); err != nil {
			t.Logf("no scenarios in %s: %v", dir, err)
			continue
		}
		found, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, found...)
	}
	if len(files) == 0 {
		t.Skip("no scenario files: the shared folder is absent and testdata/scenarios is empty")
	}
	return files
}

// TestDecideConcurrentlyIsDeterministic decides the scenarios' requests
// from many goroutines at once on shared snapshots: every decision must be
// the one a lone caller gets. Run with -race, it also shows that Decide
// writes nothing it shares (the snapshot, pooled scratch memory).
func TestDecideConcurrentlyIsDeterministic(t *testing.T) {
	type job struct {
		name string
		snap *allot.Snapshot
		req  allot.Request
		want []byte
	}
	var jobs []job
	for _, file := range determinismScenarios(t) {
		s, err := scenario.Load(file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		b := s.Builder()
		snap, err := b.Build()
		if err != nil {
			continue
		}
		reqs := []allot.Request{}
		if s.Request != nil {
			reqs = append(reqs, *s.Request)
		}
		for _, st := range s.Steps {
			if st.Kind == scenario.StepDecide {
				reqs = append(reqs, st.Request) // on the first snapshot: any answer will do
			}
		}
		for _, r := range reqs {
			want, err := json.Marshal(allot.Decide(snap, r))
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, job{name: s.Name + "/" + r.ID, snap: snap, req: r, want: want})
		}
	}
	if len(jobs) == 0 {
		t.Skip("no scenario builds")
	}
	const workers, rounds = 8, 20
	errs := make(chan string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var reused allot.Decision
			for i := range rounds * len(jobs) {
				j := jobs[(i+w*7)%len(jobs)]
				var got []byte
				if i%2 == 0 {
					got, _ = json.Marshal(allot.Decide(j.snap, j.req))
				} else {
					allot.DecideInto(j.snap, j.req, &reused)
					got, _ = json.Marshal(&reused)
				}
				if !bytes.Equal(got, j.want) {
					errs <- fmt.Sprintf("%s: concurrent decision differs:\n%s\nalone:\n%s", j.name, got, j.want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// replayDecisions builds the scenario's snapshot from its Builder and runs
// its request or its steps on a store, as Scenario.Run does, without
// checking expectations: it commits an Admit or a Preempt when the step
// says so, drains with Schedule, and stops at a commit or event error. It
// returns one record per decision (its indented JSON), per step that
// changes the store (the store's state after it, or the error), per drain
// decision, and per state check; where the snapshot has pending
// workloads, the admission order comes first. A panic ends the replay
// with a record of it. Every decision of a decide step is made twice, the
// second time into a reused Decision, and must come out the same both
// times.
func replayDecisions(t *testing.T, s *scenario.Scenario) (out []record) {
	t.Helper()
	where := "build"
	add := func(what string, body []byte) { out = append(out, record{Source: what, Body: string(body)}) }
	defer func() {
		if v := recover(); v != nil {
			add(where+": panic", fmt.Appendf(nil, "%v", v))
		}
	}()
	b := s.Builder()
	snap, err := b.Build()
	if err != nil {
		add("build", fmt.Appendf(nil, "error: %v", err))
		return out
	}
	if s.ExpectOrder != nil || snap.NumPending() > 0 {
		add("order", mustJSON(t, allot.Order(snap)))
	}
	var reused allot.Decision
	decide := func(cur *allot.Snapshot, r allot.Request, label string) allot.Decision {
		d := allot.Decide(cur, r)
		js := renderDecision(t, &d)
		allot.DecideInto(cur, r, &reused)
		if again := renderDecision(t, &reused); !bytes.Equal(js, again) {
			t.Errorf("%s: deciding twice on one snapshot differs:\n%s\n%s", label, js, again)
		}
		add(label, js)
		return d
	}
	if s.Request != nil {
		where = fmt.Sprintf("request %q", s.Request.ID)
		decide(snap, *s.Request, where)
	}
	store := allot.NewStore(snap)
	for i, st := range s.Steps {
		label := fmt.Sprintf("step %d (%v)", i+1, st)
		where = label
		switch st.Kind {
		case scenario.StepDecide:
			d := decide(store.Load(), st.Request, label)
			if st.Commit && (d.Verdict == allot.VerdictAdmit || d.Verdict == allot.VerdictPreempt) {
				if _, err := store.Commit(d); err != nil {
					add(label+" commit", fmt.Appendf(nil, "error: %v", err))
					return out
				}
				add(label+" commit", renderState(t, store.Load()))
			}
		case scenario.StepDrain:
			for k, d := range allot.Schedule(store) {
				add(fmt.Sprintf("%s decision %d", label, k+1), renderDecision(t, &d))
			}
			add(label+" state", renderState(t, store.Load()))
		case scenario.StepExpectState:
			cur := store.Load()
			add(label, fmt.Appendf(nil, "version %d, free GPUs %d, running %v, pending %v",
				cur.Version(), cur.FreeGPUs(), cur.RunningIDs(), cur.PendingIDs()))
		default:
			ev, ok := st.Event()
			if !ok {
				t.Fatalf("%s: not an event", label)
			}
			if _, err := store.Apply(ev); err != nil {
				add(label, fmt.Appendf(nil, "error: %v", err))
				return out
			}
			add(label, renderState(t, store.Load()))
		}
	}
	return out
}
