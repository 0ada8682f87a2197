package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-sched/allot"
)

var sizes = []int{1024, 4096, 10240, 12500}

func mustBuild(b testing.TB, n int, frag bool) *allot.Snapshot {
	b.Helper()
	s, err := Cluster(n, frag).Build()
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func BenchmarkDecideGang(b *testing.B) {
	for _, frag := range []bool{false, true} {
		for _, n := range sizes {
			s := mustBuild(b, n, frag)
			for _, c := range GangCases() {
				b.Run(fmt.Sprintf("frag=%t/nodes=%d/%s", frag, n, c.Name), func(b *testing.B) {
					b.ReportAllocs()
					var d allot.Decision
					for b.Loop() {
						d = allot.Decide(s, c.Req)
					}
					if (d.Verdict == allot.VerdictAdmit) != c.Admit {
						b.Fatalf("%s: %v %v: %s", c.Name, d.Verdict, d.Reason, d.Message)
					}
				})
			}
		}
	}
}

// BenchmarkDecideInto is BenchmarkDecideGang reusing one decision's memory.
func BenchmarkDecideInto(b *testing.B) {
	s := mustBuild(b, 10240, true)
	for _, c := range GangCases() {
		b.Run(fmt.Sprintf("frag=true/nodes=10240/%s", c.Name), func(b *testing.B) {
			b.ReportAllocs()
			var d allot.Decision
			for b.Loop() {
				allot.DecideInto(s, c.Req, &d)
			}
			if (d.Verdict == allot.VerdictAdmit) != c.Admit {
				b.Fatalf("%s: %v %v: %s", c.Name, d.Verdict, d.Reason, d.Message)
			}
		})
	}
}

// quotaOnly is a snapshot whose only flavor has no nodes: admission checks
// quota and skips placement.
func quotaOnly(b testing.TB) (*allot.Snapshot, allot.Request) {
	bl := &allot.Builder{
		Resources: []string{"gpu", "cpu"},
		Flavors:   []allot.Flavor{{Name: "default"}},
		Queues: []allot.Queue{{Name: "team-a", Quota: []allot.FlavorQuota{{Flavor: "default",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 64}, {Name: "cpu", Nominal: 1_000_000}}}}}},
		Running: []allot.Workload{{ID: "a1", Queue: "team-a", PodSets: []allot.PodSet{{Name: "main", Count: 1, Flavor: "default",
			PerPod: allot.Resources{"gpu": 3, "cpu": 12_000}}}}},
	}
	s, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	return s, allot.Request{ID: "r", Queue: "team-a", PodSets: []allot.PodSet{{Name: "main", Count: 2, PerPod: allot.Resources{"gpu": 4, "cpu": 16_000}}}}
}

func BenchmarkDecideQuotaOnly(b *testing.B) {
	s, r := quotaOnly(b)
	b.Run("reuse=true", func(b *testing.B) {
		b.ReportAllocs()
		var d allot.Decision
		for b.Loop() {
			allot.DecideInto(s, r, &d)
		}
		if d.Reason != allot.Fits {
			b.Fatalf("%v: %s", d.Reason, d.Message)
		}
	})
	b.Run("reuse=false", func(b *testing.B) {
		b.ReportAllocs()
		var d allot.Decision
		for b.Loop() {
			d = allot.Decide(s, r)
		}
		if d.Reason != allot.Fits {
			b.Fatalf("%v: %s", d.Reason, d.Message)
		}
	})
}

// BenchmarkStoreCommit times publishing the next version after one
// admission (an 8-GPU pod preferring a rack, decided once on the fragmented
// cluster, so every commit after the first re-validates it on a newer
// version) and then after its finish, which brings the store back to the
// same state. ns/op covers both publishes; ns/commit is the commit alone.
func BenchmarkStoreCommit(b *testing.B) {
	for _, n := range []int{1024, 10240} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			st := allot.NewStore(mustBuild(b, n, true))
			d := allot.Decide(st.Load(), GangRequest("w", 1, 8, "", "rack"))
			if d.Verdict != allot.VerdictAdmit {
				b.Fatalf("%v: %s", d.Reason, d.Message)
			}
			b.ReportAllocs()
			var commit time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := st.Commit(d); err != nil {
					b.Fatal(err)
				}
				commit += time.Since(t0)
				if _, err := st.Apply(allot.Finish{ID: "w"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(commit.Nanoseconds())/float64(b.N), "ns/commit")
		})
	}
}
