package fuzz

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

// FuzzCommitDecisionJSON decodes a decision from JSON, as a controller does
// that commits what a webhook decided, and commits it on a store of a fixed
// cluster. A refused commit must say why with a typed error and leave the
// store as it was; one that commits must book no GPU twice, keep the queue
// within its quota, place the request as it asks and evict exactly the
// victims Decide chooses on the cluster.
func FuzzCommitDecisionJSON(f *testing.F) {
	base, twoPhase := commitCluster(f, false), commitCluster(f, true)
	for _, seed := range commitSeeds(f, base) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d allot.Decision
		if json.Unmarshal(data, &d) != nil {
			return
		}
		committed := checkCommit(t, base, d)
		checkTwoPhaseCommit(t, base, twoPhase, d, committed)
	})
}

// commitNominal is the commit cluster's quota of GPUs.
const commitNominal = 40

// commitCluster is four nodes of 8 GPUs, two racks of two, in one queue
// whose higher priorities preempt its lower ones: lo1 holds c0, lo2 and hi
// share c1, x holds c2 and c3 is free.
func commitCluster(tb testing.TB, twoPhase bool) *allot.Snapshot {
	tb.Helper()
	on := func(id string, prio int32, node string, gpus ...int) allot.Workload {
		return allot.Workload{ID: id, Queue: "q", Priority: prio, PodSets: []allot.PodSet{{Name: "w", Count: 1, Flavor: "f",
			PerPod: allot.Resources{"gpu": int64(len(gpus)), "cpu": 1000}, Nodes: []string{node}, GPUIndices: [][]int{gpus}}}}
	}
	b := allot.Builder{
		Resources: []string{"gpu", "cpu"},
		Levels:    []string{"rack"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Queues: []allot.Queue{{Name: "q", Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"},
			Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: commitNominal}, {Name: "cpu", Nominal: 64_000}}}}}},
		Running: []allot.Workload{on("lo1", 0, "c0", 0, 1, 2, 3, 4, 5, 6, 7), on("lo2", 0, "c1", 0, 1, 2, 3),
			on("hi", 20, "c1", 4, 5, 6, 7), on("x", 30, "c2", 0, 1, 2, 3, 4, 5, 6, 7)},
		Options: allot.Options{TwoPhasePreemption: twoPhase},
		Now:     5000,
	}
	for i := range 4 {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("c%d", i), Flavor: "f", Labels: map[string]string{"rack": fmt.Sprintf("r%d", i/2)},
			Capacity: allot.Resources{"gpu": 8, "cpu": 16_000}})
	}
	s, err := b.Build()
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// commitSeeds are decisions of the commit cluster as JSON: an Admit, a
// Preempt of one and of two victims, a gang across racks and a Queue, then
// variants of them changed on the way.
func commitSeeds(tb testing.TB, s *allot.Snapshot) [][]byte {
	tb.Helper()
	req := func(id string, prio int32, pods int32, gpus int64) allot.Request {
		return allot.Request{ID: id, Queue: "q", Priority: prio, SubmittedAt: 100,
			PodSets: []allot.PodSet{{Name: "w", Count: pods, PerPod: allot.Resources{"gpu": gpus, "cpu": 500}}}}
	}
	var seeds [][]byte
	add := func(d allot.Decision) {
		b, err := json.Marshal(d)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, r := range []allot.Request{req("a", 0, 1, 8), req("p", 10, 1, 8), req("g", 25, 2, 8), req("m", 10, 3, 4), req("big", 0, 4, 8)} {
		d := allot.Decide(s, r)
		add(d)
		if len(d.Placement) > 0 {
			moved := d.Clone()
			moved.Placement[0].Node = "c1"
			add(moved)
		}
		if len(d.Victims) > 0 {
			other := d.Clone()
			other.Victims[0].ID = "hi"
			add(other)
		}
	}
	return append(seeds, []byte(`{}`), []byte(`null`), []byte(`{"verdict":"Admit","workload":"a","queue":"q","request":{"id":"a","queue":"q","podSets":[]}}`))
}

// checkCommit commits d on a store of base, checks the outcome and
// reports whether it committed.
func checkCommit(t *testing.T, base *allot.Snapshot, d allot.Decision) bool {
	t.Helper()
	st := allot.NewStore(base)
	next, err, panicked := commit(st, d)
	if panicked != nil {
		t.Fatalf("Commit panicked: %v\n%s", panicked, clip(marshal(t, &d)))
	}
	if err != nil {
		if !errors.Is(err, allot.ErrInvalid) && !errors.Is(err, allot.ErrConflict) && !errors.Is(err, allot.ErrUnknownResource) {
			t.Fatalf("Commit: %v is neither invalid input nor a conflict", err)
		}
		if st.Load() != base {
			t.Fatalf("a refused commit (%v) published a version", err)
		}
		after, err := st.Apply(allot.AdvanceTime{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := commitState(after), commitState(base); got != want {
			t.Fatalf("a refused commit changed the store:\nbefore %s\nafter  %s", want, got)
		}
		return false
	}
	r := d.Request()
	w, ok := next.Running(r.ID)
	if !ok {
		t.Fatalf("committed, but %q does not run", r.ID)
	}
	if len(w.PodSets) != len(r.PodSets) {
		t.Fatalf("%q runs %d pod sets, asked for %d", r.ID, len(w.PodSets), len(r.PodSets))
	}
	for i, ps := range w.PodSets {
		if ps.Count != r.PodSets[i].Count || len(ps.Nodes) != int(ps.Count) {
			t.Fatalf("pod set %q runs %d pods on %d nodes, asked for %d", ps.Name, ps.Count, len(ps.Nodes), r.PodSets[i].Count)
		}
		for k, g := range ps.GPUIndices {
			if int64(len(g)) != r.PodSets[i].PerPod["gpu"] {
				t.Fatalf("pod %d of %q holds GPUs %v, asked for %d", k, ps.Name, g, r.PodSets[i].PerPod["gpu"])
			}
		}
	}
	checkNoDoubleBooking(t, next)
	if u := next.Usage("q", "f", "gpu"); u > commitNominal {
		t.Fatalf("queue q uses %d GPUs of %d", u, commitNominal)
	}
	var evicted []string
	for _, e := range next.Evictions() {
		evicted = append(evicted, e.ID)
	}
	var want []string
	if d.Verdict == allot.VerdictPreempt {
		for _, v := range allot.Decide(base, r).Victims {
			want = append(want, v.ID)
		}
	}
	if !slices.Equal(evicted, want) {
		t.Fatalf("evicted %v, Decide evicts %v", evicted, want)
	}
	return true
}

// checkTwoPhaseCommit commits d on a store of twoPhase, base's cluster
// committing preemptions in two phases: it commits exactly when one phase
// did (committed), refused it leaves the store as it was, and once the
// victims have terminated the store holds one phase's state.
func checkTwoPhaseCommit(t *testing.T, base, twoPhase *allot.Snapshot, d allot.Decision, committed bool) {
	t.Helper()
	st := allot.NewStore(twoPhase)
	s, err, panicked := commit(st, d)
	if panicked != nil {
		t.Fatalf("two phases: Commit panicked: %v", panicked)
	}
	if (err == nil) != committed {
		t.Fatalf("two phases: Commit gives %v, one phase committed: %v", err, committed)
	}
	if err != nil {
		if st.Load() != twoPhase {
			t.Fatalf("two phases: a refused commit (%v) published a version", err)
		}
		return
	}
	r := d.Request()
	if d.Verdict == allot.VerdictPreempt {
		h, ok := s.Held(r.ID)
		if !ok || len(h.Victims) != len(d.Victims) {
			t.Fatalf("two phases: Held(%q) = %+v, %v", r.ID, h, ok)
		}
		for _, v := range h.Victims {
			if s, err = st.Apply(allot.Terminated{ID: v}); err != nil {
				t.Fatalf("two phases: Terminated %q: %v", v, err)
			}
		}
	}
	one := allot.NewStore(base)
	want, err := one.Commit(d)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := commitState(want), commitState(s); a != b {
		t.Fatalf("two phases end elsewhere:\none phase  %s\ntwo phases %s", a, b)
	}
	checkNoDoubleBooking(t, s)
}

// checkNoDoubleBooking checks that no GPU of the commit cluster is held by
// two workloads and that every node's free GPUs are the ones nobody holds.
func checkNoDoubleBooking(t *testing.T, s *allot.Snapshot) {
	t.Helper()
	held := map[string]uint64{}
	for _, id := range s.RunningIDs() {
		w, _ := s.Running(id)
		for _, ps := range w.PodSets {
			for k, node := range ps.Nodes {
				for _, g := range ps.GPUIndices[k] {
					if g < 0 || g >= 8 {
						t.Fatalf("%q holds GPU %d of node %q", id, g, node)
					}
					if held[node]&(1<<g) != 0 {
						t.Fatalf("GPU %d of node %q is booked twice", g, node)
					}
					held[node] |= 1 << g
				}
			}
		}
	}
	for i := range 4 {
		node := fmt.Sprintf("c%d", i)
		free, _ := s.NodeFreeGPUs(node)
		if uint64(free)|held[node] != 0xff || uint64(free)&held[node] != 0 {
			t.Fatalf("node %q: free GPUs %v, held %08b", node, free, held[node])
		}
	}
}

// commitState renders what checkCommit compares of a store before and
// after a refused commit.
func commitState(s *allot.Snapshot) string {
	var running []allot.Workload
	for _, id := range s.RunningIDs() {
		w, _ := s.Running(id)
		running = append(running, w)
	}
	b, _ := json.Marshal(struct {
		Running   []allot.Workload
		Pending   []string
		Free      int64
		Evictions []allot.Eviction
		Usage     int64
	}{running, s.PendingIDs(), s.FreeGPUs(), s.Evictions(), s.Usage("q", "f", "gpu")})
	return string(b)
}

// TestCommitSeeds runs the fuzz target's checks on its seeds, in both
// modes, and the seeds are what they say: the first decisions commit.
func TestCommitSeeds(t *testing.T) {
	base, twoPhase := commitCluster(t, false), commitCluster(t, true)
	seeds := commitSeeds(t, base)
	committed, preempts := 0, 0
	for i, seed := range seeds {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var d allot.Decision
			if err := json.Unmarshal(seed, &d); err != nil {
				t.Fatal(err)
			}
			ok := checkCommit(t, base, d)
			if ok {
				committed++
				if d.Verdict == allot.VerdictPreempt {
					preempts++
				}
			}
			checkTwoPhaseCommit(t, base, twoPhase, d, ok)
		})
	}
	if committed < 3 || preempts == 0 {
		t.Errorf("%d of %d seeds commit, %d of them Preempt: the seeds do not reach the commit", committed, len(seeds), preempts)
	}
}
