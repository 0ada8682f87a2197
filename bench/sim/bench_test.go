package sim

import (
	"testing"

	"github.com/allot-sched/allot/bench/trace"
)

// BenchmarkRun replays 1,000 synthetic jobs on 256 GPUs under each policy;
// the custom metric is decisions per simulated job.
func BenchmarkRun(b *testing.B) {
	cfg := trace.DefaultSynthetic()
	cfg.Jobs, cfg.ClusterGPUs = 1000, 256
	tr := trace.Synthetic(cfg)
	for _, p := range Policies() {
		b.Run(p.Name, func(b *testing.B) {
			b.ReportAllocs()
			var r *Result
			for b.Loop() {
				var err error
				if r, err = Run(tr, p, Options{Shape: Shape{Nodes: 32, GPUsPerNode: 8, NodesPerRack: 8, RacksPerBlock: 4}}); err != nil {
					b.Fatal(err)
				}
			}
			if r.Completed+r.Rejected+r.Unfinished != len(tr.Jobs) {
				b.Fatalf("%d jobs accounted of %d", r.Completed+r.Rejected+r.Unfinished, len(tr.Jobs))
			}
			b.ReportMetric(float64(r.Decisions)/float64(len(tr.Jobs)), "decisions/job")
		})
	}
}
