package topology

import (
	"errors"
	"testing"

	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/res"
)

// shareTopo is two nodes: a of 4 GPUs, GPUs 1 and 2 shareable; b of 2,
// both shareable.
func shareTopo(t *testing.T) *Topology {
	t.Helper()
	topo, err := New([]string{"rack"}, 2, 0, 1, []NodeSpec{
		{Name: "a", Labels: []string{"r0"}, Capacity: res.Vec{4, 8000}, Shareable: 0b0110},
		{Name: "b", Labels: []string{"r0"}, Capacity: res.Vec{2, 8000}, Shareable: 0b11},
	})
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestShareBooking(t *testing.T) {
	topo := shareTopo(t)
	st := NewState(topo, 0)
	a, _ := topo.NodeIndex("a")
	steps := []struct {
		name  string
		do    func()
		room  [4]int32 // ShareRoom of a's GPUs after
		free  uint64   // a's free mask after
		count int64    // a's free GPU count after
		total int64    // the cluster's free GPUs after
	}{
		{"fresh", func() {}, [4]int32{0, 1000, 1000, 0}, 0b1111, 4, 6},
		{"share GPU 1", func() { st.AllocateShare(a, 1, 300, res.Vec{0, 500}, 1) }, [4]int32{0, 700, 1000, 0}, 0b1101, 3, 5},
		{"share it again", func() { st.AllocateShare(a, 1, 700, res.Vec{0, 500}, 1) }, [4]int32{0, 0, 1000, 0}, 0b1101, 3, 5},
		{"a whole GPU", func() { st.Allocate(a, 0b0100, res.Vec{1, 0}, 1) }, [4]int32{0, 0, 0, 0}, 0b1001, 2, 4},
		{"one share leaves", func() { st.ReleaseShare(a, 1, 300, res.Vec{0, 500}, 1) }, [4]int32{0, 300, 0, 0}, 0b1001, 2, 4},
		{"the last share leaves", func() { st.ReleaseShare(a, 1, 700, res.Vec{0, 500}, 1) }, [4]int32{0, 1000, 0, 0}, 0b1011, 3, 5},
		{"a share of a GPU that is not shareable books nothing", func() { st.AllocateShare(a, 0, 100, res.Vec{}, 1) }, [4]int32{0, 1000, 0, 0}, 0b1011, 3, 5},
		{"releasing more than is held frees the GPU, no less", func() {
			st.AllocateShare(a, 1, 100, res.Vec{}, 0)
			st.ReleaseShare(a, 1, 900, res.Vec{}, 0)
		}, [4]int32{0, 1000, 0, 0}, 0b1011, 3, 5},
	}
	for _, s := range steps {
		s.do()
		st.Flush()
		for gi, want := range s.room {
			if got := st.ShareRoom(a, gi); got != want {
				t.Errorf("%s: room of GPU %d = %d, want %d", s.name, gi, got, want)
			}
		}
		var rooms [MaxNodeGPUs]int32
		st.ShareRooms(a, &rooms)
		for m := topo.Node(a).Shareable; m != 0; m &= m - 1 {
			gi := 0
			for m>>gi&1 == 0 {
				gi++
			}
			if rooms[gi] != s.room[gi] {
				t.Errorf("%s: ShareRooms[%d] = %d, ShareRoom %d", s.name, gi, rooms[gi], s.room[gi])
			}
		}
		if ns := st.Node(a); ns.FreeGPUs != s.free || ns.Free[0] != s.count {
			t.Errorf("%s: free %04b (%d), want %04b (%d)", s.name, ns.FreeGPUs, ns.Free[0], s.free, s.count)
		}
		if st.FreeGPUs() != s.total {
			t.Errorf("%s: cluster free %d, want %d", s.name, st.FreeGPUs(), s.total)
		}
		// The counters follow the mask: pods of one GPU a's GPUs hold.
		if got, want := st.Fits(topo.NodeDomains(a)[1], 1), int32(s.count+2); got != want {
			t.Errorf("%s: the rack fits %d one-GPU pods, want %d", s.name, got, want)
		}
	}
}

// TestShareVersions checks that a fork and a clone do not see each
// other's shares, and that a reshape carries a kept node's shares.
func TestShareVersions(t *testing.T) {
	topo := shareTopo(t)
	st := NewState(topo, 0)
	a, _ := topo.NodeIndex("a")
	b, _ := topo.NodeIndex("b")
	st.AllocateShare(b, 0, 400, res.Vec{}, 1)
	st.Flush()
	f := st.Fork()
	f.AllocateShare(b, 0, 100, res.Vec{}, 1)
	if st.ShareHeld(b, 0) != 400 || f.ShareHeld(b, 0) != 500 {
		t.Fatalf("fork: %d and %d held, want 400 and 500", st.ShareHeld(b, 0), f.ShareHeld(b, 0))
	}
	var c State
	st.CloneInto(&c, cow.NewOwner(), cow.NewOwner())
	st.AllocateShare(a, 2, 250, res.Vec{}, 1)
	if c.ShareHeld(a, 2) != 0 || st.ShareHeld(a, 2) != 250 {
		t.Fatalf("clone: %d and %d held, want 0 and 250", c.ShareHeld(a, 2), st.ShareHeld(a, 2))
	}
	st.Flush()
	// A node put in before the others: every index moves, the shares with
	// their nodes.
	nt, moved, err := topo.Edit(nil, []NodeSpec{{Name: "0", Labels: []string{"r0"}, Capacity: res.Vec{2, 8000}, Shareable: 0b10}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ns := st.Reshape(nt, moved, func(m int32) (NodeState, bool) {
		node := nt.Node(m)
		return NodeState{Free: node.Capacity, FreeGPUs: node.AllGPUs()}, nt.NodeName(m) == "0"
	})
	na, nb := moved[a], moved[b]
	if ns.ShareHeld(na, 2) != 250 || ns.ShareHeld(nb, 0) != 400 || ns.ShareRoom(nb, 1) != 1000 {
		t.Fatalf("reshape: a/2 %d, b/0 %d held, b/1 room %d; want 250, 400, 1000", ns.ShareHeld(na, 2), ns.ShareHeld(nb, 0), ns.ShareRoom(nb, 1))
	}
	n0, _ := nt.NodeIndex("0")
	if ns.ShareRoom(n0, 1) != 1000 || ns.ShareRoom(n0, 0) != 0 {
		t.Fatalf("reshape: the new node's rooms %d %d, want 0 1000", ns.ShareRoom(n0, 0), ns.ShareRoom(n0, 1))
	}
}

func TestShareableBeyondGPUs(t *testing.T) {
	_, err := New(nil, 1, 0, 1, []NodeSpec{{Name: "a", Capacity: res.Vec{2}, Shareable: 0b100}})
	if !errors.Is(err, ErrBadShareable) {
		t.Fatalf("a shareable GPU 2 on a node of 2: %v, want ErrBadShareable", err)
	}
}
