package audit_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/audit"
)

// cluster is one node of 8 GPUs, half of it taken by a low-priority
// workload of queue q, whose higher priorities preempt its lower ones.
func cluster(twoPhase bool) *allot.Snapshot {
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Nodes:     []allot.Node{{Name: "n0", Flavor: "f", Capacity: allot.Resources{"gpu": 8}}},
		Queues: []allot.Queue{{Name: "q", Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"},
			Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}}},
		Running: []allot.Workload{{ID: "low", Queue: "q", Preemption: allot.PreemptionSpec{Class: allot.Checkpointable, LastCheckpointAt: 40},
			PodSets: []allot.PodSet{{Name: "w", Count: 1, Flavor: "f", PerPod: allot.Resources{"gpu": 4}, Nodes: []string{"n0"}, GPUIndices: [][]int{{0, 1, 2, 3}}}}}},
		Options: allot.Options{TwoPhasePreemption: twoPhase},
		Now:     100,
	}
	s, err := b.Build()
	if err != nil {
		panic(err)
	}
	return s
}

var urgent = allot.Request{ID: "urgent", Queue: "q", Priority: 10, SubmittedAt: 90,
	PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 8}}}}

// A two-phase preemption, written out as it happens: the victim's
// eviction with its preemptor, policy, lost work and recovery point, the
// preemptor's hold, the victim gone 30 seconds later and the admission.
func Example() {
	store := allot.NewStore(cluster(true))
	w := audit.NewWriter(os.Stdout)
	d := allot.Decide(store.Load(), urgent)
	if _, err := store.Commit(d); err != nil {
		panic(err)
	}
	store.Apply(allot.AdvanceTime{Seconds: 30})
	store.Apply(allot.Terminated{ID: "low"})
	if _, err := w.Drain(store); err != nil {
		panic(err)
	}
	// Output:
	// {"seq":1,"kind":"evicted","version":1,"at":100,"workload":"low","queue":"q","priority":0,"preemptor":"urgent","reason":"InClusterQueue","policy":"withinQueue: LowerPriority","lostGpuSeconds":240,"recoveryPoint":40}
	// {"seq":2,"kind":"held","version":1,"at":100,"workload":"urgent","queue":"q","priority":10,"victims":["low"]}
	// {"seq":3,"kind":"terminated","version":3,"at":130,"workload":"low","queue":"q","priority":0,"reason":"Terminated"}
	// {"seq":4,"kind":"admitted","version":3,"at":130,"workload":"urgent","queue":"q","priority":10,"victims":["low"]}
}

// TestRoundTrip: Read gives back what Writer wrote.
func TestRoundTrip(t *testing.T) {
	store := allot.NewStore(cluster(false))
	if _, err := store.Commit(allot.Decide(store.Load(), urgent)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := audit.NewWriter(&buf)
	n, err := w.Drain(store)
	if err != nil || n != 2 || w.Written() != 2 || w.Missed() != 0 {
		t.Fatalf("Drain: %d, %v; written %d, missed %d", n, err, w.Written(), w.Missed())
	}
	if lines := strings.Count(buf.String(), "\n"); lines != 2 {
		t.Fatalf("%d lines:\n%s", lines, buf.String())
	}
	recs, err := audit.Read(strings.NewReader(buf.String() + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Kind != allot.AuditEvicted || recs[0].RecoveryPoint != 40 || recs[1].Kind != allot.AuditAdmitted ||
		len(recs[1].Victims) != 1 || recs[1].Victims[0] != "low" {
		t.Errorf("read back %+v", recs)
	}
}

// TestMissed: records a full log dropped before the drain show as missed.
func TestMissed(t *testing.T) {
	store, err := allot.NewStoreWith(cluster(false), allot.StoreOptions{AuditCapacity: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Commit(allot.Decide(store.Load(), urgent)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := audit.NewWriter(&buf)
	if n, err := w.Drain(store); err != nil || n != 1 {
		t.Fatalf("Drain: %d, %v", n, err)
	}
	if w.Missed() != 1 || store.AuditDropped() != 1 {
		t.Errorf("missed %d, dropped %d", w.Missed(), store.AuditDropped())
	}
}

// TestReadError names the line that is not a record.
func TestReadError(t *testing.T) {
	_, err := audit.Read(strings.NewReader(`{"seq":1,"kind":"admitted"}` + "\n" + `{"kind":"arrived"}` + "\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("got %v", err)
	}
}

// failing is a writer that refuses every write.
type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

// TestWriteError passes the writer's error on, naming the record.
func TestWriteError(t *testing.T) {
	store := allot.NewStore(cluster(false))
	if _, err := store.Commit(allot.Decide(store.Load(), urgent)); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.NewWriter(failing{}).Drain(store); err == nil || !strings.Contains(err.Error(), "record 1: disk full") {
		t.Errorf("got %v", err)
	}
}
