package bench

import (
	"fmt"
	"maps"
	"testing"

	"github.com/allot-sched/allot"
)

// BenchmarkNodeChurn times the node events on the fragmented benchmark
// cluster, each on a store started afresh from the same snapshot (outside
// the timer). The nodes added, removed and moved sit at the front of the
// topology's order, so that every node after them, and every workload
// placed there, moves: the worst case. The nodes described anew in place
// keep their place (SetNode's in-place path): more CPU and memory, a
// taint, one GPU fewer on a node whose GPUs are free (a GPU gone bad).
// The configuration's events (AddFlavor, RemoveFlavor) come last, on one
// store.
func BenchmarkNodeChurn(b *testing.B) {
	for _, n := range scaleSizes {
		s := mustBuild(b, n, true)
		cb := Cluster(n, true)
		cb.Options.NodeRoom = 2
		roomy, err := cb.Build()
		if err != nil {
			b.Fatal(err)
		}
		n0, _ := s.Node("n0")
		bigger := n0
		bigger.Capacity = allot.Resources{"gpu": 8, "cpu": 384_000, "memory": 4 << 40}
		tainted := n0
		tainted.Taints = []allot.Taint{{Key: "maintenance", Effect: allot.TaintNoSchedule}}
		var idle allot.Node
		for i := range n {
			name := fmt.Sprintf("n%d", i)
			if st, _ := s.NodeStatus(name); st.FreeGPUs.Len() == 8 {
				idle, _ = s.Node(name)
				break
			}
		}
		fewer := idle
		fewer.Capacity = maps.Clone(idle.Capacity)
		fewer.Capacity["gpu"] = 7
		moved := n0
		moved.Labels = map[string]string{"block": "b1", "rack": "r9"}
		idleMoved := idle
		idleMoved.Labels = moved.Labels
		added := allot.Node{Name: "added", Flavor: "h100", Labels: map[string]string{"block": "b0", "rack": "r0"},
			Capacity: allot.Resources{"gpu": 8, "cpu": 192_000, "memory": 2 << 40}}
		for _, c := range []struct {
			name string
			ev   allot.Event
			room bool // on the cluster with two vacant slots a rack
		}{
			{"add", allot.AddNode{Node: added}, false},
			{"add-room", allot.AddNode{Node: added}, true},
			{"remove", allot.RemoveNode{Node: "n0"}, false},
			{"remove-idle", allot.RemoveNode{Node: idle.Name}, false},
			{"readd", allot.AddNode{Node: idle}, false}, // on the cluster without it
			{"set", allot.SetNode{Node: bigger}, false},
			{"set-taint", allot.SetNode{Node: tainted}, false},
			{"set-gpus", allot.SetNode{Node: fewer}, false},
			{"set-rack", allot.SetNode{Node: moved}, false},
			{"set-rack-room", allot.SetNode{Node: idleMoved}, true},
		} {
			s := s
			if c.room {
				s = roomy
			}
			if c.name == "readd" { // the node comes back to the slot it left
				st := allot.NewStore(s)
				if _, err := st.Apply(allot.RemoveNode{Node: idle.Name}); err != nil {
					b.Fatal(err)
				}
				s = st.Load()
			}
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
		// On one store, as a live cluster's events come: the idle node taken
		// out and put back in its slot, and moved to another rack's room
		// and back, in turn; an op is one event, the pair's mean.
		for _, c := range []struct {
			name   string
			s      *allot.Snapshot
			on, by allot.Event
		}{
			{"remove-readd-steady", s, allot.RemoveNode{Node: idle.Name}, allot.AddNode{Node: idle}},
			{"set-rack-room-steady", roomy, allot.SetNode{Node: idleMoved}, allot.SetNode{Node: idle}},
			// A quota-only flavor added and removed (the snapshot
			// described and built anew, each).
			{"add-remove-flavor-steady", s, allot.AddFlavor{Flavor: allot.Flavor{Name: "b200"}}, allot.RemoveFlavor{Flavor: "b200"}},
		} {
			b.Run(fmt.Sprintf("nodes=%d/event=%s", n, c.name), func(b *testing.B) {
				st := allot.NewStore(c.s)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					ev := c.on
					if i%2 == 1 {
						ev = c.by
					}
					if _, err := st.Apply(ev); err != nil {
						b.Fatal(err)
					}
					i++
				}
				if i%2 == 1 { // end on the pair's second event
					if _, err := st.Apply(c.by); err != nil {
						b.Fatal(err)
					}
				}
				if nd, ok := st.Load().Node(idle.Name); !ok || !maps.Equal(nd.Labels, idle.Labels) {
					b.Fatalf("node %s: %v %v, want it back where it was", idle.Name, ok, nd.Labels)
				}
			})
		}
	}
}
