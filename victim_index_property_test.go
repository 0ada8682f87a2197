package allot_test

import (
	"fmt"
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
// changed, removed and added, time passing.
func TestVictimIndexFollowsEvents(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 40
	}
	rng := rand.New(rand.NewPCG(2026, 19))
	kept, checked := 0, 0
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
		check := func(where string, s *allot.Snapshot) {
			t.Helper()
			k, diff := allot.VictimIndex(s)
			if diff != "" {
				t.Fatalf("case %d %s: %s", i, where, diff)
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
				if d := allot.Decide(s, r); d.Verdict == allot.VerdictAdmit || d.Verdict == allot.VerdictPreempt {
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
	t.Logf("%d worlds, %d whose store came to keep the index; %d versions checked", n, kept, checked)
	if kept < n/4 {
		t.Errorf("only %d of %d stores came to keep the index: the test reaches too little", kept, n)
	}
}
