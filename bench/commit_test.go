package bench

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
)

// BenchmarkCommit times committing one workload of many one-core pods, many
// to a node, on 8 nodes: twice the pods should take twice the time. Each
// commit is on a store started afresh from the same snapshot.
func BenchmarkCommit(b *testing.B) {
	bl := allot.Builder{
		Resources: []string{"gpu", "cpu"},
		Flavors:   []allot.Flavor{{Name: "f"}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 64}, {Name: "cpu", Nominal: 8 * 64000}}}}}},
	}
	for i := range 8 {
		bl.Nodes = append(bl.Nodes, allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: "f", Capacity: allot.Resources{"gpu": 8, "cpu": 64000}})
	}
	s, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	for _, pods := range []int32{2_500, 5_000, 10_000, 20_000} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			d := allot.Decide(s, allot.Request{ID: "w", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: pods, PerPod: allot.Resources{"cpu": 1}}}})
			if d.Verdict != allot.VerdictAdmit {
				b.Fatalf("%v: %s", d.Reason, d.Message)
			}
			b.ReportAllocs()
			for b.Loop() {
				st := allot.NewStore(s)
				next, err := st.Commit(d)
				if err != nil {
					b.Fatal(err)
				}
				if next.RunningCount("q") != 1 {
					b.Fatalf("running %v", next.RunningIDs())
				}
			}
		})
	}
}
