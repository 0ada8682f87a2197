package sim

import (
	"maps"
	"math"
	"slices"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/trace"
	"github.com/allot-sched/allot/gang"
)

// Result is one policy's run: the four health numbers (utilization, queue
// wait, preemption, fragmentation) and the rest of the report.
type Result struct {
	Policy string `json:"policy"`
	GPUs   int64  `json:"gpus"`
	Jobs   int    `json:"jobs"`
	// Completed jobs ran to the end; Rejected ones can never be admitted
	// under the policy (a job larger than a rigid quota, say); Unfinished
	// ones were still waiting when the events ran out.
	Completed  int `json:"completed"`
	Rejected   int `json:"rejected"`
	Unfinished int `json:"unfinished"`
	// Span is the simulated time from the first arrival to the last
	// completion (or the last event, when work is left), in seconds.
	Span int64 `json:"span"`
	// Utilization is busy GPU-time over the cluster's GPU-time from the
	// first arrival to the last (the steady state: a trace's longest jobs
	// run on for weeks after the arrivals end); UsefulUtilization leaves
	// out the work preemption (and node failures) threw away in that
	// window.
	Utilization       float64 `json:"utilization"`
	UsefulUtilization float64 `json:"usefulUtilization"`
	// Config names the configuration of the run (Options.Config), empty
	// without one.
	Config string `json:"config,omitempty"`
	// Waits are queue waits (submission to first start), per priority
	// class, in seconds.
	Waits []ClassWaits `json:"waits"`
	// Queues are the figures of each queue of the run (the
	// configuration's that received jobs, or the trace's own), in name
	// order.
	Queues []QueueStats `json:"queues"`
	// GPUHours is all the GPU-time run, lost work included.
	GPUHours float64 `json:"gpuHours"`
	// Admissions counts every start, restarts after eviction included.
	Admissions int `json:"admissions"`
	Evictions  int `json:"evictions"`
	// PreemptionRate is evictions per 100 admissions.
	PreemptionRate float64 `json:"preemptionRate"`
	LostGPUHours   float64 `json:"lostGpuHours"`
	// NodeFailures counts node failures (Options.NodeMTBF), Interruptions
	// the jobs they stopped, and FailureLostGPUHours the work those lost.
	NodeFailures        int     `json:"nodeFailures,omitempty"`
	Interruptions       int     `json:"interruptions,omitempty"`
	FailureLostGPUHours float64 `json:"failureLostGpuHours,omitempty"`
	// Fragmentation, sampled while work waits: the mean share of nodes with
	// free GPUs on which no waiting pod fits, the mean share of free GPUs
	// the waiting mix cannot use (FGD's measure), and the share of samples
	// with the node share above 10%.
	FragNodeShare     float64 `json:"fragNodeShare"`
	FragStrandedShare float64 `json:"fragStrandedShare"`
	FragAbove10       float64 `json:"fragAbove10"`
	// FragMix is FGD's measure against the trace's own pod mix (its
	// target workload) instead of what waits, averaged over every sample:
	// the share of free GPUs a typical pod of the trace cannot use. It
	// tells the placement apart from what happens to be waiting.
	FragMix float64 `json:"fragMix"`
	// Throughput is completed jobs per simulated hour.
	Throughput float64 `json:"throughput"`
	// JCT is the job completion time (submission to end), in seconds.
	JCTMean float64 `json:"jctMean"`
	JCTP99  float64 `json:"jctP99"`
	// Decisions counts every decision of the scheduling loop.
	Decisions int `json:"decisions"`
	// Series samples the run over time.
	Series []Sample `json:"series"`
}

// Label names the run in a report: its policy, after its configuration
// when it has one ("teams allot").
func (r *Result) Label() string { return label(r.Config, r.Policy) }

// Label names the replay as Result.Label does.
func (r *PackResult) Label() string { return label(r.Config, r.Policy) }

func label(config, policy string) string {
	if config == "" {
		return policy
	}
	return config + " " + policy
}

// ClassWaits are the queue waits of one priority class.
type ClassWaits struct {
	Class  string  `json:"class"`
	Jobs   int     `json:"jobs"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
}

// QueueStats are one queue's figures: its jobs, their queue waits in
// seconds, the GPU-hours of the jobs it completed and the most GPUs its
// running jobs held at once (beyond its nominal quota: it borrowed). A
// preemption's victim no longer counts once it starts terminating: its
// quota has passed to its preemptor.
type QueueStats struct {
	Queue     string  `json:"queue"`
	Jobs      int     `json:"jobs"`
	Completed int     `json:"completed"`
	Rejected  int     `json:"rejected"`
	Median    float64 `json:"median"`
	P90       float64 `json:"p90"`
	P99       float64 `json:"p99"`
	GPUHours  float64 `json:"gpuHours"`
	PeakGPUs  int64   `json:"peakGpus"`
}

// Sample is the cluster at one instant.
type Sample struct {
	At          int64   `json:"at"`
	Utilization float64 `json:"utilization"`
	Waiting     int     `json:"waiting"`
	// NodeShare and StrandedShare are the two fragmentation figures; both
	// zero when nothing waits.
	NodeShare     float64 `json:"nodeShare"`
	StrandedShare float64 `json:"strandedShare"`
}

// queueTally gathers one queue's figures.
type queueTally struct {
	QueueStats
	waits []float64
}

func (r *run) configName() string {
	if r.o.Config == nil {
		return ""
	}
	return r.o.Config.Name
}

type fragStats struct {
	samples, all             int
	node, strand, above, mix float64
}

// sample records the cluster now, measuring fragmentation against what
// waits.
func (r *run) sample() {
	s := r.st.Load()
	smp := Sample{At: r.now, Utilization: float64(r.busyGPUs) / float64(r.gpus), Waiting: s.NumPending() + len(r.hold)}
	if r.mix == nil {
		r.mix = r.targetMix()
	}
	r.frag.all++
	r.frag.mix += r.mixFragmentation(r.mix).StrandedShare
	if smp.Waiting > 0 {
		var f gang.Fragmentation
		if r.topo {
			f = s.Fragmentation()
		} else {
			f = r.bindingFragmentation(s)
		}
		smp.NodeShare, smp.StrandedShare = f.NodeShare, f.StrandedShare
		r.frag.samples++
		r.frag.node += f.NodeShare
		r.frag.strand += f.StrandedShare
		if f.NodeShare > 0.1 {
			r.frag.above++
		}
	}
	r.series = append(r.series, smp)
}

// bindingFragmentation measures the simulator's own node binding (quota-
// only admission) with the same two definitions as allot's: every pending
// or holding job's pods against each node's free room.
func (r *run) bindingFragmentation(s *allot.Snapshot) gang.Fragmentation {
	mix := make(map[room]int64)
	for _, id := range s.PendingIDs() {
		if i, ok := r.byID[id]; ok {
			r.addPods(mix, r.jobs[i].j)
		}
	}
	for _, i := range r.hold {
		r.addPods(mix, r.jobs[i].j)
	}
	return r.measureBinding(shapes(mix))
}

func (r *run) result() *Result {
	res := &Result{Policy: r.p.Name, Config: r.configName(), GPUs: r.gpus, Jobs: len(r.jobs), Admissions: r.admissions, Decisions: r.decisions, Series: r.series}
	first := int64(math.MaxInt64)
	waits := map[string][]float64{}
	queues := map[string]*queueTally{}
	var jct []float64
	for i := range r.jobs {
		js := &r.jobs[i]
		first = min(first, js.j.Submit)
		res.Evictions += js.evictions
		q := queues[js.queue]
		if q == nil {
			q = &queueTally{QueueStats: QueueStats{Queue: js.queue}}
			queues[js.queue] = q
		}
		q.Jobs++
		switch js.state {
		case done:
			res.Completed++
			q.Completed++
			q.GPUHours += float64(js.j.Duration) * float64(js.j.GPUs) / 3600
			jct = append(jct, float64(js.end-js.j.Submit))
		case rejected:
			res.Rejected++
			q.Rejected++
		default:
			res.Unfinished++
		}
		if js.firstRun >= 0 {
			q.waits = append(q.waits, float64(js.firstRun-js.j.Submit))
			c := js.j.PriorityClass
			if c == "" {
				c = "default"
			}
			waits[c] = append(waits[c], float64(js.firstRun-js.j.Submit))
		}
	}
	if len(r.jobs) == 0 {
		return res
	}
	last := int64(0)
	for i := range r.jobs {
		last = max(last, r.jobs[i].end)
	}
	if res.Unfinished > 0 {
		last = r.now
	}
	res.Span = last - first
	if w := r.lastArrival - r.firstArrival; w > 0 {
		all := float64(r.gpus) * float64(w)
		res.Utilization = float64(r.busyGPUSec) / all
		res.UsefulUtilization = float64(r.busyGPUSec-r.windowLost) / all
	}
	if res.Span > 0 {
		res.Throughput = float64(res.Completed) / (float64(res.Span) / 3600)
	}
	if res.Admissions > 0 {
		res.PreemptionRate = 100 * float64(res.Evictions) / float64(res.Admissions)
	}
	res.LostGPUHours = float64(r.lostGPUSec) / 3600
	res.NodeFailures, res.Interruptions = r.failures, r.interruptions
	res.FailureLostGPUHours = float64(r.failLostGPUSec) / 3600
	res.GPUHours = float64(r.busyAll) / 3600
	if n := float64(r.frag.samples); n > 0 {
		res.FragNodeShare, res.FragStrandedShare, res.FragAbove10 = r.frag.node/n, r.frag.strand/n, r.frag.above/n
	}
	if n := float64(r.frag.all); n > 0 {
		res.FragMix = r.frag.mix / n
	}
	classes := make([]string, 0, len(waits))
	for c := range waits {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	for _, c := range classes {
		w := waits[c]
		slices.Sort(w)
		res.Waits = append(res.Waits, ClassWaits{Class: c, Jobs: len(w), Median: trace.Percentile(w, 0.5), P90: trace.Percentile(w, 0.9), P99: trace.Percentile(w, 0.99)})
	}
	for _, name := range slices.Sorted(maps.Keys(queues)) {
		q := queues[name]
		slices.Sort(q.waits)
		q.Median, q.P90, q.P99 = trace.Percentile(q.waits, 0.5), trace.Percentile(q.waits, 0.9), trace.Percentile(q.waits, 0.99)
		q.PeakGPUs = r.queueBusy[name].peak
		res.Queues = append(res.Queues, q.QueueStats)
	}
	if len(jct) > 0 {
		slices.Sort(jct)
		sum := 0.0
		for _, v := range jct {
			sum += v
		}
		res.JCTMean, res.JCTP99 = sum/float64(len(jct)), trace.Percentile(jct, 0.99)
	}
	return res
}
