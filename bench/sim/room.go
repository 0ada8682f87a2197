package sim

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/allot-sched/allot/bench/trace"
	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
)

// maxAmount is the largest quantity allot accepts; the cluster's CPU and
// memory totals become queue quotas, so they must stay within it.
const maxAmount = quota.MaxQuantity

// room is an amount of the resources the simulator books on a node: GPUs,
// CPU in millicores and memory in bytes. It is both what a node has free
// and what one pod asks for, so that the simulator's own binding and its
// fragmentation measure ask the same question allot's placer does: does
// the pod fit in every resource at once?
type room struct {
	gpus int32
	// milli is a fractional pod's share of one GPU, in thousandths (gpus
	// is then 0).
	milli    int32
	cpu, mem int64
}

// holds reports whether pod fits in r.
func (r room) holds(pod room) bool {
	return pod.gpus <= r.gpus && pod.cpu <= r.cpu && pod.mem <= r.mem
}

func (r room) minus(pod room) room {
	return room{gpus: r.gpus - pod.gpus, cpu: r.cpu - pod.cpu, mem: r.mem - pod.mem}
}

func (r room) plus(pod room) room {
	return room{gpus: r.gpus + pod.gpus, cpu: r.cpu + pod.cpu, mem: r.mem + pod.mem}
}

func compareRoom(a, b room) int {
	return cmp.Or(cmp.Compare(a.gpus, b.gpus), cmp.Compare(a.milli, b.milli), cmp.Compare(a.cpu, b.cpu), cmp.Compare(a.mem, b.mem))
}

// nodeRoom is the capacity of a trace's node in the simulator's terms: its
// GPUs (at most 64, allot's bound), and its CPU and memory when the run
// models them.
func (r *run) nodeRoom(n trace.Node) (room, error) {
	if n.CPUMilli < 0 || n.CPUMilli > maxAmount || n.MemoryMiB < 0 || n.MemoryMiB > maxAmount>>20 {
		return room{}, fmt.Errorf("node %q: CPU %d milli or memory %d MiB out of range", n.Name, n.CPUMilli, n.MemoryMiB)
	}
	c := room{gpus: min(n.GPUs, 64)}
	if r.cpu {
		c.cpu = n.CPUMilli
	}
	if r.mem {
		c.mem = n.MemoryMiB << 20
	}
	return c, nil
}

// podRoom is what one pod of j with gpus GPUs asks of its node: the job's
// per-pod CPU and memory, when the run models them.
func (r *run) podRoom(j *trace.Job, gpus int32) room {
	p := room{gpus: gpus}
	if r.share && r.topo && j.GPUMilli > 0 {
		p = room{milli: j.GPUMilli}
	}
	if r.cpu {
		p.cpu = j.CPUMilli
	}
	if r.mem {
		p.mem = j.MemoryMiB << 20
	}
	return p
}

// shapeCount is how many pods of one size a mix holds.
type shapeCount struct {
	pod   room
	count int64
}

// addPods adds the pods of j to a mix, by size: full pods of podGPUs, the
// remainder in one smaller pod, as workload splits it.
func (r *run) addPods(mix map[room]int64, j *trace.Job) {
	per := r.podGPUs(j)
	for left := j.GPUs; left > 0; left -= per {
		mix[r.podRoom(j, min(per, left))]++
	}
}

// shapes lists a mix in a fixed order, so that what is measured from it
// does not depend on map iteration.
func shapes(mix map[room]int64) []shapeCount {
	out := make([]shapeCount, 0, len(mix))
	for pod, n := range mix {
		out = append(out, shapeCount{pod, n})
	}
	slices.SortFunc(out, func(a, b shapeCount) int { return compareRoom(a.pod, b.pod) })
	return out
}

// measureBinding measures the simulator's own binding (quota-only
// admission) against a mix of pods with the two definitions of
// gang.MeasureDemand: the nodes with free GPUs on which no pod of the mix
// fits, and for every node its free GPUs weighted by the share of the
// mix's pods that do not fit there (FGD's expected unusable GPUs).
func (r *run) measureBinding(mix []shapeCount) gang.Fragmentation {
	pods := int64(0)
	for _, s := range mix {
		pods += s.count
	}
	var f gang.Fragmentation
	for n, free := range r.free {
		if free.gpus <= 0 || r.down[n] {
			continue // a node that is down offers nothing
		}
		f.NodesWithFree++
		f.FreeGPUs += int64(free.gpus)
		unfit := int64(0)
		for _, s := range mix {
			if !free.holds(s.pod) {
				unfit += s.count
			}
		}
		if pods > 0 && unfit == pods {
			f.StrandedNodes++
		}
		if pods > 0 {
			f.ExpectedStranded += float64(free.gpus) * float64(unfit) / float64(pods)
		}
	}
	if f.NodesWithFree > 0 {
		f.NodeShare = float64(f.StrandedNodes) / float64(f.NodesWithFree)
	}
	if f.FreeGPUs > 0 {
		f.StrandedShare = f.ExpectedStranded / float64(f.FreeGPUs)
	}
	return f
}

// targetMix is every pod of the trace by shape: the workload the cluster
// is asked to hold, which FGD estimates from the trace the same way.
func (r *run) targetMix() []shapeCount {
	mix := make(map[room]int64)
	for i := range r.jobs {
		r.addPods(mix, r.jobs[i].j)
	}
	return shapes(mix)
}

// mixFragmentation measures the cluster now against a mix of pod shapes
// (the trace's own, FGD's target workload): allot's placement state when
// admission is topology-aware, the simulator's own binding otherwise.
func (r *run) mixFragmentation(mix []shapeCount) gang.Fragmentation {
	if !r.topo {
		return r.measureBinding(mix)
	}
	s := r.st.Load()
	idx := map[string]int{}
	for i, name := range s.Resources() {
		idx[name] = i
	}
	demand := make([]gang.Demand, len(mix))
	for k, m := range mix {
		var v res.Vec
		v[idx[r.gpuName]] = int64(m.pod.gpus)
		if m.pod.milli > 0 {
			v[idx[ShareResource]] = int64(m.pod.milli)
		}
		if r.cpu {
			v[idx["cpu"]] = m.pod.cpu
		}
		if r.mem {
			v[idx["memory"]] = m.pod.mem
		}
		// A pod of the mix may land on any flavor.
		demand[k] = gang.Demand{Count: m.count, GPUs: int(m.pod.gpus), Share: m.pod.milli, Res: v, Flavors: allFlavors(len(r.flavors))}
	}
	return s.FragmentationOf(demand)
}

// allFlavors is the flavor mask of gang.Demand with the first n flavors
// set (at most 64).
func allFlavors(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}
