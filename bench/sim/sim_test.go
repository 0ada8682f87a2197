package sim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot/bench/trace"
)

func job(id, queue string, submit, dur int64, gpus int32, prio int32) trace.Job {
	return trace.Job{ID: id, Queue: queue, Submit: submit, Duration: dur, GPUs: gpus, Priority: prio, PriorityClass: fmt.Sprint("p", prio)}
}

func tiny(nodes int) Options {
	return Options{Shape: Shape{Nodes: nodes, GPUsPerNode: 8, NodesPerRack: 2, RacksPerBlock: 2}, SampleEvery: 60}
}

func TestUnboundedClusterRunsEverythingAtOnce(t *testing.T) {
	tr := &trace.Trace{Jobs: []trace.Job{
		job("a", "q1", 0, 100, 1, 0), job("b", "q2", 10, 50, 16, 0), job("c", "q1", 10, 30, 4, 0), job("d", "q2", 500, 10, 8, 0),
	}}
	for _, p := range Policies() {
		// 16 nodes: 128 GPUs, 64 a queue, more than all jobs at once.
		r, err := Run(tr, p, tiny(16))
		if err != nil {
			t.Fatal(err)
		}
		if r.Completed != 4 || r.Evictions != 0 {
			t.Fatalf("%s: %+v", p.Name, r)
		}
		for _, w := range r.Waits {
			if w.P99 != 0 {
				t.Fatalf("%s: waits %+v on an idle cluster", p.Name, r.Waits)
			}
		}
		// Utilization counts from the first arrival to the last (t=500),
		// so d's run after it is left out.
		busy := r.Utilization * float64(r.GPUs) * 500
		if want := float64(100*1 + 50*16 + 30*4); busy < want-1e-6 || busy > want+1e-6 {
			t.Fatalf("%s: busy GPU-seconds %v, want %v", p.Name, busy, want)
		}
		if r.Span != 510 {
			t.Fatalf("%s: span %d", p.Name, r.Span)
		}
	}
}

// The quota-only policy admits a job its quota holds though no node can
// take its pod, and the job then holds that quota while a job that would
// fit waits behind it; topology-aware admission leaves the quota to the
// job that fits.
func TestQuotaTheater(t *testing.T) {
	tr := &trace.Trace{Jobs: []trace.Job{
		job("a", "q", 0, 1000, 5, 0), job("b", "q", 0, 1000, 5, 0),
		{ID: "c", Queue: "q", Submit: 10, Duration: 100, GPUs: 6, GPUsPerPod: 6},
		job("d", "q", 20, 100, 1, 0),
	}}
	waitOf := func(p Policy) *Result {
		r, err := Run(tr, p, tiny(2))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	kueue, _ := PolicyByName("kueue")
	allot, _ := PolicyByName("allot")
	rk, ra := waitOf(kueue), waitOf(allot)
	if rk.Completed != 4 || ra.Completed != 4 {
		t.Fatalf("completed: kueue %d allot %d", rk.Completed, ra.Completed)
	}
	// Under kueue d waits for a or b to end (t=1000); under allot it
	// starts on arrival.
	maxWait := func(r *Result) float64 {
		m := 0.0
		for _, w := range r.Waits {
			m = max(m, w.P99)
		}
		return m
	}
	if w := maxWait(rk); w < 980 {
		t.Fatalf("kueue: the longest wait is %v, want d held back to t=1000", w)
	}
	if rk.FragStrandedShare == 0 {
		t.Fatalf("kueue: no fragmentation measured while c could not bind")
	}
	if ra.JCTMean >= rk.JCTMean {
		t.Fatalf("mean completion: allot %v not below kueue %v", ra.JCTMean, rk.JCTMean)
	}
}

// A high-priority job reclaims its queue's quota from a borrower; the
// victim loses the work since its last checkpoint and runs again later.
// In two phases (the default) the victim takes the termination delay to
// go, its GPUs lost for that long, and the preemptor starts after it.
func TestPreemptionLosesWorkSinceCheckpoint(t *testing.T) {
	for _, c := range []struct {
		checkpoint int64
		delay      int64   // Options.TerminationDelay
		lost       float64 // GPU-hours
		wait       float64 // the preemptor's, seconds
	}{
		{0, -1, 16 * 500.0 / 3600, 0},
		{200, -1, 16 * 100.0 / 3600, 0},
		{0, 0, 16 * (500.0 + DefaultTerminationDelay) / 3600, DefaultTerminationDelay},
		{200, 0, 16 * (100.0 + DefaultTerminationDelay) / 3600, DefaultTerminationDelay},
		{200, 120, 16 * (100.0 + 120) / 3600, 120},
	} {
		low := job("low", "borrower", 0, 2000, 16, 0)
		low.Preemptible, low.Checkpoint = true, c.checkpoint
		tr := &trace.Trace{Jobs: []trace.Job{low, job("high", "owner", 500, 100, 8, 10)}}
		p, _ := PolicyByName("allot")
		o := tiny(2)
		o.TerminationDelay = c.delay
		r, err := Run(tr, p, o)
		if err != nil {
			t.Fatal(err)
		}
		if r.Evictions != 1 || r.Completed != 2 || r.Admissions != 3 {
			t.Fatalf("checkpoint %d, delay %d: %+v", c.checkpoint, c.delay, r)
		}
		if d := r.LostGPUHours - c.lost; d > 1e-9 || d < -1e-9 {
			t.Fatalf("checkpoint %d, delay %d: lost %v GPU-hours, want %v", c.checkpoint, c.delay, r.LostGPUHours, c.lost)
		}
		if r.UsefulUtilization >= r.Utilization {
			t.Fatalf("useful %v not below %v", r.UsefulUtilization, r.Utilization)
		}
		i := slices.IndexFunc(r.Waits, func(w ClassWaits) bool { return w.Class == "p10" })
		if i < 0 || r.Waits[i].Median != c.wait {
			t.Fatalf("checkpoint %d, delay %d: the preemptor's waits %+v, want %v s", c.checkpoint, c.delay, r.Waits, c.wait)
		}
	}
}

// On a node list with CPU, a pod that finds a GPU but not the CPU it asks
// for waits for the CPU to come free, under quota-only admission with its
// own binding as under allot's placement.
func TestRunBooksCPU(t *testing.T) {
	a, b := job("a", "q", 0, 100, 1, 0), job("b", "q", 0, 50, 1, 0)
	a.CPUMilli, b.CPUMilli = 8000, 4000
	tr := &trace.Trace{Jobs: []trace.Job{a, b}}
	for _, name := range []string{"kueue", "allot"} {
		p, _ := PolicyByName(name)
		r, err := Run(tr, p, Options{Nodes: []trace.Node{{Name: "n", GPUs: 2, CPUMilli: 10000}}, SampleEvery: 10})
		if err != nil {
			t.Fatal(err)
		}
		if r.Completed != 2 || r.Span != 150 || len(r.Waits) != 1 || r.Waits[0].P99 != 100 {
			t.Fatalf("%s: span %d, waits %+v; want b to wait 100 s for a's CPU", name, r.Span, r.Waits)
		}
		if r.FragStrandedShare == 0 {
			t.Fatalf("%s: no fragmentation measured while b waited for CPU beside a free GPU", name)
		}
		r, err = Run(tr, p, Options{Nodes: []trace.Node{{Name: "n", GPUs: 2}}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Span != 100 {
			t.Fatalf("%s without CPU: span %d, want both at once", name, r.Span)
		}
	}
}

func TestRigidQuotaRejectsOversizedJobs(t *testing.T) {
	tr := &trace.Trace{Jobs: []trace.Job{job("big", "q1", 0, 10, 16, 0), job("small", "q2", 0, 10, 2, 0)}}
	fifo, _ := PolicyByName("fifo")
	r, err := Run(tr, fifo, tiny(2))
	if err != nil {
		t.Fatal(err)
	}
	if r.Rejected != 1 || r.Completed != 1 {
		t.Fatalf("fifo: %+v", r)
	}
	allot, _ := PolicyByName("allot")
	if r, _ = Run(tr, allot, tiny(2)); r.Rejected != 0 || r.Completed != 2 {
		t.Fatalf("allot borrows for the big job: %+v", r)
	}
}

// queuedTrace is n jobs over three queues and three priorities, of 1 to
// 2^(sizes-1) GPUs, a third preemptible and half checkpointing every
// checkpoint seconds, job i arriving and running as times says.
func queuedTrace(n, sizes int, checkpoint int64, times func(i int) (at, run int64)) *trace.Trace {
	var jobs []trace.Job
	for i := range n {
		at, run := times(i)
		j := job(fmt.Sprintf("j%03d", i), fmt.Sprint("q", i%3), at, run, int32(1<<(i%sizes)), int32(i%3*10))
		j.Preemptible, j.Checkpoint = i%3 == 0, int64(i%2)*checkpoint
		jobs = append(jobs, j)
	}
	return &trace.Trace{Jobs: jobs}
}

func TestRunIsDeterministic(t *testing.T) {
	tr := queuedTrace(300, 5, 120, func(i int) (int64, int64) { return int64(i * 7 % 500), int64(50 + i*13%700) })
	for _, p := range Policies() {
		runTwice(t, tr, p, tiny(4))
	}
}

// TestSamplesKeptAreMeasured: a sample that keeps the last one's
// fragmentation, nothing written in between, holds what measuring it
// gives: the series, node failures and repairs included, are the same
// with every sample measured. Long jobs after a burst leave stretches
// without events for the kept samples to be many.
func TestSamplesKeptAreMeasured(t *testing.T) {
	tr := queuedTrace(200, 4, 1200, func(i int) (int64, int64) { return int64(i * 37 % 3000), int64(600 + i*977%40000) })
	for _, p := range append(Policies(), KueueTAS) {
		for _, mtbf := range []int64{0, 20000} {
			o := tiny(4)
			o.NodeMTBF = mtbf
			kept, err := Run(tr, p, o)
			if err != nil {
				t.Fatal(err)
			}
			o.measureEvery = true
			measured, err := Run(tr, p, o)
			if err != nil {
				t.Fatal(err)
			}
			same := 0
			for i := 1; i < len(measured.Series); i++ {
				a, b := measured.Series[i], measured.Series[i-1]
				if a.At = b.At; a.Waiting > 0 && a == b {
					same++
				}
			}
			a, _ := json.Marshal(kept)
			b, _ := json.Marshal(measured)
			if !bytes.Equal(a, b) {
				t.Fatalf("%s, MTBF %d: kept samples differ from measured ones", p.Name, mtbf)
			}
			if same == 0 {
				t.Fatalf("%s, MTBF %d: no sample while work waits repeats the one before: nothing was kept", p.Name, mtbf)
			}
		}
	}
}

// runTwice runs tr under p twice and checks that every job left the run
// (done or rejected) and that both runs report the same, byte for byte.
func runTwice(t *testing.T, tr *trace.Trace, p Policy, o Options) *Result {
	t.Helper()
	var out [2][]byte
	var r *Result
	for k := range out {
		var err error
		if r, err = Run(tr, p, o); err != nil {
			t.Fatal(err)
		}
		if r.Completed+r.Rejected != len(tr.Jobs) {
			t.Fatalf("%s: %d completed, %d rejected of %d", p.Name, r.Completed, r.Rejected, len(tr.Jobs))
		}
		out[k], _ = json.Marshal(r)
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Fatalf("%s: two runs differ", p.Name)
	}
	return r
}

func TestRunRefusesBadInput(t *testing.T) {
	p, _ := PolicyByName("allot")
	for _, tr := range []*trace.Trace{
		{Jobs: []trace.Job{job("a", "q", 0, 10, 1, 0), job("a", "q", 0, 10, 1, 0)}},
		{Jobs: []trace.Job{job("a", "q", 0, 0, 1, 0)}},
		{Jobs: []trace.Job{job("a", "q", 0, 10, 0, 0)}},
	} {
		if _, err := Run(tr, p, tiny(2)); err == nil {
			t.Fatalf("accepted %+v", tr.Jobs)
		}
	}
	if _, err := Run(&trace.Trace{}, p, Options{}); err == nil {
		t.Fatal("accepted an empty cluster shape")
	}
	one := &trace.Trace{Jobs: []trace.Job{job("a", "q", 0, 10, 1, 0)}}
	o := tiny(MaxNodes + 1)
	if _, err := Run(one, p, o); err == nil || !strings.Contains(err.Error(), "more than the limit of 65536") {
		t.Fatalf("%d nodes: %v", o.Shape.Nodes, err)
	}
	o = tiny(2)
	o.NodeMTBF = math.MaxInt64
	if _, err := Run(one, p, o); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("an MTBF of %d s: %v", o.NodeMTBF, err)
	}
	o.NodeMTBF, o.RepairTime = 100, MaxFailureSeconds+1
	if _, err := Run(one, p, o); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("a repair time of %d s: %v", o.RepairTime, err)
	}
	o = tiny(2)
	o.TerminationDelay = MaxFailureSeconds + 1
	if _, err := Run(one, p, o); err == nil || !strings.Contains(err.Error(), "termination delay") {
		t.Fatalf("a termination delay of %d s: %v", o.TerminationDelay, err)
	}
	o = Options{Nodes: make([]trace.Node, MaxNodes+1)}
	for i := range o.Nodes {
		o.Nodes[i] = trace.Node{Name: fmt.Sprint("n", i), GPUs: 1}
	}
	if _, err := Run(one, p, o); err == nil || !strings.Contains(err.Error(), "more than the limit") {
		t.Fatalf("a node list of %d nodes: %v", len(o.Nodes), err)
	}
}

// Replaying the Philly trace on a cluster larger than its peak demand runs
// every job on arrival: no waits, and exactly the trace's GPU-hours.
func TestPhillyUnbounded(t *testing.T) {
	tr, err := trace.LoadPhilly("../../../shared/traces/philly_adaptdl.csv")
	if err != nil {
		t.Skipf("the Philly trace is not here: %v", err)
	}
	if testing.Short() {
		t.Skip("replays 82,247 jobs")
	}
	// Peak concurrent GPUs, rounded up to whole nodes and doubled so that
	// no job meets a fragmented cluster.
	type edge struct{ at, d int64 }
	var es []edge
	for _, j := range tr.Jobs {
		es = append(es, edge{j.Submit, int64(j.GPUs)}, edge{j.Submit + j.Duration, -int64(j.GPUs)})
	}
	slices.SortFunc(es, func(a, b edge) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.d, b.d)) })
	peak, cur := int64(0), int64(0)
	for _, e := range es {
		cur += e.d
		peak = max(peak, cur)
	}
	p, _ := PolicyByName("allot")
	r, err := Run(tr, p, Options{Shape: Shape{Nodes: int(2*(peak/8+1)) + 16, GPUsPerNode: 8, NodesPerRack: 16, RacksPerBlock: 8}, SampleEvery: 86400})
	if err != nil {
		t.Fatal(err)
	}
	if r.Completed != len(tr.Jobs) || r.Evictions != 0 {
		t.Fatalf("completed %d of %d, %d evictions", r.Completed, len(tr.Jobs), r.Evictions)
	}
	for _, w := range r.Waits {
		if w.P99 != 0 {
			t.Fatalf("waits %+v", w)
		}
	}
	if math.Abs(r.GPUHours-978078)/978078 > 0.001 {
		t.Fatalf("%.0f GPU-hours, want 978,078 ±0.1%%", r.GPUHours)
	}
	t.Logf("peak %d GPUs; %.0f GPU-hours; %d decisions", peak, r.GPUHours, r.Decisions)
}

// TestNodeFailures: with nodes failing, the runs still end with every job
// done or rejected, the same seed gives the same run, jobs on a failed
// node lose their work and start over, and failures count as
// interruptions, not preemptions.
func TestNodeFailures(t *testing.T) {
	var jobs []trace.Job
	for i := range 200 {
		jobs = append(jobs, job(fmt.Sprintf("j%03d", i), fmt.Sprint("q", i%2), int64(i*300), int64(600+i*37%5000), int32(1<<(i%4)), 0))
	}
	tr := &trace.Trace{Jobs: jobs}
	o := tiny(4)
	o.NodeMTBF, o.RepairTime, o.FailureSeed = 20_000, 1_800, 7
	for _, p := range Policies() {
		r := runTwice(t, tr, p, o)
		if r.NodeFailures == 0 || r.Interruptions == 0 || r.FailureLostGPUHours <= 0 || r.Evictions != 0 {
			t.Fatalf("%s: %d failures, %d interruptions, %.1f GPU-h lost, %d evictions", p.Name, r.NodeFailures, r.Interruptions, r.FailureLostGPUHours, r.Evictions)
		}
		if r.UsefulUtilization >= r.Utilization {
			t.Fatalf("%s: useful utilization %.3f not below %.3f", p.Name, r.UsefulUtilization, r.Utilization)
		}
	}
	// One node, one long job: every failure in its run throws its work
	// away, so it ends later than it would have and its GPU-time exceeds
	// its duration.
	one := &trace.Trace{Jobs: []trace.Job{job("long", "q", 0, 50_000, 8, 0), job("late", "q", 200_000, 10, 1, 0)}}
	o = tiny(1)
	o.NodeMTBF, o.RepairTime, o.FailureSeed = 10_000, 600, 1
	p, _ := PolicyByName("allot")
	r, err := Run(one, p, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Interruptions == 0 || r.GPUHours <= (50_000*8+10)/3600.0 || r.Completed != 2 {
		t.Fatalf("%d interruptions, %.1f GPU-hours, %d completed", r.Interruptions, r.GPUHours, r.Completed)
	}
	o.NodeMTBF = 0
	if r, _ := Run(one, p, o); r.NodeFailures != 0 || r.GPUHours != (50_000*8+10)/3600.0 {
		t.Fatalf("without failures: %d failures, %.3f GPU-hours", r.NodeFailures, r.GPUHours)
	}
}

// TestNodeFailuresFewerJobsThanNodes: failure and repair events are about
// nodes, so with more nodes than jobs a run with node failures must not
// take a node's number for a job's (it indexed the job table with it and
// panicked).
func TestNodeFailuresFewerJobsThanNodes(t *testing.T) {
	tr := &trace.Trace{Jobs: []trace.Job{
		job("a", "q", 0, 5_000, 8, 0), job("b", "q", 10_000, 5_000, 16, 0), job("c", "q", 20_000, 5_000, 4, 0),
	}}
	o := tiny(16)
	o.NodeMTBF, o.RepairTime, o.FailureSeed = 1_000, 600, 3
	for _, p := range Policies() {
		r := runTwice(t, tr, p, o)
		if r.NodeFailures < len(tr.Jobs) {
			t.Fatalf("%s: %d node failures on 16 nodes, want more than the %d jobs", p.Name, r.NodeFailures, len(tr.Jobs))
		}
		if r.Completed != len(tr.Jobs) {
			t.Fatalf("%s: %d of %d completed", p.Name, r.Completed, len(tr.Jobs))
		}
	}
}

// TestPreemptionsInBothPhases replays preemptions with node failures
// among them, on a cluster offered five times its capacity, in one phase
// and in two: every job completes, two runs agree, and in two phases the
// victims that terminate (on a node that fails, too) hand their room to
// their preemptors and leave nothing in flight (Run checks it). The log
// shows the evictions: in two phases, overloaded so, each hold and each
// victim coming back contends again, and the allot policy evicts several
// times as often as in one.
func TestPreemptionsInBothPhases(t *testing.T) {
	var jobs []trace.Job
	for i := range 240 {
		j := job(fmt.Sprintf("j%03d", i), fmt.Sprint("q", i%3), int64(i*40), int64(300+i*53%3000), int32(1<<(i%4)), int32(i%4*5))
		j.Preemptible, j.Checkpoint = i%4 != 3, int64(i%2*200)
		jobs = append(jobs, j)
	}
	tr := &trace.Trace{Jobs: jobs}
	for _, delay := range []int64{-1, 0, 600} {
		o := tiny(4)
		o.NodeMTBF, o.RepairTime, o.FailureSeed, o.TerminationDelay = 15_000, 1_200, 3, delay
		for _, name := range []string{"kueue", "allot"} {
			p, _ := PolicyByName(name)
			r := runTwice(t, tr, p, o)
			if r.Evictions == 0 || r.Completed != len(jobs) || r.LostGPUHours <= 0 {
				t.Fatalf("%s, delay %d: %d evictions, %d of %d completed, %.1f GPU-h lost", name, delay, r.Evictions, r.Completed, len(jobs), r.LostGPUHours)
			}
			t.Logf("%s, delay %d: %d evictions, %d failures, %.1f GPU-h lost, util %.3f", name, delay, r.Evictions, r.NodeFailures, r.LostGPUHours, r.Utilization)
		}
	}
}
