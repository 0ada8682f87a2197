package metrics

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/allot-sched/allot/health"
	"github.com/allot-sched/allot/kube/guard"
)

// Recorder counts the guard's answers and times its handlers. It is a
// prometheus.Collector; register it once.
type Recorder struct {
	decisions *prometheus.CounterVec
	dryRun    *prometheus.CounterVec
	latency   *prometheus.HistogramVec
}

// NewRecorder makes the webhook's counters and histogram.
func NewRecorder() *Recorder {
	return &Recorder{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: health.Decisions,
			Help: "Admission webhook answers, by object kind, verdict, reason and whether the guard denied."},
			[]string{health.LabelKind, health.LabelVerdict, health.LabelReason, health.LabelDenied}),
		dryRun: prometheus.NewCounterVec(prometheus.CounterOpts{Name: health.DryRunDenials,
			Help: "Answers a dry-run guard allowed and would have denied, by object kind and reason."},
			[]string{health.LabelKind, health.LabelReason}),
		// Buckets from 100 µs: the handler's budget is a millisecond.
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: health.WebhookDuration,
			Help:    "Latency of the webhook server's handlers, in seconds.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 1}},
			[]string{health.LabelHandler}),
	}
}

// Observe counts one answer.
func (r *Recorder) Observe(o guard.Outcome) {
	r.decisions.WithLabelValues(o.Kind, o.Verdict, o.Reason, strconv.FormatBool(o.Denied)).Inc()
	if o.DryRun {
		r.dryRun.WithLabelValues(o.Kind, o.Reason).Inc()
	}
}

// Instrument times h under the handler label name.
func (r *Recorder) Instrument(name string, h http.Handler) http.Handler {
	return promhttp.InstrumentHandlerDuration(r.latency.MustCurryWith(prometheus.Labels{health.LabelHandler: name}), h)
}

// Describe sends the descriptors of the recorder's metrics.
func (r *Recorder) Describe(ch chan<- *prometheus.Desc) {
	r.decisions.Describe(ch)
	r.dryRun.Describe(ch)
	r.latency.Describe(ch)
}

// Collect sends the recorder's metrics.
func (r *Recorder) Collect(ch chan<- prometheus.Metric) {
	r.decisions.Collect(ch)
	r.dryRun.Collect(ch)
	r.latency.Collect(ch)
}
