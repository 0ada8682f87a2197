package bench

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
)

// backfillNow is the clock of the backfill cluster.
const backfillNow = 10_000

// backfillCluster is the 1024-node cluster with every node busy but the
// last of each of the first 16 racks, each busy node's workload expected to
// end at its own time, a rack of 2 free nodes more, and blocked gangs of 8
// pods × 8 GPUs, each within a rack and of higher priority than any
// request of the benchmark, all of which get a reservation (never in the
// small rack).
func backfillCluster(tb testing.TB, blocked int) *allot.Snapshot {
	tb.Helper()
	bl := Cluster(1024, false)
	bl.Now = backfillNow
	bl.Options.BackfillDepth = blocked
	for i, n := range bl.Nodes {
		if i%nodesPerRack == nodesPerRack-1 && i/nodesPerRack < 16 {
			continue
		}
		bl.Running = append(bl.Running, allot.Workload{ID: fmt.Sprintf("run-%04d", i), Queue: "train",
			ExpectedRuntime: backfillNow + 60*(1+int64(i*389%997)),
			PodSets: []allot.PodSet{{Name: "main", Count: 1, Flavor: "h100", Nodes: []string{n.Name},
				PerPod: allot.Resources{"gpu": gpusPerNode, "cpu": 4_000}}}})
	}
	for i := range 2 {
		bl.Nodes = append(bl.Nodes, allot.Node{Name: fmt.Sprintf("spare%d", i), Flavor: "h100",
			Labels:   map[string]string{"block": "spare", "rack": "spare"},
			Capacity: allot.Resources{"gpu": gpusPerNode, "cpu": 192_000, "memory": 2 << 40}})
	}
	for i := range blocked {
		r := GangRequest(fmt.Sprintf("blocked-%02d", i), 8, 8, "rack", "")
		bl.Pending = append(bl.Pending, allot.Workload{ID: r.ID, Queue: r.Queue, Priority: 10, SubmittedAt: int64(i), PodSets: r.PodSets})
	}
	s, err := bl.Build()
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// backfillCases are requests below the blocked gangs: one that ends before
// any reservation starts, one that takes a reserved GPU at first and is
// placed again around the reservations.
func backfillCases() []struct {
	name string
	req  allot.Request
	want string
} {
	early := GangRequest("early", 1, 8, "", "")
	early.ExpectedRuntime = 30
	return []struct {
		name string
		req  allot.Request
		want string
	}{
		{"ends_early", early, "takes none of the GPUs reserved for 64 blocked workload(s), or ends before they start"},
		{"placed_around", GangRequest("around", 1, 8, "", ""), "placed again, around the GPUs reserved for"},
	}
}

// checkBackfill fails unless d admits and its backfill check says want.
func checkBackfill(tb testing.TB, d *allot.Decision, want string) {
	tb.Helper()
	if d.Verdict != allot.VerdictAdmit {
		tb.Fatalf("%v %v: %s", d.Verdict, d.Reason, d.Message)
	}
	for _, c := range d.Trail {
		if c.Stage == allot.StageBackfill {
			if len(c.Detail) < len(want) || c.Detail[:len(want)] != want {
				tb.Fatalf("backfill: %q, want %q...", c.Detail, want)
			}
			return
		}
	}
	tb.Fatalf("no backfill check in %v", d.Trail)
}

// BenchmarkDecideBackfill times a decision below 64 blocked gangs, with
// their reservations planned by an earlier decision on the same snapshot
// (plan=cached) or by this one, the first after a publish (plan=fresh).
func BenchmarkDecideBackfill(b *testing.B) {
	s := backfillCluster(b, 64)
	for _, c := range backfillCases() {
		b.Run(fmt.Sprintf("blocked=64/plan=cached/%s", c.name), func(b *testing.B) {
			var d allot.Decision
			allot.DecideInto(s, c.req, &d)
			b.ReportAllocs()
			for b.Loop() {
				allot.DecideInto(s, c.req, &d)
			}
			checkBackfill(b, &d, c.want)
		})
	}
	c := backfillCases()[0]
	b.Run(fmt.Sprintf("blocked=64/plan=fresh/%s", c.name), func(b *testing.B) {
		st := allot.NewStore(s)
		var d allot.Decision
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			snap, err := st.Apply(allot.AdvanceTime{})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			allot.DecideInto(snap, c.req, &d)
		}
		checkBackfill(b, &d, c.want)
	})
}
