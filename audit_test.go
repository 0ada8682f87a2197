package allot_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

// churn evicts and readmits workload lo1 of the travel cluster n times on
// st: one eviction and one admission each time.
func churn(t *testing.T, st *allot.Store, n int) {
	t.Helper()
	for range n {
		applyOK(t, st, allot.Evict{ID: "lo1"})
		w, _ := st.Load().Pending("lo1")
		d := decideAs(t, st.Load(), allot.Request(w), allot.VerdictAdmit)
		if _, err := st.Commit(d); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAuditLogBounded: a store that is never drained holds at most its
// capacity of records, in memory too, however many it makes; the oldest
// go, counted, and the drain hands over the newest in order, their
// sequence numbers showing the gap. A snapshot's evictions are bounded
// the same way, while their count goes on.
func TestAuditLogBounded(t *testing.T) {
	const capacity = 8
	st, err := allot.NewStoreWith(travelCluster(t, false), allot.StoreOptions{AuditCapacity: capacity})
	if err != nil {
		t.Fatal(err)
	}
	churn(t, st, 50) // 100 records
	held, room := st.AuditMemory()
	if held != capacity || room > capacity {
		t.Fatalf("the log holds %d records in room for %d, capacity %d", held, room, capacity)
	}
	churn(t, st, 50)
	if held, again := st.AuditMemory(); held != capacity || again != room {
		t.Fatalf("after 100 more records: %d held in room for %d, was %d", held, again, room)
	}
	if got := st.AuditDropped(); got != 200-capacity {
		t.Errorf("dropped %d, want %d", got, 200-capacity)
	}
	recs := st.DrainAudit(nil)
	if len(recs) != capacity || recs[0].Seq != 200-capacity+1 || recs[len(recs)-1].Seq != 200 {
		t.Fatalf("drained %d records, seq %d to %d", len(recs), recs[0].Seq, recs[len(recs)-1].Seq)
	}
	for i := 1; i < len(recs); i++ {
		if recs[i].Seq != recs[i-1].Seq+1 {
			t.Fatalf("drained out of order: %d after %d", recs[i].Seq, recs[i-1].Seq)
		}
	}
	if got := kinds(recs[len(recs)-2:]); !slices.Equal(got, []string{"evicted:lo1", "admitted:lo1"}) {
		t.Errorf("the newest records: %v", got)
	}
	if again := st.DrainAudit(nil); len(again) != 0 {
		t.Errorf("a second drain gives %d records", len(again))
	}
	churn(t, st, 1)
	if recs := st.DrainAudit(nil); len(recs) != 2 || recs[0].Seq != 201 {
		t.Errorf("after a drain: %+v", recs)
	}

	s := st.Load()
	if n := s.NumEvictions(); n != 101 {
		t.Errorf("NumEvictions %d, want 101", n)
	}
	if ev := s.Evictions(); len(ev) != capacity {
		t.Errorf("Evictions lists %d, want the last %d", len(ev), capacity)
	}
	if kept := s.EvictionsKept(); kept > 2*capacity {
		t.Errorf("the snapshot keeps %d evictions, more than twice the capacity %d", kept, capacity)
	}
	if got := s.EvictionsSince(98); len(got) != 3 {
		t.Errorf("EvictionsSince(98) lists %d, want 3", len(got))
	}
	if got := s.EvictionsSince(10); len(got) != capacity {
		t.Errorf("EvictionsSince(10) lists %d, want what the window keeps, %d", len(got), capacity)
	}
	if got := s.EvictionsSince(101); got != nil {
		t.Errorf("EvictionsSince(101) = %v", got)
	}
}

// TestAuditRecords pins what the records of a preemption say: the victim's
// preemptor, reason, policy, lost work and recovery point, the versions
// and times, and the admission naming its victims; an Evict event's
// record names no preemptor or policy.
func TestAuditRecords(t *testing.T) {
	st := allot.NewStore(travelCluster(t, true))
	applyOK(t, st, allot.AdvanceTime{Seconds: 100})
	applyOK(t, st, allot.Checkpoint{ID: "lo1"})
	applyOK(t, st, allot.AdvanceTime{Seconds: 50})
	d := decideAs(t, st.Load(), travelRequest("p", 10), allot.VerdictPreempt)
	s, err := st.Commit(d)
	if err != nil {
		t.Fatal(err)
	}
	applyOK(t, st, allot.Evict{ID: "hi"})
	recs := st.DrainAudit(nil)
	if got := kinds(recs); !slices.Equal(got, []string{"evicted:lo1", "admitted:p", "evicted:hi"}) {
		t.Fatalf("audit %v", got)
	}
	// lo1 is preemptible: it loses all since its admission at 0, and has
	// no recovery point for all its checkpoint.
	want := allot.AuditRecord{Seq: 1, Kind: allot.AuditEvicted, Version: s.Version(), At: 1150, Workload: "lo1", Queue: "q", Priority: 0,
		Preemptor: "p", Reason: "InClusterQueue", Policy: "withinQueue: LowerPriority", LostGPUSeconds: 8 * 1150}
	if recs[0].Victims != nil || !equalRecord(recs[0], want) {
		t.Errorf("eviction record\n got %+v\nwant %+v", recs[0], want)
	}
	if r := recs[1]; r.Version != s.Version() || r.Priority != 10 || !slices.Equal(r.Victims, []string{"lo1"}) || r.Preemptor != "" {
		t.Errorf("admission record %+v", r)
	}
	if r := recs[2]; r.Reason != "Evicted" || r.Preemptor != "" || r.Policy != "" || r.Version != s.Version()+1 || r.Priority != 20 {
		t.Errorf("Evict event record %+v", r)
	}
	b, err := json.Marshal(recs[0])
	if err != nil {
		t.Fatal(err)
	}
	const line = `{"seq":1,"kind":"evicted","version":4,"at":1150,"workload":"lo1","queue":"q","priority":0,"preemptor":"p",` +
		`"reason":"InClusterQueue","policy":"withinQueue: LowerPriority","lostGpuSeconds":9200}`
	if string(b) != line {
		t.Errorf("JSON\n got %s\nwant %s", b, line)
	}
	var back allot.AuditRecord
	if err := json.Unmarshal(b, &back); err != nil || !equalRecord(back, recs[0]) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}

// TestAuditRecoveryPoint: a checkpointable victim resumes from its last
// checkpoint, and loses only the work since.
func TestAuditRecoveryPoint(t *testing.T) {
	w := allot.Workload{ID: "c", Queue: "q", Tenant: "t", Preemption: allot.PreemptionSpec{Class: allot.Checkpointable},
		PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 8}, Flavors: []string{"f"}}}}
	st := allot.NewStore(travelCluster(t, true))
	applyOK(t, st, allot.Finish{ID: "lo1"})
	if _, err := st.Commit(decideAs(t, st.Load(), allot.Request(w), allot.VerdictAdmit)); err != nil {
		t.Fatal(err)
	}
	applyOK(t, st, allot.AdvanceTime{Seconds: 300})
	applyOK(t, st, allot.Checkpoint{ID: "c"})
	applyOK(t, st, allot.AdvanceTime{Seconds: 20})
	st.DrainAudit(nil)
	if _, err := st.Commit(decideAs(t, st.Load(), travelRequest("p", 10), allot.VerdictPreempt)); err != nil {
		t.Fatal(err)
	}
	recs := st.DrainAudit(nil)
	if len(recs) != 2 || recs[0].Workload != "c" || recs[0].RecoveryPoint != 1300 || recs[0].LostGPUSeconds != 8*20 {
		t.Fatalf("records %+v", recs)
	}
}

// TestAuditRefusedLogsNothing: a commit refused after its victims were
// evicted (and put back) and a refused event log no record.
func TestAuditRefusedLogsNothing(t *testing.T) {
	st := allot.NewStore(travelCluster(t, true))
	d := travel(t, decideAs(t, st.Load(), travelRequest("p", 10), allot.VerdictPreempt))
	d.Placement[0].Node = "n1" // still full once lo1 is gone
	commitRefused(t, st, d, allot.ErrConflict)
	applyRefused(t, st, allot.Finish{ID: "nobody"}, allot.ErrUnknownWorkload)
	recs := st.DrainAudit(nil)
	// applyRefused applies AdvanceTime{} to compare: those records only.
	for _, r := range recs {
		t.Errorf("a refused change logged %+v", r)
	}
	if n := st.AuditDropped(); n != 0 {
		t.Errorf("%d dropped", n)
	}
}

// TestStoreOptionsValidate refuses a negative capacity.
func TestStoreOptionsValidate(t *testing.T) {
	s := travelCluster(t, false)
	if _, err := allot.NewStoreWith(s, allot.StoreOptions{AuditCapacity: -1}); !errors.Is(err, allot.ErrInvalid) {
		t.Errorf("a negative capacity: %v", err)
	}
	st, err := allot.NewStoreWith(s, allot.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	churn(t, st, 1)
	if held, _ := st.AuditMemory(); held != 2 {
		t.Errorf("the default store holds %d records", held)
	}
}

// equalRecord compares two audit records.
func equalRecord(a, b allot.AuditRecord) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
