package sim

import (
	"math"
	"testing"

	"github.com/allot-sched/allot/bench/trace"
)

// TestThroughputOverTheArrivalWindow: jobs/h and GPU-h/h count the jobs
// completed while jobs arrive, so a month-long job sets the makespan but
// not the throughput.
func TestThroughputOverTheArrivalWindow(t *testing.T) {
	for _, long := range []int64{100_000, 3_000_000} {
		jobs := []trace.Job{job("long", "q", 0, long, 1, 0)}
		for i := range 10 {
			jobs = append(jobs, job(string(rune('a'+i)), "q", int64(i*360), 300, 2, 0))
		}
		// The last arrives at 3,240 s; nine finish by then.
		r := runTwice(t, &trace.Trace{Jobs: jobs}, Policies()[3], tiny(2))
		if r.Window != 3240 || r.ArrivalWindow != 3240 || r.Span != long {
			t.Fatalf("window %d, arrival window %d, span %d", r.Window, r.ArrivalWindow, r.Span)
		}
		if want := 9 / (3240.0 / 3600); math.Abs(r.Throughput-want) > 1e-9 {
			t.Fatalf("long job %d s: %v jobs/h, want %v", long, r.Throughput, want)
		}
		if want := 9 * 300 * 2 / 3240.0; math.Abs(r.DoneGPUHoursPerHour-want) > 1e-9 {
			t.Fatalf("%v GPU-h/h, want %v", r.DoneGPUHoursPerHour, want)
		}
	}
}

// TestUtilizationWhenAllArriveAtOnce: with no arrival window, utilization
// is measured until the last backlog clears, not reported as zero.
func TestUtilizationWhenAllArriveAtOnce(t *testing.T) {
	// 8 GPUs; three 8-GPU jobs of 100 s: the last starts at 200.
	tr := &trace.Trace{Jobs: []trace.Job{job("a", "q", 0, 100, 8, 0), job("b", "q", 0, 100, 8, 0), job("c", "q", 0, 100, 8, 0)}}
	r := runTwice(t, tr, Policies()[0], tiny(1))
	if r.ArrivalWindow != 0 || r.ActiveWindow != 200 || r.Window != 200 || r.Utilization != 1 {
		t.Fatalf("windows %d/%d/%d, utilization %v; want the active window of 200 s, fully used", r.ArrivalWindow, r.ActiveWindow, r.Window, r.Utilization)
	}
	if r.Throughput != 2/(200.0/3600) {
		t.Fatalf("%v jobs/h", r.Throughput)
	}
}

// TestShapeBlockedIgnoresTheQueueLength: two nodes of 8 GPUs keep 4 and 2
// free while a 6-GPU pod waits for a node, under first-fit binding. The
// share of nodes on which no waiting pod fits says the cluster is not
// fragmented as soon as a queue of 1-GPU jobs waits beside it (they wait
// on their queue's quota); the shape-blocked figure says it is, with 6 of
// the 16 GPUs idle, queue or no queue.
func TestShapeBlockedIgnoresTheQueueLength(t *testing.T) {
	c, err := ParseConfig("two.json", []byte(`{"resources": ["gpu"], "flavors": [{"name": "f"}],
		"nodes": [{"name": "n0", "flavor": "f", "capacity": {"gpu": 8}}, {"name": "n1", "flavor": "f", "capacity": {"gpu": 8}}],
		"queues": [{"name": "q1", "quota": {"f": {"gpu": {"nominal": 16}}}}, {"name": "q2", "quota": {"f": {"gpu": {"nominal": 1}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	kueue, _ := PolicyByName("kueue")
	base := []trace.Job{
		job("a", "q1", 0, 10000, 4, 0), job("b", "q1", 0, 100, 4, 0), job("c", "q1", 0, 10000, 5, 0), job("e", "q2", 0, 10000, 1, 0),
		job("d", "q1", 200, 100, 6, 0),
	}
	queued := append([]trace.Job{}, base...)
	for i := range 20 {
		queued = append(queued, job(string(rune('A'+i)), "q2", 150, 10, 1, 0))
	}
	o := tiny(1)
	o.Config = c
	alone := runTwice(t, &trace.Trace{Jobs: base}, kueue, o)
	crowd := runTwice(t, &trace.Trace{Jobs: queued}, kueue, o)
	if alone.FragNodeShare < 0.5 || crowd.FragNodeShare > 0.1 {
		t.Fatalf("node share against the backlog %v alone, %v beside a queue: want the queue to hide the hole", alone.FragNodeShare, crowd.FragNodeShare)
	}
	for _, r := range []*Result{alone, crowd} {
		blocked := 0
		for _, s := range r.Series {
			if s.At > 200 && s.At < 10000 && (!s.Blocked || s.BlockedGPUs != 6) {
				t.Fatalf("%+v: want blocked with 6 free GPUs while d waits", s)
			}
			if s.Blocked {
				blocked++
			}
		}
		if blocked == 0 || r.FragBlocked < 0.5 || math.Abs(r.FragBlockedGPUs-r.FragBlocked*6/16) > 1e-9 {
			t.Fatalf("blocked %v of samples, idle %v of the GPUs", r.FragBlocked, r.FragBlockedGPUs)
		}
	}
}

// TestSamplingStopsOnceDrained: once the arrivals are over and nothing
// waits, nothing can wait again; the weeks a long job runs on alone are
// not sampled (the charts leave them out anyway).
func TestSamplingStopsOnceDrained(t *testing.T) {
	// One GPU; b waits for a until 100 s; c runs a million seconds.
	tr := &trace.Trace{Jobs: []trace.Job{job("a", "q", 0, 100, 8, 0), job("b", "q", 10, 100, 8, 0), job("c", "q", 300, 1_000_000, 1, 0)}}
	r := runTwice(t, tr, Policies()[0], tiny(1))
	if r.ActiveWindow != 300 || r.Span != 1_000_300 {
		t.Fatalf("active %d, span %d", r.ActiveWindow, r.Span)
	}
	// Every 60 s from 0: the sample at 300 s finds nothing waiting.
	if n := len(r.Series); n != 6 || r.Series[n-1].At != 300 || r.Series[n-1].Waiting != 0 {
		t.Fatalf("%d samples, the last %+v", n, r.Series[n-1])
	}
}
