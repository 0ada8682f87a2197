package bench

import (
	"fmt"
	"testing"

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

// scaleSizes are the cluster sizes at which BenchmarkDecideInto measures
// how a decision's cost grows: about a thousand, ten thousand and a hundred
// thousand nodes of the fragmented benchmark cluster.
var scaleSizes = []int{1024, 10240, 102400}

// BenchmarkDecideInto is BenchmarkDecideGang reusing one decision's memory,
// at every size of scaleSizes.
func BenchmarkDecideInto(b *testing.B) {
	for _, n := range scaleSizes {
		s := mustBuild(b, n, true)
		for _, c := range GangCases() {
			b.Run(fmt.Sprintf("frag=true/nodes=%d/%s", n, c.Name), func(b *testing.B) {
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
}

// unconstrainedCases are gangs without a topology request: pods×GPUs each.
// On the benchmark cluster a node holds 8/GPUs pods at most, so 1x8, 4x2 and
// 5x1 fit one node and 16x1 and 64x8 must spread over several.
var unconstrainedCases = []struct{ pods, gpus int }{{1, 8}, {4, 2}, {5, 1}, {16, 1}, {64, 8}}

// BenchmarkDecideUnconstrained decides gangs that ask for no topology level:
// the least-free node that holds the whole gang, or a spread from the
// least-free node when none does.
func BenchmarkDecideUnconstrained(b *testing.B) {
	for _, frag := range []bool{false, true} {
		for _, n := range scaleSizes {
			s := mustBuild(b, n, frag)
			for _, c := range unconstrainedCases {
				req := GangRequest("g", c.pods, c.gpus, "", "")
				b.Run(fmt.Sprintf("frag=%t/nodes=%d/gang=%dx%d", frag, n, c.pods, c.gpus), func(b *testing.B) {
					b.ReportAllocs()
					var d allot.Decision
					for b.Loop() {
						allot.DecideInto(s, req, &d)
					}
					if d.Verdict != allot.VerdictAdmit {
						b.Fatalf("%v %v: %s", d.Verdict, d.Reason, d.Message)
					}
				})
			}
		}
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

// storeBatch is how many admissions BenchmarkStoreCommit and
// BenchmarkStoreFinish publish on one store before starting over from the
// same snapshot: a fork, timed by BenchmarkStoreCommit; BenchmarkStoreFinish
// re-commits the batch outside the timer.
const storeBatch = 256

// planCommits decides storeBatch one-pod, 8-GPU admissions preferring a
// rack, each on the version the ones before it left, so that a store started
// at base commits them in order as a scheduling loop would.
func planCommits(b *testing.B, base *allot.Snapshot) []allot.Decision {
	st := allot.NewStore(base)
	plan := make([]allot.Decision, storeBatch)
	for i := range plan {
		plan[i] = allot.Decide(st.Load(), GangRequest(fmt.Sprintf("w%d", i), 1, 8, "", "rack"))
		if plan[i].Verdict != allot.VerdictAdmit {
			b.Fatalf("%v: %s", plan[i].Reason, plan[i].Message)
		}
		if _, err := st.Commit(plan[i]); err != nil {
			b.Fatal(err)
		}
	}
	return plan
}

// BenchmarkStoreCommit times publishing the next version after one
// admission on the fragmented cluster: the decision's re-check, the booking
// and the copy-on-write publish. Every storeBatch commits the store starts
// over from the same snapshot. Starting over is one fork, as cheap as a
// publish, so it stays inside the timer: stopping the timer would cost
// two stop-the-world memory readings per batch that disturb the commits
// around them more than the fork does.
func BenchmarkStoreCommit(b *testing.B) {
	for _, n := range scaleSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			base := mustBuild(b, n, true)
			plan := planCommits(b, base)
			st, i := allot.NewStore(base), 0
			b.ReportAllocs()
			for b.Loop() {
				if i == len(plan) {
					st, i = allot.NewStore(base), 0
				}
				if _, err := st.Commit(plan[i]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkStoreFinish times publishing the next version after a workload
// finishes: the commits of BenchmarkStoreCommit undone one by one.
func BenchmarkStoreFinish(b *testing.B) {
	for _, n := range scaleSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			base := mustBuild(b, n, true)
			plan := planCommits(b, base)
			var st *allot.Store
			i := len(plan)
			b.ReportAllocs()
			for b.Loop() {
				if i == len(plan) {
					b.StopTimer()
					st, i = allot.NewStore(base), 0
					for _, d := range plan {
						if _, err := st.Commit(d); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
				}
				if _, err := st.Apply(allot.Finish{ID: plan[i].Workload}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
