package bench

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
)

// pendingMix is n pending workloads spread over q queues of one cohort, of
// 1, 2, 4 or 8 GPUs, with priorities 0..9.
func pendingMix(bl *allot.Builder, n, q int) {
	var queues []allot.Queue
	for i := 0; i < q; i++ {
		queues = append(queues, allot.Queue{Name: fmt.Sprintf("q%03d", i), Cohort: "all", Quota: []allot.FlavorQuota{{Flavor: "h100",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 1 << 20}, {Name: "cpu", Nominal: 1 << 40}, {Name: "memory", Nominal: 1 << 55}}}}})
	}
	bl.Cohorts = []allot.Cohort{{Name: "all"}}
	bl.Queues = append(bl.Queues, queues...)
	for i := 0; i < n; i++ {
		gpus := int64(1) << (i % 4)
		bl.Pending = append(bl.Pending, allot.Workload{ID: fmt.Sprintf("p%06d", i), Queue: queues[i%q].Name,
			Priority: int32(i % 10), SubmittedAt: int64(i),
			PodSets: []allot.PodSet{{Name: "main", Count: 1, PerPod: allot.Resources{"gpu": gpus, "cpu": 4000 * gpus}}}})
	}
	bl.Now = int64(n)
}

// BenchmarkOrder times the admission order of 10,000 and 100,000 pending
// workloads across 100 queues: without fair sharing, with it in allot's
// default (progressive filling) and in Kueue-exact mode (Kueue's cycles).
func BenchmarkOrder(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, c := range loopCases {
			b.Run(fmt.Sprintf("pending=%d/queues=100/%s", n, c.name), func(b *testing.B) {
				bl := Cluster(1024, false)
				pendingMix(bl, n, 100)
				bl.FairSharing.Enabled, bl.Options.Semantics = c.fair, c.semantics
				s, err := bl.Build()
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				var order []string
				for b.Loop() {
					order = allot.Order(s)
				}
				if len(order) != n {
					b.Fatalf("%d workloads ordered of %d", len(order), n)
				}
			})
		}
	}
}

// loopCases are the loop's modes the loop benchmarks time: no fair sharing,
// fair sharing in allot's default and in Kueue-exact mode.
var loopCases = []struct {
	name      string
	fair      bool
	semantics string
}{
	{"fairSharing=false", false, ""},
	{"fairSharing=true", true, ""},
	{"fairSharing=true/semantics=kueue", true, allot.SemanticsKueue},
}

// BenchmarkSchedule times one drain of the scheduling loop that admits
// 1,000 workloads from 100 queues on the fragmented 10240-node cluster, in
// each of the loop's modes.
func BenchmarkSchedule(b *testing.B) {
	for _, c := range loopCases {
		bl := Cluster(10240, true)
		pendingMix(bl, 1000, 100)
		bl.FairSharing.Enabled, bl.Options.Semantics = c.fair, c.semantics
		s, err := bl.Build()
		if err != nil {
			b.Fatal(err)
		}
		b.Run("nodes=10240/pending=1000/queues=100/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			var admitted int
			for b.Loop() {
				b.StopTimer()
				st := allot.NewStore(s)
				b.StartTimer()
				allot.Schedule(st)
				admitted = len(st.Load().RunningIDs()) - len(s.RunningIDs())
			}
			if admitted != 1000 {
				b.Fatalf("%d admitted", admitted)
			}
		})
	}
}
