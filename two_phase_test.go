package allot_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
)

// tpRun is a running workload of queue q: one pod with the given GPUs of
// its node and 1000 millicores.
func tpRun(id string, prio int32, node string, gpus ...int) allot.Workload {
	return allot.Workload{ID: id, Queue: "q", Priority: prio, PodSets: []allot.PodSet{{Name: "w", Count: 1, Flavor: "f",
		PerPod: allot.Resources{"gpu": int64(len(gpus)), "cpu": 1000}, Nodes: []string{node}, GPUIndices: [][]int{gpus}}}}
}

// tpReq asks queue q for one pod of the given GPUs and 1000 millicores.
func tpReq(id string, prio int32, gpus int64) allot.Request {
	return allot.Request{ID: id, Queue: "q", Priority: prio, SubmittedAt: 500,
		PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": gpus, "cpu": 1000}}}}
}

// tpCluster is three nodes of 8 GPUs and 16 cores, n0 to n2, in cohort co's
// queue q, whose higher priorities preempt its lower ones; running is what
// runs there.
func tpCluster(t *testing.T, twoPhase bool, running ...allot.Workload) *allot.Snapshot {
	t.Helper()
	b := allot.Builder{
		Resources: []string{"gpu", "cpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Cohorts:   []allot.Cohort{{Name: "co"}},
		Queues: []allot.Queue{{Name: "q", Cohort: "co", Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"},
			Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 24}, {Name: "cpu", Nominal: 48_000}}}}}},
		Running: running,
		Options: allot.Options{TwoPhasePreemption: twoPhase},
		Now:     1000,
	}
	for i := range 3 {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: "f", Capacity: allot.Resources{"gpu": 8, "cpu": 16_000}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tpWorld is the lifecycle test's cluster: lo1 holds n0, lo2 and hi share
// n1, x and lo3 hold six GPUs of n2, whose GPUs 6 and 7 are free.
func tpWorld(t *testing.T, twoPhase bool) *allot.Snapshot {
	return tpCluster(t, twoPhase, tpRun("lo1", 0, "n0", 0, 1, 2, 3, 4, 5, 6, 7), tpRun("lo2", 0, "n1", 0, 1, 2, 3),
		tpRun("hi", 20, "n1", 4, 5, 6, 7), tpRun("x", 30, "n2", 0, 1, 2, 3), tpRun("lo3", 0, "n2", 4, 5))
}

// applyOK applies an event the test expects to succeed.
func applyOK(t *testing.T, st *allot.Store, ev allot.Event) *allot.Snapshot {
	t.Helper()
	s, err := st.Apply(ev)
	if err != nil {
		t.Fatalf("%#v: %v", ev, err)
	}
	return s
}

// applyRefused applies an event the test expects to be refused with want,
// and checks that it changed nothing.
func applyRefused(t *testing.T, st *allot.Store, ev allot.Event, want error) {
	t.Helper()
	before := st.Load()
	dump := dumpState(t, before)
	if _, err := st.Apply(ev); !errors.Is(err, want) {
		t.Fatalf("%#v: %v, want %v", ev, err, want)
	}
	if st.Load() != before {
		t.Fatalf("%#v: a refused event published a version", ev)
	}
	if after := dumpState(t, applyOK(t, st, allot.AdvanceTime{})); after != dump {
		t.Fatalf("%#v: a refused event changed the store:\nbefore %s\nafter  %s", ev, dump, after)
	}
}

// kinds renders audit records as kind:workload, for comparison.
func kinds(recs []allot.AuditRecord) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Kind.String()+":"+r.Workload)
	}
	return out
}

// TestTwoPhaseLifecycle commits a Preempt decision in two phases: the
// victim evicts with its GPUs still booked, the preemptor holds the GPUs
// of its placement the victim does not hold, nobody else can take any of
// it, and the preemptor is admitted where the decision placed it once the
// victim terminated.
func TestTwoPhaseLifecycle(t *testing.T) {
	st := allot.NewStore(tpWorld(t, true))
	before := st.Load()
	d := decideAs(t, before, tpReq("p", 10, 4), allot.VerdictPreempt)
	if len(d.Victims) != 1 || d.Victims[0].ID != "lo3" || d.Placement[0].Node != "n2" || d.Placement[0].GPUs != 0xf0 {
		t.Fatalf("test premise: victims %+v placement %+v", d.Victims, d.Placement)
	}
	s, err := st.Commit(d)
	if err != nil {
		t.Fatal(err)
	}
	// Phase one: lo3 evicts, p holds.
	if preemptor, since, ok := s.Evicting("lo3"); !ok || preemptor != "p" || since != 1000 {
		t.Errorf("Evicting(lo3) = %q, %d, %v", preemptor, since, ok)
	}
	if _, ok := s.Running("lo3"); !ok {
		t.Error("the evicting victim no longer runs")
	}
	if _, ok := s.Running("p"); ok {
		t.Error("the preemptor runs before its victim is gone")
	}
	if _, ok := s.Pending("p"); ok {
		t.Error("the holding preemptor is pending")
	}
	h, ok := s.Held("p")
	if !ok || !slices.Equal(h.Victims, []string{"lo3"}) || h.Workload.PodSets[0].Nodes[0] != "n2" ||
		!slices.Equal(h.Workload.PodSets[0].GPUIndices[0], []int{4, 5, 6, 7}) || h.Since != 1000 || h.Workload.AdmittedAt != 0 {
		t.Errorf("Held(p) = %+v, %v", h, ok)
	}
	if got, want := s.FreeGPUs(), before.FreeGPUs()-2; got != want {
		t.Errorf("free GPUs %d, want %d: the hold takes GPUs 6 and 7 of n2", got, want)
	}
	if free, _ := s.NodeFreeGPUs("n2"); free != 0 {
		t.Errorf("n2 has GPUs %v free", free)
	}
	if got, want := s.Usage("q", "f", "gpu"), before.Usage("q", "f", "gpu")+2; got != want {
		t.Errorf("queue q uses %d GPUs, want %d: the victim's 2 and the hold's 2 more", got, want)
	}
	if ev := s.Evictions(); len(ev) != 1 || ev[0].ID != "lo3" || ev[0].Preemptor != "p" {
		t.Errorf("evictions %+v", ev)
	}
	if got := s.EvictingIDs(); !slices.Equal(got, []string{"lo3"}) {
		t.Errorf("EvictingIDs %v", got)
	}
	if got := s.HeldIDs(); !slices.Equal(got, []string{"p"}) {
		t.Errorf("HeldIDs %v", got)
	}

	// Decisions made meanwhile see it: nothing lands on the held or the
	// evicting GPUs, and no preemption chooses lo3 again.
	if d := allot.Decide(s, tpReq("small", 0, 2)); d.Verdict != allot.VerdictQueue {
		t.Errorf("a 2-GPU request meanwhile: %v %v %s", d.Verdict, d.Reason, d.Message)
	}
	again := allot.Decide(s, tpReq("p5", 10, 2))
	if again.Verdict != allot.VerdictPreempt || slices.ContainsFunc(again.Victims, func(v allot.Victim) bool { return v.ID == "lo3" }) {
		t.Errorf("another preemptor meanwhile: %v victims %+v", again.Verdict, again.Victims)
	}
	for _, pl := range again.Placement {
		if pl.Node == "n2" {
			t.Errorf("another preemptor placed on n2: %+v", pl)
		}
	}

	// What cannot happen meanwhile.
	applyRefused(t, st, allot.Submit{Workload: allot.Workload(tpReq("p", 10, 4))}, allot.ErrDuplicateID)
	applyRefused(t, st, allot.Terminated{ID: "lo1"}, allot.ErrInvalid)
	applyRefused(t, st, allot.Terminated{ID: "nobody"}, allot.ErrUnknownWorkload)
	applyRefused(t, st, allot.Finish{ID: "p"}, allot.ErrUnknownWorkload)
	if again := allot.Decide(st.Load(), tpReq("p", 10, 4)); again.Verdict != allot.VerdictReject || again.Reason != allot.InvalidRequest {
		t.Errorf("deciding the holding preemptor again: %v %v", again.Verdict, again.Reason)
	}
	commitRefused(t, st, d, allot.ErrConflict)
	admit := travel(t, decideAs(t, tpWorld(t, true), tpReq("p", 0, 2), allot.VerdictAdmit))
	commitRefused(t, st, admit, allot.ErrConflict)
	if _, err := st.Commit(admit); err == nil || !strings.Contains(err.Error(), "holds its room") {
		t.Errorf("an Admit of the holding preemptor: %v", err)
	}
	// A victim may checkpoint while it terminates.
	applyOK(t, st, allot.Checkpoint{ID: "lo3"})

	// Phase two: lo3 is gone, p is admitted.
	applyOK(t, st, allot.AdvanceTime{Seconds: 30})
	s = applyOK(t, st, allot.Terminated{ID: "lo3"})
	w, ok := s.Running("p")
	if !ok || w.AdmittedAt != 1030 || w.PodSets[0].Nodes[0] != "n2" || !slices.Equal(w.PodSets[0].GPUIndices[0], []int{4, 5, 6, 7}) {
		t.Fatalf("Running(p) = %+v, %v", w, ok)
	}
	if _, ok := s.Pending("lo3"); !ok {
		t.Error("the terminated victim is not pending again")
	}
	if _, _, ok := s.Evicting("lo3"); ok || len(s.HeldIDs()) != 0 || len(s.EvictingIDs()) != 0 {
		t.Errorf("left in flight: evicting %v, held %v", s.EvictingIDs(), s.HeldIDs())
	}
	if got, want := s.FreeGPUs(), before.FreeGPUs()-2; got != want {
		t.Errorf("free GPUs %d, want %d", got, want)
	}
	if got, want := s.Usage("q", "f", "gpu"), before.Usage("q", "f", "gpu")+2; got != want {
		t.Errorf("queue q uses %d GPUs, want %d", got, want)
	}
	recs := st.DrainAudit(nil)
	if got, want := kinds(recs), []string{"evicted:lo3", "held:p", "terminated:lo3", "admitted:p"}; !slices.Equal(got, want) {
		t.Fatalf("audit %v, want %v", got, want)
	}
	ev, held, term, adm := recs[0], recs[1], recs[2], recs[3]
	if ev.Preemptor != "p" || ev.Reason != "InClusterQueue" || ev.Policy != "withinQueue: LowerPriority" || ev.At != 1000 || ev.LostGPUSeconds != 2000 {
		t.Errorf("eviction record %+v", ev)
	}
	if !slices.Equal(held.Victims, []string{"lo3"}) || term.Reason != "Terminated" || term.At != 1030 ||
		!slices.Equal(adm.Victims, []string{"lo3"}) || adm.At != 1030 {
		t.Errorf("records %+v %+v %+v", held, term, adm)
	}
}

// TestTwoPhaseVictimsLeaveOneByOne evicts two victims that share a node:
// the hold takes over each one's GPUs as it goes, whichever event says it
// is gone, and the preemptor is admitted with the last.
func TestTwoPhaseVictimsLeaveOneByOne(t *testing.T) {
	full := func(id string, node string) allot.Workload { return tpRun(id, 30, node, 0, 1, 2, 3, 4, 5, 6, 7) }
	for _, c := range []struct {
		name         string
		first, last  allot.Event
		firstPending bool // the first victim is pending again
	}{
		{"terminated", allot.Terminated{ID: "a"}, allot.Terminated{ID: "b"}, true},
		{"finished then evicted", allot.Finish{ID: "a"}, allot.Evict{ID: "b"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := allot.NewStore(tpCluster(t, true, tpRun("a", 0, "n0", 0, 1, 2, 3), tpRun("b", 0, "n0", 4, 5, 6, 7), full("y", "n1"), full("z", "n2")))
			d := decideAs(t, st.Load(), tpReq("p", 10, 8), allot.VerdictPreempt)
			if len(d.Victims) != 2 {
				t.Fatalf("test premise: victims %+v", d.Victims)
			}
			s, err := st.Commit(d)
			if err != nil {
				t.Fatal(err)
			}
			if s.FreeGPUs() != 0 || s.Usage("q", "f", "gpu") != 24 {
				t.Fatalf("held: %d free GPUs, queue uses %d", s.FreeGPUs(), s.Usage("q", "f", "gpu"))
			}
			s = applyOK(t, st, c.first)
			if h, ok := s.Held("p"); !ok || !slices.Equal(h.Victims, []string{"b"}) {
				t.Fatalf("after a is gone: Held(p) = %+v, %v", h, ok)
			}
			if free, _ := s.NodeFreeGPUs("n0"); s.FreeGPUs() != 0 || free != 0 {
				t.Errorf("a's GPUs are free (%v), not held", free)
			}
			if _, ok := s.Pending("a"); ok != c.firstPending {
				t.Errorf("a pending: %v", ok)
			}
			if s.Usage("q", "f", "gpu") != 24 {
				t.Errorf("queue uses %d GPUs after a is gone", s.Usage("q", "f", "gpu"))
			}
			s = applyOK(t, st, c.last)
			if _, ok := s.Running("p"); !ok || s.FreeGPUs() != 0 || s.Usage("q", "f", "gpu") != 24 {
				t.Errorf("after b is gone: p runs %v, %d free, usage %d", ok, s.FreeGPUs(), s.Usage("q", "f", "gpu"))
			}
			if _, ok := s.Pending("b"); !ok {
				t.Error("b is not pending again")
			}
			if n := len(s.Evictions()); n != 2 {
				t.Errorf("%d evictions recorded, want 2 (when the victims started evicting)", n)
			}
			got := kinds(st.DrainAudit(nil))
			if want := []string{"evicted:a", "evicted:b", "held:p", "terminated:a", "terminated:b", "admitted:p"}; !slices.Equal(got, want) {
				t.Errorf("audit %v, want %v", got, want)
			}
		})
	}
}

// TestTwoPhaseHoldReleased: a hold is released by a change to its queue's
// configuration or its cohort's, a node of its placement going down, or
// its withdrawal; the preemptor is then pending again (unless withdrawn),
// its victim evicts all the same, and nobody is admitted when it is gone.
// Other changes keep the hold.
func TestTwoPhaseHoldReleased(t *testing.T) {
	q := allot.Queue{Name: "q", Cohort: "co", Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"},
		Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 24}, {Name: "cpu", Nominal: 48_000}}}}}
	for _, c := range []struct {
		name     string
		ev       allot.Event
		released bool
		pending  bool // the preemptor is pending again
	}{
		{"its queue changed", allot.SetQueue{Queue: q}, true, true},
		{"its cohort changed", allot.SetCohort{Cohort: allot.Cohort{Name: "co"}}, true, true},
		{"another queue added", allot.SetQueue{Queue: allot.Queue{Name: "other"}}, false, false},
		{"another cohort added", allot.SetCohort{Cohort: allot.Cohort{Name: "elsewhere"}}, false, false},
		{"its node down", allot.NodeDown{Node: "n2"}, true, true},
		{"another node down", allot.NodeDown{Node: "n0"}, false, false},
		{"its node cordoned", allot.NodeCordon{Node: "n2", Cordoned: true}, false, false},
		{"time", allot.AdvanceTime{Seconds: 3600}, false, false},
		{"withdrawn", allot.Withdraw{ID: "p"}, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := allot.NewStore(tpWorld(t, true))
			before := st.Load()
			applyOK(t, st, allot.Submit{Workload: allot.Workload(tpReq("p", 10, 4))})
			if _, err := st.Commit(decideAs(t, st.Load(), tpReq("p", 10, 4), allot.VerdictPreempt)); err != nil {
				t.Fatal(err)
			}
			st.DrainAudit(nil)
			s := applyOK(t, st, c.ev)
			_, held := s.Held("p")
			if held == c.released {
				t.Fatalf("held %v after the event", held)
			}
			if _, ok := s.Pending("p"); ok != c.pending {
				t.Errorf("the preemptor pending: %v", ok)
			}
			if preemptor, _, ok := s.Evicting("lo3"); !ok || (preemptor == "") != c.released {
				t.Errorf("Evicting(lo3) = %q, %v", preemptor, ok)
			}
			recs := st.DrainAudit(nil)
			if c.released {
				if len(recs) != 1 || recs[0].Kind != allot.AuditReleased || recs[0].Workload != "p" || recs[0].Reason == "" {
					t.Fatalf("audit %+v", recs)
				}
				t.Logf("released: %s", recs[0].Reason)
				if got, want := s.FreeGPUs(), before.FreeGPUs(); got != want {
					t.Errorf("free GPUs %d, want %d: the hold's are free again", got, want)
				}
			}
			s = applyOK(t, st, allot.Terminated{ID: "lo3"})
			if _, ok := s.Running("p"); ok == c.released {
				t.Errorf("p runs: %v", ok)
			}
			if _, ok := s.Pending("lo3"); !ok {
				t.Error("the victim is not pending again")
			}
			if len(s.EvictingIDs()) != 0 || len(s.HeldIDs()) != 0 {
				t.Errorf("left in flight: evicting %v, held %v", s.EvictingIDs(), s.HeldIDs())
			}
		})
	}
}

// TestOnePhaseByDefault: without the option a Preempt commit evicts the
// victims and admits the preemptor at once, and Terminated has nothing to
// end.
func TestOnePhaseByDefault(t *testing.T) {
	st := allot.NewStore(tpWorld(t, false))
	s, err := st.Commit(decideAs(t, st.Load(), tpReq("p", 10, 4), allot.VerdictPreempt))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Running("p"); !ok {
		t.Error("the preemptor does not run")
	}
	if _, ok := s.Running("lo3"); ok {
		t.Error("the victim runs")
	}
	if len(s.EvictingIDs()) != 0 || len(s.HeldIDs()) != 0 {
		t.Errorf("in flight: evicting %v, held %v", s.EvictingIDs(), s.HeldIDs())
	}
	if got, want := kinds(st.DrainAudit(nil)), []string{"evicted:lo3", "admitted:p"}; !slices.Equal(got, want) {
		t.Errorf("audit %v, want %v", got, want)
	}
	applyRefused(t, st, allot.Terminated{ID: "p"}, allot.ErrInvalid)
}

// TestTwoPhaseVictimQueueChanged: a preemptor of queue q reclaims quota
// from a victim of queue r, which borrows; the victim's quota is the
// hold's while it evicts, and a change to r's configuration releases the
// hold.
func TestTwoPhaseVictimQueueChanged(t *testing.T) {
	queue := func(name string, nominal int64) allot.Queue {
		return allot.Queue{Name: name, Cohort: "co", Preemption: allot.QueuePreemption{ReclaimWithinCohort: "Any"},
			Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: nominal}, {Name: "cpu", Nominal: 48_000}}}}}
	}
	borrower := func(id, node string) allot.Workload {
		w := tpRun(id, 0, node, 0, 1, 2, 3, 4, 5, 6, 7)
		w.Queue = "r"
		return w
	}
	b := allot.Builder{
		Resources: []string{"gpu", "cpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Cohorts:   []allot.Cohort{{Name: "co"}},
		Queues:    []allot.Queue{queue("q", 16), queue("r", 8)},
		Running:   []allot.Workload{borrower("r1", "n0"), borrower("r2", "n1")},
		Options:   allot.Options{TwoPhasePreemption: true},
		Now:       1000,
	}
	for i := range 3 {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: "f", Capacity: allot.Resources{"gpu": 8, "cpu": 16_000}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(s)
	req := tpReq("p", 0, 8)
	req.PodSets[0].Count = 2
	d := decideAs(t, s, req, allot.VerdictPreempt)
	if len(d.Victims) != 1 || d.Victims[0].Queue != "r" || d.Victims[0].Reason != "InCohortReclamation" {
		t.Fatalf("test premise: victims %+v", d.Victims)
	}
	if s, err = st.Commit(d); err != nil {
		t.Fatal(err)
	}
	// The victim's quota passes to the hold at once: r no longer borrows,
	// and q is charged all of p's.
	if s.Usage("r", "f", "gpu") != 8 || s.Usage("q", "f", "gpu") != 16 {
		t.Errorf("usage r %d, q %d", s.Usage("r", "f", "gpu"), s.Usage("q", "f", "gpu"))
	}
	s = applyOK(t, st, allot.SetQueue{Queue: queue("r", 8)})
	if _, held := s.Held("p"); held {
		t.Fatal("a change to the victim's queue keeps the hold")
	}
	if s.Usage("q", "f", "gpu") != 0 {
		t.Errorf("q still charged %d GPUs", s.Usage("q", "f", "gpu"))
	}
	recs := st.DrainAudit(nil)
	if last := recs[len(recs)-1]; last.Kind != allot.AuditReleased || last.Reason != `queue "r" changed` {
		t.Errorf("audit %+v", last)
	}
}

// TestTwoPhaseHoldPreempted: a holding preemptor is admitted in quota
// terms and may be preempted in turn, losing nothing (it never started):
// it is pending again, its victim evicts on for nobody, and the new
// preemptor, placed over that victim, waits for it.
func TestTwoPhaseHoldPreempted(t *testing.T) {
	full := func(id string, prio int32, node string) allot.Workload {
		return tpRun(id, prio, node, 0, 1, 2, 3, 4, 5, 6, 7)
	}
	st := allot.NewStore(tpCluster(t, true, full("v", 0, "n0"), full("y", 50, "n1"), full("z", 50, "n2")))
	applyOK(t, st, allot.Submit{Workload: allot.Workload(tpReq("p1", 10, 8))})
	if _, err := st.Commit(decideAs(t, st.Load(), tpReq("p1", 10, 8), allot.VerdictPreempt)); err != nil {
		t.Fatal(err)
	}
	d := decideAs(t, st.Load(), tpReq("p2", 20, 8), allot.VerdictPreempt)
	if len(d.Victims) != 1 || d.Victims[0].ID != "p1" || d.Placement[0].Node != "n0" {
		t.Fatalf("test premise: victims %+v placement %+v", d.Victims, d.Placement)
	}
	st.DrainAudit(nil)
	s, err := st.Commit(d)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Held("p1"); ok {
		t.Error("p1 still holds")
	}
	if _, ok := s.Pending("p1"); !ok {
		t.Error("p1 is not pending again")
	}
	if h, ok := s.Held("p2"); !ok || !slices.Equal(h.Victims, []string{"v"}) {
		t.Errorf("Held(p2) = %+v, %v: it waits for v", h, ok)
	}
	if preemptor, _, ok := s.Evicting("v"); !ok || preemptor != "p2" {
		t.Errorf("Evicting(v) = %q, %v", preemptor, ok)
	}
	if s.FreeGPUs() != 0 || s.Usage("q", "f", "gpu") != 24 {
		t.Errorf("%d GPUs free, queue uses %d", s.FreeGPUs(), s.Usage("q", "f", "gpu"))
	}
	recs := st.DrainAudit(nil)
	if got := kinds(recs); !slices.Equal(got, []string{"evicted:p1", "held:p2"}) {
		t.Fatalf("audit %v", got)
	}
	if recs[0].LostGPUSeconds != 0 || recs[0].Preemptor != "p2" {
		t.Errorf("p1's eviction %+v", recs[0])
	}
	s = applyOK(t, st, allot.Terminated{ID: "v"})
	if w, ok := s.Running("p2"); !ok || w.PodSets[0].Nodes[0] != "n0" {
		t.Errorf("Running(p2) = %+v, %v", w, ok)
	}
	if _, ok := s.Pending("v"); !ok || len(s.HeldIDs()) != 0 || len(s.EvictingIDs()) != 0 {
		t.Errorf("v pending %v, held %v, evicting %v", ok, s.HeldIDs(), s.EvictingIDs())
	}
	if s.FreeGPUs() != 0 || s.Usage("q", "f", "gpu") != 24 {
		t.Errorf("%d GPUs free, queue uses %d", s.FreeGPUs(), s.Usage("q", "f", "gpu"))
	}
}

// TestTwoPhaseHoldPreemptedElsewhere: a preemptor whose only victim held
// its room, and who lands where no evicting pod runs, waits for nobody: it
// is admitted at once.
func TestTwoPhaseHoldPreemptedElsewhere(t *testing.T) {
	full := func(id string, prio int32, node string) allot.Workload {
		return tpRun(id, prio, node, 0, 1, 2, 3, 4, 5, 6, 7)
	}
	st := allot.NewStore(tpCluster(t, true, full("v", 0, "n1"), full("z", 50, "n2")))
	two := tpReq("p1", 10, 8)
	two.PodSets[0].Count = 2
	if d, err := st.Commit(decideAs(t, st.Load(), two, allot.VerdictPreempt)); err != nil {
		t.Fatal(err)
	} else if h, _ := d.Held("p1"); len(h.Workload.PodSets[0].Nodes) != 2 {
		t.Fatalf("test premise: p1 holds %+v", h)
	}
	d := decideAs(t, st.Load(), tpReq("p2", 20, 8), allot.VerdictPreempt)
	if len(d.Victims) != 1 || d.Victims[0].ID != "p1" || d.Placement[0].Node != "n0" {
		t.Fatalf("test premise: victims %+v placement %+v", d.Victims, d.Placement)
	}
	st.DrainAudit(nil)
	s, err := st.Commit(d)
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := s.Running("p2"); !ok || w.PodSets[0].Nodes[0] != "n0" {
		t.Errorf("Running(p2) = %+v, %v", w, ok)
	}
	if preemptor, _, ok := s.Evicting("v"); !ok || preemptor != "" || len(s.HeldIDs()) != 0 {
		t.Errorf("Evicting(v) = %q, %v; held %v", preemptor, ok, s.HeldIDs())
	}
	if free, _ := s.NodeFreeGPUs("n1"); free != 0 {
		t.Errorf("the orphan's GPUs %v are free", free)
	}
	if got := kinds(st.DrainAudit(nil)); !slices.Equal(got, []string{"evicted:p1", "admitted:p2"}) {
		t.Errorf("audit %v", got)
	}
	s = applyOK(t, st, allot.Terminated{ID: "v"})
	if free, _ := s.NodeFreeGPUs("n1"); free != 0xff || len(s.EvictingIDs()) != 0 {
		t.Errorf("after v is gone: n1 free %v, evicting %v", free, s.EvictingIDs())
	}
}

// TestTwoPhaseNodeRemoved: removing the node a hold places its preemptor
// on releases the hold (the preemptor pending again), and the evicting
// victim on it is gone with the node; removing another node keeps it.
func TestTwoPhaseNodeRemoved(t *testing.T) {
	for _, c := range []struct {
		node     string
		released bool
	}{{"n2", true}, {"n0", false}} {
		t.Run(c.node, func(t *testing.T) {
			st := allot.NewStore(tpWorld(t, true))
			applyOK(t, st, allot.Submit{Workload: allot.Workload(tpReq("p", 10, 4))})
			if _, err := st.Commit(decideAs(t, st.Load(), tpReq("p", 10, 4), allot.VerdictPreempt)); err != nil {
				t.Fatal(err)
			}
			s := applyOK(t, st, allot.RemoveNode{Node: c.node})
			if _, held := s.Held("p"); held == c.released {
				t.Fatalf("held %v after removing %s", held, c.node)
			}
			if _, ok := s.Pending("p"); ok != c.released {
				t.Errorf("the preemptor pending: %v", ok)
			}
			_, _, evicting := s.Evicting("lo3")
			if evicting == c.released {
				t.Errorf("lo3 evicting: %v", evicting)
			}
			if c.released {
				if len(s.EvictingIDs()) != 0 || len(s.HeldIDs()) != 0 {
					t.Errorf("left in flight: evicting %v, held %v", s.EvictingIDs(), s.HeldIDs())
				}
				return
			}
			s = applyOK(t, st, allot.Terminated{ID: "lo3"})
			if _, ok := s.Running("p"); !ok {
				t.Error("p does not run once its victim is gone")
			}
		})
	}
}

// TestTwoPhaseCommitCostKeepsToTheLog: a two-phase commit works on a trial
// copy of the master, whose evictions go on the end of the store's log;
// the bytes a commit allocates must not grow with that log (a trial that
// copied the log at its first eviction made a long replay quadratic). A
// cycle runs lo on n0, preempts it with p in two phases, lets it
// terminate, withdraws it and finishes p: one eviction logged a cycle.
func TestTwoPhaseCommitCostKeepsToTheLog(t *testing.T) {
	st, err := allot.NewStoreWith(tpCluster(t, true, tpRun("x", 30, "n1", 0, 1, 2, 3, 4, 5, 6, 7), tpRun("y", 30, "n2", 0, 1, 2, 3, 4, 5, 6, 7)),
		allot.StoreOptions{AuditCapacity: 1 << 14})
	if err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	commitBytes := func(from, to int) uint64 {
		var total uint64
		for i := from; i < to; i++ {
			lo, p := fmt.Sprintf("lo%d", i), fmt.Sprintf("p%d", i)
			applyOK(t, st, allot.SetRunning{Workload: tpRun(lo, 0, "n0", 0, 1, 2, 3, 4, 5, 6, 7)})
			d := decideAs(t, st.Load(), tpReq(p, 10, 8), allot.VerdictPreempt)
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			if _, err := st.Commit(d); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&ms)
			total += ms.TotalAlloc - before
			applyOK(t, st, allot.Terminated{ID: lo})
			applyOK(t, st, allot.Withdraw{ID: lo})
			applyOK(t, st, allot.Finish{ID: p})
		}
		return total
	}
	early := commitBytes(0, 100)
	commitBytes(100, 3000)
	late := commitBytes(3000, 3100)
	if n := len(st.Load().Evictions()); n != 3100 {
		t.Fatalf("test premise: %d evictions logged, want 3100", n)
	}
	// One doubling of the log's array may fall in either window.
	if late > 3*early+1<<20 {
		t.Errorf("100 commits allocate %d bytes with 3,000 evictions logged, %d with none: a commit copies the log", late, early)
	}
}
