package allot_test

import (
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

// TestAuditNodeRemoved: the evictions RemoveNode makes are in the audit
// log, and so is everything the store does after it (RemoveNode works on
// a private copy of the master, which must stage its records where the
// master does).
func TestAuditNodeRemoved(t *testing.T) {
	st := allot.NewStore(storeExample())
	applyOK(t, st, allot.AdvanceTime{Seconds: 60})
	applyOK(t, st, allot.RemoveNode{Node: "n0"})
	w, _ := st.Load().Pending("train")
	d := decideAs(t, st.Load(), allot.Request(w), allot.VerdictAdmit)
	if _, err := st.Commit(d); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range st.DrainAudit(nil) {
		got = append(got, r.Kind.String()+" "+r.Workload+" "+r.Reason)
	}
	if want := []string{"evicted train NodeRemoved", "admitted train "}; !slices.Equal(got, want) {
		t.Fatalf("audit log %q, want %q", got, want)
	}
}
