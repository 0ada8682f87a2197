package allot_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/allot-sched/allot"
)

// rackCluster is 4 racks of 4 nodes with 8 GPUs and 64 CPU each.
func rackCluster(t testing.TB) *allot.Snapshot {
	t.Helper()
	b := &allot.Builder{
		Resources: []string{"gpu", "cpu"},
		Levels:    []string{"rack"},
		Flavors:   []allot.Flavor{{Name: "h100"}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "h100",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 1000}, {Name: "cpu", Nominal: 1 << 40}}}}}},
	}
	for i := 0; i < 16; i++ {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%02d", i), Flavor: "h100",
			Labels: map[string]string{"rack": fmt.Sprintf("r%d", i/4)}, Capacity: allot.Resources{"gpu": 8, "cpu": 64_000}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func gangReq(id string, pods, gpus int, required string) allot.Request {
	return allot.Request{ID: id, Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: int32(pods),
		PerPod: allot.Resources{"gpu": int64(gpus), "cpu": 1000}, Topology: allot.TopologyRequest{Required: required}}}}
}

// TestStoreReadersAndWriter runs many readers, each deciding on whatever
// snapshot it loads, against one writer that commits and finishes. Run with
// -race: readers never lock and never see a torn snapshot.
func TestStoreReadersAndWriter(t *testing.T) {
	st := allot.NewStore(rackCluster(t))
	const total = 16 * 8
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for r := 0; r < 6; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			last := uint64(0)
			for !stop.Load() {
				s := st.Load()
				if s.Version() < last {
					errs <- fmt.Errorf("reader %d: version went back from %d to %d", r, last, s.Version())
					return
				}
				last = s.Version()
				held := int64(0)
				for _, id := range s.RunningIDs() {
					w, _ := s.Running(id)
					for _, ps := range w.PodSets {
						held += int64(ps.Count) * ps.PerPod["gpu"]
					}
				}
				if held+s.FreeGPUs() != total {
					errs <- fmt.Errorf("reader %d: version %d holds %d and frees %d of %d GPUs", r, s.Version(), held, s.FreeGPUs(), total)
					return
				}
				d := allot.Decide(s, gangReq(fmt.Sprintf("probe-%d", r), 2, 4, "rack"))
				if d.Version != s.Version() {
					errs <- fmt.Errorf("reader %d: decision on version %d says %d", r, s.Version(), d.Version)
					return
				}
			}
		}(r)
	}
	for i := 0; i < 400; i++ {
		id := fmt.Sprintf("w%d", i)
		d := allot.Decide(st.Load(), gangReq(id, 1+i%4, 8, "rack"))
		if d.Verdict == allot.VerdictAdmit {
			if _, err := st.Commit(d); err != nil {
				t.Fatalf("commit %s: %v", id, err)
			}
		}
		if i >= 3 {
			_, _ = st.Apply(allot.Finish{ID: fmt.Sprintf("w%d", i-3)})
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCommitConflict(t *testing.T) {
	st := allot.NewStore(rackCluster(t))
	s0 := st.Load()
	// Two decisions on the same version choose the same tightest rack.
	a := allot.Decide(s0, gangReq("a", 4, 8, "rack"))
	b := allot.Decide(s0, gangReq("b", 4, 8, "rack"))
	if a.Verdict != allot.VerdictAdmit || b.Verdict != allot.VerdictAdmit {
		t.Fatalf("want two admissions, got %v / %v", a.Reason, b.Reason)
	}
	if a.Placement[0].Node != b.Placement[0].Node {
		t.Fatalf("test premise: both decisions should pick the same nodes, got %s and %s", a.Placement[0].Node, b.Placement[0].Node)
	}
	s1, err := st.Commit(a)
	if err != nil {
		t.Fatal(err)
	}
	if s1.Version() != s0.Version()+1 || s1.FreeGPUs() != s0.FreeGPUs()-32 {
		t.Fatalf("after commit: version %d free %d", s1.Version(), s1.FreeGPUs())
	}
	_, err = st.Commit(b)
	var ce *allot.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, allot.ErrConflict) {
		t.Fatalf("want a conflict, got %v", err)
	}
	if ce.DecidedOn != s0.Version() || ce.Current != s1.Version() {
		t.Fatalf("conflict versions %d/%d", ce.DecidedOn, ce.Current)
	}
	if st.Load() != s1 || st.Load().FreeGPUs() != s1.FreeGPUs() {
		t.Fatal("a refused commit changed the store")
	}
	// Committing the same decision twice is refused too.
	if _, err := st.Commit(a); !errors.Is(err, allot.ErrConflict) {
		t.Fatalf("double commit: %v", err)
	}
	// A stale decision whose nodes are still free commits on a newer version.
	c := allot.Decide(s0, gangReq("c", 1, 8, ""))
	if _, err := st.Apply(allot.AdvanceTime{Seconds: 10}); err != nil {
		t.Fatal(err)
	}
	if a.Placement[0].Node == c.Placement[0].Node {
		t.Skip("c landed where a did; nothing to show")
	}
	if _, err := st.Commit(c); err != nil {
		t.Fatalf("stale but valid decision refused: %v", err)
	}
}

func TestCommitRechecksQuotaAndHold(t *testing.T) {
	b := &allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "default"}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "default",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}}},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(s)
	req := func(id string) allot.Request {
		return allot.Request{ID: id, Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 6}}}}
	}
	x, y := allot.Decide(s, req("x")), allot.Decide(s, req("y"))
	if _, err := st.Commit(x); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Commit(y); !errors.Is(err, allot.ErrConflict) {
		t.Fatalf("quota: want a conflict, got %v", err)
	}
	if got := st.Load().Usage("q", "default", "gpu"); got != 6 {
		t.Fatalf("usage %d, want 6", got)
	}
	if _, err := st.Apply(allot.Finish{ID: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply(allot.SetQueue{Queue: allot.Queue{Name: "q", Hold: true, Quota: b.Queues[0].Quota}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Commit(y); !errors.Is(err, allot.ErrConflict) {
		t.Fatalf("hold: want a conflict, got %v", err)
	}
	if d := allot.Decide(st.Load(), req("z")); d.Reason != allot.QueueHeld {
		t.Fatalf("held queue: %v", d.Reason)
	}
}

func TestStoreEvents(t *testing.T) {
	st := allot.NewStore(rackCluster(t))
	d := allot.Decide(st.Load(), gangReq("w", 2, 8, "rack"))
	if _, err := st.Commit(d); err != nil {
		t.Fatal(err)
	}
	node := d.Placement[0].Node
	steps := []struct {
		ev      allot.Event
		wantErr error
	}{
		{allot.Checkpoint{ID: "w"}, nil},
		{allot.Checkpoint{ID: "nope"}, allot.ErrUnknownWorkload},
		{allot.NodeCordon{Node: node, Cordoned: true}, nil},
		{allot.NodeDown{Node: "nope"}, allot.ErrUnknownNode},
		{allot.AdvanceTime{Seconds: -1}, allot.ErrInvalid},
		{allot.AdvanceTime{Seconds: 60}, nil},
		{allot.Submit{Workload: allot.Workload{ID: "w", Queue: "q"}}, allot.ErrDuplicateID},
		{allot.Submit{Workload: allot.Workload(gangReq("p", 1, 1, ""))}, nil},
		{allot.Evict{ID: "w"}, nil},
		{allot.Finish{ID: "w"}, allot.ErrUnknownWorkload},
		{allot.Submit{Workload: allot.Workload(gangReq("gone", 1, 1, ""))}, nil},
		{allot.Withdraw{ID: "gone"}, nil},
		{allot.Withdraw{ID: "gone"}, allot.ErrUnknownWorkload},
	}
	for i, s := range steps {
		_, err := st.Apply(s.ev)
		if !errors.Is(err, s.wantErr) {
			t.Fatalf("step %d %T: got %v, want %v", i, s.ev, err, s.wantErr)
		}
	}
	s := st.Load()
	if got := s.PendingIDs(); fmt.Sprint(got) != "[p w]" {
		t.Fatalf("pending %v", got)
	}
	if s.Now() != 60 || s.FreeGPUs() != 128 || len(s.RunningIDs()) != 0 {
		t.Fatalf("now %d free %d running %v", s.Now(), s.FreeGPUs(), s.RunningIDs())
	}
	// The cordoned node is free but takes nothing new.
	d = allot.Decide(s, allot.Request{ID: "x", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 16, PerPod: allot.Resources{"gpu": 8}}}})
	if d.Reason != allot.InsufficientCapacity {
		t.Fatalf("with a cordoned node: %v %s", d.Reason, d.Message)
	}
	if _, err := st.Apply(allot.NodeCooldown{Node: node, Until: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply(allot.NodeCordon{Node: node, Cordoned: false}); err != nil {
		t.Fatal(err)
	}
	d = allot.Decide(st.Load(), allot.Request{ID: "x", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 16, PerPod: allot.Resources{"gpu": 8}}}})
	if d.Reason != allot.Cooldown {
		t.Fatalf("cooling node: %v %s", d.Reason, d.Message)
	}
	if _, err := st.Apply(allot.AdvanceTime{Seconds: 40}); err != nil {
		t.Fatal(err)
	}
	d = allot.Decide(st.Load(), allot.Request{ID: "x", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 16, PerPod: allot.Resources{"gpu": 8}}}})
	if d.Verdict != allot.VerdictAdmit {
		t.Fatalf("after cooldown: %v %s", d.Reason, d.Message)
	}
}

func TestCommitPreemption(t *testing.T) {
	b := allot.Builder{
		Resources: []string{"gpu"},
		Levels:    []string{"rack"},
		Flavors:   []allot.Flavor{{Name: "h100"}},
		Nodes: []allot.Node{
			{Name: "n0", Flavor: "h100", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8}},
			{Name: "n1", Flavor: "h100", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8}},
		},
		Queues: []allot.Queue{{Name: "q", Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"},
			Quota: []allot.FlavorQuota{{Flavor: "h100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 16}}}}}},
		Running: []allot.Workload{
			{ID: "low", Queue: "q", Priority: 1, PodSets: []allot.PodSet{{Name: "m", Count: 1, Flavor: "h100", Nodes: []string{"n0"}, PerPod: allot.Resources{"gpu": 8}}}},
			{ID: "high", Queue: "q", Priority: 9, PodSets: []allot.PodSet{{Name: "m", Count: 1, Flavor: "h100", Nodes: []string{"n1"}, PerPod: allot.Resources{"gpu": 8}}}},
		},
		Now: 100,
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(s)
	d := allot.Decide(s, allot.Request{ID: "p", Queue: "q", Priority: 5, PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 8}}}})
	if d.Verdict != allot.VerdictPreempt || len(d.Victims) != 1 || d.Victims[0].ID != "low" || d.Placement[0].Node != "n0" {
		t.Fatalf("%v %s victims %+v placement %+v", d.Reason, d.Message, d.Victims, d.Placement)
	}
	if v := d.Victims[0]; v.Preemptor != "p" || v.LostGPUSeconds != 800 || v.Reason != "InClusterQueue" || v.Policy != "withinQueue: LowerPriority" {
		t.Fatalf("audit %+v", v)
	}
	// Once the victim is gone another way, the decision no longer holds.
	other := allot.NewStore(s)
	if _, err := other.Apply(allot.Finish{ID: "low"}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Commit(d); !errors.Is(err, allot.ErrConflict) {
		t.Fatalf("victim gone: %v", err)
	}
	s2, err := st.Commit(d)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(s2.RunningIDs()) != "[high p]" || fmt.Sprint(s2.PendingIDs()) != "[low]" {
		t.Fatalf("running %v pending %v", s2.RunningIDs(), s2.PendingIDs())
	}
	ev := s2.Evictions()
	if len(ev) != 1 || ev[0].ID != "low" || ev[0].Preemptor != "p" || ev[0].At != 100 {
		t.Fatalf("evictions %+v", ev)
	}
	if len(s.Evictions()) != 0 {
		t.Fatal("an older snapshot saw a later eviction")
	}
}

// TestStoresFromOneSnapshot starts stores from one published snapshot on
// many goroutines at once, each admitting and evicting its own workloads.
// Run with -race: starting a store writes nothing to the snapshot, the
// stores never see each other's changes, and the snapshot is unchanged.
func TestStoresFromOneSnapshot(t *testing.T) {
	seed := allot.NewStore(rackCluster(t))
	// Three evictions leave the eviction list with room to spare, so a
	// store appending to it in place would write into the others' arrays.
	for i := 0; i < 3; i++ {
		id := fmt.Sprintf("old%d", i)
		if _, err := seed.Commit(allot.Decide(seed.Load(), gangReq(id, 1, 8, "rack"))); err != nil {
			t.Fatal(err)
		}
		if _, err := seed.Apply(allot.Evict{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := seed.Commit(allot.Decide(seed.Load(), gangReq("kept", 2, 8, "rack"))); err != nil {
		t.Fatal(err)
	}
	base := seed.Load()
	wantIDs, wantFree, wantEvictions := fmt.Sprint(base.RunningIDs()), base.FreeGPUs(), fmt.Sprint(base.Evictions())

	const stores = 6
	var wg sync.WaitGroup
	errs := make(chan error, stores)
	for g := 0; g < stores; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			st := allot.NewStore(base)
			for i := 0; i < 20; i++ {
				id := fmt.Sprintf("s%d-w%d", g, i)
				d := allot.Decide(st.Load(), gangReq(id, 1+(g+i)%2, 8, "rack"))
				if d.Verdict != allot.VerdictAdmit {
					continue
				}
				if _, err := st.Commit(d); err != nil {
					errs <- fmt.Errorf("store %d: commit %s: %v", g, id, err)
					return
				}
				if _, err := st.Apply(allot.Evict{ID: id}); err != nil {
					errs <- fmt.Errorf("store %d: evict %s: %v", g, id, err)
					return
				}
			}
			s := st.Load()
			if got := fmt.Sprint(s.RunningIDs()); got != wantIDs {
				errs <- fmt.Errorf("store %d runs %s, want only %s", g, got, wantIDs)
			}
			ev := s.Evictions()
			for _, e := range ev[3:] {
				if want := fmt.Sprintf("s%d-", g); len(e.ID) < len(want) || e.ID[:len(want)] != want {
					errs <- fmt.Errorf("store %d sees eviction %q of another store", g, e.ID)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := fmt.Sprint(base.RunningIDs()); got != wantIDs || base.FreeGPUs() != wantFree || fmt.Sprint(base.Evictions()) != wantEvictions {
		t.Fatalf("the snapshot changed: runs %s, %d GPUs free, evictions %s", got, base.FreeGPUs(), fmt.Sprint(base.Evictions()))
	}
}

// TestPublishedPendingSetUnchanged: versions share the pending set until
// one changes it; a submission or an admission from the queue must not
// reach a version published before it.
func TestPublishedPendingSetUnchanged(t *testing.T) {
	st := allot.NewStore(rackCluster(t))
	w := func(id string) allot.Workload { return allot.Workload(gangReq(id, 1, 8, "")) }
	if _, err := st.Apply(allot.Submit{Workload: w("a")}); err != nil {
		t.Fatal(err)
	}
	first := st.Load()
	if _, err := st.Apply(allot.Submit{Workload: w("b")}); err != nil {
		t.Fatal(err)
	}
	second := st.Load()
	if _, err := st.Commit(allot.Decide(second, gangReq("a", 1, 8, ""))); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    *allot.Snapshot
		want []string
	}{{first, []string{"a"}}, {second, []string{"a", "b"}}, {st.Load(), []string{"b"}}} {
		if got := c.s.PendingIDs(); !slices.Equal(got, c.want) {
			t.Fatalf("version %d holds %v pending, want %v", c.s.Version(), got, c.want)
		}
		if got := c.s.NumPending(); got != len(c.want) {
			t.Fatalf("version %d counts %d pending, want %d", c.s.Version(), got, len(c.want))
		}
	}
}

// commitRefused checks that committing d fails with want and leaves st as
// it was.
func commitRefused(t *testing.T, st *allot.Store, d allot.Decision, want error) {
	t.Helper()
	before := st.Load()
	var err error
	if p := catch(func() { _, err = st.Commit(d) }); p != nil {
		t.Fatalf("Commit panicked: %v", p)
	}
	if !errors.Is(err, want) {
		t.Fatalf("Commit: %v, want %v", err, want)
	}
	if st.Load() != before {
		t.Fatal("a refused commit published a version")
	}
	after, err := st.Apply(allot.AdvanceTime{})
	if err != nil {
		t.Fatal(err)
	}
	if after.FreeGPUs() != before.FreeGPUs() || slices.Compare(after.RunningIDs(), before.RunningIDs()) != 0 ||
		slices.Compare(after.PendingIDs(), before.PendingIDs()) != 0 || len(after.Evictions()) != len(before.Evictions()) {
		t.Fatalf("a refused commit changed the store")
	}
}
