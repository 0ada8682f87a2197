package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/health"
	"github.com/allot-sched/allot/kube/guard"
	"github.com/allot-sched/allot/kube/metrics"
)

func TestRecorder(t *testing.T) {
	r := metrics.NewRecorder()
	r.Observe(guard.Outcome{Kind: "Job", Verdict: "Reject", Reason: "NeverFits", Denied: true})
	r.Observe(guard.Outcome{Kind: "Job", Verdict: "Reject", Reason: "NeverFits", Denied: true})
	r.Observe(guard.Outcome{Kind: "Pod", Verdict: "Admit", Reason: "Fits", Cached: true})
	r.Observe(guard.Outcome{Kind: "Job", Verdict: "Reject", Reason: "NeverFits", DryRun: true})
	want := `
# HELP allot_decisions_total Admission webhook answers, by object kind, verdict, reason and whether the guard denied.
# TYPE allot_decisions_total counter
allot_decisions_total{denied="false",kind="Job",reason="NeverFits",verdict="Reject"} 1
allot_decisions_total{denied="false",kind="Pod",reason="Fits",verdict="Admit"} 1
allot_decisions_total{denied="true",kind="Job",reason="NeverFits",verdict="Reject"} 2
# HELP allot_webhook_dry_run_denials_total Answers a dry-run guard allowed and would have denied, by object kind and reason.
# TYPE allot_webhook_dry_run_denials_total counter
allot_webhook_dry_run_denials_total{kind="Job",reason="NeverFits"} 1
`
	if err := testutil.CollectAndCompare(r, strings.NewReader(want), health.Decisions, health.DryRunDenials); err != nil {
		t.Error(err)
	}
	h := r.Instrument("validate", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	for range 3 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/validate", nil))
	}
	if n := testutil.CollectAndCount(r, health.WebhookDuration); n != 1 {
		t.Errorf("%d latency series, want 1", n)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(r); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Error(err)
	}
}

// ready is a source over one snapshot.
type ready struct {
	snap *allot.Snapshot
	ok   bool
}

func (r ready) Ready() bool               { return r.ok }
func (r ready) Snapshot() *allot.Snapshot { return r.snap }

// A node of 8 GPUs with 6 in use by team-a on borrowed quota, a pending
// 4-GPU workload of class high that waited 300 s.
func snapshot(t *testing.T) *allot.Snapshot {
	t.Helper()
	quota := func(n int64) []allot.FlavorQuota {
		return []allot.FlavorQuota{{Flavor: "a100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: n}}}}
	}
	b := allot.Builder{
		Now:       1000,
		Resources: []string{"gpu"},
		Levels:    []string{"rack"},
		Flavors:   []allot.Flavor{{Name: "a100"}},
		Nodes:     []allot.Node{{Name: "n0", Flavor: "a100", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8}}},
		Cohorts:   []allot.Cohort{{Name: "all"}},
		Queues:    []allot.Queue{{Name: "team-a", Cohort: "all", Quota: quota(4)}, {Name: "team-b", Cohort: "all", Quota: quota(4)}},
		Running: []allot.Workload{{ID: "r", Queue: "team-a", AdmittedAt: 10, Borrowing: true,
			PodSets: []allot.PodSet{{Name: "main", Count: 1, PerPod: allot.Resources{"gpu": 6}, Flavor: "a100", Nodes: []string{"n0"}}}}},
		Pending: []allot.Workload{{ID: "p", Queue: "team-b", Priority: 100, PriorityClass: "high", SubmittedAt: 700,
			PodSets: []allot.PodSet{{Name: "main", Count: 1, PerPod: allot.Resources{"gpu": 4}}}}},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHealth(t *testing.T) {
	h := metrics.NewHealth(ready{snapshot(t), true})
	// The pending pod wants 4 GPUs, the node has 2 free: the node and its
	// free GPUs are stranded.
	want := `
# HELP allot_gpu_utilization Share of the cluster's GPUs in use (0..1).
# TYPE allot_gpu_utilization gauge
allot_gpu_utilization 0.75
# HELP allot_free_gpus Free GPUs of the cluster's nodes, by flavor.
# TYPE allot_free_gpus gauge
allot_free_gpus{flavor="a100"} 2
# HELP allot_queue_wait_seconds Waits so far of the pending workloads, in seconds on the snapshot's clock, by priority class and quantile.
# TYPE allot_queue_wait_seconds gauge
allot_queue_wait_seconds{priority_class="high",quantile="0.5"} 300
allot_queue_wait_seconds{priority_class="high",quantile="0.9"} 300
allot_queue_wait_seconds{priority_class="high",quantile="0.99"} 300
# HELP allot_fragmentation_node_share Share of usable nodes with free GPUs on which no pending pod fits.
# TYPE allot_fragmentation_node_share gauge
allot_fragmentation_node_share 1
# HELP allot_fragmentation_stranded_share Share of free GPUs the pending pods cannot use (FGD's expected stranded GPUs).
# TYPE allot_fragmentation_stranded_share gauge
allot_fragmentation_stranded_share 1
# HELP allot_queue_borrowing_workloads Running workloads admitted on borrowed quota, by queue.
# TYPE allot_queue_borrowing_workloads gauge
allot_queue_borrowing_workloads{queue="team-a"} 1
allot_queue_borrowing_workloads{queue="team-b"} 0
# HELP allot_queue_pending_workloads Pending workloads, by queue.
# TYPE allot_queue_pending_workloads gauge
allot_queue_pending_workloads{queue="team-a"} 0
allot_queue_pending_workloads{queue="team-b"} 1
# HELP allot_evictions_total Workloads the store has evicted.
# TYPE allot_evictions_total counter
allot_evictions_total 0
`
	if err := testutil.CollectAndCompare(h, strings.NewReader(want), health.GPUUtilization, health.FreeGPUs, health.QueueWait,
		health.FragmentationNodeShare, health.FragmentationStrandedShare, health.QueueBorrowing, health.QueuePending, health.Evictions); err != nil {
		t.Error(err)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(h); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(metrics.NewHealth(ready{snapshot(t), false})); n != 0 {
		t.Errorf("a source not ready: %d metrics, want none", n)
	}
}
