package bench

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
)

// BenchmarkNodeChurn times the node events on the fragmented benchmark
// cluster, each on a store started afresh from the same snapshot (outside
// the timer). The nodes sit at the front of the topology's order, so that
// every node after them, and every workload placed there, moves: the worst
// case.
func BenchmarkNodeChurn(b *testing.B) {
	for _, n := range []int{1024, 10240} {
		s := mustBuild(b, n, true)
		n0, _ := s.Node("n0")
		bigger := n0
		bigger.Capacity = allot.Resources{"gpu": 8, "cpu": 384_000, "memory": 4 << 40}
		added := allot.Node{Name: "added", Flavor: "h100", Labels: map[string]string{"block": "b0", "rack": "r0"},
			Capacity: allot.Resources{"gpu": 8, "cpu": 192_000, "memory": 2 << 40}}
		for _, c := range []struct {
			name string
			ev   allot.Event
		}{
			{"add", allot.AddNode{Node: added}},
			{"remove", allot.RemoveNode{Node: "n0"}},
			{"set", allot.SetNode{Node: bigger}},
		} {
			b.Run(fmt.Sprintf("nodes=%d/event=%s", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				var next *allot.Snapshot
				for b.Loop() {
					b.StopTimer()
					st := allot.NewStore(s)
					b.StartTimer()
					var err error
					if next, err = st.Apply(c.ev); err != nil {
						b.Fatal(err)
					}
				}
				if next.Version() != s.Version()+1 {
					b.Fatalf("version %d", next.Version())
				}
			})
		}
	}
}
