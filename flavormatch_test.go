package allot_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench"
)

func TestTolerates(t *testing.T) {
	ns := allot.Taint{Key: "dedicated", Value: "research", Effect: allot.TaintNoSchedule}
	ne := allot.Taint{Key: "maintenance", Effect: allot.TaintNoExecute}
	for _, c := range []struct {
		name string
		tl   allot.Toleration
		t    allot.Taint
		want bool
	}{
		{"equal", allot.Toleration{Key: "dedicated", Operator: "Equal", Value: "research", Effect: "NoSchedule"}, ns, true},
		{"equal by default", allot.Toleration{Key: "dedicated", Value: "research"}, ns, true},
		{"other value", allot.Toleration{Key: "dedicated", Value: "prod"}, ns, false},
		{"other key", allot.Toleration{Key: "team", Operator: "Exists"}, ns, false},
		{"exists", allot.Toleration{Key: "dedicated", Operator: "Exists"}, ns, true},
		{"other effect", allot.Toleration{Key: "dedicated", Operator: "Exists", Effect: "NoExecute"}, ns, false},
		{"every taint", allot.Toleration{Operator: "Exists"}, ne, true},
		{"every NoExecute", allot.Toleration{Operator: "Exists", Effect: "NoExecute"}, ne, true},
		{"every NoExecute, not NoSchedule", allot.Toleration{Operator: "Exists", Effect: "NoExecute"}, ns, false},
		{"empty value equal", allot.Toleration{Key: "maintenance", Operator: "Equal"}, ne, true},
	} {
		if got := c.tl.Tolerates(&c.t); got != c.want {
			t.Errorf("%s: %+v tolerates %+v = %v, want %v", c.name, c.tl, c.t, got, c.want)
		}
	}
}

// flavorWorld is a random cluster of two flavors selected by the pool
// label, the second with a nodeTaint, its nodes with random taints from a
// small set; the third flavor is named by its nodes. Each has a node.
func flavorWorld(rng *rand.Rand) allot.Builder {
	taints := []allot.Taint{
		{Key: "dedicated", Value: "research", Effect: allot.TaintNoSchedule},
		{Key: "maintenance", Effect: allot.TaintNoExecute},
		{Key: "old-driver", Effect: allot.TaintPreferNoSchedule},
		{Key: "zone", Value: "cold", Effect: allot.TaintNoSchedule},
	}
	b := allot.Builder{
		Resources: []string{"gpu"},
		Levels:    []string{"rack"},
		Flavors: []allot.Flavor{
			{Name: "a", NodeLabels: map[string]string{"pool": "a"}},
			{Name: "b", NodeLabels: map[string]string{"pool": "b"}, NodeTaints: taints[:1],
				Tolerations: []allot.Toleration{{Key: "zone", Operator: allot.TolerationExists}}},
			{Name: "named"},
		},
	}
	for i := range 4 + rng.IntN(20) {
		nd := allot.Node{Name: fmt.Sprintf("n%02d", i), Labels: map[string]string{"rack": fmt.Sprintf("r%d", rng.IntN(3))},
			Capacity: allot.Resources{"gpu": int64(1 + rng.IntN(8))}}
		kind := rng.IntN(3)
		if i < 3 {
			kind = i // every flavor has nodes: none would be quota-only
		}
		switch kind {
		case 0:
			nd.Labels["pool"] = "a"
		case 1:
			nd.Labels["pool"] = "b"
			nd.Taints = append(nd.Taints, taints[0])
		default:
			nd.Flavor = "named"
		}
		for _, t := range taints[1:] {
			if rng.IntN(3) == 0 {
				nd.Taints = append(nd.Taints, t)
			}
		}
		b.Nodes = append(b.Nodes, nd)
	}
	q := allot.Queue{Name: "q"}
	for _, f := range []string{"b", "a", "named"} {
		q.Quota = append(q.Quota, allot.FlavorQuota{Flavor: f, Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 1000}}})
	}
	b.Queues = []allot.Queue{q}
	return b
}

// naiveServes says, from the descriptions alone, whether a pod of pod set
// ps may land on node nd of flavor fl.
func naiveServes(fl allot.Flavor, nd allot.Node, ps allot.PodSet) bool {
	if nd.Flavor != "" && nd.Flavor != fl.Name {
		return false
	}
	for k, v := range fl.NodeLabels {
		if nd.Labels[k] != v {
			return false
		}
	}
	if nd.Flavor == "" && len(fl.NodeLabels) == 0 {
		return false
	}
	tolerated := func(t allot.Taint) bool {
		if t.Effect == allot.TaintPreferNoSchedule {
			return true
		}
		for _, tl := range append(append([]allot.Toleration(nil), ps.Tolerations...), fl.Tolerations...) {
			if tl.Tolerates(&t) {
				return true
			}
		}
		return false
	}
	for _, t := range append(append([]allot.Taint(nil), fl.NodeTaints...), nd.Taints...) {
		if !tolerated(t) {
			return false
		}
	}
	return true
}

// TestFlavorPlacementProperty: a decision never places a pod on a node
// that does not serve the chosen flavor or whose taints the pod set does
// not tolerate, and a one-pod request is admitted exactly when some node
// the naive filter lets it use has the GPUs.
func TestFlavorPlacementProperty(t *testing.T) {
	tolerations := []allot.Toleration{
		{Key: "dedicated", Value: "research"},
		{Key: "maintenance", Operator: allot.TolerationExists},
		{Operator: allot.TolerationExists, Effect: allot.TaintNoSchedule},
		{Key: "old-driver", Operator: allot.TolerationExists},
	}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		b := flavorWorld(rng)
		s, err := b.Build()
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		byName := map[string]allot.Node{}
		for _, nd := range b.Nodes {
			byName[nd.Name] = nd
		}
		flavors := map[string]allot.Flavor{}
		for _, f := range b.Flavors {
			flavors[f.Name] = f
		}
		ps := allot.PodSet{Name: "main", Count: int32(1 + rng.IntN(3)), PerPod: allot.Resources{"gpu": int64(1 + rng.IntN(8))}}
		if rng.IntN(2) == 0 {
			ps.Topology.Policy = allot.Spread
		}
		for _, tl := range tolerations {
			if rng.IntN(2) == 0 {
				ps.Tolerations = append(ps.Tolerations, tl)
			}
		}
		d := allot.Decide(s, allot.Request{ID: "r", Queue: "q", PodSets: []allot.PodSet{ps}})
		if d.Verdict == allot.VerdictAdmit {
			fl := flavors[d.Flavors[0].Flavor]
			for _, p := range d.Placement {
				if !naiveServes(fl, byName[p.Node], ps) {
					t.Fatalf("seed %d: pod %d on %s (%+v), which does not serve flavor %s for tolerations %+v", seed, p.Pod, p.Node, byName[p.Node], fl.Name, ps.Tolerations)
				}
			}
		}
		if ps.Count != 1 {
			continue
		}
		fits := false
		for _, f := range b.Flavors {
			for _, nd := range b.Nodes {
				fits = fits || (naiveServes(f, nd, ps) && nd.Capacity["gpu"] >= ps.PerPod["gpu"])
			}
		}
		if fits != (d.Verdict == allot.VerdictAdmit) {
			t.Fatalf("seed %d: naive filter says fits=%v, decision %v %v: %s", seed, fits, d.Verdict, d.Reason, d.Message)
		}
	}
}

// TestFlavorNodeEvents: node events keep the flavor labels and taints as
// Build makes them: after each, the snapshot's Builder builds a snapshot
// that describes every node alike; a relabelled node changes flavor.
func TestFlavorNodeEvents(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	b := flavorWorld(rng)
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(s)
	check := func(what string) {
		t.Helper()
		cur := st.Load()
		again, err := func() (*allot.Snapshot, error) { bl := cur.Builder(); return bl.Build() }()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got, want := again.Nodes(), cur.Nodes(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: rebuilt nodes\n%+v\nwant\n%+v", what, got, want)
		}
	}
	check("build")
	nd, _ := s.Node("n00")
	nd.Labels["pool"] = "b"
	nd.Flavor = ""
	nd.Taints = []allot.Taint{{Key: "fresh", Effect: allot.TaintNoExecute}}
	if _, err := st.Apply(allot.SetNode{Node: nd}); err != nil {
		t.Fatal(err)
	}
	check("setNode")
	got, _ := st.Load().Node("n00")
	if got.Labels["pool"] != "b" || !reflect.DeepEqual(got.Taints, nd.Taints) {
		t.Fatalf("n00 described as %+v", got)
	}
	if _, err := st.Apply(allot.AddNode{Node: allot.Node{Name: "x", Labels: map[string]string{"rack": "r9", "pool": "a"},
		Taints: []allot.Taint{{Key: "zone", Value: "cold", Effect: allot.TaintNoSchedule}}, Capacity: allot.Resources{"gpu": 8}}}); err != nil {
		t.Fatal(err)
	}
	check("addNode")
	if _, err := st.Apply(allot.RemoveNode{Node: "n01"}); err != nil {
		t.Fatal(err)
	}
	check("removeNode")
	// A node whose labels select no flavor, and one naming a flavor
	// whose labels it lacks, are refused.
	x, _ := st.Load().Node("x")
	x.Labels["pool"] = "c"
	var be *allot.BuildError
	if _, err := st.Apply(allot.SetNode{Node: x}); !errors.As(err, &be) || !errors.Is(err, allot.ErrUnknownFlavor) || be.Path != "node.flavor" {
		t.Fatalf("relabelled to no flavor: %v", err)
	}
	x.Flavor = "a"
	if _, err := st.Apply(allot.SetNode{Node: x}); !errors.As(err, &be) || be.Path != "node.labels.pool" {
		t.Fatalf("naming a flavor without its label: %v", err)
	}
}

func TestFlavorSelectionErrors(t *testing.T) {
	base := func() allot.Builder {
		return allot.Builder{Resources: []string{"gpu"},
			Flavors: []allot.Flavor{{Name: "f", NodeLabels: map[string]string{"pool": "x"}}},
			Nodes:   []allot.Node{{Name: "n", Labels: map[string]string{"pool": "x"}, Capacity: allot.Resources{"gpu": 8}}},
			Queues:  []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}}}}
	}
	for _, c := range []struct {
		name, path string
		edit       func(*allot.Builder)
	}{
		{"flavor taint effect", "flavors[0].nodeTaints[0].effect", func(b *allot.Builder) {
			b.Flavors[0].NodeTaints = []allot.Taint{{Key: "k", Effect: "NoWay"}}
		}},
		{"flavor taint key", "flavors[0].nodeTaints[0].key", func(b *allot.Builder) {
			b.Flavors[0].NodeTaints = []allot.Taint{{Effect: allot.TaintNoSchedule}}
		}},
		{"flavor toleration operator", "flavors[0].tolerations[0].operator", func(b *allot.Builder) {
			b.Flavors[0].Tolerations = []allot.Toleration{{Key: "k", Operator: "In"}}
		}},
		{"node taint effect", "nodes[0].taints[0].effect", func(b *allot.Builder) {
			b.Nodes[0].Taints = []allot.Taint{{Key: "k", Effect: "noschedule"}}
		}},
		{"node taint twice", "nodes[0].taints[1]", func(b *allot.Builder) {
			b.Nodes[0].Taints = []allot.Taint{{Key: "k", Effect: "NoSchedule"}, {Key: "k", Effect: "NoSchedule"}}
		}},
		{"node of no flavor", "nodes[0].flavor", func(b *allot.Builder) { b.Nodes[0].Labels["pool"] = "y" }},
	} {
		b := base()
		c.edit(&b)
		_, err := b.Build()
		var be *allot.BuildError
		if !errors.As(err, &be) || be.Path != c.path {
			t.Errorf("%s: %v, want a BuildError at %s", c.name, err, c.path)
		}
	}
	// A flavor whose nodeLabels match no node is fine, as in Kueue.
	b := base()
	b.Flavors = append(b.Flavors, allot.Flavor{Name: "none", NodeLabels: map[string]string{"pool": "nowhere"}})
	s, err := b.Build()
	if err != nil {
		t.Fatalf("a flavor matching no node: %v", err)
	}
	for _, c := range []struct {
		tl   allot.Toleration
		path string
	}{
		{allot.Toleration{Key: "k", Operator: "NotIn"}, "podSets[0].tolerations[0].operator"},
		{allot.Toleration{Key: "k", Operator: "Exists", Value: "v"}, "podSets[0].tolerations[0].value"},
		{allot.Toleration{Value: "v"}, "podSets[0].tolerations[0].key"},
		{allot.Toleration{Key: "k", Effect: "Never"}, "podSets[0].tolerations[0].effect"},
	} {
		d := allot.Decide(s, allot.Request{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "main", Count: 1,
			PerPod: allot.Resources{"gpu": 1}, Tolerations: []allot.Toleration{c.tl}}}})
		if d.Reason != allot.InvalidRequest || !strings.Contains(d.Message, c.path) {
			t.Errorf("%+v: %v %s, want InvalidRequest naming %s", c.tl, d.Reason, d.Message, c.path)
		}
	}
}

// TestUntoleratedAsCordoned: on the fragmented benchmark cluster, a
// request kept off the nodes with a taint it does not tolerate is placed
// exactly as on the same cluster with those nodes cordoned instead, for
// every benchmark gang: the domain counters less the excluded nodes count
// what counting the usable nodes does. At 10,240 nodes the racks are
// many enough for the state's fit index, which counts no exclusion: the
// searches must not read it for such a pod set.
func TestUntoleratedAsCordoned(t *testing.T) {
	for _, w := range []struct{ nodes, every int }{{1024, 3}, {1024, 10}, {1024, 97}, {10240, 10}} {
		every := w.every
		tainted, cordoned := bench.Cluster(w.nodes, true), bench.Cluster(w.nodes, true)
		for i := range tainted.Nodes {
			if i%every == 0 {
				tainted.Nodes[i].Taints = []allot.Taint{{Key: "maintenance", Effect: allot.TaintNoExecute}}
				cordoned.Nodes[i].Unschedulable = true
			}
		}
		st, err := tainted.Build()
		if err != nil {
			t.Fatal(err)
		}
		sc, err := cordoned.Build()
		if err != nil {
			t.Fatal(err)
		}
		cases := bench.GangCases()
		for _, c := range []struct{ pods, gpus int }{{1, 8}, {4, 2}, {5, 1}, {16, 1}, {64, 8}, {40, 3}} {
			cases = append(cases, bench.GangCase{Name: fmt.Sprintf("unconstrained-%dx%d", c.pods, c.gpus), Req: bench.GangRequest("g", c.pods, c.gpus, "", "")})
		}
		for _, c := range cases {
			dt, dc := allot.Decide(st, c.Req), allot.Decide(sc, c.Req)
			if (dt.Verdict == allot.VerdictAdmit) != (dc.Verdict == allot.VerdictAdmit) || !reflect.DeepEqual(dt.Placement, dc.Placement) {
				t.Errorf("%d nodes, every %d tainted, %s: %v %v %v\nagainst cordoned: %v %v %v", w.nodes, every, c.Name, dt.Verdict, dt.Reason, dt.Placement, dc.Verdict, dc.Reason, dc.Placement)
			}
		}
	}
}

// TestNodeStatusNamesTheFlavorServed: a node its labels select is
// described naming no flavor (so that a change of labels moves it), and
// its status names the flavor it serves.
func TestNodeStatusNamesTheFlavorServed(t *testing.T) {
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "a100", NodeLabels: map[string]string{"gpu": "a100"}}, {Name: "h100", NodeLabels: map[string]string{"gpu": "h100"}}},
		Nodes: []allot.Node{{Name: "n0", Labels: map[string]string{"gpu": "h100"}, Capacity: allot.Resources{"gpu": 8}},
			{Name: "n1", Labels: map[string]string{"gpu": "a100"}, Capacity: allot.Resources{"gpu": 8}}},
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"n0": "h100", "n1": "a100"} {
		n, _ := s.Node(name)
		st, ok := s.NodeStatus(name)
		if !ok || st.Flavor != want || n.Flavor != "" {
			t.Errorf("%s: status flavor %q (%v), described flavor %q; want %q and none", name, st.Flavor, ok, n.Flavor, want)
		}
	}
}
