package sim

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/allot-sched/allot/bench/trace"
	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/health"
)

// Result is one policy's run: the four health numbers (utilization, queue
// wait, preemption, fragmentation) and the rest of the report.
type Result struct {
	Policy string `json:"policy"`
	// Config names the configuration of the run (Options.Config), empty
	// without one.
	Config string `json:"config,omitempty"`
	GPUs   int64  `json:"gpus"`
	Jobs   int    `json:"jobs"`
	// Completed jobs ran to the end; Rejected ones can never be admitted
	// under the policy (a job larger than a rigid quota, say); Unfinished
	// ones were still waiting when the events ran out.
	Completed  int `json:"completed"`
	Rejected   int `json:"rejected"`
	Unfinished int `json:"unfinished"`
	// FirstArrival is the simulated time of the first arrival; the
	// windows below count from it, in seconds. ArrivalWindow ends at the
	// last arrival; ActiveWindow when the last backlog clears (the last
	// start or rejection of a job that waited, at least the last
	// arrival): what the charts show. Span ends at the last completion
	// (or the last event, when work is left): the makespan, set by the
	// longest job.
	FirstArrival  int64 `json:"firstArrival"`
	ArrivalWindow int64 `json:"arrivalWindow"`
	ActiveWindow  int64 `json:"activeWindow"`
	Span          int64 `json:"span"`
	// Window is what Utilization and the throughputs are measured over:
	// the arrival window, the steady state (a trace's longest jobs run on
	// for weeks after the arrivals end); when every job arrives at once,
	// the active window; when that is empty too, the span.
	Window int64 `json:"window"`
	// Utilization is busy GPU-time over the cluster's GPU-time in the
	// window; UsefulUtilization leaves out the work preemption (and node
	// failures) threw away in it.
	Utilization       float64 `json:"utilization"`
	UsefulUtilization float64 `json:"usefulUtilization"`
	// Waits are queue waits (submission to first start), per priority
	// class, highest priority first, in seconds.
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
	// Fragmentation, from the samples of the active window.
	//
	// FragBlocked is the share of samples that are shape-blocked: some
	// waiting job asks for no more GPUs than the usable nodes have free,
	// yet its pods fit on no set of them; FragBlockedGPUs is the mean
	// share of the cluster's GPUs free at such samples (0 at the others):
	// capacity idle because of its shape while demand that could use it
	// by count waits. A long queue of small jobs does not lower it.
	FragBlocked     float64 `json:"fragBlocked"`
	FragBlockedGPUs float64 `json:"fragBlockedGpus"`
	// FragMix is FGD's measure against the trace's own pod mix (its
	// target workload): the share of free GPUs a typical pod of the trace
	// cannot use, averaged over the samples. It tells the placement apart
	// from what happens to be waiting.
	FragMix float64 `json:"fragMix"`
	// Against the backlog, at the samples where work waits: the mean
	// share of nodes with free GPUs on which no waiting pod fits, the mean
	// share of free GPUs the waiting mix cannot use (FGD's measure against
	// what waits), and the share of those samples with the node share
	// above 10%. They fall as the queue grows (a long queue holds a pod
	// for every hole), so they read beside MeanWaiting, the mean backlog
	// (waiting jobs) over the samples of the active window.
	FragNodeShare     float64 `json:"fragNodeShare"`
	FragStrandedShare float64 `json:"fragStrandedShare"`
	FragAbove10       float64 `json:"fragAbove10"`
	MeanWaiting       float64 `json:"meanWaiting"`
	// Throughput is the jobs completed within the window per hour of it;
	// DoneGPUHoursPerHour the GPU-hours those jobs ran, per hour: the rate
	// at which the cluster finishes work while it arrives, which the
	// longest job does not set.
	Throughput          float64 `json:"throughput"`
	DoneGPUHoursPerHour float64 `json:"doneGpuHoursPerHour"`
	// JCT is the job completion time (submission to end), in seconds.
	JCTMean float64 `json:"jctMean"`
	JCTP99  float64 `json:"jctP99"`
	// Decisions counts every decision of the scheduling loop.
	Decisions int `json:"decisions"`
	// Metrics are the run's figures under the bridge's metric names and
	// labels (package health): a series name, labels and all, to its
	// value.
	Metrics map[string]float64 `json:"metrics"`
	// Series samples the run every Options.SampleEvery from the first
	// arrival until, the arrivals over, nothing waits any more.
	Series []Sample `json:"series"`
}

// ClassWaits are the queue waits of one priority class, in seconds;
// Priority is the highest priority of its jobs.
type ClassWaits struct {
	Class    string  `json:"class"`
	Priority int32   `json:"priority"`
	Jobs     int     `json:"jobs"`
	Median   float64 `json:"median"`
	P90      float64 `json:"p90"`
	P99      float64 `json:"p99"`
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
	// MixShare is FGD's measure against the trace's own mix (Result's
	// FragMix); BlockedGPUs the GPUs free when the sample is
	// shape-blocked, else 0 (Result's FragBlocked).
	MixShare    float64 `json:"mixShare"`
	Blocked     bool    `json:"blocked,omitempty"`
	BlockedGPUs int64   `json:"blockedGpus,omitempty"`
	// NodeShare and StrandedShare are the two figures against the
	// backlog; both zero when nothing waits.
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

// sample records the cluster now, measuring fragmentation against the
// trace's mix and, when work waits, against what waits.
func (r *run) sample() error {
	s := r.st.Load()
	smp := Sample{At: r.now, Utilization: float64(r.busyGPUs) / float64(r.gpus), Waiting: s.NumPending() + len(r.hold)}
	// The waiting jobs the simulator counts by shape are the store's.
	n := 0
	for _, c := range r.waitingShapes {
		n += int(c)
	}
	if n != smp.Waiting {
		return fmt.Errorf("at %d s the simulator counts %d jobs waiting, the store %d pending and %d holding", r.now, n, s.NumPending(), len(r.hold))
	}
	// Nothing written since the last sample, and no node whose cooldown
	// time could end: the placements, the nodes and what waits are as they
	// were, and so is every figure of fragmentation (long stretches of a
	// drain see no event).
	if last := len(r.series) - 1; last >= 0 && r.timeless && !r.o.measureEvery && r.sampledAt == r.writes {
		p := &r.series[last]
		smp.MixShare, smp.NodeShare, smp.StrandedShare, smp.Blocked, smp.BlockedGPUs = p.MixShare, p.NodeShare, p.StrandedShare, p.Blocked, p.BlockedGPUs
		r.series = append(r.series, smp)
		return nil
	}
	r.sampledAt = r.writes
	if r.mix == nil {
		r.mix = r.targetMix()
	}
	smp.MixShare = r.mixFragmentation(r.mix).StrandedShare
	if smp.Waiting > 0 {
		var f gang.Fragmentation
		if r.topo {
			f = s.Fragmentation()
		} else {
			f = r.bindingFragmentation()
		}
		smp.NodeShare, smp.StrandedShare = f.NodeShare, f.StrandedShare
		if blocked, free := r.shapeBlocked(s); blocked {
			smp.Blocked, smp.BlockedGPUs = true, free
		}
	}
	r.series = append(r.series, smp)
	return nil
}

// bindingFragmentation measures the simulator's own node binding (quota-
// only admission) with the same two definitions as allot's: every pending
// or holding job's pods against each node's free room. Those jobs are the
// waiting ones the run counts by shape (sample checks that they are as
// many), so their pods come from the counts: full pods of the shape's
// per, the remainder in one smaller pod, as addPods splits a job.
func (r *run) bindingFragmentation() gang.Fragmentation {
	mix := make(map[room]int64)
	for k, n := range r.waitingShapes {
		if full := k.gpus / k.per; full > 0 {
			mix[room{gpus: k.per, cpu: k.cpu, mem: k.mem}] += int64(full) * int64(n)
		}
		if rest := k.gpus % k.per; rest > 0 {
			mix[room{gpus: rest, cpu: k.cpu, mem: k.mem}] += int64(n)
		}
	}
	return r.measureBinding(shapes(mix))
}

// activity notes that a job that waited started or was rejected now: the
// backlog lasts at least until now. It keeps the GPU-time run and lost so
// far, the active window's, for a trace whose jobs all arrive at once.
func (r *run) activity() {
	r.activeEnd = r.now
	r.activeBusy, r.activeLost = r.busyAll, r.lostGPUSec+r.failLostGPUSec
}

func (r *run) result() *Result {
	res := &Result{Policy: r.p.Name, Config: r.configName(), GPUs: r.gpus, Jobs: len(r.jobs), Admissions: r.admissions, Decisions: r.decisions, Series: r.series}
	type class struct {
		prio  int32
		waits []float64
	}
	classes := map[string]*class{}
	queues := map[string]*queueTally{}
	var jct []float64
	for i := range r.jobs {
		js := &r.jobs[i]
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
			wait := float64(js.firstRun - js.j.Submit)
			q.waits = append(q.waits, wait)
			name := js.j.PriorityClass
			if name == "" {
				name = "default"
			}
			c := classes[name]
			if c == nil {
				c = &class{prio: js.j.Priority}
				classes[name] = c
			}
			c.prio = max(c.prio, js.j.Priority)
			c.waits = append(c.waits, wait)
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
	res.FirstArrival = r.firstArrival
	res.Span = last - r.firstArrival
	res.ArrivalWindow = r.lastArrival - r.firstArrival
	res.ActiveWindow = max(r.activeEnd, r.lastArrival) - r.firstArrival
	w, busy, lost := res.ArrivalWindow, r.busyGPUSec, r.windowLost
	if w == 0 {
		w, busy, lost = res.ActiveWindow, r.activeBusy, r.activeLost
	}
	if w == 0 {
		w, busy, lost = res.Span, r.busyAll, r.lostGPUSec+r.failLostGPUSec
	}
	res.Window = w
	if w > 0 {
		all := float64(r.gpus) * float64(w)
		res.Utilization = float64(busy) / all
		res.UsefulUtilization = float64(busy-lost) / all
		finished, gpuSec := 0, 0.0
		for i := range r.jobs {
			if js := &r.jobs[i]; js.state == done && js.end <= r.firstArrival+w {
				finished++
				gpuSec += float64(js.j.Duration) * float64(js.j.GPUs)
			}
		}
		res.Throughput = float64(finished) / (float64(w) / 3600)
		res.DoneGPUHoursPerHour = gpuSec / float64(w)
	}
	if res.Admissions > 0 {
		res.PreemptionRate = 100 * float64(res.Evictions) / float64(res.Admissions)
	}
	res.LostGPUHours = float64(r.lostGPUSec) / 3600
	res.NodeFailures, res.Interruptions = r.failures, r.interruptions
	res.FailureLostGPUHours = float64(r.failLostGPUSec) / 3600
	res.GPUHours = float64(r.busyAll) / 3600
	r.fragmentation(res)
	for _, name := range slices.Sorted(maps.Keys(classes)) {
		c := classes[name]
		slices.Sort(c.waits)
		res.Waits = append(res.Waits, ClassWaits{Class: name, Priority: c.prio, Jobs: len(c.waits),
			Median: trace.Percentile(c.waits, 0.5), P90: trace.Percentile(c.waits, 0.9), P99: trace.Percentile(c.waits, 0.99)})
	}
	slices.SortStableFunc(res.Waits, func(a, b ClassWaits) int { return int(b.Priority) - int(a.Priority) })
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
	res.Metrics = res.metrics()
	return res
}

// metrics are the run's figures under the names and labels the bridge's
// Prometheus collectors export (package health), so that a dashboard
// built on one reads the other: the run's utilization, its evictions,
// the two fragmentation figures against what waits, and the queue waits
// by priority class at the health package's quantiles.
func (r *Result) metrics() map[string]float64 {
	m := map[string]float64{
		health.GPUUtilization:             r.Utilization,
		health.Evictions:                  float64(r.Evictions),
		health.FragmentationNodeShare:     r.FragNodeShare,
		health.FragmentationStrandedShare: r.FragStrandedShare,
	}
	for _, w := range r.Waits {
		hw := health.ClassWaits{Median: w.Median, P90: w.P90, P99: w.P99}
		for _, q := range health.Quantiles {
			v := hw.Quantile(q)
			m[health.Series(health.QueueWait, health.LabelPriorityClass, w.Class, health.LabelQuantile, strconv.FormatFloat(q, 'g', -1, 64))] = v
		}
	}
	return m
}

// fragmentation sums up the samples of the active window.
func (r *run) fragmentation(res *Result) {
	end := res.FirstArrival + res.ActiveWindow
	var all, waiting, above int
	var mix, blocked, blockedGPUs, node, strand, backlog float64
	for _, s := range r.series {
		if s.At > end {
			break
		}
		all++
		mix += s.MixShare
		backlog += float64(s.Waiting)
		if s.Blocked {
			blocked++
			blockedGPUs += float64(s.BlockedGPUs) / float64(r.gpus)
		}
		if s.Waiting > 0 {
			waiting++
			node += s.NodeShare
			strand += s.StrandedShare
			if s.NodeShare > 0.1 {
				above++
			}
		}
	}
	if all > 0 {
		n := float64(all)
		res.FragMix, res.FragBlocked, res.FragBlockedGPUs, res.MeanWaiting = mix/n, blocked/n, blockedGPUs/n, backlog/n
	}
	if waiting > 0 {
		n := float64(waiting)
		res.FragNodeShare, res.FragStrandedShare, res.FragAbove10 = node/n, strand/n, float64(above)/n
	}
}
