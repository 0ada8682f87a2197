package sim

import (
	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/trace"
)

// The shape-blocked figure of fragmentation: at a sample, some waiting job
// asks for no more GPUs than the usable nodes have free, yet its pods fit
// on no set of them, whatever quota and order say. Those free GPUs are
// idle because of their shape alone. Unlike the share of nodes on which
// no waiting pod fits, it does not fall as the queue grows: a long queue
// of small jobs hides no gang that the free GPUs could hold by count.

// blockKey is a waiting job's shape: its GPUs, split into pods of per
// GPUs, each with the job's CPU and memory.
type blockKey struct {
	gpus, per int32
	cpu, mem  int64
}

// shapeBlocked reports whether a waiting job is shape-blocked now, and
// the GPUs free on usable nodes.
func (r *run) shapeBlocked(s *allot.Snapshot) (blocked bool, free int64) {
	r.scratch = r.freeRooms(s, r.scratch[:0])
	for _, f := range r.scratch {
		free += int64(f.gpus)
	}
	if free == 0 {
		return false, 0
	}
	// Any waiting shape will do: the order of the look does not matter.
	for k, n := range r.waitingShapes {
		if n > 0 && int64(k.gpus) <= free && !r.fitsFree(k) {
			return true, free
		}
	}
	return false, free
}

// shapeOf is the shape of job j's pods.
func (r *run) shapeOf(j *trace.Job) blockKey {
	k := blockKey{gpus: j.GPUs, per: r.podGPUs(j)}
	if r.cpu {
		k.cpu = j.CPUMilli
	}
	if r.mem {
		k.mem = j.MemoryMiB << 20
	}
	return k
}

// queue counts js among the waiting jobs, by shape, or no longer: the
// arrived jobs that wait, pending or holding quota, and not preemptors
// holding their room for their victims to go.
func (r *run) queue(js *jobState, waits bool) {
	if js.queued == waits {
		return
	}
	js.queued = waits
	if r.waitingShapes == nil {
		r.waitingShapes = map[blockKey]int32{}
	}
	k := r.shapeOf(js.j)
	if waits {
		r.waitingShapes[k]++
	} else if r.waitingShapes[k]--; r.waitingShapes[k] == 0 {
		delete(r.waitingShapes, k)
	}
}

// freeRooms appends the free room of every usable node: allot's placement
// state under topology-aware admission, the simulator's own binding
// otherwise. A node that is down offers none.
func (r *run) freeRooms(s *allot.Snapshot, out []room) []room {
	for n := range r.nodes {
		if r.down[n] {
			out = append(out, room{})
			continue
		}
		if !r.topo {
			out = append(out, r.free[n])
			continue
		}
		var f room
		if r.cpu || r.mem {
			v, _ := s.NodeFree(r.names[n])
			f = room{gpus: int32(v[r.gpuName]), cpu: v["cpu"], mem: v["memory"]}
		} else {
			g, _ := s.NodeFreeGPUs(r.names[n])
			f.gpus = int32(g.Len())
		}
		out = append(out, f)
	}
	return out
}

// fitsFree reports whether the pods of a job of shape k fit in the free
// rooms of r.scratch: its full pods first fit, as many on a node as it
// holds, then its remainder pod on any node with room left.
func (r *run) fitsFree(k blockKey) bool {
	pod := room{gpus: k.per, cpu: k.cpu, mem: k.mem}
	full, rest := k.gpus/k.per, k.gpus%k.per
	r.scratch2 = append(r.scratch2[:0], r.scratch...)
	for n := range r.scratch2 {
		for full > 0 && r.scratch2[n].holds(pod) {
			r.scratch2[n] = r.scratch2[n].minus(pod)
			full--
		}
		if full == 0 {
			break
		}
	}
	if full > 0 {
		return false
	}
	if rest == 0 {
		return true
	}
	last := room{gpus: rest, cpu: k.cpu, mem: k.mem}
	for _, f := range r.scratch2 {
		if f.holds(last) {
			return true
		}
	}
	return false
}
