package preempt

import (
	"slices"
	"testing"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

// The worlds of these tests have one flavor and one resource, GPUs, and a
// cohort tree of two queues under one cohort: queue a is node 0, queue b
// node 1, cohort c node 2.
const (
	qa, qb int32 = 0, 1
	gpu          = 0
)

// job is an admitted workload of the tests: one pod set of pods pods on
// flavor 0 (on node 0 at the GPUs of masks, when given).
type job struct {
	id       string
	queue    int32
	priority int32
	pods     int32
	gpus     int64 // per pod
	masks    []uint64
	pinned   bool
}

// world builds the search's world: the tree with nominal quota per node (a,
// b, c), the jobs admitted (their usage and, with a node, their GPUs
// booked) and, when node is set, one node of 8 GPUs.
func world(t *testing.T, nominal [3]int64, node bool, jobs []job) (*World, *Index) {
	t.Helper()
	tree, err := quota.NewResourceTree(1, 1, []quota.NodeSpec{
		{Name: "a", Parent: 2, Queue: true, Quotas: []quota.ResourceQuota{{Nominal: nominal[0]}}},
		{Name: "b", Parent: 2, Queue: true, Quotas: []quota.ResourceQuota{{Nominal: nominal[1]}}},
		{Name: "c", Parent: -1, Quotas: []quota.ResourceQuota{{Nominal: nominal[2]}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	w := &World{Tree: tree, Usage: tree.NewUsage(), Nodes: view.NodeRes{1 << gpu},
		Cost: Cost{Now: 1000, GPU: gpu, Tokens: -1, Resources: 1}, Debt: make([]fairness.Debt, 2)}
	m := view.Sim{Tree: tree, Usage: w.Usage, Tokens: -1, Nodes: w.Nodes}
	if node {
		topo, err := topology.New(nil, 1, gpu, 1, []topology.NodeSpec{{Name: "n0", Capacity: res.Vec{gpu: 8}}})
		if err != nil {
			t.Fatal(err)
		}
		w.Free, w.Empty = topology.NewState(topo, 0), topology.NewCapacity(topo)
		m.State = w.Free
	}
	admitted := NewIndex(w.Cost)
	for i, j := range jobs {
		b := &view.Booking{ID: j.id, Queue: j.queue, Priority: j.priority, AdmittedAt: int64(i), Pinned: j.pinned,
			Sets: []view.Set{{Count: j.pods, Per: res.Vec{gpu: j.gpus}}}}
		for p := range j.pods {
			pod := view.Pod{Node: -1}
			if node {
				pod = view.Pod{Node: 0, GPUs: j.masks[p]}
			}
			b.Pods = append(b.Pods, pod)
		}
		m.Restore(b) // book it
		w.Usage = m.Usage
		admitted.Insert(b)
	}
	return w, &admitted
}

// preemptor asks for pods pods of gpus GPUs in queue q, at priority 5,
// on nodes when sets.
func preemptor(w *World, q int32, pol Policies, pods int32, gpus int64, sets bool) *Preemptor {
	need := res.Vec{gpu: int64(pods) * gpus}
	t := w.Tree
	fq := &quota.FlavorQuota{Covered: 1 << gpu, Nominal: res.Vec{gpu: t.Nominal(q, t.FR(0, gpu))}}
	p := &Preemptor{Queue: q, Policies: pol, Priority: 5, Need: []res.Vec{need}, Open: []res.Vec{need},
		Quota: []*quota.FlavorQuota{fq}, Exhausted: need[gpu] > t.AvailableClamped(w.Usage, q, t.FR(0, gpu))}
	if sets {
		p.Sets = []gang.PodSet{{Count: int64(pods), Res: res.Vec{gpu: gpus}, GPUs: int(gpus), Mode: gang.Unconstrained, Policy: gang.Pack}}
	}
	return p
}

// victims renders a result as "id:variant" in the order found.
func victims(r Result) []string {
	var out []string
	for _, v := range r.Victims {
		out = append(out, v.ID+":"+v.Variant.Reason())
	}
	return out
}

// find runs the search every way it may read the admitted workloads
// (readWays) and fails the test unless every way finds the same; it
// returns what the index read lazily finds.
func find(t *testing.T, w *World, p *Preemptor, admitted *Index) (Result, bool) {
	t.Helper()
	var first string
	var got Result
	var found bool
	for i, a := range readWays(admitted) {
		r, ok := Find(w, p, new(gang.Placer), a.Admitted)
		if rendered := renderResult(r, ok); i == 0 {
			first, got, found = rendered, r, ok
		} else if rendered != first {
			t.Fatalf("read %s: %s\nread %s: %s", a.name, rendered, readWays(admitted)[0].name, first)
		}
	}
	return got, found
}

func TestClassical(t *testing.T) {
	lower := Policies{WithinQueue: LowerPriority}
	cases := []struct {
		name    string
		nominal [3]int64
		jobs    []job
		pol     Policies
		need    int64 // GPUs, one pod
		want    []string
		borrows bool
	}{
		{
			name:    "own queue, lowest priority first",
			nominal: [3]int64{4, 4, 0},
			jobs:    []job{{id: "a1", queue: qa, priority: 1, pods: 1, gpus: 2}, {id: "a2", queue: qa, pods: 1, gpus: 2}, {id: "b1", queue: qb, pods: 1, gpus: 4}},
			pol:     lower,
			need:    2,
			want:    []string{"a2:InClusterQueue"},
		},
		{
			name:    "a pinned workload is nobody's victim",
			nominal: [3]int64{4, 4, 0},
			jobs:    []job{{id: "a1", queue: qa, priority: 1, pods: 1, gpus: 2}, {id: "a2", queue: qa, pods: 1, gpus: 2, pinned: true}, {id: "b1", queue: qb, pods: 1, gpus: 4}},
			pol:     lower,
			need:    2,
			want:    []string{"a1:InClusterQueue"},
		},
		{
			name:    "only what is needed: fill-back returns the first taken",
			nominal: [3]int64{4, 4, 0},
			jobs:    []job{{id: "a1", queue: qa, pods: 1, gpus: 1}, {id: "a2", queue: qa, priority: 1, pods: 1, gpus: 3}, {id: "b1", queue: qb, pods: 1, gpus: 4}},
			pol:     lower,
			need:    3,
			want:    []string{"a2:InClusterQueue"},
		},
		{
			name:    "no policy lets the preemptor evict",
			nominal: [3]int64{4, 4, 0},
			jobs:    []job{{id: "a1", queue: qa, pods: 1, gpus: 4}, {id: "b1", queue: qb, pods: 1, gpus: 4}},
			need:    2,
		},
		{
			name:    "a queue within its quota gives nothing back",
			nominal: [3]int64{4, 4, 0},
			jobs:    []job{{id: "a1", queue: qa, pods: 1, gpus: 4}, {id: "b1", queue: qb, pods: 1, gpus: 4}},
			pol:     Policies{Reclaim: Any},
			need:    2,
		},
		{
			name:    "reclaiming lent quota, with hierarchical advantage",
			nominal: [3]int64{4, 4, 0},
			jobs:    []job{{id: "a1", queue: qa, pods: 1, gpus: 2}, {id: "b1", queue: qb, pods: 1, gpus: 4}, {id: "b2", queue: qb, priority: 1, pods: 1, gpus: 2}},
			pol:     Policies{WithinQueue: LowerPriority, Reclaim: Any},
			need:    2,
			want:    []string{"b1:InCohortReclamation"},
		},
		{
			name:    "other queues before the own one",
			nominal: [3]int64{4, 4, 0},
			jobs:    []job{{id: "a1", queue: qa, pods: 1, gpus: 2}, {id: "b1", queue: qb, priority: 3, pods: 1, gpus: 2}, {id: "b2", queue: qb, priority: 3, pods: 1, gpus: 4}},
			pol:     Policies{WithinQueue: LowerPriority, Reclaim: LowerPriority},
			need:    2,
			want:    []string{"b1:InCohortReclamation"},
		},
		{
			name:    "not enough to free",
			nominal: [3]int64{4, 4, 0},
			jobs:    []job{{id: "a1", queue: qa, pods: 1, gpus: 4}, {id: "b1", queue: qb, pods: 1, gpus: 4}},
			pol:     lower,
			need:    6,
		},
	}
	for _, c := range cases {
		w, admitted := world(t, c.nominal, false, c.jobs)
		got, ok := find(t, w, preemptor(w, qa, c.pol, 1, c.need, false), admitted)
		if ok != (c.want != nil) || !slices.Equal(victims(got), c.want) {
			t.Errorf("%s: victims %v (found %v), want %v", c.name, victims(got), ok, c.want)
			continue
		}
		if ok && (got.Borrows != c.borrows || got.Placement != nil) {
			t.Errorf("%s: borrows %v, placement %v", c.name, got.Borrows, got.Placement)
		}
	}
}

func TestClassicalPlacement(t *testing.T) {
	lower := Policies{WithinQueue: LowerPriority}
	// One node of 8 GPUs holds a1 on GPUs 0-3 and a2 on 4-7; quota has room
	// for both and the preemptor: only the placement needs victims.
	jobs := []job{
		{id: "a1", queue: qa, pods: 1, gpus: 4, masks: []uint64{0x0f}},
		{id: "a2", queue: qa, priority: 1, pods: 1, gpus: 4, masks: []uint64{0xf0}},
	}
	cases := []struct {
		name string
		pods int32
		gpus int64
		want []string
		asg  []gang.Assignment
	}{
		{"the lowest priority frees enough", 1, 4, []string{"a1:InClusterQueue"}, []gang.Assignment{{Node: 0, GPUs: 0x0f}}},
		{"a pod of the whole node needs both", 1, 8, []string{"a1:InClusterQueue", "a2:InClusterQueue"}, []gang.Assignment{{Node: 0, GPUs: 0xff}}},
		{"no emptied cluster holds it", 1, 16, nil, nil},
	}
	for _, c := range cases {
		w, admitted := world(t, [3]int64{32, 0, 0}, true, jobs)
		got, ok := find(t, w, preemptor(w, qa, lower, c.pods, c.gpus, true), admitted)
		if ok != (c.want != nil) || !slices.Equal(victims(got), c.want) || !slices.Equal(got.Placement, c.asg) {
			t.Errorf("%s: victims %v placed %v (found %v), want %v placed %v", c.name, victims(got), got.Placement, ok, c.want, c.asg)
		}
	}
}

func TestFair(t *testing.T) {
	both := [2]Strategy{LessThanOrEqualToFinalShare, LessThanInitialShare}
	// Queue b borrows 2 of queue a's GPUs; a asks for 4, 2 past its own
	// quota: it borrows too, so the strategies decide. Once admitted, a's
	// share equals b's now, and b's after any eviction is below it.
	even := []job{
		{id: "b1", queue: qb, priority: 3, pods: 1, gpus: 2},
		{id: "b2", queue: qb, priority: 1, pods: 1, gpus: 2},
		{id: "b3", queue: qb, pods: 1, gpus: 4},
	}
	// Queue b holds 10 GPUs, 8 past its own quota, mostly the cohort's: it
	// still borrows more than a would after giving one workload back.
	greedy := []job{
		{id: "b1", queue: qb, priority: 4, pods: 1, gpus: 2},
		{id: "b2", queue: qb, priority: 3, pods: 1, gpus: 2},
		{id: "b3", queue: qb, priority: 2, pods: 1, gpus: 2},
		{id: "b4", queue: qb, priority: 1, pods: 1, gpus: 2},
		{id: "b5", queue: qb, pods: 1, gpus: 2},
	}
	cases := []struct {
		name       string
		nominal    [3]int64
		jobs       []job
		strategies [2]Strategy
		weightA    float64
		want       []string
	}{
		{"equal weights", [3]int64{2, 6, 0}, even, both, 1, nil},
		// At twice the weight a's share is below b's initial one: the
		// second strategy takes b's lowest-priority workload.
		{"a weighs twice", [3]int64{2, 6, 0}, even, both, 2, []string{"b3:InCohortFairSharing"}},
		{"only the final share", [3]int64{2, 6, 0}, even, [2]Strategy{LessThanOrEqualToFinalShare}, 2, nil},
		{"only the initial share", [3]int64{2, 6, 0}, even, [2]Strategy{LessThanInitialShare}, 2, []string{"b3:InCohortFairSharing"}},
		{"b's final share stays above a's", [3]int64{2, 2, 8}, greedy, both, 1, []string{"b5:InCohortFairSharing"}},
	}
	for _, c := range cases {
		w, admitted := world(t, c.nominal, false, c.jobs)
		w.Fair = Sharing{Enabled: true, Strategies: c.strategies, Weights: []float64{c.weightA, 1, 1}}
		got, ok := find(t, w, preemptor(w, qa, Policies{Reclaim: Any}, 1, 4, false), admitted)
		if ok != (c.want != nil) || !slices.Equal(victims(got), c.want) {
			t.Errorf("%s: victims %v (found %v), want %v", c.name, victims(got), ok, c.want)
		}
		if ok && !got.Borrows {
			t.Errorf("%s: the preemptor no longer borrows", c.name)
		}
	}
}

func TestFairReclaimWithoutBorrowing(t *testing.T) {
	// Queue a asks for no more than its own quota, which b borrows: b's
	// workloads are taken without weighing shares, the one that loses the
	// least work first at equal priority.
	jobs := []job{{id: "b1", queue: qb, pods: 1, gpus: 2}, {id: "b2", queue: qb, pods: 1, gpus: 2}, {id: "b3", queue: qb, pods: 1, gpus: 4}}
	w, admitted := world(t, [3]int64{4, 4, 0}, false, jobs)
	w.Fair = Sharing{Enabled: true, Strategies: [2]Strategy{LessThanOrEqualToFinalShare, LessThanInitialShare}, Weights: []float64{1, 1, 1}}
	got, ok := find(t, w, preemptor(w, qa, Policies{Reclaim: Any}, 1, 2, false), admitted)
	if want := []string{"b2:InCohortReclamation"}; !ok || !slices.Equal(victims(got), want) || got.Borrows {
		t.Fatalf("victims %v (found %v, borrows %v), want %v", victims(got), ok, got.Borrows, want)
	}
}

func TestCost(t *testing.T) {
	cases := []struct {
		name string
		c    Cost
		b    view.Booking
		want int64
	}{
		{"GPUs since admission", Cost{Now: 100, GPU: 0, Tokens: -1, Resources: 2},
			view.Booking{AdmittedAt: 40, Sets: []view.Set{{Count: 2, Per: res.Vec{4, 1000}}}}, 60 * 8},
		{"since the last checkpoint", Cost{Now: 100, GPU: 0, Tokens: -1, Resources: 2},
			view.Booking{AdmittedAt: 40, LastCheckpoint: 90, Checkpointable: true, Sets: []view.Set{{Count: 1, Per: res.Vec{4}}}}, 10 * 4},
		{"without GPUs, the largest quantity", Cost{Now: 100, GPU: 0, Tokens: 2, Resources: 3},
			view.Booking{AdmittedAt: 90, Sets: []view.Set{{Count: 2, Per: res.Vec{0, 1000, 10}, Tokens: 2000}}}, 10 * 4020},
		{"no GPU resource", Cost{Now: 100, GPU: -1, Tokens: -1, Resources: 1},
			view.Booking{AdmittedAt: 99, Sets: []view.Set{{Count: 3, Per: res.Vec{500}}}}, 1500},
	}
	for _, c := range cases {
		if got := c.c.Lost(&c.b); got != c.want {
			t.Errorf("%s: lost %d, want %d", c.name, got, c.want)
		}
	}
}
