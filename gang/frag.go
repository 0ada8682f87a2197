package gang

import (
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
	// FreeGPUs on usable nodes.
	FreeGPUs int64 `json:"freeGpus"`
	// ExpectedStranded is FGD's expected free GPU the mix cannot use: for
	// every node, its free GPUs weighted by the share of pending pods that
	// do not fit there (Weng et al., ATC'23, whole-GPU form).
	ExpectedStranded float64 `json:"expectedStranded"`
	// StrandedShare is ExpectedStranded / FreeGPUs.
	StrandedShare float64 `json:"strandedShare"`
}

// Demand is one shape of pending pod: how many wait, what one needs, and
// the flavors (bit f for flavor f) it may land on.
type Demand struct {
	Count   int64
	GPUs    int
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
	for n := int32(0); n < int32(len(t.Nodes)); n++ {
		ns := st.Node(n)
		free := ns.Free[t.GPU]
		if free <= 0 || !ns.Usable(st.Now()) {
			continue
		}
		out.NodesWithFree++
		out.FreeGPUs += free
		unfit := int64(0)
		for i := range mix {
			ps := &mix[i]
			f := t.Nodes[n].Flavor
			if f >= 64 || ps.Flavors&(1<<f) == 0 {
				unfit += ps.Count
				continue
			}
			one := PodSet{Flavor: f, Count: 1, GPUs: ps.GPUs, Res: ps.Res, Mode: Unconstrained, Policy: Pack}
			p.setPodSet(&one)
			if p.nodeCount(n) == 0 {
				unfit += ps.Count
			}
		}
		if total > 0 && unfit == total {
			out.StrandedNodes++
		}
		if total > 0 {
			out.ExpectedStranded += float64(free) * float64(unfit) / float64(total)
		}
	}
	if out.NodesWithFree > 0 {
		out.NodeShare = float64(out.StrandedNodes) / float64(out.NodesWithFree)
	}
	if out.FreeGPUs > 0 {
		out.StrandedShare = out.ExpectedStranded / float64(out.FreeGPUs)
	}
	return out
}
