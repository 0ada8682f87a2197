package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/health"
)

// A Source gives the snapshot the health numbers are measured on; a
// guard.Source is one.
type Source interface {
	Ready() bool
	Snapshot() *allot.Snapshot
}

// Health is a prometheus.Collector that measures the source's snapshot at
// every scrape (health.Measure); it reports nothing while the source is
// not ready.
type Health struct {
	src Source
}

// NewHealth is the health collector over src.
func NewHealth(src Source) *Health { return &Health{src: src} }

var (
	descUtilization = prometheus.NewDesc(health.GPUUtilization, "Share of the cluster's GPUs in use (0..1).", nil, nil)
	descGPUs        = prometheus.NewDesc(health.GPUs, "GPUs of the cluster's nodes, by flavor.", []string{health.LabelFlavor}, nil)
	descFreeGPUs    = prometheus.NewDesc(health.FreeGPUs, "Free GPUs of the cluster's nodes, by flavor.", []string{health.LabelFlavor}, nil)
	descWait        = prometheus.NewDesc(health.QueueWait, "Waits so far of the pending workloads, in seconds on the snapshot's clock, by priority class and quantile.",
		[]string{health.LabelPriorityClass, health.LabelQuantile}, nil)
	descEvictions   = prometheus.NewDesc(health.Evictions, "Workloads the store has evicted.", nil, nil)
	descPreemptions = prometheus.NewDesc(health.Preemptions, "Evictions the snapshot holds that made room for a preemptor.", nil, nil)
	descNodeShare   = prometheus.NewDesc(health.FragmentationNodeShare, "Share of usable nodes with free GPUs on which no pending pod fits.", nil, nil)
	descStranded    = prometheus.NewDesc(health.FragmentationStrandedShare, "Share of free GPUs the pending pods cannot use (FGD's expected stranded GPUs).", nil, nil)
	descAdmitted    = prometheus.NewDesc(health.QueueAdmitted, "Running (admitted) workloads, by queue.", []string{health.LabelQueue}, nil)
	descPending     = prometheus.NewDesc(health.QueuePending, "Pending workloads, by queue.", []string{health.LabelQueue}, nil)
	descBorrowing   = prometheus.NewDesc(health.QueueBorrowing, "Running workloads admitted on borrowed quota, by queue.", []string{health.LabelQueue}, nil)
	descQueueEvict  = prometheus.NewDesc(health.QueueEvictions, "Evictions among the last ones the snapshot holds, by queue.", []string{health.LabelQueue}, nil)
)

// Describe sends the health metrics' descriptors.
func (h *Health) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUtilization, descGPUs, descFreeGPUs, descWait, descEvictions, descPreemptions,
		descNodeShare, descStranded, descAdmitted, descPending, descBorrowing, descQueueEvict} {
		ch <- d
	}
}

// Collect measures the snapshot now and sends its figures.
func (h *Health) Collect(ch chan<- prometheus.Metric) {
	if !h.src.Ready() {
		return
	}
	f := health.Measure(h.src.Snapshot())
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descUtilization, f.GPUUtilization)
	for _, fl := range f.Flavors {
		gauge(descGPUs, float64(fl.GPUs), fl.Name)
		gauge(descFreeGPUs, float64(fl.FreeGPUs), fl.Name)
	}
	for _, w := range f.Waits {
		for _, q := range health.Quantiles {
			gauge(descWait, w.Quantile(q), w.Class, strconv.FormatFloat(q, 'g', -1, 64))
		}
	}
	ch <- prometheus.MustNewConstMetric(descEvictions, prometheus.CounterValue, float64(f.Evictions))
	gauge(descPreemptions, float64(f.Preemptions))
	gauge(descNodeShare, f.Fragmentation.NodeShare)
	gauge(descStranded, f.Fragmentation.StrandedShare)
	for _, q := range f.Queues {
		gauge(descAdmitted, float64(q.Admitted), q.Queue)
		gauge(descPending, float64(q.Pending), q.Queue)
		gauge(descBorrowing, float64(q.Borrowing), q.Queue)
		gauge(descQueueEvict, float64(q.Evictions), q.Queue)
	}
}
