package bench

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
)

// BenchmarkBuild times building the fragmented benchmark cluster's
// snapshot from its description.
func BenchmarkBuild(b *testing.B) {
	for _, n := range scaleSizes {
		bl := Cluster(n, true)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var s *allot.Snapshot
			for b.Loop() {
				var err error
				if s, err = bl.Build(); err != nil {
					b.Fatal(err)
				}
			}
			if s.RunningCount("train") != len(bl.Running) {
				b.Fatalf("%d running, want %d", s.RunningCount("train"), len(bl.Running))
			}
		})
	}
}

// TestBuildAllocations pins what a build allocates: a few hundred objects
// for the snapshot's parts, and for the nodes and admitted workloads a
// block or a level at a time, not an object each (measured: 205 at 1,024
// nodes, 296 at 10,240, 808 at 102,400, where one an object made
// 466,766).
func TestBuildAllocations(t *testing.T) {
	for _, n := range []int{1024, 10240} {
		bl := Cluster(n, true)
		budget := 250 + float64(n)/64
		got := testing.AllocsPerRun(3, func() {
			if _, err := bl.Build(); err != nil {
				t.Fatal(err)
			}
		})
		if got > budget {
			t.Errorf("nodes=%d: Build allocates %.0f objects, budget %.0f", n, got, budget)
		}
	}
}

// cohortChain describes depth cohorts each the parent of the next, the
// deepest holding the one queue, with quota at every level.
func cohortChain(depth int) *allot.Builder {
	bl := &allot.Builder{Resources: []string{"gpu"}, Flavors: []allot.Flavor{{Name: "f"}}}
	quota := []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}
	for i := range depth {
		c := allot.Cohort{Name: fmt.Sprintf("c%d", i), Quota: quota}
		if i > 0 {
			c.Parent = fmt.Sprintf("c%d", i-1)
		}
		bl.Cohorts = append(bl.Cohorts, c)
	}
	bl.Queues = []allot.Queue{{Name: "q", Cohort: fmt.Sprintf("c%d", depth-1), Quota: quota}}
	return bl
}

// BenchmarkBuildCohortChain times building a snapshot whose one queue sits
// under a chain of cohorts depth deep: the cost should grow with depth, not
// with its square.
func BenchmarkBuildCohortChain(b *testing.B) {
	for _, depth := range []int{100, 1000, 10000} {
		bl := cohortChain(depth)
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bl.Build(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
