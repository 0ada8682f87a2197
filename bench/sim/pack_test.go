package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/allot-sched/allot/bench/trace"
	"github.com/allot-sched/allot/gang"
)

// packed replays tr under the named policy on nodes, failing the test on
// an error.
func packed(t *testing.T, tr *trace.Trace, policy string, nodes []trace.Node) *PackResult {
	t.Helper()
	p, ok := PolicyByName(policy)
	if !ok {
		t.Fatalf("no policy %q", policy)
	}
	r, err := Pack(tr, p, Options{Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkPackCounts checks the identities every packing replay keeps.
func checkPackCounts(t *testing.T, r *PackResult) {
	t.Helper()
	if r.Placed+r.Failed != r.Pods {
		t.Errorf("%s: %d placed + %d failed != %d pods", r.Policy, r.Placed, r.Failed, r.Pods)
	}
	if r.AllocatedGPUs+r.UnallocatedGPUs != r.GPUs || r.AllocatedGPUs > r.GPUs || r.AllocatedGPUs < 0 {
		t.Errorf("%s: %d allocated + %d unallocated of %d GPUs", r.Policy, r.AllocatedGPUs, r.UnallocatedGPUs, r.GPUs)
	}
	if r.AllocatedGPUs > r.RequestedGPUs {
		t.Errorf("%s: %d GPUs allocated of %d requested", r.Policy, r.AllocatedGPUs, r.RequestedGPUs)
	}
	if f := r.Fragmentation; f.FreeGPUs != r.UnallocatedGPUs || f.ExpectedStranded > float64(f.FreeGPUs)+1e-9 {
		t.Errorf("%s: fragmentation %+v with %d GPUs unallocated", r.Policy, f, r.UnallocatedGPUs)
	}
	if len(r.Curve) == 0 {
		t.Fatalf("%s: no curve", r.Policy)
	}
	for i := 1; i < len(r.Curve); i++ {
		a, b := r.Curve[i-1], r.Curve[i]
		if b.ArrivedPct <= a.ArrivedPct || b.AllocatedGPUs < a.AllocatedGPUs {
			t.Fatalf("%s: curve goes back from %+v to %+v", r.Policy, a, b)
		}
	}
	last := r.Curve[len(r.Curve)-1]
	if want := 100 * float64(r.RequestedGPUs) / float64(r.GPUs); last.ArrivedPct != want || last.AllocatedGPUs != r.AllocatedGPUs {
		t.Errorf("%s: the curve ends at %+v, want %.2f%% arrived and %d allocated", r.Policy, last, want, r.AllocatedGPUs)
	}
	if full := r.Full; full != nil && (full.ArrivedPct < 100 || full.AllocatedGPUs+full.UnallocatedGPUs != r.GPUs || full.Placed > full.Pods) {
		t.Errorf("%s: 100%% moment %+v", r.Policy, full)
	}
}

// An 8-GPU node listed before a 2-GPU one, two 1-GPU pods, an 8-GPU pod
// and a 2-GPU pod. First fit (kueue's binding) puts the small pods on the
// big node, so the 8-GPU pod fails; allot's placer fills the least-free
// node that holds a pod, the small one, and the 8-GPU pod fits.
func TestPackFirstFitAgainstLeastFree(t *testing.T) {
	tr := &trace.Trace{Jobs: []trace.Job{
		job("a", "q", 0, 10, 1, 0), job("b", "q", 1, 10, 1, 0), job("c", "q", 2, 10, 8, 0), job("d", "q", 3, 10, 2, 0),
	}}
	nodes := []trace.Node{{Name: "big", GPUs: 8}, {Name: "small", GPUs: 2}}

	// kueue: a and b on big, c admitted on quota but unbound, d on big.
	k := packed(t, tr, "kueue", nodes)
	checkPackCounts(t, k)
	if k.Pods != 4 || k.Placed != 3 || k.Failed != 1 || k.RequestedGPUs != 12 || k.AllocatedGPUs != 4 || k.UnallocatedGPUs != 6 {
		t.Errorf("kueue: %+v", k)
	}
	// The demand reaches the 10 GPUs with c; only a and b hold GPUs then.
	if f := k.Full; f == nil || f.Pods != 3 || f.ArrivedPct != 100 || f.Placed != 2 || f.UnallocatedGPUs != 8 {
		t.Errorf("kueue at 100%%: %+v", k.Full)
	}
	// The mix is two 1-GPU pods, one of 2 and one of 8: only the 8-GPU pod
	// fits neither node's free GPUs (6 and 2 at 100%, 4 and 2 at the end).
	if f := k.Full.Fragmentation; f.NodesWithFree != 2 || f.StrandedNodes != 0 || f.FreeGPUs != 8 || f.ExpectedStranded != 2 {
		t.Errorf("kueue fragmentation at 100%%: %+v", f)
	}
	want := gang.Fragmentation{NodesWithFree: 2, FreeGPUs: 6, ExpectedStranded: 1.5, StrandedShare: 0.25}
	if k.Fragmentation != want {
		t.Errorf("kueue fragmentation at the end: %+v, want %+v", k.Fragmentation, want)
	}

	// allot, and fifo and slurm with the same placer: a and b on small, c
	// on big, d finds no room.
	for _, name := range []string{"allot", "fifo", "slurm"} {
		r := packed(t, tr, name, nodes)
		checkPackCounts(t, r)
		if r.Placed != 3 || r.Failed != 1 || r.AllocatedGPUs != 10 || r.UnallocatedGPUs != 0 {
			t.Errorf("%s: %+v", name, r)
		}
		if f := r.Full; f == nil || f.Pods != 3 || f.Placed != 3 || f.UnallocatedGPUs != 0 {
			t.Errorf("%s at 100%%: %+v", name, r.Full)
		}
		curve := []PackPoint{{10, 1, 90}, {20, 2, 80}, {100, 10, 0}, {120, 10, 0}}
		if !reflect.DeepEqual(r.Curve, curve) {
			t.Errorf("%s: curve %+v, want %+v", name, r.Curve, curve)
		}
		if r.Fragmentation != (gang.Fragmentation{}) {
			t.Errorf("%s: fragmentation %+v on a full cluster", name, r.Fragmentation)
		}
	}
}

// A node with GPUs to spare but not the CPU for another pod: the second
// pod fails, and the free GPU is stranded for the whole mix (FGD's "lacks
// CPU"). Without CPU on the node list both pods fit.
func TestPackLacksCPU(t *testing.T) {
	a, b := job("a", "q", 0, 10, 1, 0), job("b", "q", 1, 10, 1, 0)
	a.CPUMilli, a.MemoryMiB = 8000, 1024
	b.CPUMilli, b.MemoryMiB = 4000, 1024
	tr := &trace.Trace{Jobs: []trace.Job{a, b}}
	withCPU := []trace.Node{{Name: "n", GPUs: 2, CPUMilli: 10000, MemoryMiB: 4096}}
	for _, name := range []string{"kueue", "allot"} {
		r := packed(t, tr, name, withCPU)
		checkPackCounts(t, r)
		want := gang.Fragmentation{NodesWithFree: 1, StrandedNodes: 1, NodeShare: 1, FreeGPUs: 1, ExpectedStranded: 1, StrandedShare: 1}
		if r.Placed != 1 || r.Failed != 1 || r.UnallocatedGPUs != 1 || r.Fragmentation != want {
			t.Errorf("%s with CPU: %+v", name, r)
		}
		r = packed(t, tr, name, []trace.Node{{Name: "n", GPUs: 2}})
		if r.Placed != 2 || r.UnallocatedGPUs != 0 {
			t.Errorf("%s without CPU: %+v", name, r)
		}
	}
	// Memory binds the same way.
	short := []trace.Node{{Name: "n", GPUs: 2, CPUMilli: 64000, MemoryMiB: 1536}}
	if r := packed(t, tr, "allot", short); r.Placed != 1 || r.Failed != 1 {
		t.Errorf("allot with little memory: %+v", r)
	}
}

// mixedTrace is a few hundred jobs of varied sizes, CPU and memory, and a
// node list of four node sizes, sized so that the demand passes the
// capacity.
func mixedTrace() (*trace.Trace, []trace.Node) {
	sizes := []int32{1, 1, 1, 1, 1, 2, 1, 4, 1, 8}
	var jobs []trace.Job
	for i := range 400 {
		j := job(fmt.Sprintf("j%03d", i), "q", int64(i*7%300), 100, sizes[i%len(sizes)], 0)
		j.CPUMilli = int64(2000 + i*1300%14000)
		j.MemoryMiB = int64(4096 + i*2900%60000)
		jobs = append(jobs, j)
	}
	trace.SortJobs(jobs)
	var nodes []trace.Node
	for i, g := range []int32{8, 2, 4, 8, 1, 2, 8, 2, 8, 4} {
		for k := range 6 {
			nodes = append(nodes, trace.Node{Name: fmt.Sprintf("n%d-%d", i, k), GPUs: g, CPUMilli: int64(g) * 7000, MemoryMiB: int64(g) * 49152})
		}
	}
	return &trace.Trace{Jobs: jobs}, nodes
}

func TestPackIsDeterministic(t *testing.T) {
	tr, nodes := mixedTrace()
	for _, p := range Policies() {
		var out [2][]byte
		for k := range out {
			r, err := Pack(tr, p, Options{Nodes: nodes})
			if err != nil {
				t.Fatal(err)
			}
			checkPackCounts(t, r)
			if r.Full == nil || r.Failed == 0 {
				t.Fatalf("%s: the demand %d should pass the capacity %d: %+v", p.Name, r.RequestedGPUs, r.GPUs, r)
			}
			out[k], _ = json.Marshal(r)
		}
		if !bytes.Equal(out[0], out[1]) {
			t.Fatalf("%s: two replays differ", p.Name)
		}
	}
}

// The replay's own books agree with the store's: what allot placed is
// what the snapshot holds, and the simulator's binding measure, run on the
// snapshot's free capacity, gives allot's figures. The first quarter of
// the arrivals (some 210 of the 282 GPUs) leaves room to measure.
func TestPackAgreesWithTheStore(t *testing.T) {
	tr, nodes := mixedTrace()
	p, _ := PolicyByName("allot")
	pk, err := newPacker(tr, p, Options{Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	pk.order = pk.order[:len(pk.order)/4]
	if err := pk.replay(); err != nil {
		t.Fatal(err)
	}
	r := pk.finish()
	s := pk.st.Load()
	if free := s.FreeGPUs(); r.UnallocatedGPUs != free || s.NumPending() != 0 || len(s.RunningIDs()) != r.Placed {
		t.Fatalf("replay: %d unallocated, %d placed; store: %d free, %d running, %d pending",
			r.UnallocatedGPUs, r.Placed, free, len(s.RunningIDs()), s.NumPending())
	}
	if !slices.Contains(s.Resources(), "cpu") || !slices.Contains(s.Resources(), "memory") {
		t.Fatalf("resources %v: CPU and memory not booked", s.Resources())
	}
	for i := range pk.free {
		v, ok := s.NodeFree("n" + strconv.Itoa(i))
		if !ok {
			t.Fatalf("no node %s", "n"+strconv.Itoa(i))
		}
		pk.free[i] = room{gpus: int32(v["gpu"]), cpu: v["cpu"], mem: v["memory"]}
	}
	mine, allots := pk.measureBinding(pk.mix), r.Fragmentation
	if mine.NodesWithFree != allots.NodesWithFree || mine.StrandedNodes != allots.StrandedNodes || mine.FreeGPUs != allots.FreeGPUs ||
		math.Abs(mine.ExpectedStranded-allots.ExpectedStranded) > 1e-9 {
		t.Fatalf("binding measure %+v, allot's %+v", mine, allots)
	}
	if allots.FreeGPUs == 0 || allots.ExpectedStranded == 0 {
		t.Fatalf("nothing to compare: %+v", allots)
	}
}

func TestPackRefusesBadInput(t *testing.T) {
	p, _ := PolicyByName("allot")
	nodes := []trace.Node{{Name: "n", GPUs: 8}}
	one := &trace.Trace{Jobs: []trace.Job{job("a", "q", 0, 10, 1, 0)}}
	bigCPU := job("a", "q", 0, 10, 1, 0)
	bigCPU.CPUMilli = -1
	for _, c := range []struct {
		name string
		tr   *trace.Trace
		o    Options
	}{
		{"empty trace", &trace.Trace{}, Options{Nodes: nodes}},
		{"no cluster", one, Options{}},
		{"no GPUs on the nodes", one, Options{Nodes: []trace.Node{{Name: "cpu", CPUMilli: 1000}}}},
		{"node memory out of range", one, Options{Nodes: []trace.Node{{Name: "n", GPUs: 1, MemoryMiB: math.MaxInt64}}}},
		{"duplicate job", &trace.Trace{Jobs: []trace.Job{job("a", "q", 0, 10, 1, 0), job("a", "q", 0, 10, 1, 0)}}, Options{Nodes: nodes}},
		{"job without GPUs", &trace.Trace{Jobs: []trace.Job{job("a", "q", 0, 10, 0, 0)}}, Options{Nodes: nodes}},
		{"negative CPU", &trace.Trace{Jobs: []trace.Job{bigCPU}}, Options{Nodes: nodes}},
	} {
		if r, err := Pack(c.tr, p, c.o); err == nil {
			t.Errorf("%s: accepted, %+v", c.name, r)
		}
	}
}

// A pod that asks more CPU than any node has, though not more than the
// cluster's CPU quota, is refused by allot's placer and, under kueue,
// admitted on quota and then unbound: both count it failed, and kueue
// gives its quota back, or the two pods after it could not both be
// admitted.
func TestPackNeverFits(t *testing.T) {
	wide, x, y := job("wide", "q", 0, 10, 4, 0), job("x", "q", 1, 10, 4, 0), job("y", "q", 2, 10, 4, 0)
	wide.CPUMilli, x.CPUMilli, y.CPUMilli = 20000, 16000, 16000
	tr := &trace.Trace{Jobs: []trace.Job{wide, x, y}}
	nodes := []trace.Node{{Name: "a", GPUs: 4, CPUMilli: 16000}, {Name: "b", GPUs: 4, CPUMilli: 16000}}
	for _, name := range []string{"kueue", "allot", "fifo"} {
		r := packed(t, tr, name, nodes)
		checkPackCounts(t, r)
		if r.Placed != 2 || r.Failed != 1 || r.UnallocatedGPUs != 0 {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

// TestPackOpenB replays the whole openb pod list on its node list under
// every policy. It is left out under the race detector: the replay runs on
// one goroutine, and the detector would stretch its 28,000 decisions to
// some twenty seconds.
func TestPackOpenB(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("replays 7,064 pods under four policies")
	}
	const pods, nodes = "../../../shared/traces/openb_pod_list_default.csv", "../../../shared/traces/openb_node_list_gpu_node.csv"
	tr, err := trace.LoadOpenB(pods, nodes, trace.OpenBOptions{KeepUnscheduled: true})
	if err != nil {
		t.Skipf("the openb trace is not here: %v", err)
	}
	for _, p := range Policies() {
		r, err := Pack(tr, p, Options{Nodes: tr.Nodes})
		if err != nil {
			t.Fatal(err)
		}
		checkPackCounts(t, r)
		if r.GPUs != 6212 || r.Pods != 7064 || r.RequestedGPUs != 7433 || r.Full == nil {
			t.Fatalf("%s: %d GPUs, %d pods asking %d GPUs, 100%% moment %v; want 6,212, 7,064 and 7,433", p.Name, r.GPUs, r.Pods, r.RequestedGPUs, r.Full)
		}
		t.Logf("%s: placed %d, failed %d; unallocated %d at 100%% demand, %d at the end; frag nodes %.1f%%, GPUs %.1f%%",
			p.Name, r.Placed, r.Failed, r.Full.UnallocatedGPUs, r.UnallocatedGPUs, 100*r.Fragmentation.NodeShare, 100*r.Fragmentation.StrandedShare)
	}
}
