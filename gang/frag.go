package gang

import (
	"math/bits"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/topology"
)

// Fragmentation measures how much free GPU capacity a pending mix cannot use.
type Fragmentation struct {
	// NodesWithFree counts usable nodes with at least one free GPU.
	NodesWithFree int `json:"nodesWithFree"`
	// StrandedNodes counts those on which no pod of any pending pod set fits.
	StrandedNodes int `json:"strandedNodes"`
	// NodeShare is StrandedNodes / NodesWithFree (0 without free nodes).
	NodeShare float64 `json:"nodeShare"`
	// FreeGPUs on usable nodes: whole GPUs.
	FreeGPUs int64 `json:"freeGpus"`
	// SharedFree is what fractional pods leave free of the GPUs they
	// share on usable nodes, in GPUs.
	SharedFree float64 `json:"sharedFreeGpus,omitempty"`
	// ExpectedStranded is FGD's expected free GPU the mix cannot use
	// (Weng et al., ATC'23): for every node and pod shape, weighted by the
	// shape's share of pending pods, all of the node's free GPU capacity
	// where no pod of the shape fits, else the free capacity of the GPUs
	// a pod of the shape cannot use: the free part of shared GPUs for a
	// whole-GPU pod; for a fractional pod, GPUs it may not share and
	// shared GPUs with less left than it asks.
	ExpectedStranded float64 `json:"expectedStranded"`
	// StrandedShare is ExpectedStranded / (FreeGPUs + SharedFree).
	StrandedShare float64 `json:"strandedShare"`
}

// Demand is one shape of pending pod: how many wait, what one needs, and
// the flavors (bit f for flavor f) it may land on.
type Demand struct {
	Count int64
	GPUs  int
	// Share is the thousandths of one GPU a fractional pod asks for (GPUs
	// is then 0).
	Share   int32
	Res     res.Vec
	Flavors uint64
}

// MeasureDemand computes both fragmentation figures of st for a pending
// mix; each shape weighs by its pod count. An empty mix strands nothing.
func MeasureDemand(st *topology.State, mix []Demand) Fragmentation {
	var out Fragmentation
	t := st.T
	if t.GPU < 0 {
		return out
	}
	total := int64(0)
	for i := range mix {
		total += mix[i].Count
	}
	var p Placer
	p.Reset(st)
	// The placer keeps a pointer to the pod set it counts: one, reused,
	// or each pair of node and shape would put a new one on the heap.
	var one PodSet
	for n := int32(0); n < int32(t.NumNodes()); n++ {
		ns := st.Node(n)
		if !ns.Usable(st.Now()) {
			continue
		}
		whole := ns.Free[t.GPU]
		shared := st.SharedMask(n)
		part := 0.0 // the free part of shared GPUs
		for m := shared; m != 0; m &= m - 1 {
			part += milli(st.ShareRoom(n, bits.TrailingZeros64(m)))
		}
		free := float64(whole) + part
		if free <= 0 {
			continue
		}
		out.NodesWithFree++
		out.FreeGPUs += whole
		out.SharedFree += part
		unfit := int64(0)
		stranded := 0.0
		for i := range mix {
			ps := &mix[i]
			f := t.Node(n).Flavor
			if f >= 64 || ps.Flavors&(1<<f) == 0 {
				unfit += ps.Count
				stranded += float64(ps.Count) * free
				continue
			}
			one = PodSet{Flavor: f, Count: 1, GPUs: ps.GPUs, Share: ps.Share, Res: ps.Res, Mode: Unconstrained, Policy: Pack}
			p.setPodSet(&one)
			if p.nodeCount(n) == 0 {
				unfit += ps.Count
				stranded += float64(ps.Count) * free
				continue
			}
			stranded += float64(ps.Count) * unusable(st, n, ps.Share, part)
		}
		if total > 0 && unfit == total {
			out.StrandedNodes++
		}
		if total > 0 {
			out.ExpectedStranded += stranded / float64(total)
		}
	}
	if out.NodesWithFree > 0 {
		out.NodeShare = float64(out.StrandedNodes) / float64(out.NodesWithFree)
	}
	if all := float64(out.FreeGPUs) + out.SharedFree; all > 0 {
		out.StrandedShare = out.ExpectedStranded / all
	}
	return out
}

// milli is thousandths of a GPU in GPUs.
func milli(m int32) float64 { return float64(m) / topology.MilliGPU }

// unusable is the free GPU capacity of node n that a pod of the shape
// (share thousandths of one GPU, 0 for whole GPUs) cannot use, where one
// fits: the free part of its shared GPUs (part) for a whole-GPU pod; for
// a fractional pod, its free GPUs that may not be shared and the shared
// ones with less than share left.
func unusable(st *topology.State, n int32, share int32, part float64) float64 {
	if share == 0 {
		return part
	}
	node := st.T.Node(n)
	out := float64(bits.OnesCount64(st.FreeMask(n) &^ node.Shareable))
	for m := st.SharedMask(n); m != 0; m &= m - 1 {
		if room := st.ShareRoom(n, bits.TrailingZeros64(m)); room < share {
			out += milli(room)
		}
	}
	return out
}
