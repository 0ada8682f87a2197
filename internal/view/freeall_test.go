package view

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

// FreeAll leaves the state, once flushed, as evicting the same bookings one
// by one does: every node's figures, the GPU shares held, the free GPUs
// counted and every domain's aggregates, on random nodes with shareable
// GPUs, bookings of whole-GPU pods and of GPU shares, and GPUs reserved.
func TestFreeAllIsEvictOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 53))
	const nodes, gpus = 6, 8
	shareable := uint64(0b11000000)
	tree, err := quota.NewResourceTree(1, 2, []quota.NodeSpec{{Name: "q", Parent: -1, Queue: true, Quotas: []quota.ResourceQuota{{Nominal: 1 << 20}, {Nominal: 1 << 40}}}})
	if err != nil {
		t.Fatal(err)
	}
	var specs []topology.NodeSpec
	for n := range nodes {
		specs = append(specs, topology.NodeSpec{Name: fmt.Sprintf("n%d", n), Labels: []string{fmt.Sprintf("r%d", n/3)},
			Capacity: res.Vec{rGPU: gpus, rCPU: 64000}, Shareable: shareable})
	}
	topo, err := topology.New([]string{"rack"}, 2, rGPU, 1, specs)
	if err != nil {
		t.Fatal(err)
	}
	shares := 0
	for c := range 500 {
		m := Sim{Tree: tree, Usage: tree.NewUsage(), State: topology.NewState(topo, 0), Tokens: -1, Nodes: NodeRes{1<<rGPU | 1<<rCPU}}
		var bs []*Booking
		for i := range rng.IntN(20) {
			b := &Booking{ID: fmt.Sprintf("b%d", i)}
			for range 1 + rng.IntN(3) {
				n := int32(rng.IntN(nodes))
				free := m.State.FreeMask(n) &^ shareable
				if rng.IntN(3) == 0 {
					gi := 6 + rng.IntN(2)
					milli := int32(100 * (1 + rng.IntN(4)))
					if m.State.ShareRoom(n, gi) < milli {
						continue
					}
					b.Sets = append(b.Sets, Set{Count: 1, Per: res.Vec{rCPU: 100}})
					b.Pods = append(b.Pods, Pod{Node: n, Share: milli, GPUs: 1 << gi})
				} else {
					g := 1 + rng.IntN(2)
					if bits.OnesCount64(free) < g {
						continue
					}
					mask := uint64(0)
					for j := 0; bits.OnesCount64(mask) < g; j++ {
						if free&(1<<j) != 0 {
							mask |= 1 << j
						}
					}
					b.Sets = append(b.Sets, Set{Count: 1, Per: res.Vec{rGPU: int64(g), rCPU: 1000}})
					b.Pods = append(b.Pods, Pod{Node: n, GPUs: mask})
				}
				// Book each pod as it comes, so the next sees it.
				one := &Booking{Sets: b.Sets[len(b.Sets)-1:], Pods: b.Pods[len(b.Pods)-1:]}
				m.Restore(one)
			}
			if len(b.Pods) > 0 {
				bs = append(bs, b)
			}
		}
		for n := range int32(nodes) {
			if rng.IntN(3) == 0 {
				m.Reserved = append(m.Reserved, Pod{Node: n, GPUs: uint64(rng.IntN(1 << gpus))})
			}
		}
		m.State.Flush()
		leaving := bs[:rng.IntN(len(bs)+1)]
		for _, b := range leaving {
			for _, p := range b.Pods {
				if p.Share > 0 {
					shares++
				}
			}
		}
		one, all := m, m
		one.Usage, one.State = m.Usage.Clone(), m.State.Fork()
		all.State = m.State.Fork()
		for _, b := range leaving {
			one.Evict(b)
		}
		all.FreeAll(leaving)
		all.State.Flush()
		if a, o := all.State.FreeGPUs(), one.State.FreeGPUs(); a != o {
			t.Fatalf("case %d: %d free GPUs, one by one %d", c, a, o)
		}
		for n := range int32(nodes) {
			if a, o := *all.State.Node(n), *one.State.Node(n); a != o {
				t.Fatalf("case %d node %d: %+v, one by one %+v", c, n, a, o)
			}
			for gi := 6; gi < 8; gi++ {
				if a, o := all.State.ShareHeld(n, gi), one.State.ShareHeld(n, gi); a != o {
					t.Fatalf("case %d node %d GPU %d: share %d held, one by one %d", c, n, gi, a, o)
				}
			}
		}
		for d := range int32(len(topo.Domains)) {
			if a, o := *all.State.Agg(d), *one.State.Agg(d); a != o {
				t.Fatalf("case %d domain %d: %+v, one by one %+v", c, d, a, o)
			}
		}
	}
	if shares < 100 {
		t.Errorf("only %d share pods left: the test reaches too little", shares)
	}
}
