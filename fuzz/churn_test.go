package fuzz

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	gofuzz "github.com/google/gofuzz"

	"github.com/allot-sched/allot"
)

// FuzzChurn applies store events to FuzzDecide's worlds, the churn events
// (nodes added, removed and described anew, queues and cohorts removed,
// flavors added and removed, levels and resources declared anew) among
// the others and the world's requests decided and committed in
// between. No event may panic; an event the store refuses must publish
// nothing, with an error callers can tell (a *allot.BuildError or one of
// the sentinel errors); after every step the snapshot's own Builder must
// build it again: the same running and pending workloads, free GPUs,
// fragmentation, admission order and decisions, and the same Builder.
func FuzzChurn(f *testing.F) {
	for _, seed := range decideSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkChurn(t, genChurn(data))
	})
}

// FuzzChurnRoom is FuzzChurn on a snapshot that keeps one to three vacant
// node slots a rack (Options.NodeRoom): nodes added, removed and moved
// take and leave slots in place, and the snapshot must still be the one
// its own Builder builds.
func FuzzChurnRoom(f *testing.F) {
	for _, seed := range decideSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w := genChurn(data)
		w.B.Options.NodeRoom = 1 + len(data)%3
		checkChurn(t, w)
	})
}

// FuzzChurnTwoPhase is FuzzChurn on a store that preempts in two phases:
// after every step the victims still evicting terminate, one by one, and
// then nothing may be left in flight and the state must be the one its
// own Builder builds, as with one phase.
func FuzzChurnTwoPhase(f *testing.F) {
	for _, seed := range decideSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w := genChurn(data)
		w.B.Options.TwoPhasePreemption = true
		w.settle = true
		checkChurn(t, w)
	})
}

// churnWorld is a world and the steps to run on a store of it: an event,
// or nil for deciding the world's next request (committed when it admits).
type churnWorld struct {
	world
	Steps []allot.Event
	// settle terminates, after every step, the victims still evicting.
	settle bool
	// tweaks are the steps worked out when they come (their place in
	// Steps holds a SetNode naming the node).
	tweaks map[int]*tweak
}

// genChurn generates the world as gen does and the steps from the same
// bytes, naming mostly what the world has.
func genChurn(data []byte) churnWorld {
	w := churnWorld{world: gen(data)}
	p := &namePools{levels: w.B.Levels, resources: w.B.Resources, tenants: []string{"t1", "t2"}}
	if len(p.resources) == 0 {
		p.resources = allot.DefaultResources
	}
	for _, f := range w.B.Flavors {
		p.flavors = append(p.flavors, f.Name)
	}
	if len(p.flavors) == 0 {
		p.flavors = []string{"none"}
	}
	for _, n := range w.B.Nodes {
		p.nodes = append(p.nodes, n.Name)
	}
	for _, q := range w.B.Queues {
		p.queues = append(p.queues, q.Name)
	}
	for _, c := range w.B.Cohorts {
		p.cohorts = append(p.cohorts, c.Name)
	}
	for _, r := range w.B.Running {
		p.ids = append(p.ids, r.ID)
	}
	w.tweaks = map[int]*tweak{}
	gofuzz.NewFromGoFuzz(data).NilChance(0).Funcs(func(s *[]allot.Event, c gofuzz.Continue) {
		p.hostile = c.Intn(4) == 0
		for i := range 2 + c.Intn(14) {
			if len(p.nodes) > 0 && c.Intn(5) == 0 {
				tw := &tweak{Node: p.pick(c, p.nodes), GPUs: c.Intn(3) - 1, CPU: c.Intn(3) - 1, Taint: c.Intn(3) - 1,
					MaxPods: int32(c.Intn(4) * 2), Cordon: c.Intn(3) == 0}
				w.tweaks[len(*s)] = tw
				*s = append(*s, allot.SetNode{Node: allot.Node{Name: tw.Node}})
				continue
			}
			*s = append(*s, p.churnEvent(c, i))
		}
	}).Fuzz(&w.Steps)
	return w
}

// tweak is a SetNode worked out when its step comes: the node as the
// store describes it then, a little changed, as a live cluster mostly
// changes a node (capacity, GPUs gone bad or back, a taint, a pod limit,
// a cordon), so that it keeps its place in the topology's order.
type tweak struct {
	Node string
	// GPUs and CPU are -1, 0 or 1: one fewer, as many, one more (of the
	// declared GPU resource, of "cpu" a thousand); Taint takes one off,
	// leaves them, or puts one on.
	GPUs, CPU, Taint int
	MaxPods          int32
	Cordon           bool
}

// on is the tweak's SetNode on snapshot s, or nil when the node is gone.
func (tw *tweak) on(s *allot.Snapshot) allot.Event {
	n, ok := s.Node(tw.Node)
	if !ok {
		return nil
	}
	n.Capacity = maps.Clone(n.Capacity)
	for name, v := range n.Capacity {
		switch {
		case name == s.GPUResource() && v+int64(tw.GPUs) >= 0:
			n.Capacity[name] = v + int64(tw.GPUs)
		case name == "cpu" && v+1000*int64(tw.CPU) >= 0:
			n.Capacity[name] = v + 1000*int64(tw.CPU)
		}
	}
	switch {
	case tw.Taint < 0 && len(n.Taints) > 0:
		n.Taints = n.Taints[1:]
	case tw.Taint > 0:
		n.Taints = append(slices.Clone(n.Taints), allot.Taint{Key: "fuzz", Effect: allot.TaintNoSchedule})
	}
	n.MaxPods = tw.MaxPods
	n.Unschedulable = n.Unschedulable != tw.Cordon
	return allot.SetNode{Node: n}
}

// churnEvent is a step: mostly a churn event, else another event or a
// decision (nil).
func (p *namePools) churnEvent(c gofuzz.Continue, i int) allot.Event {
	switch c.Intn(15) {
	case 12:
		// A flavor added, selecting by a level's label now and then, and
		// now and then with a node described anew onto it.
		f := allot.Flavor{Name: fmt.Sprintf("fz%d", i), Spot: c.Intn(3) == 0}
		if p.bad(c, 6) {
			f.Name = p.pick(c, p.flavors)
		}
		if len(p.levels) > 0 && c.Intn(3) == 0 {
			f.NodeLabels = map[string]string{p.levels[c.Intn(len(p.levels))]: fmt.Sprintf("a%d", c.Intn(2))}
		}
		ev := allot.AddFlavor{Flavor: f}
		if c.Intn(3) == 0 {
			ev.Before = p.pick(c, p.flavors)
		}
		if c.Intn(3) == 0 {
			var n allot.Node
			p.node(&n, c)
			n.Name, n.Flavor = p.pick(c, p.nodes), f.Name
			ev.Nodes = []allot.Node{n}
		}
		p.flavors = append(p.flavors, f.Name)
		return ev
	case 13:
		return allot.RemoveFlavor{Flavor: p.pick(c, p.flavors)}
	case 14:
		if c.Intn(2) == 0 {
			levels := slices.Clone(p.levels)
			switch {
			case len(levels) > 0 && c.Intn(2) == 0:
				levels = levels[1:]
			case p.bad(c, 3):
				levels = append(levels, "node")
			default:
				levels = append([]string{"zone"}, levels...)
			}
			return allot.SetLevels{Levels: levels}
		}
		res := slices.Clone(p.resources)
		if len(res) > 1 && c.Intn(2) == 0 {
			res = res[:len(res)-1]
		} else {
			res = append(res, "extra")
		}
		return allot.SetResources{Resources: res}
	case 0, 1:
		var n allot.Node
		p.node(&n, c)
		n.Name = fmt.Sprintf("x%d", i)
		if p.bad(c, 4) || c.Intn(6) == 0 {
			n.Name = p.pick(c, p.nodes)
		}
		p.nodes = append(p.nodes, n.Name)
		return allot.AddNode{Node: n}
	case 2:
		return allot.RemoveNode{Node: p.pick(c, p.nodes)}
	case 3, 4:
		var n allot.Node
		p.node(&n, c)
		n.Name = p.pick(c, p.nodes)
		return allot.SetNode{Node: n}
	case 5:
		return allot.RemoveQueue{Queue: p.pick(c, p.queues)}
	case 6:
		return allot.RemoveCohort{Cohort: p.pick(c, p.cohorts)}
	case 7:
		var q allot.Queue
		p.queue(&q, c)
		q.Name = p.pick(c, append(slices.Clone(p.queues), "qz"))
		return allot.SetQueue{Queue: q}
	case 8, 9:
		return nil
	}
	return p.event(c, i)
}

// checkChurn runs w's steps on a store of its snapshot and checks each.
func checkChurn(t *testing.T, w churnWorld) {
	t.Helper()
	s, err, panicked := build(&w.B)
	if panicked != nil {
		t.Fatalf("Build panicked: %v", panicked)
	}
	if err != nil {
		return
	}
	store := allot.NewStore(s)
	next := 0
	for i, ev := range w.Steps {
		label := fmt.Sprintf("step %d (%T %+v)", i, ev, ev)
		before := store.Load()
		if ev == nil {
			if next >= len(w.Requests) {
				continue
			}
			r := w.Requests[next]
			next++
			d := allot.Decide(before, r)
			if d.Verdict != allot.VerdictAdmit && d.Verdict != allot.VerdictPreempt {
				continue
			}
			if _, err, panicked := commit(store, d); panicked != nil || err != nil {
				t.Fatalf("%s: commit of %q on the version decided on: %v %v", label, r.ID, err, panicked)
			}
		} else {
			if tw := w.tweaks[i]; tw != nil {
				if ev = tw.on(before); ev == nil {
					continue
				}
				label = fmt.Sprintf("step %d (%T %+v)", i, ev, ev)
			}
			_, err, panicked := apply(store, ev)
			if panicked != nil {
				t.Fatalf("%s panicked: %v", label, panicked)
			}
			if err != nil {
				if store.Load() != before {
					t.Fatalf("%s refused (%v) but published version %d", label, err, store.Load().Version())
				}
				if !knownError(err) {
					t.Fatalf("%s: error %v (%T) is neither a *allot.BuildError nor a sentinel", label, err, err)
				}
				continue
			}
		}
		if w.settle {
			for _, id := range store.Load().EvictingIDs() {
				if _, err, panicked := apply(store, allot.Terminated{ID: id}); err != nil || panicked != nil {
					t.Fatalf("%s: Terminated{%q}: %v %v", label, id, err, panicked)
				}
			}
			if s := store.Load(); len(s.EvictingIDs()) != 0 || len(s.HeldIDs()) != 0 {
				t.Fatalf("%s: every victim gone, still in flight: evicting %v, held %v", label, s.EvictingIDs(), s.HeldIDs())
			}
		}
		rebuilt(t, label, store.Load(), w.Requests)
	}
}

// knownError reports whether err is one a caller can tell apart.
func knownError(err error) bool {
	var be *allot.BuildError
	if errors.As(err, &be) {
		return true
	}
	for _, s := range []error{allot.ErrInvalid, allot.ErrDuplicateID, allot.ErrUnknownNode, allot.ErrUnknownQueue, allot.ErrUnknownCohort,
		allot.ErrUnknownWorkload, allot.ErrInUse, allot.ErrOverCapacity, allot.ErrUnknownFlavor, allot.ErrInFlight} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// rebuilt checks that s's Builder builds s again. Build takes running
// workloads that are not valid requests (a negative expected run time, an
// unknown flavor among those allowed); evicted, one is a pending workload
// Build refuses, and s's Builder cannot build: such an s is left out.
func rebuilt(t *testing.T, label string, s *allot.Snapshot, reqs []allot.Request) {
	t.Helper()
	for _, w := range s.PendingWorkloads() {
		if d := allot.Decide(s, allot.Request(w)); d.Reason == allot.InvalidRequest || w.SubmittedAt > s.Now() {
			return
		}
	}
	b := s.Builder()
	again, err, panicked := build(&b)
	if panicked != nil || err != nil {
		t.Fatalf("%s: the snapshot's Builder does not build: %v %v", label, err, panicked)
	}
	type view struct {
		Version          uint64
		Running, Pending []string
		FreeGPUs         int64
		Fragmentation    any
		Order            []string
		Decisions        []allot.Decision
		Builder          allot.Builder
		Nodes            []allot.Node
		Queues           []allot.QueueStatus
		Cohorts          []allot.CohortStatus
		Placed, Waiting  []allot.Workload
	}
	read := func(s *allot.Snapshot) []byte {
		v := view{Version: s.Version(), Running: s.RunningIDs(), Pending: s.PendingIDs(), FreeGPUs: s.FreeGPUs(),
			Fragmentation: s.Fragmentation(), Order: allot.Order(s), Builder: s.Builder(), Nodes: s.Nodes(), Waiting: s.PendingWorkloads()}
		for _, r := range reqs {
			v.Decisions = append(v.Decisions, allot.Decide(s, r))
		}
		for _, q := range s.Queues() {
			st, _ := s.QueueStatus(q.Name)
			v.Queues = append(v.Queues, st)
		}
		for _, c := range s.Cohorts() {
			st, _ := s.CohortStatus(c.Name)
			v.Cohorts = append(v.Cohorts, st)
		}
		for _, id := range s.RunningIDs() {
			w, _ := s.Running(id)
			v.Placed = append(v.Placed, w)
		}
		return mustMarshal(v)
	}
	if a, b := read(s), read(again); string(a) != string(b) {
		t.Fatalf("%s: the snapshot and the build of its Builder differ:\n%s\n%s", label, clip(a), clip(b))
	}
}

// TestChurnGeneratedWorlds runs FuzzChurn's checks on a fixed set of
// pseudo-random inputs, so that plain go test covers more than the seeds,
// and checks that the churn events are applied and refused, both.
func TestChurnGeneratedWorlds(t *testing.T) {
	applied, refused, n := generatedWorlds(t, 13, 17, genChurn)
	t.Logf("applied %v; refused %v", applied, refused)
	for _, ev := range []string{"AddNode", "RemoveNode", "SetNode", "RemoveQueue", "RemoveCohort", "AddFlavor", "RemoveFlavor", "SetLevels", "SetResources"} {
		if k := "allot." + ev; applied[k] == 0 || refused[k] == 0 {
			t.Errorf("%s: %d applied, %d refused in %d worlds", ev, applied[k], refused[k], n)
		}
	}
}

// generatedWorlds runs checkChurn on worlds gen makes of pseudo-random
// inputs (the PCG seeded with seed1, seed2), and counts by event type, on
// a store of each world's own, the steps applied and refused; n is the
// number of worlds.
func generatedWorlds(t *testing.T, seed1, seed2 uint64, gen func([]byte) churnWorld) (applied, refused map[string]int, n int) {
	t.Helper()
	n = 600
	if testing.Short() {
		n = 100
	}
	rng := rand.New(rand.NewPCG(seed1, seed2))
	applied, refused = map[string]int{}, map[string]int{}
	for range n {
		data := randomInput(rng, 600)
		w := gen(data)
		checkChurn(t, w)
		if t.Failed() {
			t.Fatalf("input %x", data)
		}
		s, err, _ := build(&w.B)
		if err != nil {
			continue
		}
		st := allot.NewStore(s)
		for _, ev := range w.Steps {
			if ev == nil {
				continue
			}
			name := fmt.Sprintf("%T", ev)
			if _, err := st.Apply(ev); err != nil {
				refused[name]++
			} else {
				applied[name]++
			}
		}
	}
	return applied, refused, n
}
