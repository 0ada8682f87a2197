// Read access to a snapshot. The accessors hand out copies down to every
// map, slice and pointer: versions share what a snapshot holds, so a caller
// writing into what it was given would otherwise change it for every reader.

package allot

import (
	"slices"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
)

// Version is the snapshot's version; every store event increments it.
func (s *Snapshot) Version() uint64 { return s.version }

// Now is the snapshot's time in seconds.
func (s *Snapshot) Now() int64 { return s.now }

// Resources are the declared resource names, a copy: versions share them.
func (s *Snapshot) Resources() []string { return slices.Clone(s.resources) }

// GPUResource is the resource the snapshot counts as GPUs (Builder's
// GPUResource), "" when it declares none.
func (s *Snapshot) GPUResource() string {
	if s.gpu < 0 {
		return ""
	}
	return s.resources[s.gpu]
}

// IgnoredResources are the names the snapshot ignores, a copy.
func (s *Snapshot) IgnoredResources() []string { return slices.Clone(s.ignored) }

// Levels are the topology levels, broad to narrow, a copy: versions share
// them.
func (s *Snapshot) Levels() []string { return slices.Clone(s.topo.Levels) }

// Usage is what a queue's admitted workloads charge to a flavor's resource.
func (s *Snapshot) Usage(queue, flavor, resource string) int64 {
	q, ok1 := s.queueIdx[queue]
	f, ok2 := s.flavorIdx[flavor]
	r, ok3 := s.resIdx[resource]
	if !ok1 || !ok2 || !ok3 {
		return 0
	}
	return s.usage.At(q, s.rtree.FR(int(f), r))
}

// RunningIDs lists the admitted workloads, sorted; preemptors that hold
// their room (Held) have not started and are not among them.
func (s *Snapshot) RunningIDs() []string {
	out := make([]string, 0, s.running.Len())
	s.running.Scan(func(r *running) bool {
		if !s.isHeld(r.ID) {
			out = append(out, r.ID)
		}
		return true
	})
	return out
}

// NumPending is how many workloads are pending.
func (s *Snapshot) NumPending() int { return s.pending.Len() }

// PendingIDs lists the pending workloads, sorted.
func (s *Snapshot) PendingIDs() []string {
	out := make([]string, 0, s.pending.Len())
	s.pending.Scan(func(w *Workload) bool { out = append(out, w.ID); return true })
	return out
}

// Running returns an admitted workload, its placement filled in; a
// preemptor that holds its room (Held) is none until it starts.
func (s *Snapshot) Running(id string) (Workload, bool) {
	r, ok := s.runningByID(id)
	if !ok || s.isHeld(id) {
		return Workload{}, false
	}
	return r.workload(s), true
}

// workload renders an admitted workload with its placement.
func (r *running) workload(s *Snapshot) Workload {
	w := r.admitted()
	w.PodSets = clonePodSets(r.w.PodSets)
	k := 0
	for i := range w.PodSets {
		ps := &w.PodSets[i]
		ps.PerPod = s.resourceMap(r.Sets[i].Per, r.Sets[i].Keys)
		if r.Pods[k].Node < 0 {
			k += int(ps.Count)
			continue
		}
		ps.Nodes = make([]string, ps.Count)
		ps.GPUIndices = make([][]int, ps.Count)
		for p := range ps.Count {
			pa := r.Pods[k]
			k++
			ps.Nodes[p] = s.topo.NodeName(pa.Node)
			ps.GPUIndices[p] = GPUSet(pa.GPUs).Indices()
		}
	}
	return w
}

// Pending returns a pending workload.
func (s *Snapshot) Pending(id string) (Workload, bool) {
	w, ok := s.pendingByID(id)
	if !ok {
		return Workload{}, false
	}
	return w.clone(), true
}

// PendingWorkloads lists the pending workloads by ID.
func (s *Snapshot) PendingWorkloads() []Workload {
	out := make([]Workload, 0, s.pending.Len())
	s.pending.Scan(func(w *Workload) bool { out = append(out, w.clone()); return true })
	return out
}

// RunningCount counts a queue's admitted workloads, but the preemptors
// that hold their room.
func (s *Snapshot) RunningCount(queue string) int {
	q, ok := s.queueIdx[queue]
	if !ok {
		return 0
	}
	n := int(s.runCount[q])
	for _, id := range s.HeldIDs() {
		if r, _ := s.runningByID(id); r.Queue == q {
			n--
		}
	}
	return n
}

// RunningOn lists the workloads with a pod on a node, sorted. It scans the
// admitted workloads: it serves rare events (a node failing), and a
// per-node index would cost every admission and finish its upkeep.
func (s *Snapshot) RunningOn(node string) []string {
	n, ok := s.topo.NodeIndex(node)
	if !ok {
		return nil
	}
	var out []string
	s.running.Scan(func(r *running) bool {
		if s.isHeld(r.ID) {
			return true
		}
		for _, pa := range r.Pods {
			if pa.Node == n {
				out = append(out, r.ID)
				break
			}
		}
		return true
	})
	return out
}

// FreeGPUs counts the free GPUs of the cluster, on every node.
func (s *Snapshot) FreeGPUs() int64 { return s.state.FreeGPUs() }

// NodeLabel is a node's domain name at a level; "node" gives the node's name.
func (s *Snapshot) NodeLabel(node, level string) (string, bool) {
	n, ok := s.topo.NodeIndex(node)
	if !ok {
		return "", false
	}
	if level == "node" {
		return node, true
	}
	for i, l := range s.topo.Levels {
		if l == level {
			return s.topo.NodeLabel(n, i), true
		}
	}
	return "", false
}

// Queue returns a queue's configuration.
func (s *Snapshot) Queue(name string) (Queue, bool) {
	q, ok := s.queueIdx[name]
	if !ok {
		return Queue{}, false
	}
	return cloneQueue(s.queues[q]), true
}

// NodeFree is what is left on a node of every resource its flavor's nodes
// hold, GPUs as a count; false for an unknown node.
func (s *Snapshot) NodeFree(node string) (Resources, bool) {
	n, ok := s.topo.NodeIndex(node)
	if !ok {
		return nil, false
	}
	return s.resourceMap(s.state.Node(n).Free, s.nodeRes[s.topo.Node(n).Flavor]), true
}

// NodeFreeGPUs is which of a node's GPUs are free; false for an unknown
// node.
func (s *Snapshot) NodeFreeGPUs(node string) (GPUSet, bool) {
	n, ok := s.topo.NodeIndex(node)
	if !ok {
		return 0, false
	}
	return GPUSet(s.state.FreeMask(n)), true
}

func (s *Snapshot) usageOf(q, f int32) res.Vec {
	var v res.Vec
	// Flavor f's resources are consecutive in the row (ResourceTree.FR).
	r := len(s.resources)
	copy(v[:r], s.usage[q][int(f)*r:])
	return v
}

func (s *Snapshot) flavorHasNodes(f int32) bool {
	ft := &s.topo.Flavors[f]
	return ft.End > ft.First && (s.options.TopologyAware == nil || *s.options.TopologyAware)
}

// levelName renders a tree level for messages.
func (s *Snapshot) levelName(l int) string { return s.topo.LevelName(l) }

// Fragmentation measures the snapshot's free capacity against its pending
// workloads: the share of usable nodes with free GPUs on which no pending
// pod fits, and FGD's expected free GPUs the pending mix cannot use. A
// pending pod set may land on the flavors of its queue it is allowed.
func (s *Snapshot) Fragmentation() gang.Fragmentation {
	// Pending pods of one shape count as one demand, so the measure costs
	// nodes × shapes, not nodes × pending pod sets.
	shapes := make([]gang.Demand, 0, s.shapes.Len())
	s.shapes.Scan(func(d gang.Demand) bool { shapes = append(shapes, d); return true })
	return s.FragmentationOf(shapes)
}

// FragmentationOf is Fragmentation against a mix of demands of the
// caller's instead of the pending workloads; a demand's Res is in the
// order of Resources, its Flavors bit f for the f-th flavor declared.
func (s *Snapshot) FragmentationOf(mix []gang.Demand) gang.Fragmentation {
	return gang.MeasureDemand(s.state, mix)
}

// Debt is a queue's fairness debt now: the preemptions it suffered, decayed
// with the history's half-life.
func (s *Snapshot) Debt(queue string) float64 {
	q, ok := s.queueIdx[queue]
	if !ok {
		return 0
	}
	return s.debt[q].Now(s.now, s.history.HalfLife)
}

// HistoricalUsage is a queue's decayed historical usage now, in seconds of
// its main resource (GPU-seconds when GPUs are declared).
func (s *Snapshot) HistoricalUsage(queue string) float64 {
	q, ok := s.queueIdx[queue]
	if !ok {
		return 0
	}
	return s.used[q].Now(s.now, s.history.HalfLife)
}

// historyResource is the resource historical usage counts.
func (s *Snapshot) historyResource() int {
	if s.gpu >= 0 {
		return s.gpu
	}
	return 0
}

// Eviction records a workload the store evicted, so that a simulator or a
// controller can requeue it and account for the work it lost.
type Eviction struct {
	ID    string `json:"id"`
	Queue string `json:"queue"`
	// Preemptor is the workload it made room for ("" for an Evict event).
	Preemptor string `json:"preemptor,omitempty"`
	// Reason is the victim reason (Kueue's words), "Evicted" for an Evict
	// event, or EvictedNodeRemoved for a workload whose node RemoveNode
	// took out.
	Reason         string `json:"reason"`
	LostGPUSeconds int64  `json:"lostGpuSeconds"`
	At             int64  `json:"at"`
}

// Evictions lists the last evictions the store has made, oldest first (a
// copy, as versions share the log): at most StoreOptions' AuditCapacity.
//
// Deprecated: a snapshot's evictions are a window of the store's last ones.
// Drain the store's audit log instead (Store.DrainAudit), which records
// every eviction with its policy and recovery point, and admissions.
func (s *Snapshot) Evictions() []Eviction { return slices.Clone(s.evictions[s.evictionStart():]) }

// NumEvictions is how many evictions the store has made.
//
// Deprecated: count the AuditEvicted records of Store.DrainAudit.
func (s *Snapshot) NumEvictions() int { return s.evictionsDropped + len(s.evictions) }

// EvictionsSince lists the evictions after the first n the store has made,
// oldest first (a copy): a reader that keeps count of those it has seen
// pays only for the new ones. n out of range gives none; evictions the
// window no longer holds (see Evictions) are left out.
//
// Deprecated: drain the store's audit log (Store.DrainAudit), which hands
// each record over once.
func (s *Snapshot) EvictionsSince(n int) []Eviction {
	if n < 0 || n >= s.NumEvictions() {
		return nil
	}
	return slices.Clone(s.evictions[max(n-s.evictionsDropped, s.evictionStart()):])
}

// evictionStart is where the window of Evictions starts in s.evictions,
// which holds up to twice evictionCap before a publish trims it.
func (s *Snapshot) evictionStart() int {
	if s.evictionCap > 0 && len(s.evictions) > s.evictionCap {
		return len(s.evictions) - s.evictionCap
	}
	return 0
}
