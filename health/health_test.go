package health_test

import (
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/health"
)

func TestPercentile(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		q    float64
		want float64
	}{
		{nil, 0.5, 0},
		{[]float64{7}, 0.99, 7},
		{[]float64{1, 2, 3, 4}, 0.5, 2},
		{[]float64{1, 2, 3, 4}, 0.9, 4},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9, 9},
		{[]float64{1, 2, 3}, 0, 1},
	} {
		if got := health.Percentile(c.in, c.q); got != c.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", c.in, c.q, got, c.want)
		}
	}
}

// world is two 8-GPU nodes in two flavors, one 4-GPU workload running on
// borrowed quota, and three pending workloads of two classes.
func world(t *testing.T) *allot.Snapshot {
	t.Helper()
	node := func(name, flavor string) allot.Node {
		return allot.Node{Name: name, Flavor: flavor, Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8}}
	}
	quota := func(f string, n int64) allot.FlavorQuota {
		return allot.FlavorQuota{Flavor: f, Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: n}}}
	}
	pending := func(id, q string, prio int32, class string, at int64) allot.Workload {
		return allot.Workload{ID: id, Queue: q, Priority: prio, PriorityClass: class, SubmittedAt: at,
			PodSets: []allot.PodSet{{Name: "main", Count: 1, PerPod: allot.Resources{"gpu": 16}}}}
	}
	b := allot.Builder{
		Now:       1000,
		Resources: []string{"gpu"},
		Levels:    []string{"rack"},
		Flavors:   []allot.Flavor{{Name: "a100"}, {Name: "h100"}},
		Nodes:     []allot.Node{node("n0", "a100"), node("n1", "h100")},
		Cohorts:   []allot.Cohort{{Name: "all"}},
		Queues: []allot.Queue{
			{Name: "team-a", Cohort: "all", Quota: []allot.FlavorQuota{quota("a100", 2), quota("h100", 0)}},
			{Name: "team-b", Cohort: "all", Quota: []allot.FlavorQuota{quota("a100", 6), quota("h100", 8)}},
		},
		Running: []allot.Workload{{ID: "r1", Queue: "team-a", AdmittedAt: 900, Borrowing: true,
			PodSets: []allot.PodSet{{Name: "main", Count: 1, PerPod: allot.Resources{"gpu": 4}, Flavor: "a100", Nodes: []string{"n0"}}},
		}},
		Pending: []allot.Workload{
			pending("p1", "team-a", 10, "", 400),
			pending("p2", "team-b", 100, "high", 900),
			pending("p3", "team-b", 100, "high", 100),
		},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMeasure(t *testing.T) {
	s := world(t)
	f := health.Measure(s)
	if f.GPUs != 16 || f.FreeGPUs != s.FreeGPUs() || f.FreeGPUs != 12 {
		t.Fatalf("GPUs %d free %d, want 16 and 12 (snapshot %d)", f.GPUs, f.FreeGPUs, s.FreeGPUs())
	}
	if f.GPUUtilization != 0.25 {
		t.Errorf("utilization %v, want 0.25", f.GPUUtilization)
	}
	want := []health.ClassWaits{
		{Class: "high", Priority: 100, Jobs: 2, Median: 100, P90: 900, P99: 900},
		{Class: "10", Priority: 10, Jobs: 1, Median: 600, P90: 600, P99: 600},
	}
	if len(f.Waits) != len(want) {
		t.Fatalf("waits %+v, want %+v", f.Waits, want)
	}
	for i := range want {
		if f.Waits[i] != want[i] {
			t.Errorf("waits[%d] = %+v, want %+v", i, f.Waits[i], want[i])
		}
	}
	wantQ := []health.QueueFigures{{Queue: "team-a", Admitted: 1, Pending: 1, Borrowing: 1}, {Queue: "team-b", Pending: 2}}
	if len(f.Queues) != 2 || f.Queues[0] != wantQ[0] || f.Queues[1] != wantQ[1] {
		t.Errorf("queues %+v, want %+v", f.Queues, wantQ)
	}
	// The pending pods want 16 GPUs; no node holds one: every node with
	// free GPUs is stranded, and every free GPU.
	if f.Fragmentation.NodeShare != 1 || f.Fragmentation.StrandedShare != 1 {
		t.Errorf("fragmentation %+v, want both shares 1", f.Fragmentation)
	}
	if f.Flavors[0] != (health.Flavor{Name: "a100", GPUs: 8, FreeGPUs: 4}) || f.Flavors[0].FreeShare() != 0.5 {
		t.Errorf("flavor a100 %+v, want 8 GPUs with 4 free", f.Flavors[0])
	}
}

func TestMeasureEvictions(t *testing.T) {
	st := allot.NewStore(world(t))
	if _, err := st.Apply(allot.Evict{ID: "r1"}); err != nil {
		t.Fatal(err)
	}
	f := health.Measure(st.Load())
	if f.Evictions != 1 || f.Preemptions != 0 || f.Queues[0].Evictions != 1 || f.Queues[0].Admitted != 0 {
		t.Errorf("after an eviction: evictions %d, preemptions %d, team-a %+v", f.Evictions, f.Preemptions, f.Queues[0])
	}
}

func TestSeries(t *testing.T) {
	for _, c := range []struct {
		name   string
		labels []string
		want   string
	}{
		{health.GPUUtilization, nil, "allot_gpu_utilization"},
		{health.QueueWait, []string{health.LabelPriorityClass, "high", health.LabelQuantile, "0.5"}, `allot_queue_wait_seconds{priority_class="high",quantile="0.5"}`},
		{health.QueuePending, []string{health.LabelQueue, `a"b`}, `allot_queue_pending_workloads{queue="a\"b"}`},
	} {
		if got := health.Series(c.name, c.labels...); got != c.want {
			t.Errorf("Series(%s, %q) = %s, want %s", c.name, c.labels, got, c.want)
		}
	}
}
