package sim

import (
	"testing"

	"github.com/allot-sched/allot/bench/trace"
	"github.com/allot-sched/allot/health"
)

// A run's report carries its figures under the bridge's metric names: a
// preemption's eviction, the utilization, and the preemptor's wait by its
// class.
func TestResultMetrics(t *testing.T) {
	low := job("low", "borrower", 0, 2000, 16, 0)
	low.Preemptible = true
	tr := &trace.Trace{Jobs: []trace.Job{low, job("high", "owner", 500, 100, 8, 10)}}
	p, _ := PolicyByName("allot")
	o := tiny(2)
	o.TerminationDelay = 120
	r, err := Run(tr, p, o)
	if err != nil {
		t.Fatal(err)
	}
	wait := health.Series(health.QueueWait, health.LabelPriorityClass, "p10", health.LabelQuantile, "0.5")
	for name, want := range map[string]float64{
		health.Evictions:                  1,
		health.GPUUtilization:             r.Utilization,
		health.FragmentationNodeShare:     r.FragNodeShare,
		health.FragmentationStrandedShare: r.FragStrandedShare,
		wait:                              120,
	} {
		if got, ok := r.Metrics[name]; !ok || got != want {
			t.Errorf("metrics[%s] = %v (%v), want %v; all %v", name, got, ok, want, r.Metrics)
		}
	}
	if r.Utilization <= 0 {
		t.Errorf("utilization %v", r.Utilization)
	}
}
