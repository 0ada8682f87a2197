package allot_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

// drfQueue is one user of a DRF world: a queue of weight weight with n
// pending tasks of demand task each.
type drfQueue struct {
	name   string
	weight float64
	task   allot.Resources
	n      int
}

// drfWorld is the DRF paper's setting in Kueue's terms: a cohort owns the
// capacity, its queues own nothing, so each queue's dominant share is what
// it borrows over what the cohort holds, per resource, divided by its
// weight. Flavors are quota-only; every task is submitted at once (task k
// of every queue at time k).
func drfWorld(capacity allot.Resources, queues []drfQueue) allot.Builder {
	names := slices.Sorted(maps.Keys(capacity))
	quota := func(of func(string) int64) []allot.FlavorQuota {
		fq := allot.FlavorQuota{Flavor: "default"}
		for _, r := range names {
			fq.Resources = append(fq.Resources, allot.ResourceQuota{Name: r, Nominal: of(r)})
		}
		return []allot.FlavorQuota{fq}
	}
	b := allot.Builder{
		Resources:   names,
		Flavors:     []allot.Flavor{{Name: "default"}},
		Cohorts:     []allot.Cohort{{Name: "pool", Quota: quota(func(r string) int64 { return capacity[r] })}},
		FairSharing: allot.FairSharing{Enabled: true},
		Now:         1000,
	}
	for _, q := range queues {
		w := q.weight
		b.Queues = append(b.Queues, allot.Queue{Name: q.name, Cohort: "pool", Quota: quota(func(string) int64 { return 0 }),
			FairSharing: &allot.QueueFairSharing{Weight: &w}})
		for k := range q.n {
			b.Pending = append(b.Pending, allot.Workload{ID: fmt.Sprintf("%s%03d", q.name, k), Queue: q.name, SubmittedAt: int64(k),
				PodSets: []allot.PodSet{{Name: "task", Count: 1, PerPod: q.task}}})
		}
	}
	return b
}

// tasksRunning counts the running workloads per queue.
func tasksRunning(t *testing.T, s *allot.Snapshot) map[string]int {
	t.Helper()
	got := map[string]int{}
	for _, id := range s.RunningIDs() {
		w, _ := s.Running(id)
		got[w.Queue]++
	}
	return got
}

// With fair sharing and every task submitted at once, allot's default
// reaches weighted DRF's allocation (progressive filling: the lowest
// dominant share after admission, divided by the weight, goes next; a queue
// whose task no longer fits is skipped) and Kueue-exact mode the one of
// Kueue's cycles (one head per queue per cycle, the cycle's heads ordered
// by that share).
func TestScheduleFairSharingAllocation(t *testing.T) {
	gpus := func(n int64) allot.Resources { return allot.Resources{"gpu": n} }
	const gi = 1 << 30
	for _, c := range []struct {
		name       string
		capacity   allot.Resources
		queues     []drfQueue
		drf, kueue map[string]int
	}{
		{
			// Weights divide the share: a reaches b's share with three
			// times b's GPUs. Kueue's cycles admit one of each per cycle.
			name:     "weights 3 to 1",
			capacity: gpus(16),
			queues:   []drfQueue{{"a", 3, gpus(1), 16}, {"b", 1, gpus(1), 16}},
			drf:      map[string]int{"a": 12, "b": 4},
			kueue:    map[string]int{"a": 8, "b": 8},
		},
		{
			// Five cycles of three, then the sixteenth GPU to b, whose
			// share after admission (6/16 over 2) is the lowest.
			name:     "weights 1, 2, 1",
			capacity: gpus(16),
			queues:   []drfQueue{{"a", 1, gpus(1), 16}, {"b", 2, gpus(1), 16}, {"c", 1, gpus(1), 16}},
			drf:      map[string]int{"a": 4, "b": 8, "c": 4},
			kueue:    map[string]int{"a": 5, "b": 6, "c": 5},
		},
		{
			// Ghodsi et al.'s example: 9 CPU and 18 GB, A's tasks <1 CPU,
			// 4 GB>, B's <3 CPU, 1 GB>: 3 and 2 tasks, both at a dominant
			// share of 2/3. Kueue's cycles give the same.
			name:     "DRF paper",
			capacity: allot.Resources{"cpu": 9000, "memory": 18 * gi},
			queues: []drfQueue{{"A", 1, allot.Resources{"cpu": 1000, "memory": 4 * gi}, 6},
				{"B", 1, allot.Resources{"cpu": 3000, "memory": 1 * gi}, 6}},
			drf:   map[string]int{"A": 3, "B": 2},
			kueue: map[string]int{"A": 3, "B": 2},
		},
		{
			// Work conserving: b's small tasks fill what a's large one
			// leaves (a 4/10, b 6/10), where Kueue's second cycle still
			// admits a second task of a (a 8/10, b 2/10).
			name:     "large and small tasks",
			capacity: gpus(10),
			queues:   []drfQueue{{"a", 1, gpus(4), 4}, {"b", 1, gpus(1), 10}},
			drf:      map[string]int{"a": 1, "b": 6},
			kueue:    map[string]int{"a": 2, "b": 2},
		},
	} {
		for _, semantics := range []string{"", allot.SemanticsKueue} {
			want := c.drf
			if semantics != "" {
				want = c.kueue
			}
			b := drfWorld(c.capacity, c.queues)
			b.Options.Semantics = semantics
			s, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			st := allot.NewStore(s)
			allot.Schedule(st)
			if got := tasksRunning(t, st.Load()); !maps.Equal(got, want) {
				t.Errorf("%s, semantics %q: tasks running %v, want %v", c.name, semantics, got, want)
			}
		}
	}
}

// drfShare is a queue's weighted dominant share in a drfWorld once it holds
// used and one more task: computed as allot computes it (borrowed ×1000
// over what the cohort holds, the largest, over the weight), so that ties
// come out alike.
func drfShare(capacity, used, task allot.Resources, weight float64) float64 {
	var ratio float64
	for r, c := range capacity {
		if b := used[r] + task[r]; b > 0 {
			ratio = max(ratio, float64(b)*1000/float64(c))
		}
	}
	return ratio / weight
}

// drfFits reports whether task fits beside what the queues hold.
func drfFits(capacity, total, task allot.Resources) bool {
	for r, c := range capacity {
		if total[r]+task[r] > c {
			return false
		}
	}
	return true
}

// drfReference is the allocation of a drfWorld, computed naively: by
// progressive filling (weighted DRF: the queue whose share with its next
// task is lowest goes next, ties to the earlier task, then the lower queue
// name; a queue whose next task does not fit is done) or, with cycles, as
// Kueue's cycles give it (every queue whose next task fits at the cycle's
// start nominates it, the nominees go in that order on the cycle's start,
// each admitted if it still fits).
func drfReference(capacity allot.Resources, queues []drfQueue, cycles bool) map[string]int {
	used := make([]allot.Resources, len(queues))
	for i := range used {
		used[i] = allot.Resources{}
	}
	total := allot.Resources{}
	next := make([]int, len(queues))
	done := make([]bool, len(queues))
	admit := func(i int) {
		for r, v := range queues[i].task {
			used[i][r] += v
			total[r] += v
		}
		next[i]++
	}
	// before orders queue i's next task before queue j's.
	before := func(i, j int) bool {
		si := drfShare(capacity, used[i], queues[i].task, queues[i].weight)
		sj := drfShare(capacity, used[j], queues[j].task, queues[j].weight)
		if si != sj {
			return si < sj
		}
		if next[i] != next[j] {
			return next[i] < next[j]
		}
		return queues[i].name < queues[j].name
	}
	for {
		var heads []int
		for i, q := range queues {
			if !done[i] && next[i] < q.n {
				if drfFits(capacity, total, q.task) {
					heads = append(heads, i)
				} else {
					done[i] = true
				}
			}
		}
		if len(heads) == 0 {
			break
		}
		if !cycles {
			best := heads[0]
			for _, i := range heads[1:] {
				if before(i, best) {
					best = i
				}
			}
			admit(best)
			continue
		}
		slices.SortStableFunc(heads, func(i, j int) int {
			if before(i, j) {
				return -1
			}
			return 1
		})
		for _, i := range heads {
			if drfFits(capacity, total, queues[i].task) {
				admit(i)
			}
		}
	}
	out := map[string]int{}
	for i, q := range queues {
		if next[i] > 0 {
			out[q.name] = next[i]
		}
	}
	return out
}

// Random DRF worlds (two to four queues of random weights, one or two
// resources, tasks of random demands, all submitted at once): the loop's
// allocation is the naive reference's, by progressive filling in allot's
// default and in Kueue's cycles in Kueue-exact mode.
func TestScheduleFairSharingMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	weights := []float64{0.5, 1, 2, 3}
	differ := 0
	for world := range 300 {
		capacity := allot.Resources{"gpu": 4 + rng.Int64N(17)}
		if rng.IntN(2) == 0 {
			capacity["cpu"] = 4 + rng.Int64N(17)
		}
		var queues []drfQueue
		for i := range 2 + rng.IntN(3) {
			task := allot.Resources{}
			for task["gpu"]+task["cpu"] == 0 {
				for r := range capacity {
					if v := rng.Int64N(5); v > 0 {
						task[r] = v
					}
				}
			}
			queues = append(queues, drfQueue{string(rune('a' + i)), weights[rng.IntN(len(weights))], task, 12})
		}
		var got [2]map[string]int
		for k, semantics := range []string{"", allot.SemanticsKueue} {
			b := drfWorld(capacity, queues)
			b.Options.Semantics = semantics
			s, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			st := allot.NewStore(s)
			allot.Schedule(st)
			got[k] = tasksRunning(t, st.Load())
			if want := drfReference(capacity, queues, k == 1); !maps.Equal(got[k], want) {
				t.Errorf("world %d (capacity %v, queues %+v), semantics %q: tasks running %v, want %v", world, capacity, queues, semantics, got[k], want)
			}
		}
		if !maps.Equal(got[0], got[1]) {
			differ++
		}
	}
	// The worlds must tell the modes apart, or the test shows nothing.
	if differ < 50 {
		t.Errorf("the modes differ in only %d of 300 worlds", differ)
	}
	t.Logf("the modes differ in %d of 300 worlds", differ)
}

// In Kueue's cycles the tournament runs again after every entry on the
// usage of the entries admitted so far: an entry that does not fit adds
// nothing. Queues a and b sit in cohort left, c in right, both under all,
// which holds 3 GPUs of its own beside a's nominal 4; b and c borrow 3
// each, one GPU is free. a's head (4 GPUs, within its nominal) wins the
// first round and cannot be admitted (it would have to reclaim); without
// it left does not borrow with b's head, so b takes the last GPU. Had a's
// head been counted, left would borrow 4 of 7 as right does, and c, the
// earlier submission, would take it.
func TestScheduleKueueTournamentCountsOnlyAdmitted(t *testing.T) {
	gpu := func(n int64) []allot.FlavorQuota {
		return []allot.FlavorQuota{{Flavor: "default", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: n}}}}
	}
	task := func(id, queue string, gpus int64, at int64) allot.Workload {
		return allot.Workload{ID: id, Queue: queue, SubmittedAt: at, PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": gpus}}}}
	}
	running := func(id, queue string, gpus int64) allot.Workload {
		w := task(id, queue, gpus, 0)
		w.PodSets[0].Flavor = "default"
		return w
	}
	for _, semantics := range []string{"", allot.SemanticsKueue} {
		b := allot.Builder{
			Resources:   []string{"gpu"},
			Flavors:     []allot.Flavor{{Name: "default"}},
			Cohorts:     []allot.Cohort{{Name: "all", Quota: gpu(3)}, {Name: "left", Parent: "all"}, {Name: "right", Parent: "all"}},
			Queues:      []allot.Queue{{Name: "a", Cohort: "left", Quota: gpu(4)}, {Name: "b", Cohort: "left", Quota: gpu(0)}, {Name: "c", Cohort: "right", Quota: gpu(0)}},
			Running:     []allot.Workload{running("b-run", "b", 3), running("c-run", "c", 3)},
			Pending:     []allot.Workload{task("a0", "a", 4, 5), task("b0", "b", 1, 2), task("c0", "c", 1, 1)},
			FairSharing: allot.FairSharing{Enabled: true},
			Options:     allot.Options{Semantics: semantics},
			Now:         10,
		}
		s, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		st := allot.NewStore(s)
		ds := allot.Schedule(st)
		if len(ds) == 0 || ds[0].Workload != "a0" {
			t.Fatalf("semantics %q: a0 is not decided first: %v", semantics, ds)
		}
		if got, want := st.Load().RunningIDs(), []string{"b-run", "b0", "c-run"}; !slices.Equal(got, want) {
			t.Errorf("semantics %q: running %v, want %v", semantics, got, want)
		}
	}
}

// A head that fits when its cycle begins but not after the heads before it
// stays at its queue's head in Kueue's cycles (Kueue skips it and requeues
// it at once): it is found not to fit a cycle later, and only then does the
// queue's next workload compete. a0 needs all 4 GPUs; b0 goes first and
// takes one. allot's cycles decide a0 on what b0 left and set it aside at
// once, so a1 meets b1 in the second cycle and a2 wins the last GPU over
// b2; in Kueue's, b1 is alone in the second cycle, and a1 and b2 take the
// last two GPUs in the third. Progressive filling admits b0, b1, b2 (a0's
// share after admission, 4/4, is above theirs), then tries a0 and gives
// the last GPU to a1.
func TestScheduleKueueSkippedHeadStaysAtHead(t *testing.T) {
	for _, c := range []struct {
		fair      bool
		semantics string
		want      []string
	}{
		{false, "", []string{"a001", "a002", "b000", "b001"}},
		{false, allot.SemanticsKueue, []string{"a001", "b000", "b001", "b002"}},
		{true, "", []string{"a001", "b000", "b001", "b002"}},
		{true, allot.SemanticsKueue, []string{"a001", "b000", "b001", "b002"}},
	} {
		b := drfWorld(allot.Resources{"gpu": 4}, []drfQueue{{"a", 1, allot.Resources{"gpu": 1}, 4}, {"b", 1, allot.Resources{"gpu": 1}, 4}})
		at := map[string]int64{"a000": 1, "a001": 2, "a002": 4, "a003": 6, "b000": 0, "b001": 3, "b002": 5, "b003": 7}
		for i := range b.Pending {
			b.Pending[i].SubmittedAt = at[b.Pending[i].ID]
		}
		b.Pending[0].PodSets[0].PerPod = allot.Resources{"gpu": 4} // a000
		b.FairSharing.Enabled, b.Options.Semantics = c.fair, c.semantics
		s, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		st := allot.NewStore(s)
		allot.Schedule(st)
		if got := st.Load().RunningIDs(); !slices.Equal(got, c.want) {
			t.Errorf("fair sharing %t, semantics %q: running %v, want %v", c.fair, c.semantics, got, c.want)
		}
	}
}

// Two queues of weights 3 and 1 borrow all of a cohort's 16 GPUs, one GPU a
// task. With fair sharing allot's default loop gives weighted DRF's
// allocation; Kueue-exact mode gives Kueue's cycles, one task of each queue
// per cycle.
func ExampleSchedule() {
	for _, semantics := range []string{allot.SemanticsAllot, allot.SemanticsKueue} {
		b := drfWorld(allot.Resources{"gpu": 16}, []drfQueue{{"a", 3, allot.Resources{"gpu": 1}, 16}, {"b", 1, allot.Resources{"gpu": 1}, 16}})
		b.Options.Semantics = semantics
		s, err := b.Build()
		if err != nil {
			panic(err)
		}
		st := allot.NewStore(s)
		allot.Schedule(st)
		n := map[string]int{}
		for _, id := range st.Load().RunningIDs() {
			w, _ := st.Load().Running(id)
			n[w.Queue]++
		}
		fmt.Printf("%s: a %d, b %d\n", semantics, n["a"], n["b"])
	}
	// Output:
	// allot: a 12, b 4
	// kueue: a 8, b 8
}
