package allot_test

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench"
)

// The allocation pins of the store's writers: what one Commit and one
// Finish allocate on the fragmented 1024-node cluster of bench's
// BenchmarkStoreCommit and BenchmarkStoreFinish, with and without pending
// workloads in the store. Each number was measured and is an upper bound:
// the test fails above it and says so below it, so that an improvement
// lowers the pin.

// allocRuns is how many commits or finishes AllocsPerRun averages over.
const allocRuns = 100

// allocCluster is bench.Cluster(1024, true) with pending one-pod, 8-GPU
// workloads in its queue, submitted in ID order.
func allocCluster(t *testing.T, pending int) (*allot.Snapshot, []allot.Workload) {
	t.Helper()
	b := bench.Cluster(1024, true)
	b.Now = 10_000
	for i := range pending {
		b.Pending = append(b.Pending, allot.Workload{ID: fmt.Sprintf("p%04d", i), Queue: "train", SubmittedAt: int64(i),
			PodSets: []allot.PodSet{{Name: "workers", Count: 1, PerPod: allot.Resources{"gpu": 8, "cpu": 32_000},
				Topology: allot.TopologyRequest{Preferred: "rack"}}}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s, b.Pending
}

// allocPlan decides allocRuns+1 admissions (AllocsPerRun runs once more to
// warm up), each on the version the ones before it left: the pending
// workloads in order with own, one-pod 8-GPU requests preferring a rack
// (bench's planCommits) without.
func allocPlan(t *testing.T, base *allot.Snapshot, pending []allot.Workload, own bool) []allot.Decision {
	t.Helper()
	st := allot.NewStore(base)
	plan := make([]allot.Decision, allocRuns+1)
	for i := range plan {
		r := bench.GangRequest(fmt.Sprintf("w%d", i), 1, 8, "", "rack")
		if own {
			r = allot.Request(pending[i])
		}
		plan[i] = allot.Decide(st.Load(), r)
		if plan[i].Verdict != allot.VerdictAdmit {
			t.Fatalf("%s: %v: %s", r.ID, plan[i].Reason, plan[i].Message)
		}
		if _, err := st.Commit(plan[i]); err != nil {
			t.Fatal(err)
		}
	}
	return plan
}

// checkAllocs fails when got is above the pinned want and asks for a lower
// pin when it is below.
func checkAllocs(t *testing.T, what string, got float64, want float64) {
	t.Helper()
	switch {
	case got > want:
		t.Errorf("%s: %v allocations, pinned at %v", what, got, want)
	case got < want:
		t.Logf("%s: %v allocations, pinned at %v: lower the pin", what, got, want)
	}
}

func TestStoreCommitAllocs(t *testing.T) {
	for _, c := range []struct {
		name    string
		pending int
		own     bool // commit the pending workloads, as Schedule does
		want    float64
	}{
		// Measured: the publish (a version; the copied pages, usage rows
		// and buffers come from the master's spare blocks, a fraction of
		// an allocation each) and the running record.
		{"pending=0", 0, false, 2},
		{"pending=512/admit=other", 512, false, 2},
		// Measured: dequeuing the admitted workload copies the paths of
		// the pending indexes besides.
		{"pending=512/admit=pending", 512, true, 14},
	} {
		t.Run(c.name, func(t *testing.T) {
			base, pending := allocCluster(t, c.pending)
			plan := allocPlan(t, base, pending, c.own)
			st, i := allot.NewStore(base), 0
			n := testing.AllocsPerRun(allocRuns, func() {
				if _, err := st.Commit(plan[i]); err != nil {
					t.Fatal(err)
				}
				i++
			})
			checkAllocs(t, "Store.Commit", n, c.want)
		})
	}
}

func TestStoreFinishAllocs(t *testing.T) {
	for _, c := range []struct {
		name    string
		pending int
		want    float64 // measured
	}{
		{"pending=0", 0, 4},
		{"pending=512", 512, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			base, pending := allocCluster(t, c.pending)
			plan := allocPlan(t, base, pending, false)
			st := allot.NewStore(base)
			for _, d := range plan {
				if _, err := st.Commit(d); err != nil {
					t.Fatal(err)
				}
			}
			i := 0
			n := testing.AllocsPerRun(allocRuns, func() {
				if _, err := st.Apply(allot.Finish{ID: plan[i].Workload}); err != nil {
					t.Fatal(err)
				}
				i++
			})
			checkAllocs(t, "Store.Apply(Finish)", n, c.want)
		})
	}
}

// TestStoreCommitAllocsAtScale: a commit allocates at most four times at
// any size; the fit index's pages, which grow with the cluster, come from
// spare blocks. (AllocsPerRun rounds the average down.)
func TestStoreCommitAllocsAtScale(t *testing.T) {
	for _, c := range []struct {
		nodes int
		want  float64 // measured
	}{{10_240, 3}, {102_400, 3}} {
		t.Run(fmt.Sprintf("nodes=%d", c.nodes), func(t *testing.T) {
			if testing.Short() && c.nodes > 10_240 {
				t.Skip("builds 102,400 nodes")
			}
			base, err := bench.Cluster(c.nodes, true).Build()
			if err != nil {
				t.Fatal(err)
			}
			plan := allocPlan(t, base, nil, false)
			st, i := allot.NewStore(base), 0
			n := testing.AllocsPerRun(allocRuns, func() {
				if _, err := st.Commit(plan[i]); err != nil {
					t.Fatal(err)
				}
				i++
			})
			checkAllocs(t, "Store.Commit", n, c.want)
		})
	}
}

// TestNodeEventAllocs pins what a node event allocates on one store, as a
// live cluster's come (BenchmarkNodeChurn's steady rows): an idle node
// taken out and put back in its slot, and moved into another rack's room
// and back, in turn. A trial copy of the master takes its copies from the
// master's spare blocks, and the topology and capacity state a node event
// forks from the master's too, so that a master never starts over with
// blocks of its own that it drops after a copy or two.
func TestNodeEventAllocs(t *testing.T) {
	b := bench.Cluster(1024, true)
	b.Options.NodeRoom = 2
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	var idle allot.Node
	for _, nd := range b.Nodes {
		if st, _ := s.NodeStatus(nd.Name); st.FreeGPUs.Len() == 8 {
			idle, _ = s.Node(nd.Name)
			break
		}
	}
	moved := idle
	moved.Labels = map[string]string{"block": "b1", "rack": "r9"}
	for _, c := range []struct {
		name   string
		on, by allot.Event
		want   float64 // measured
	}{
		{"remove-readd", allot.RemoveNode{Node: idle.Name}, allot.AddNode{Node: idle}, 13},
		{"set-rack-room", allot.SetNode{Node: moved}, allot.SetNode{Node: idle}, 28},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := allot.NewStore(s)
			i := 0
			apply := func() {
				ev := c.on
				if i%2 == 1 {
					ev = c.by
				}
				if _, err := st.Apply(ev); err != nil {
					t.Fatal(err)
				}
				i++
			}
			// The master's first blocks are small (cow's grow): past them,
			// the events as they come for the store's life.
			for range 64 {
				apply()
			}
			n := testing.AllocsPerRun(allocRuns, apply)
			checkAllocs(t, "Store.Apply", n, c.want)
		})
	}
}
