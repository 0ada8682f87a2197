package allot_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

// TestSetRunning: a workload found running, or described anew, leaves the
// snapshot Build would build with it among Builder.Running; a refused one
// changes nothing.
func TestSetRunning(t *testing.T) {
	pod := func(count int32, gpu int64, nodes ...string) allot.PodSet {
		return allot.PodSet{Name: "m", Count: count, PerPod: allot.Resources{"gpu": gpu, "cpu": 1_000}, Flavor: "h100", Nodes: nodes}
	}
	found := allot.Workload{ID: "found", Queue: "batch", AdmittedAt: 700, PodSets: []allot.PodSet{pod(2, 4, "n2", "n2")}}
	// Beyond its queue's nominal quota, as found: Build charges it all the same.
	over := allot.Workload{ID: "over", Queue: "idle", AdmittedAt: 700, PodSets: []allot.PodSet{pod(1, 8, "n2")}}
	for _, tc := range []struct {
		name string
		w    allot.Workload
		edit func(*allot.Builder)
	}{
		{"new", found, func(b *allot.Builder) { b.Running = append(b.Running, found) }},
		{"beyond nominal", over, func(b *allot.Builder) { b.Running = append(b.Running, over) }},
		{"grown", allot.Workload{ID: "gang", Queue: "train", User: "ana", Priority: 5, AdmittedAt: 100, ExpectedRuntime: 5000,
			PodSets: []allot.PodSet{pod(3, 8, "n0", "n1", "n2")}}, func(b *allot.Builder) {
			b.Running[0].PodSets[0] = pod(3, 8, "n0", "n1", "n2")
		}},
		{"shrunk", allot.Workload{ID: "pair", Queue: "train", AdmittedAt: 600, PodSets: []allot.PodSet{pod(1, 1, "n6")}}, func(b *allot.Builder) {
			b.Running[6].PodSets[0] = pod(1, 1, "n6")
		}},
		{"pending starts", allot.Workload{ID: "wait-idle", Queue: "idle", SubmittedAt: 900, AdmittedAt: 1000,
			PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 2}, Flavor: "h100", Nodes: []string{"n2"}}}}, func(b *allot.Builder) {
			b.Pending = slices.DeleteFunc(b.Pending, func(w allot.Workload) bool { return w.ID == "wait-idle" })
			b.Running = append(b.Running, allot.Workload{ID: "wait-idle", Queue: "idle", SubmittedAt: 900, AdmittedAt: 1000,
				PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 2}, Flavor: "h100", Nodes: []string{"n2"}}}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := churnBuilder()
			tc.edit(&want)
			applyEqualsBuild(t, churnBuilder(), allot.SetRunning{Workload: tc.w}, want)
		})
	}
	for _, tc := range []struct {
		name   string
		w      allot.Workload
		target error
	}{
		{"over capacity", allot.Workload{ID: "big", Queue: "batch", PodSets: []allot.PodSet{pod(1, 8, "n0")}}, allot.ErrOverCapacity},
		// The second pod does not fit: the first one's booking is undone.
		{"second pod over capacity", allot.Workload{ID: "big", Queue: "batch", PodSets: []allot.PodSet{pod(2, 8, "n2", "n0")}}, allot.ErrOverCapacity},
		{"unknown node", allot.Workload{ID: "x", Queue: "batch", PodSets: []allot.PodSet{pod(1, 1, "n9")}}, allot.ErrUnknownNode},
		{"unknown queue", allot.Workload{ID: "x", Queue: "nope", PodSets: []allot.PodSet{pod(1, 1, "n2")}}, allot.ErrUnknownQueue},
		{"admitted in the future", allot.Workload{ID: "x", Queue: "batch", AdmittedAt: 2000, PodSets: []allot.PodSet{pod(1, 1, "n2")}}, allot.ErrInvalid},
		// Described anew beyond what its nodes hold: the old booking stays.
		{"grown beyond its node", allot.Workload{ID: "small", Queue: "infer", Priority: 1, AdmittedAt: 200, PodSets: []allot.PodSet{pod(1, 9, "n3")}}, allot.ErrOverCapacity},
	} {
		t.Run("refused/"+tc.name, func(t *testing.T) { refused(t, churnBuilder(), allot.SetRunning{Workload: tc.w}, tc.target) })
	}
}

// TestSetRunningRefusedLateRestoresTheMaster: a SetRunning refused after
// it wrote the master (its second pod over its node's capacity, the first
// booked) leaves the version a reader holds as it was, and the events
// after it land on the master as it was: twice refused between two
// accepted events, the store's version is what Build makes of the two.
func TestSetRunningRefusedLateRestoresTheMaster(t *testing.T) {
	pod := func(count int32, gpu int64, nodes ...string) allot.PodSet {
		return allot.PodSet{Name: "m", Count: count, PerPod: allot.Resources{"gpu": gpu, "cpu": 1_000}, Flavor: "h100", Nodes: nodes}
	}
	first := allot.Workload{ID: "first", Queue: "batch", AdmittedAt: 700, PodSets: []allot.PodSet{pod(1, 2, "n2")}}
	second := allot.Workload{ID: "second", Queue: "batch", AdmittedAt: 700, PodSets: []allot.PodSet{pod(1, 2, "n2")}}
	late := allot.Workload{ID: "big", Queue: "batch", PodSets: []allot.PodSet{pod(2, 4, "n2", "n0")}}
	st := allot.NewStore(buildAt(t, churnBuilder(), 0))
	if _, err := st.Apply(allot.SetRunning{Workload: first}); err != nil {
		t.Fatal(err)
	}
	held := st.Load()
	heldDump := dumpState(t, held)
	for range 2 {
		if _, err := st.Apply(allot.SetRunning{Workload: late}); !errors.Is(err, allot.ErrOverCapacity) {
			t.Fatalf("error %v, want %v", err, allot.ErrOverCapacity)
		}
		if st.Load() != held {
			t.Fatalf("a refused SetRunning published version %d", st.Load().Version())
		}
	}
	if got := dumpState(t, held); got != heldDump {
		t.Fatalf("a refused SetRunning changed the version a reader holds:\n%s\nwas\n%s", got, heldDump)
	}
	got, err := st.Apply(allot.SetRunning{Workload: second})
	if err != nil {
		t.Fatal(err)
	}
	want := churnBuilder()
	want.Running = append(want.Running, first, second)
	sameState(t, "after refused SetRunnings", got, buildAt(t, want, 2), churnProbes())
}
