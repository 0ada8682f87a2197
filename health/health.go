package health

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/gang"
)

// Figures are a snapshot's health numbers.
type Figures struct {
	// Version and Now are the snapshot's.
	Version uint64 `json:"version"`
	Now     int64  `json:"now"`
	// GPUs and FreeGPUs count every node's; GPUUtilization is the share
	// in use (0 without GPUs).
	GPUs           int64   `json:"gpus"`
	FreeGPUs       int64   `json:"freeGpus"`
	GPUUtilization float64 `json:"gpuUtilization"`
	// Flavors are the same counts per flavor, in the snapshot's order.
	Flavors []Flavor `json:"flavors"`
	// Waits are the pending workloads' waits by priority class, highest
	// priority first.
	Waits []ClassWaits `json:"waits"`
	// Evictions counts the store's evictions, Preemptions those of them
	// the store made for a preemptor (of the evictions the snapshot still
	// holds).
	Evictions   int `json:"evictions"`
	Preemptions int `json:"preemptions"`
	// Fragmentation is the snapshot's own measure against what waits:
	// NodeShare and StrandedShare are the simulator's two definitions.
	Fragmentation gang.Fragmentation `json:"fragmentation"`
	// Queues are the per-queue figures, by name.
	Queues []QueueFigures `json:"queues"`
}

// Flavor is one flavor's GPUs.
type Flavor struct {
	Name     string `json:"name"`
	GPUs     int64  `json:"gpus"`
	FreeGPUs int64  `json:"freeGpus"`
}

// FreeShare is the share of the flavor's GPUs free, 0 without GPUs.
func (f Flavor) FreeShare() float64 {
	if f.GPUs <= 0 {
		return 0
	}
	return float64(f.FreeGPUs) / float64(f.GPUs)
}

// ClassWaits are the waits so far, in seconds on the snapshot's clock, of
// one priority class's pending workloads; Class is the workload's
// priority class, or its priority when it claims none. Priority is the
// highest priority among them.
type ClassWaits struct {
	Class    string  `json:"class"`
	Priority int32   `json:"priority"`
	Jobs     int     `json:"jobs"`
	Median   float64 `json:"median"`
	P90      float64 `json:"p90"`
	P99      float64 `json:"p99"`
}

// Quantile is the wait at q, one of Quantiles.
func (c ClassWaits) Quantile(q float64) float64 {
	switch q {
	case 0.5:
		return c.Median
	case 0.9:
		return c.P90
	}
	return c.P99
}

// QueueFigures are one queue's workloads now.
type QueueFigures struct {
	Queue     string `json:"queue"`
	Admitted  int    `json:"admitted"`
	Pending   int    `json:"pending"`
	Borrowing int    `json:"borrowing"`
	Evictions int    `json:"evictions"`
}

// Measure computes the figures of s.
func Measure(s *allot.Snapshot) Figures {
	f := Figures{Version: s.Version(), Now: s.Now(), Fragmentation: s.Fragmentation()}
	f.Flavors = FlavorGPUs(s)
	for _, fl := range f.Flavors {
		f.GPUs += fl.GPUs
		f.FreeGPUs += fl.FreeGPUs
	}
	if f.GPUs > 0 {
		f.GPUUtilization = float64(f.GPUs-f.FreeGPUs) / float64(f.GPUs)
	}

	queues := map[string]*QueueFigures{}
	queue := func(name string) *QueueFigures {
		q := queues[name]
		if q == nil {
			q = &QueueFigures{Queue: name}
			queues[name] = q
		}
		return q
	}
	for _, q := range s.Queues() {
		queue(q.Name)
	}
	for _, id := range s.RunningIDs() {
		w, _ := s.Running(id)
		q := queue(w.Queue)
		q.Admitted++
		if w.Borrowing {
			q.Borrowing++
		}
	}
	type class struct {
		prio  int32
		waits []float64
	}
	classes := map[string]*class{}
	for _, w := range s.PendingWorkloads() {
		queue(w.Queue).Pending++
		name := w.PriorityClass
		if name == "" {
			name = strconv.Itoa(int(w.Priority))
		}
		c := classes[name]
		if c == nil {
			c = &class{prio: w.Priority}
			classes[name] = c
		}
		c.prio = max(c.prio, w.Priority)
		c.waits = append(c.waits, float64(max(s.Now()-w.SubmittedAt, 0)))
	}
	for name, c := range classes {
		slices.Sort(c.waits)
		f.Waits = append(f.Waits, ClassWaits{Class: name, Priority: c.prio, Jobs: len(c.waits),
			Median: Percentile(c.waits, 0.5), P90: Percentile(c.waits, 0.9), P99: Percentile(c.waits, 0.99)})
	}
	slices.SortFunc(f.Waits, func(a, b ClassWaits) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.Class, b.Class))
	})

	f.Evictions = s.NumEvictions()
	for _, e := range s.Evictions() {
		queue(e.Queue).Evictions++
		if e.Preemptor != "" {
			f.Preemptions++
		}
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range queues {
			if !yield(n) {
				return
			}
		}
	}) {
		f.Queues = append(f.Queues, *queues[name])
	}
	return f
}

// FlavorGPUs counts each flavor's GPUs and those free, on every node (as
// Snapshot.FreeGPUs counts them), in the snapshot's flavor order.
func FlavorGPUs(s *allot.Snapshot) []Flavor {
	gpu := s.GPUResource()
	flavors := s.Flavors()
	out := make([]Flavor, len(flavors))
	idx := make(map[string]int, len(flavors))
	for i, fl := range flavors {
		out[i].Name = fl.Name
		idx[fl.Name] = i
	}
	if gpu == "" {
		return out
	}
	for _, n := range s.Nodes() {
		st, ok := s.NodeStatus(n.Name)
		if !ok {
			continue
		}
		// The flavor it serves: a node its labels select names none.
		i := idx[st.Flavor]
		out[i].GPUs += n.Capacity[gpu]
		out[i].FreeGPUs += st.Free[gpu]
	}
	return out
}

// Percentile is the q-quantile (0..1) of sorted values by the
// nearest-rank rule, 0 for none: the simulator's and the bridge's one
// definition.
func Percentile[T int64 | float64](sorted []T, q float64) T {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}
