package health

import (
	"strconv"
	"strings"
)

// The metric names, Prometheus-style: one owner for the bridge's
// collectors and the simulator's report.
const (
	// Decisions counts the admission webhook's answers, by LabelKind,
	// LabelVerdict, LabelReason and LabelDenied.
	Decisions = "allot_decisions_total"
	// WebhookDuration is the webhook server's latency histogram, in
	// seconds, by LabelHandler (validate, simulate).
	WebhookDuration = "allot_webhook_duration_seconds"
	// DryRunDenials counts what a dry-run guard would have denied, by
	// LabelKind and LabelReason.
	DryRunDenials = "allot_webhook_dry_run_denials_total"

	// GPUUtilization is the share of the cluster's GPUs in use (0..1).
	GPUUtilization = "allot_gpu_utilization"
	// GPUs and FreeGPUs count the cluster's GPUs by LabelFlavor.
	GPUs     = "allot_gpus"
	FreeGPUs = "allot_free_gpus"
	// QueueWait is the wait of the pending workloads so far, in seconds,
	// by LabelPriorityClass and LabelQuantile (0.5, 0.9, 0.99: the
	// simulator's median, p90 and p99).
	QueueWait = "allot_queue_wait_seconds"
	// Evictions counts the workloads the store evicted; Preemptions
	// counts those, among the evictions the snapshot holds, made to make
	// room for another (the preemption rate is rate() of Evictions).
	Evictions   = "allot_evictions_total"
	Preemptions = "allot_preemptions_total"
	// FragmentationNodeShare is the share of usable nodes with free GPUs
	// on which no pending pod fits; FragmentationStrandedShare FGD's
	// share of free GPUs the pending mix cannot use.
	FragmentationNodeShare     = "allot_fragmentation_node_share"
	FragmentationStrandedShare = "allot_fragmentation_stranded_share"
	// The per-queue figures, by LabelQueue: running (admitted) and
	// pending workloads, running workloads admitted on borrowed quota,
	// and the evictions among the last ones the snapshot holds (a
	// window: StoreOptions' AuditCapacity).
	QueueAdmitted  = "allot_queue_admitted_workloads"
	QueuePending   = "allot_queue_pending_workloads"
	QueueBorrowing = "allot_queue_borrowing_workloads"
	QueueEvictions = "allot_queue_recent_evictions"
)

// The label names.
const (
	LabelVerdict       = "verdict"
	LabelReason        = "reason"
	LabelDenied        = "denied"
	LabelKind          = "kind"
	LabelHandler       = "handler"
	LabelFlavor        = "flavor"
	LabelPriorityClass = "priority_class"
	LabelQuantile      = "quantile"
	LabelQueue         = "queue"
)

// Quantiles are the quantiles QueueWait reports, the simulator's.
var Quantiles = [...]float64{0.5, 0.9, 0.99}

// Series names one series as Prometheus' text format writes it (label
// values quoted by strconv.Quote, which agrees with it on printable
// ASCII): the metric's name and its label pairs in the order given,
// allot_queue_wait_seconds{priority_class="high",quantile="0.5"}.
func Series(name string, labelPairs ...string) string {
	if len(labelPairs) < 2 {
		return name
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i := 0; i+1 < len(labelPairs); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(labelPairs[i])
		b.WriteByte('=')
		b.WriteString(strconv.Quote(labelPairs[i+1]))
	}
	b.WriteByte('}')
	return b.String()
}
