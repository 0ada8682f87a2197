package bench

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
)

// fullQueue is a quota-only queue filled to its nominal quota by admitted
// 8-GPU workloads of priorities 0..9.
func fullQueue(b *testing.B, admitted int) *allot.Snapshot {
	bl := &allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "default"}},
		Queues: []allot.Queue{{Name: "train", Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"},
			Quota: []allot.FlavorQuota{{Flavor: "default", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: int64(admitted) * 8}}}}}},
		Now: 100_000,
	}
	for i := 0; i < admitted; i++ {
		bl.Running = append(bl.Running, allot.Workload{ID: fmt.Sprintf("w%06d", i), Queue: "train", Priority: int32(i % 10), AdmittedAt: int64(i),
			PodSets: []allot.PodSet{{Name: "main", Count: 1, Flavor: "default", PerPod: allot.Resources{"gpu": 8}}}})
	}
	s, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// fairCohort is a quota-only cohort of eight queues with fair sharing on,
// its capacity (admitted 8-GPU workloads' worth) used up by admitted 8-GPU
// workloads of priorities 0..9: queue q0 holds its nominal quota, q1..q3
// borrow what q5..q7 leave unused.
func fairCohort(b *testing.B, admitted int) *allot.Snapshot {
	bl := &allot.Builder{
		Resources:   []string{"gpu"},
		Flavors:     []allot.Flavor{{Name: "default"}},
		Cohorts:     []allot.Cohort{{Name: "co"}},
		FairSharing: allot.FairSharing{Enabled: true},
		Now:         100_000,
	}
	held := []int{1250, 2000, 1750, 1500, 1250, 1000, 750, 500}
	for q, n := range held {
		name := fmt.Sprintf("q%d", q)
		bl.Queues = append(bl.Queues, allot.Queue{Name: name, Cohort: "co", Preemption: allot.QueuePreemption{ReclaimWithinCohort: "LowerPriority"},
			Quota: []allot.FlavorQuota{{Flavor: "default", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: int64(1250*admitted/10_000) * 8}}}}})
		for i := range n * admitted / 10_000 {
			bl.Running = append(bl.Running, allot.Workload{ID: fmt.Sprintf("%s-w%06d", name, i), Queue: name, Priority: int32(i % 10), AdmittedAt: int64(i),
				PodSets: []allot.PodSet{{Name: "main", Count: 1, Flavor: "default", PerPod: allot.Resources{"gpu": 8}}}})
		}
	}
	s, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkPreempt times finding the victims for a priority-1000 preemptor:
// on a full quota-only queue of 8-GPU workloads (1,000, 10,000 and
// 100,000 of them, and a priority-5 preemptor that takes every workload
// below it), on the fragmented 10240-node cluster
// with its queue's quota full, where every removal re-runs the gang
// placement (8 pods of 8 GPUs that require a rack), and by fair sharing in
// a full cohort of 1,000, 10,000 and 100,000, where the preemptor borrows and
// each victim is chosen by dominant share.
func BenchmarkPreempt(b *testing.B) {
	hero := allot.Request{ID: "hero", Queue: "train", Priority: 1000,
		PodSets: []allot.PodSet{{Name: "main", Count: 8, PerPod: allot.Resources{"gpu": 8}}}}
	for _, admitted := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("admitted=%d/need=64gpu", admitted), func(b *testing.B) {
			s := fullQueue(b, admitted)
			d := decideLoop(b, s, hero)
			if d.Verdict != allot.VerdictPreempt || len(d.Victims) != 8 {
				b.Fatalf("%v %s, %d victims", d.Reason, d.Message, len(d.Victims))
			}
		})
	}
	b.Run("topology=true/nodes=10240/need=8pod_x8gpu_req_rack", func(b *testing.B) {
		bl := Cluster(10240, true)
		used := int64(0)
		for i := range bl.Running {
			bl.Running[i].Priority = int32(i % 10)
			used += bl.Running[i].PodSets[0].PerPod["gpu"]
		}
		bl.Queues[0].Quota[0].Resources[0].Nominal = used
		bl.Queues[0].Preemption.WithinQueue = "LowerPriority"
		bl.Now = 1000
		s, err := bl.Build()
		if err != nil {
			b.Fatal(err)
		}
		req := GangRequest("hero", 8, 8, "rack", "")
		req.Priority = 1000
		d := decideLoop(b, s, req)
		if d.Verdict != allot.VerdictPreempt || len(d.Placement) != 8 {
			b.Fatalf("%v %s", d.Reason, d.Message)
		}
	})
	// A search that reads every candidate: a priority-5 request for all
	// that the workloads of priorities 0..4 hold, which takes every one.
	for _, admitted := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("admitted=%d/need=all_below", admitted), func(b *testing.B) {
			s := fullQueue(b, admitted)
			req := allot.Request{ID: "hero", Queue: "train", Priority: 5,
				PodSets: []allot.PodSet{{Name: "main", Count: int32(admitted / 2), PerPod: allot.Resources{"gpu": 8}}}}
			d := decideLoop(b, s, req)
			if d.Verdict != allot.VerdictPreempt || len(d.Victims) != admitted/2 {
				b.Fatalf("%v %s, %d victims", d.Reason, d.Message, len(d.Victims))
			}
		})
	}
	for _, admitted := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("fair=true/admitted=%d/queues=8/need=64gpu", admitted), func(b *testing.B) {
			s := fairCohort(b, admitted)
			req := hero
			req.Queue = "q0"
			d := decideLoop(b, s, req)
			if d.Verdict != allot.VerdictPreempt || len(d.Victims) != 8 {
				b.Fatalf("%v %s, %d victims", d.Reason, d.Message, len(d.Victims))
			}
		})
	}
}

// decideLoop times deciding r on s and returns the last decision.
func decideLoop(b *testing.B, s *allot.Snapshot, r allot.Request) allot.Decision {
	b.ReportAllocs()
	// The first search on a version builds the preemption index, which
	// the searches on it share: BenchmarkPreemptFirstSearch times it.
	allot.Decide(s, r)
	var d allot.Decision
	for b.Loop() {
		d = allot.Decide(s, r)
	}
	return d
}

// BenchmarkPreemptFirstSearch times the first search on a version of a
// store that keeps no preemption index yet: it builds the index of every
// admitted workload, then finds 8 victims among them.
func BenchmarkPreemptFirstSearch(b *testing.B) {
	hero := allot.Request{ID: "hero", Queue: "train", Priority: 1000,
		PodSets: []allot.PodSet{{Name: "main", Count: 8, PerPod: allot.Resources{"gpu": 8}}}}
	for _, admitted := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("admitted=%d/need=64gpu", admitted), func(b *testing.B) {
			s := fullQueue(b, admitted)
			b.ReportAllocs()
			var d allot.Decision
			for b.Loop() {
				// A store's first version is s itself, whose index the
				// first iteration would keep for the rest: the store's
				// next version has none.
				b.StopTimer()
				st := allot.NewStore(s)
				if _, err := st.Apply(allot.AdvanceTime{Seconds: 1}); err != nil {
					b.Fatal(err)
				}
				v := st.Load()
				b.StartTimer()
				d = allot.Decide(v, hero)
			}
			if d.Verdict != allot.VerdictPreempt || len(d.Victims) != 8 {
				b.Fatalf("%v %s, %d victims", d.Reason, d.Message, len(d.Victims))
			}
		})
	}
}
