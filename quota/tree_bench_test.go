package quota

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

// benchTree is a 3-level tree: a root cohort, cohorts under it, and queues
// under those, with lending and borrowing limits on every other node so the
// limit branches are taken.
func benchTree(b *testing.B, cohorts, queuesPer, flavors, resources int) *ResourceTree {
	frs := flavors * resources
	quotas := func(nominal int64, limits bool) []ResourceQuota {
		qs := make([]ResourceQuota, frs)
		for i := range qs {
			qs[i] = ResourceQuota{Nominal: nominal}
			if limits {
				qs[i].BorrowingLimit, qs[i].LendingLimit = lim(nominal), lim(nominal/2)
			}
		}
		return qs
	}
	nodes := []NodeSpec{{Name: "root", Parent: -1, Quotas: quotas(100, false)}}
	for c := range cohorts {
		cohort := int32(len(nodes))
		nodes = append(nodes, NodeSpec{Name: fmt.Sprintf("c%d", c), Parent: 0, Quotas: quotas(10, c%2 == 1)})
		for q := range queuesPer {
			nodes = append(nodes, NodeSpec{Name: fmt.Sprintf("c%d-q%d", c, q), Parent: cohort, Queue: true, Quotas: quotas(64, q%2 == 1)})
		}
	}
	return mustTree(b, flavors, resources, nodes)
}

func BenchmarkResourceTree(b *testing.B) {
	const cohorts, queuesPer, flavors, resources = 8, 8, 4, 4
	name := fmt.Sprintf("levels=3/queues=%d/frs=%d", cohorts*queuesPer, flavors*resources)
	// The last queue of cohort 6: the queue has limits, its cohort none, so
	// what goes beyond the queue's localQuota spills through to the root.
	q := int32(1 + 6*(queuesPer+1) + queuesPer)
	b.Run("op=Available/"+name, func(b *testing.B) {
		tr := benchTree(b, cohorts, queuesPer, flavors, resources)
		u := tr.NewUsage()
		for n := range int32(tr.Len()) {
			if tr.IsQueue(n) {
				tr.AddVec(u, n, 1, res.Fill(40), 1)
			}
		}
		fr := tr.FR(1, 2)
		want := tr.Available(u, q, fr)
		if want <= 0 {
			b.Fatalf("Available %d; the benchmark should measure a positive answer", want)
		}
		b.ReportAllocs()
		var got int64
		for b.Loop() {
			got = tr.Available(u, q, fr)
		}
		if got != want {
			b.Fatalf("Available %d, want %d", got, want)
		}
	})
	b.Run("op=AddVec/"+name, func(b *testing.B) {
		tr := benchTree(b, cohorts, queuesPer, flavors, resources)
		u := tr.NewUsage()
		// 70 of each resource is 38 beyond the queue's localQuota of 32; it
		// spills through the cohort to the root, so 3 rows are rewritten.
		// Add, then remove, each loop.
		vec := res.Fill(70)
		tr.AddVec(u, q, 2, vec, 1)
		if got := u.At(0, tr.FR(2, 0)); got != 38 {
			b.Fatalf("root usage %d, want 38 spilled", got)
		}
		tr.AddVec(u, q, 2, vec, -1)
		b.ReportAllocs()
		for b.Loop() {
			tr.AddVec(u, q, 2, vec, 1)
			tr.AddVec(u, q, 2, vec, -1)
		}
		for n, row := range u {
			for fr, v := range row {
				if v != 0 {
					b.Fatalf("node %d fr %d: usage %d after add and remove", n, fr, v)
				}
			}
		}
	})
}
