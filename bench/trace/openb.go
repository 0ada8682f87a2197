package trace

import (
	"io"
	"os"
	"strconv"
	"strings"
)

// openbPodColumns is the header of the openb pod list.
var openbPodColumns = []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time"}

// openbNodeColumns is the header of the openb node list.
var openbNodeColumns = []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}

// Reasons under which LoadOpenB counts the pods it leaves out in
// Trace.Skipped.
const (
	// SkipPending counts pods without a scheduled_time: they never ran,
	// so the trace holds no run time for them (see
	// OpenBOptions.KeepUnscheduled).
	SkipPending = "pending"
	// SkipCPUOnly counts pods that ask for no GPU.
	SkipCPUOnly = "cpu-only"
)

// openbQoS maps the openb qos values to a priority. Latency-sensitive
// pods come first, then guaranteed, burstable and best-effort ones.
var openbQoS = map[string]int32{
	"LS":         3,
	"Guaranteed": 2,
	"Burstable":  1,
	"BE":         0,
}

// OpenBOptions chooses how LoadOpenB models the Alibaba openb trace.
type OpenBOptions struct {
	// SharedGPUs keeps fractional GPU requests: a pod asking for part of
	// one GPU gets GPUs 1 and its share in Job.GPUMilli. Without it the
	// request is rounded up to one whole GPU and GPUMilli stays 0.
	SharedGPUs bool
	// QueueByQoS puts each pod in the queue named after its qos class
	// ("LS", "BE", "Burstable", "Guaranteed"); without it every pod goes
	// to the single queue "openb".
	QueueByQoS bool
	// KeepUnscheduled keeps the GPU pods that never got a scheduled_time
	// instead of counting them under SkipPending. They were asked for all
	// the same, so they belong to the demand of a packing replay, which
	// places every pod of the trace once (FGD's experiment: the pods of
	// the whole list ask for 7,433 whole GPUs, 6,086.8 with shares counted
	// fractionally, of the cluster's 6,212). Such a pod never ran, so its
	// Duration is the time it waited in the cluster before it was deleted,
	// deletion_time − creation_time, at least 1 second: a stand-in that
	// keeps a time-based replay from holding it forever.
	KeepUnscheduled bool
}

// LoadOpenB reads the Alibaba openb trace (cluster-trace-gpu-v2023): the
// pod list at podsPath and the GPU node list at nodesPath (see ParseOpenB).
func LoadOpenB(podsPath, nodesPath string, opt OpenBOptions) (*Trace, error) {
	pods, err := os.Open(podsPath)
	if err != nil {
		return nil, err
	}
	defer pods.Close()
	nodes, err := os.Open(nodesPath)
	if err != nil {
		return nil, err
	}
	defer nodes.Close()
	return ParseOpenB(pods, podsPath, nodes, nodesPath, opt)
}

// ParseOpenB reads the openb pod list from pods and its node list from
// nodes; the names are used in errors, and podsName as the trace's name.
//
// The pod list has the header
// name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
// with times in seconds. Each pod becomes one single-pod job:
//   - ID is the pod's name, which must be unique.
//   - Submit is creation_time.
//   - Duration is deletion_time − scheduled_time, at least 1 second.
//     Running pods were cut off at the trace's end, so their durations
//     are lower bounds.
//   - CPUMilli is cpu_milli and MemoryMiB is memory_mib.
//   - GPUs is num_gpu and GPUsPerPod the same. A pod with num_gpu 1 and
//     gpu_milli under 1000 shares a GPU: see OpenBOptions.SharedGPUs.
//   - PriorityClass is qos, and Priority follows it: LS 3, Guaranteed 2,
//     Burstable 1, BE 0. Only BE pods are Preemptible; none checkpoints.
//   - Queue is "openb", or the qos with OpenBOptions.QueueByQoS.
//
// Pods without a scheduled_time never ran and are counted under
// SkipPending, unless OpenBOptions.KeepUnscheduled keeps them; pods with
// num_gpu 0 are counted under SkipCPUOnly (a pending CPU-only pod counts as
// pending, or as CPU-only when unscheduled pods are kept). Every pod row is
// thus either a job or counted in Trace.Skipped.
//
// The node list has the header sn,cpu_milli,memory_mib,gpu,model; each
// row becomes a Node in Trace.Nodes, in file order.
//
// A malformed row fails the whole load with a *RowError naming the line.
func ParseOpenB(pods io.Reader, podsName string, nodes io.Reader, nodesName string, opt OpenBOptions) (*Trace, error) {
	t := &Trace{Name: podsName, Jobs: []Job{}, Skipped: map[string]int{}}
	if err := parseOpenBPods(t, pods, podsName, opt); err != nil {
		return nil, err
	}
	ns, err := parseOpenBNodes(nodes, nodesName)
	if err != nil {
		return nil, err
	}
	t.Nodes = ns
	SortJobs(t.Jobs)
	return t, nil
}

// parseOpenBPods adds the jobs of an openb pod list to t.
func parseOpenBPods(t *Trace, r io.Reader, name string, opt OpenBOptions) error {
	tab, err := newCSVTable(r, name, openbPodColumns)
	if err != nil {
		return err
	}
	seen := make(map[string]int)
	for {
		rec, err := tab.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		id := strings.TrimSpace(rec[0])
		if id == "" {
			return tab.errorf("empty name")
		}
		if prev, dup := seen[id]; dup {
			return tab.errorf("pod name %q already used on line %d", id, prev)
		}
		seen[id] = tab.line
		var nums [4]int64
		for i, col := range []int{1, 2, 3, 4} {
			v, err := strconv.ParseInt(strings.TrimSpace(rec[col]), 10, 64)
			if err != nil {
				return tab.errorf("bad %s %q: %s", openbPodColumns[col], rec[col], intReason(err))
			}
			if v < 0 {
				return tab.errorf("%s %d is negative", openbPodColumns[col], v)
			}
			if v > maxDuration {
				return tab.errorf("%s %d too large", openbPodColumns[col], v)
			}
			nums[i] = v
		}
		numGPU, milli := nums[2], nums[3]
		if numGPU > 1<<20 {
			return tab.errorf("num_gpu %d too large", numGPU)
		}
		if milli > 1000 {
			return tab.errorf("gpu_milli %d above 1000", milli)
		}
		qos := strings.TrimSpace(rec[6])
		prio, ok := openbQoS[qos]
		if !ok {
			return tab.errorf("unknown qos %q: want LS, Guaranteed, Burstable or BE", rec[6])
		}
		created, err := parseNonNegative(rec[8])
		if err != nil {
			return tab.errorf("bad creation_time %q: %s", rec[8], err)
		}
		deleted, err := parseNonNegative(rec[9])
		if err != nil {
			return tab.errorf("bad deletion_time %q: %s", rec[9], err)
		}
		// An unscheduled pod, when kept, runs from its creation: see
		// OpenBOptions.KeepUnscheduled.
		started, startCol := created, "creation_time"
		if strings.TrimSpace(rec[10]) == "" {
			if !opt.KeepUnscheduled {
				t.addSkipped(SkipPending)
				continue
			}
		} else {
			if started, err = parseNonNegative(rec[10]); err != nil {
				return tab.errorf("bad scheduled_time %q: %s", rec[10], err)
			}
			startCol = "scheduled_time"
		}
		if deleted < started {
			return tab.errorf("negative duration: deletion_time %d before %s %d", deleted, startCol, started)
		}
		if numGPU == 0 {
			t.addSkipped(SkipCPUOnly)
			continue
		}
		j := Job{
			ID:            id,
			Queue:         "openb",
			Submit:        created,
			Duration:      max(deleted-started, 1),
			GPUs:          int32(numGPU),
			GPUsPerPod:    int32(numGPU),
			Priority:      prio,
			PriorityClass: qos,
			Preemptible:   qos == "BE",
			CPUMilli:      nums[0],
			MemoryMiB:     nums[1],
		}
		if opt.QueueByQoS {
			j.Queue = qos
		}
		if opt.SharedGPUs && numGPU == 1 && milli > 0 && milli < 1000 {
			j.GPUMilli = int32(milli)
		}
		t.Jobs = append(t.Jobs, j)
	}
}

// parseNonNegative reads a whole, non-negative number (seconds or a
// resource amount) no larger than maxDuration.
func parseNonNegative(s string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, jobError(intReason(err))
	}
	if v < 0 {
		return 0, jobError("negative")
	}
	if v > maxDuration {
		return 0, jobError("too large")
	}
	return v, nil
}

// parseOpenBNodes reads an openb node list.
func parseOpenBNodes(r io.Reader, name string) ([]Node, error) {
	tab, err := newCSVTable(r, name, openbNodeColumns)
	if err != nil {
		return nil, err
	}
	nodes := []Node{}
	for {
		rec, err := tab.next()
		if err == io.EOF {
			return nodes, nil
		}
		if err != nil {
			return nil, err
		}
		n := Node{Name: strings.TrimSpace(rec[0]), Model: strings.TrimSpace(rec[4])}
		if n.Name == "" {
			return nil, tab.errorf("empty sn")
		}
		if n.CPUMilli, err = parseNonNegative(rec[1]); err != nil {
			return nil, tab.errorf("bad cpu_milli %q: %s", rec[1], err)
		}
		if n.MemoryMiB, err = parseNonNegative(rec[2]); err != nil {
			return nil, tab.errorf("bad memory_mib %q: %s", rec[2], err)
		}
		g, err := strconv.ParseInt(strings.TrimSpace(rec[3]), 10, 32)
		if err != nil {
			return nil, tab.errorf("bad gpu %q: %s", rec[3], intReason(err))
		}
		if g < 0 {
			return nil, tab.errorf("gpu %d is negative", g)
		}
		n.GPUs = int32(g)
		nodes = append(nodes, n)
	}
}
