package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-sched/allot"
)

// partialCase is a request with a minCount whose full count is not
// admitted on the fragmented benchmark cluster, so that partial admission
// searches its counts.
type partialCase struct {
	name string
	req  allot.Request
	// quota, when set, is the queue's GPU quota beyond what the cluster's
	// running workloads use: the quota-limited case.
	quota int64
}

// partialCases: placement-limited (no rack holds 17 whole nodes; the
// largest count one rack holds now is admitted), quota-limited (256 whole
// nodes preferring a block, 1,200 GPUs of quota left) and a wide search
// (1,024 one-GPU pods, down to one, 500 GPUs of quota left: ten counts
// tried).
func partialCases() []partialCase {
	elastic := func(r allot.Request, min int32) allot.Request {
		r.PodSets[0].MinCount = min
		return r
	}
	return []partialCase{
		{name: "17pod_x8gpu_req_rack/min=8", req: elastic(GangRequest("p", 17, 8, "rack", ""), 8)},
		{name: "256pod_x8gpu_pref_block/min=64", req: elastic(GangRequest("p", 256, 8, "", "block"), 64), quota: 1200},
		{name: "1024pod_x1gpu/min=1", req: elastic(GangRequest("p", 1024, 1, "", ""), 1), quota: 500},
	}
}

// partialSnapshot is the fragmented cluster of n nodes with the queue's
// GPU quota set to what its running workloads use plus quota (none: the
// whole cluster).
func partialSnapshot(b *testing.B, n int, quota int64) *allot.Snapshot {
	b.Helper()
	bl := Cluster(n, true)
	if quota > 0 {
		var used int64
		for _, w := range bl.Running {
			used += w.PodSets[0].PerPod["gpu"]
		}
		bl.Queues[0].Quota[0].Resources[0].Nominal = used + quota
	}
	s, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkDecidePartial times partial admission on the fragmented
// 10,240-node cluster (mode=partial) beside one decision at the count it
// admits (mode=admitted) and one at the full count without a minCount
// (mode=full, not admitted), and reports the first over each of the
// others, the three timed in turns (mode=ratio): the search decides about
// log2(count − minCount) counts, each about as costly as one decision.
func BenchmarkDecidePartial(b *testing.B) {
	const n = 10240
	for _, c := range partialCases() {
		s := partialSnapshot(b, n, c.quota)
		partial := allot.Decide(s, c.req)
		got, _ := partial.CountOf("workers")
		if partial.Verdict != allot.VerdictAdmit || got >= c.req.PodSets[0].Count {
			b.Fatalf("%s: %v %v: %s", c.name, partial.Verdict, partial.Reason, partial.Message)
		}
		admitted, full := c.req, c.req
		admitted.PodSets = []allot.PodSet{c.req.PodSets[0]}
		admitted.PodSets[0].Count, admitted.PodSets[0].MinCount = got, 0
		full.PodSets = []allot.PodSet{c.req.PodSets[0]}
		full.PodSets[0].MinCount = 0
		// The ratios, timed in turns so that a busy machine slows all three
		// alike.
		b.Run(fmt.Sprintf("nodes=%d/%s/mode=ratio", n, c.name), func(b *testing.B) {
			var d allot.Decision
			var took [3]time.Duration
			for b.Loop() {
				for k, r := range []allot.Request{c.req, admitted, full} {
					start := time.Now()
					allot.DecideInto(s, r, &d)
					took[k] += time.Since(start)
				}
			}
			b.ReportMetric(float64(took[0])/float64(took[1]), "partial/admitted")
			b.ReportMetric(float64(took[0])/float64(took[2]), "partial/full")
		})
		for _, m := range []struct {
			mode  string
			req   allot.Request
			admit bool
		}{{"partial", c.req, true}, {"admitted", admitted, true}, {"full", full, false}} {
			b.Run(fmt.Sprintf("nodes=%d/%s/mode=%s", n, c.name, m.mode), func(b *testing.B) {
				b.ReportAllocs()
				var d allot.Decision
				for b.Loop() {
					allot.DecideInto(s, m.req, &d)
				}
				if (d.Verdict == allot.VerdictAdmit) != m.admit {
					b.Fatalf("%v %v: %s", d.Verdict, d.Reason, d.Message)
				}
			})
		}
	}
}
