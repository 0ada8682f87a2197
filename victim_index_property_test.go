package allot_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/allot-sched/allot"
)

// TestVictimIndexFollowsEvents: the preemption index a store keeps, once a
// search has asked for it, holds exactly the admitted workloads with the
// keys they have now (the same entries, in the same order, as an index
// built afresh), after every event of random sequences: admissions and
// preemptions committed, one- and two-phase, finishes, evictions,
// checkpoints, workloads set running, queues changed and removed, nodes
// changed, removed and added, time passing. The count of takeable
// workloads the set keeps is a recount's all along.
func TestVictimIndexFollowsEvents(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 40
	}
	rng := rand.New(rand.NewPCG(2026, 19))
	kept, checked, pinned := 0, 0, 0
	for i := range n {
		pw := &pworld{fair: rng.IntN(3) == 0}
		if err := genPreemptWorld(rng, pw); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		b := pw.b
		b.Options.TwoPhasePreemption = rng.IntN(2) == 0
		base, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		allot.SetVictimIndexFrom(base, 0)
		check := func(where string, s *allot.Snapshot) {
			t.Helper()
			k, diff := allot.VictimIndex(s)
			if diff != "" {
				t.Fatalf("case %d %s: %s", i, where, diff)
			}
			if counted, recounted := allot.Takeable(s); counted != recounted {
				t.Fatalf("case %d %s: the running set counts %d takeable workloads, a recount %d", i, where, counted, recounted)
			}
			if _, recounted := allot.Takeable(s); recounted < len(s.RunningIDs()) {
				pinned++
			}
			if k {
				checked++
			}
		}
		check("built", base)
		st := allot.NewStore(base)
		wasKept := false
		for step := range 40 {
			s := st.Load()
			var ev allot.Event
			ids := s.RunningIDs()
			switch k := rng.IntN(12); {
			case k < 4:
				r := pw.req
				r.ID = fmt.Sprintf("r%02d", step)
				r.Priority = int32(rng.IntN(6))
				r.Queue = b.Queues[rng.IntN(len(b.Queues))].Name
				d := allot.Decide(s, r)
				sameEveryWay(t, fmt.Sprintf("case %d step %d", i, step), s, r, d)
				if d.Verdict == allot.VerdictAdmit || d.Verdict == allot.VerdictPreempt {
					if _, err := st.Commit(d); err != nil {
						t.Fatalf("case %d step %d: commit: %v", i, step, err)
					}
				}
			case k == 4 && len(ids) > 0:
				ev = allot.Finish{ID: ids[rng.IntN(len(ids))]}
			case k == 5 && len(ids) > 0:
				ev = allot.Evict{ID: ids[rng.IntN(len(ids))]}
			case k == 6 && len(ids) > 0:
				ev = allot.Checkpoint{ID: ids[rng.IntN(len(ids))]}
			case k == 7 && len(s.EvictingIDs()) > 0:
				ev = allot.Terminated{ID: s.EvictingIDs()[0]}
			case k == 8 && len(ids) > 0:
				// Described anew, at another priority.
				w, _ := s.Running(ids[rng.IntN(len(ids))])
				w.Priority = int32(rng.IntN(6))
				ev = allot.SetRunning{Workload: w}
			case k == 9 && len(s.Queues()) > 0:
				qs := s.Queues()
				if rng.IntN(2) == 0 {
					ev = allot.RemoveQueue{Queue: qs[rng.IntN(len(qs))].Name}
				} else {
					ev = allot.SetQueue{Queue: qs[rng.IntN(len(qs))]}
				}
			case k == 10:
				nodes := s.Nodes()
				if len(nodes) > 1 {
					ev = allot.RemoveNode{Node: nodes[rng.IntN(len(nodes))].Name}
				}
			default:
				ev = allot.AdvanceTime{Seconds: int64(rng.IntN(600))}
			}
			if ev != nil {
				// Refusals (a queue in use, a node with pods) change nothing.
				_, _ = st.Apply(ev)
			}
			check(fmt.Sprintf("step %d (%T)", step, ev), st.Load())
			k, _ := allot.VictimIndex(st.Load())
			wasKept = wasKept || k
		}
		if wasKept {
			kept++
		}
	}
	t.Logf("%d worlds, %d whose store came to keep the index; %d versions checked, %d with pinned workloads", n, kept, checked, pinned)
	if kept < n/4 {
		t.Errorf("only %d of %d stores came to keep the index: the test reaches too little", kept, n)
	}
}

// TestVictimIndexBuiltConcurrently: searches on one version of a store
// that keeps no index yet (and asks for one from its first workload), run at once, each find the same victims (the
// index one of them built, or their own) and race on nothing; after the
// next publish the store keeps the index and finds them again.
func TestVictimIndexBuiltConcurrently(t *testing.T) {
	bl := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "default"}},
		Queues: []allot.Queue{{Name: "train", Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"},
			Quota: []allot.FlavorQuota{{Flavor: "default", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 400 * 8}}}}}},
		Now: 10_000,
	}
	for i := range 400 {
		bl.Running = append(bl.Running, allot.Workload{ID: fmt.Sprintf("w%03d", i), Queue: "train", Priority: int32(i % 7), AdmittedAt: int64(i * 3 % 1000),
			PodSets: []allot.PodSet{{Name: "main", Count: 1, Flavor: "default", PerPod: allot.Resources{"gpu": 8}}}})
	}
	base, err := bl.Build()
	if err != nil {
		t.Fatal(err)
	}
	allot.SetVictimIndexFrom(base, 0) // 400 admitted: a scan, else
	st := allot.NewStore(base)
	if _, err := st.Apply(allot.AdvanceTime{Seconds: 1}); err != nil {
		t.Fatal(err)
	}
	s := st.Load()
	req := allot.Request{ID: "hero", Queue: "train", Priority: 100,
		PodSets: []allot.PodSet{{Name: "main", Count: 5, PerPod: allot.Resources{"gpu": 8}}}}
	const n = 8
	got := make([]string, n)
	done := make(chan int)
	for g := range n {
		go func() {
			d := allot.Decide(s, req)
			got[g] = fmt.Sprint(d.Verdict, d.Victims)
			done <- g
		}()
	}
	for range n {
		<-done
	}
	for g := range n {
		if got[g] != got[0] {
			t.Fatalf("search %d found %s, search 0 %s", g, got[g], got[0])
		}
	}
	if k, _ := allot.VictimIndex(s); k {
		t.Fatal("a version published before any search keeps an index")
	}
	if _, err := st.Apply(allot.AdvanceTime{Seconds: 0}); err != nil {
		t.Fatal(err)
	}
	k, diff := allot.VictimIndex(st.Load())
	if !k || diff != "" {
		t.Fatalf("after a search and a publish: kept %v, %s", k, diff)
	}
	d := allot.Decide(st.Load(), req)
	if again := fmt.Sprint(d.Verdict, d.Victims); again != got[0] {
		t.Fatalf("with the kept index: %s, want %s", again, got[0])
	}
	if d.Verdict != allot.VerdictPreempt || len(d.Victims) != 5 {
		t.Fatalf("%v %s, %d victims, want 5", d.Reason, d.Message, len(d.Victims))
	}
}

// sameEveryWay fails the test unless deciding r on s gives d whichever way
// the search reads the admitted workloads: scanned without an index, from
// the index lazily, and from the index until it scans after 1, 2, 3, 5 or
// 8 reads.
func sameEveryWay(t *testing.T, where string, s *allot.Snapshot, r allot.Request, d allot.Decision) {
	t.Helper()
	want, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	type way struct {
		scan  bool
		bound int
	}
	for _, w := range []way{{true, 0}, {false, math.MaxInt}, {false, 0}, {false, 1}, {false, 2}, {false, 3}, {false, 5}, {false, 8}} {
		got := allot.DecideReading(s, r, w.scan, w.bound)
		if b, _ := json.Marshal(got); string(b) != string(want) {
			t.Fatalf("%s: read %+v:\n%s\nwant %s", where, w, b, want)
		}
	}
}

// TestVictimsSameEveryWay: on the preemption property test's random
// worlds, classical and fair, under allot's and Kueue's semantics, the
// decision is the same whichever way the search reads the admitted
// workloads (sameEveryWay).
func TestVictimsSameEveryWay(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(2026, 29))
	preempts := 0
	for i := range n {
		pw := &pworld{semantics: []string{allot.SemanticsAllot, allot.SemanticsKueue}[rng.IntN(2)], fair: rng.IntN(3) == 0}
		if err := genPreemptWorld(rng, pw); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		d := allot.Decide(pw.s, pw.req)
		if d.Verdict == allot.VerdictPreempt {
			preempts++
		}
		sameEveryWay(t, fmt.Sprintf("case %d", i), pw.s, pw.req, d)
	}
	t.Logf("%d worlds, %d preemptions", n, preempts)
	if preempts < n/10 {
		t.Errorf("only %d preemptions in %d worlds: the test reaches too little", preempts, n)
	}
}
