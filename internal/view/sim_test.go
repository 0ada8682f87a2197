package view

import (
	"testing"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

// simWorld is one queue with 8 GPUs of quota on one flavor, and one node of
// 8 GPUs on which booking b holds GPUs 0-3 and w GPUs 4-5 (usage and node
// state both booked).
func simWorld(t *testing.T) (m Sim, b, w *Booking) {
	t.Helper()
	tree, err := quota.NewResourceTree(1, 2, []quota.NodeSpec{{Name: "q", Parent: -1, Queue: true, Quotas: []quota.ResourceQuota{{Nominal: 8}, {Nominal: 64000}}}})
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.New(nil, 2, rGPU, 1, []topology.NodeSpec{{Name: "n0", Capacity: res.Vec{rGPU: 8, rCPU: 64000}}})
	if err != nil {
		t.Fatal(err)
	}
	nodes := NodeRes{1<<rGPU | 1<<rCPU}
	m = Sim{Tree: tree, Usage: tree.NewUsage(), State: topology.NewState(topo, 0), Tokens: -1, Nodes: nodes}
	b = &Booking{ID: "b", Sets: []Set{{Count: 2, Per: res.Vec{rGPU: 2, rCPU: 1000}}}, Pods: []Pod{{Node: 0, GPUs: 0b0011}, {Node: 0, GPUs: 0b1100}}}
	w = &Booking{ID: "w", Sets: []Set{{Count: 1, Per: res.Vec{rGPU: 2}}}, Pods: []Pod{{Node: 0, GPUs: 0b110000}}}
	for _, x := range []*Booking{b, w} {
		m.Restore(x) // into the view: usage and pods
	}
	return m, b, w
}

func TestSimEvictRestore(t *testing.T) {
	m, b, _ := simWorld(t)
	if u, free := m.Usage.At(0, rGPU), m.State.FreeMask(0); u != 6 || free != 0b11000000 {
		t.Fatalf("booked: usage %d, free %b", u, free)
	}
	cases := []struct {
		name  string
		step  func()
		usage int64
		free  uint64
		cpu   int64 // free cpu on the node
	}{
		{"evict b", func() { m.Evict(b) }, 2, 0b11001111, 64000},
		{"usage only back", func() { m.MoveUsage(b, -1) }, 6, 0b11001111, 64000},
		{"usage only out", func() { m.MoveUsage(b, 1) }, 2, 0b11001111, 64000},
		{"restore b", func() { m.Restore(b) }, 6, 0b11000000, 62000},
	}
	for _, c := range cases {
		c.step()
		if u, free, cpu := m.Usage.At(0, rGPU), m.State.FreeMask(0), m.State.Node(0).Free[rCPU]; u != c.usage || free != c.free || cpu != c.cpu {
			t.Errorf("%s: usage %d, free %b, free cpu %d; want %d, %b, %d", c.name, u, free, cpu, c.usage, c.free, c.cpu)
		}
	}
}

func TestSimReserved(t *testing.T) {
	m, b, w := simWorld(t)
	// GPUs 2, 3 and 4 are promised to someone else: they stay taken when
	// the workloads on them leave.
	m.Reserved = []Pod{{Node: 0, GPUs: 0b11100}}
	m.Evict(b)
	m.Evict(w)
	if u, free := m.Usage.At(0, rGPU), m.State.FreeMask(0); u != 0 || free != 0b11100011 {
		t.Fatalf("usage %d, free %b; want 0, 11100011", u, free)
	}
}

func TestSimQuotaOnly(t *testing.T) {
	m, b, _ := simWorld(t)
	m.State = nil // only quota matters
	m.Evict(b)
	if u := m.Usage.At(0, rGPU); u != 2 {
		t.Fatalf("usage %d, want 2", u)
	}
}
