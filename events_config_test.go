package allot_test

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

// selecting is churnBuilder with its h100 nodes chosen by label (kind=h100)
// rather than by name, so that a flavor added or relabelled may take them.
func selecting() allot.Builder {
	b := churnBuilder()
	b.Flavors[0].NodeLabels = map[string]string{"kind": "h100"}
	for i := range b.Nodes {
		if b.Nodes[i].Flavor == "h100" {
			b.Nodes[i].Flavor = ""
			b.Nodes[i].Labels["kind"] = "h100"
		}
	}
	return b
}

// selectingIdle is selecting with nothing running on rack r1 (n2, n3).
func selectingIdle() allot.Builder {
	b := selecting()
	b.Running = without(b.Running, func(w allot.Workload) bool { return w.ID == "small" })
	return b
}

// TestConfigEvents: each configuration event leaves the snapshot Build
// makes of the description it edits, or is refused with the error Build
// (or the event's own rule) gives, and changes nothing.
func TestConfigEvents(t *testing.T) {
	type tc struct {
		name string
		from allot.Builder
		ev   allot.Event
		// want edits a copy of from into the description the event leaves;
		// nil when the event is refused with err.
		want func(b *allot.Builder)
		err  error
	}
	b200 := allot.Flavor{Name: "b200", NodeLabels: map[string]string{"pool": "b200"}}
	moved := func(name string) allot.Node { // n2 runs nothing: moved to b200
		n, _ := buildAt(t, churnBuilder(), 0).Node(name)
		n.Flavor, n.Labels["pool"] = "b200", "b200"
		return n
	}
	unusedSpot := func() allot.Builder {
		b := churnBuilder()
		b.Queues[1].Quota = b.Queues[1].Quota[:2]
		b.Running = without(b.Running, func(w allot.Workload) bool { return w.ID == "quota-only" })
		return b
	}
	zoned := func(b allot.Builder) []allot.Node {
		var out []allot.Node
		for _, n := range buildAt(t, b, 0).Nodes() {
			n.Labels["zone"] = "z" + n.Labels["block"]
			out = append(out, n)
		}
		return out
	}
	cases := []tc{
		{name: "add last", from: churnBuilder(), ev: allot.AddFlavor{Flavor: allot.Flavor{Name: "b200"}},
			want: func(b *allot.Builder) { b.Flavors = append(b.Flavors, allot.Flavor{Name: "b200"}) }},
		{name: "add before, a node moved to it", from: churnBuilder(),
			ev: allot.AddFlavor{Flavor: b200, Before: "a100", Nodes: []allot.Node{moved("n2")}},
			want: func(b *allot.Builder) {
				b.Flavors = slices.Insert(b.Flavors, 1, b200)
				b.Nodes[2].Flavor, b.Nodes[2].Labels["pool"] = "b200", "b200"
			}},
		{name: "add selecting idle nodes by a kept label", from: selectingIdle(),
			ev: allot.AddFlavor{Flavor: allot.Flavor{Name: "h100-b0r1", NodeLabels: map[string]string{"kind": "h100", "rack": "r1"}}},
			want: func(b *allot.Builder) {
				b.Flavors = append(b.Flavors, allot.Flavor{Name: "h100-b0r1", NodeLabels: map[string]string{"kind": "h100", "rack": "r1"}})
			}},
		{name: "add selecting nodes that run h100 pods", from: selecting(),
			ev:  allot.AddFlavor{Flavor: allot.Flavor{Name: "h100-b1", NodeLabels: map[string]string{"kind": "h100", "block": "b1"}}},
			err: allot.ErrInvalid},
		{name: "add a known name", from: churnBuilder(), ev: allot.AddFlavor{Flavor: allot.Flavor{Name: "a100"}}, err: allot.ErrDuplicateID},
		{name: "add an empty name", from: churnBuilder(), ev: allot.AddFlavor{Flavor: allot.Flavor{}}, err: allot.ErrInvalid},
		{name: "add before an unknown flavor", from: churnBuilder(), ev: allot.AddFlavor{Flavor: b200, Before: "nope"}, err: allot.ErrUnknownFlavor},
		{name: "add with an unknown node", from: churnBuilder(), ev: allot.AddFlavor{Flavor: b200, Nodes: []allot.Node{{Name: "nope"}}}, err: allot.ErrUnknownNode},
		{name: "add with a node twice", from: churnBuilder(), ev: allot.AddFlavor{Flavor: b200, Nodes: []allot.Node{moved("n2"), moved("n2")}}, err: allot.ErrDuplicateID},

		{name: "remove an unused flavor", from: unusedSpot(), ev: allot.RemoveFlavor{Flavor: "spot"},
			want: func(b *allot.Builder) { b.Flavors = b.Flavors[:2] }},
		{name: "remove a flavor in use", from: churnBuilder(), ev: allot.RemoveFlavor{Flavor: "a100"}, err: allot.ErrInUse},
		{name: "remove an unknown flavor", from: churnBuilder(), ev: allot.RemoveFlavor{Flavor: "nope"}, err: allot.ErrUnknownFlavor},

		{name: "relabel without the nodes' labels", from: churnBuilder(),
			ev: allot.SetFlavor{Flavor: allot.Flavor{Name: "a100", NodeLabels: map[string]string{"pool": "a100"}}}, err: allot.ErrInvalid},
		{name: "relabel with the nodes' labels", from: churnBuilder(),
			ev: allot.SetFlavor{Flavor: allot.Flavor{Name: "a100", NodeLabels: map[string]string{"pool": "a100"}}, Nodes: func() []allot.Node {
				s := buildAt(t, churnBuilder(), 0)
				var out []allot.Node
				for _, name := range []string{"a0", "a1"} {
					n, _ := s.Node(name)
					n.Labels["pool"] = "a100"
					out = append(out, n)
				}
				return out
			}()},
			want: func(b *allot.Builder) {
				b.Flavors[1].NodeLabels = map[string]string{"pool": "a100"}
				b.Nodes[8].Labels["pool"], b.Nodes[9].Labels["pool"] = "a100", "a100"
			}},
		{name: "relabel: idle nodes move away", from: selectingIdle(),
			ev:   allot.SetFlavor{Flavor: allot.Flavor{Name: "spot", Spot: true, NodeLabels: map[string]string{"kind": "h100", "rack": "r1"}}},
			want: func(b *allot.Builder) { b.Flavors[2].NodeLabels = map[string]string{"kind": "h100", "rack": "r1"} }},
		{name: "relabel: running nodes would move", from: selecting(),
			ev:  allot.SetFlavor{Flavor: allot.Flavor{Name: "spot", Spot: true, NodeLabels: map[string]string{"kind": "h100", "rack": "r0"}}},
			err: allot.ErrInvalid},

		{name: "a level fewer", from: churnBuilder(), ev: allot.SetLevels{Levels: []string{"rack"}},
			want: func(b *allot.Builder) { b.Levels = []string{"rack"} }},
		{name: "a level more, labelled", from: churnBuilder(), ev: allot.SetLevels{Levels: []string{"zone", "block", "rack"}, Nodes: zoned(churnBuilder())},
			want: func(b *allot.Builder) {
				b.Levels = []string{"zone", "block", "rack"}
				for i := range b.Nodes {
					b.Nodes[i].Labels["zone"] = "z" + b.Nodes[i].Labels["block"]
				}
			}},
		{name: "a level more, unlabelled", from: churnBuilder(), ev: allot.SetLevels{Levels: []string{"zone", "block", "rack"}}, err: allot.ErrMissingLabel},
		{name: "a reserved level", from: churnBuilder(), ev: allot.SetLevels{Levels: []string{"node"}}, err: allot.ErrInvalid},
		{name: "a level twice", from: churnBuilder(), ev: allot.SetLevels{Levels: []string{"rack", "rack"}}, err: allot.ErrDuplicateID},

		{name: "a resource more", from: churnBuilder(), ev: allot.SetResources{Resources: []string{"gpu", "cpu", "rdma", "memory"}},
			want: func(b *allot.Builder) { b.Resources = []string{"gpu", "cpu", "rdma", "memory"} }},
		{name: "a resource quotas name, gone", from: churnBuilder(), ev: allot.SetResources{Resources: []string{"gpu", "cpu"}}, err: allot.ErrUnknownResource},
		{name: "a resource nodes carry, ignored", from: func() allot.Builder {
			b := churnBuilder()
			for i := range b.Queues {
				for j := range b.Queues[i].Quota {
					b.Queues[i].Quota[j].Resources = b.Queues[i].Quota[j].Resources[:2]
				}
			}
			return b
		}(), ev: allot.SetResources{Resources: []string{"gpu", "cpu"}, IgnoredResources: []string{"rdma"}},
			want: func(b *allot.Builder) { b.Resources, b.IgnoredResources = []string{"gpu", "cpu"}, []string{"rdma"} }},
		{name: "a resource both declared and ignored", from: churnBuilder(),
			ev: allot.SetResources{Resources: []string{"gpu", "cpu", "rdma"}, IgnoredResources: []string{"rdma"}}, err: allot.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.want == nil {
				refused(t, c.from, c.ev, c.err)
				return
			}
			want := deepCopy(t, c.from)
			c.want(&want)
			applyEqualsBuild(t, c.from, c.ev, want)
		})
	}
}

// TestConfigEventRefusalIsBuilds: a configuration event refused for its
// description gives the error Build gives for that description, path and
// all.
func TestConfigEventRefusalIsBuilds(t *testing.T) {
	b := selecting()
	fl := allot.Flavor{Name: "h100-b1", NodeLabels: map[string]string{"kind": "h100", "block": "b1"}}
	st := allot.NewStore(buildAt(t, b, 0))
	_, err := st.Apply(allot.AddFlavor{Flavor: fl})
	d := st.Load().Builder()
	d.Flavors = append(d.Flavors, fl)
	_, want := d.Build()
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("AddFlavor refused with %v, Build with %v", err, want)
	}
	var be *allot.BuildError
	if !errors.As(err, &be) || be.Path == "" {
		t.Fatalf("%v is no *BuildError with a path", err)
	}
}

// TestRemoveFlavorInUse: the refusal lists what uses the flavor.
func TestRemoveFlavorInUse(t *testing.T) {
	err := refused(t, churnBuilder(), allot.RemoveFlavor{Flavor: "a100"}, allot.ErrInUse)
	var in *allot.InUseError
	if !errors.As(err, &in) {
		t.Fatalf("%v is no *InUseError", err)
	}
	if in.Flavor != "a100" || !slices.Equal(in.Queues, []string{"train"}) || !slices.Equal(in.Nodes, []string{"a0", "a1"}) ||
		!slices.Equal(in.Running, []string{"wide"}) || len(in.Cohorts) != 0 {
		t.Fatalf("in use: %+v", in)
	}
	b := churnBuilder()
	b.Cohorts[1].Quota = []allot.FlavorQuota{{Flavor: "spot", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 4}}}}
	b.Queues[0].FlavorOrder = []string{"spot", "h100"}
	err = refused(t, b, allot.RemoveFlavor{Flavor: "spot"}, allot.ErrInUse)
	if !errors.As(err, &in) || !slices.Equal(in.Queues, []string{"idle", "train"}) || !slices.Equal(in.Cohorts, []string{"ai"}) ||
		!slices.Equal(in.Running, []string{"quota-only"}) || len(in.Nodes) != 0 {
		t.Fatalf("in use: %+v (%v)", in, err)
	}
}

// TestConfigEventCarriesOver: what a description does not hold survives a
// configuration event: the version goes on, the fairness history and debt
// are the same to the last bit, the evictions stay, and the events after
// it apply to the snapshot it left.
func TestConfigEventCarriesOver(t *testing.T) {
	b := churnBuilder()
	b.History.HalfLife = 3600
	st := allot.NewStore(buildAt(t, b, 0))
	for _, ev := range []allot.Event{allot.AdvanceTime{Seconds: 777}, allot.Evict{ID: "gang"}, allot.AdvanceTime{Seconds: 333}} {
		if _, err := st.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	before := st.Load()
	after, err := st.Apply(allot.AddFlavor{Flavor: allot.Flavor{Name: "b200"}})
	if err != nil {
		t.Fatal(err)
	}
	if after.Version() != before.Version()+1 {
		t.Fatalf("version %d after %d", after.Version(), before.Version())
	}
	for _, q := range before.Queues() {
		if a, z := before.HistoricalUsage(q.Name), after.HistoricalUsage(q.Name); a != z {
			t.Errorf("queue %s: historical usage %v, then %v", q.Name, a, z)
		}
		if a, z := before.Debt(q.Name), after.Debt(q.Name); a != z {
			t.Errorf("queue %s: debt %v, then %v", q.Name, a, z)
		}
	}
	if h, g := before.Builder().History, after.Builder().History; !maps.EqualFunc(h.Usage, g.Usage, maps.Equal) || !maps.Equal(h.Preemptions, g.Preemptions) {
		t.Errorf("history %+v, then %+v", h, g)
	}
	if e := after.Evictions(); len(e) != 1 || e[0].ID != "gang" {
		t.Errorf("evictions %+v", e)
	}
	// The snapshot goes on taking events.
	fin, err := st.Apply(allot.Finish{ID: "small"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fin.Running("small"); ok || fin.FreeGPUs() != after.FreeGPUs()+2 || fin.HistoricalUsage("infer") != before.HistoricalUsage("infer") {
		t.Fatalf("a finish after AddFlavor: %d free GPUs after %d, history %v", fin.FreeGPUs(), after.FreeGPUs(), fin.HistoricalUsage("infer"))
	}
}

// TestConfigEventInFlight: with two-phase preemptions under way, the
// configuration events are refused (ErrInFlight) and change nothing.
func TestConfigEventInFlight(t *testing.T) {
	st := allot.NewStore(tpWorld(t, true))
	d := decideAs(t, st.Load(), tpReq("p", 10, 4), allot.VerdictPreempt)
	if _, err := st.Commit(d); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []allot.Event{
		allot.AddFlavor{Flavor: allot.Flavor{Name: "g"}},
		allot.SetLevels{Levels: []string{}},
		allot.SetResources{Resources: []string{"gpu", "cpu", "memory"}},
		allot.SetFlavor{Flavor: allot.Flavor{Name: "f", NodeLabels: map[string]string{"a": "b"}}},
	} {
		applyRefused(t, st, ev, allot.ErrInFlight)
	}
	applyOK(t, st, allot.Terminated{ID: "lo3"})
	applyOK(t, st, allot.AddFlavor{Flavor: allot.Flavor{Name: "g"}})
}
