package fuzz

import (
	"errors"
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
)

// FuzzFlavorSelection fuzzes flavors selected by node labels and taints:
// flavors with nodeLabels, nodeTaints and tolerations (some malformed),
// nodes with labels and taints, naming a flavor or not, requests with
// tolerations, and the node events that relabel, add and remove nodes.
// Build and every event either succeed or refuse with a *BuildError (or
// an unknown node); no decision places a pod on a node that does not
// serve its flavor or whose repelling taints it does not tolerate; after
// every step the snapshot's Builder builds a snapshot that answers alike.
func FuzzFlavorSelection(f *testing.F) {
	for _, seed := range decideSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w := genFlavorWorld(&bytePicker{data: data})
		s, err, panicked := build(&w.b)
		if panicked != nil {
			t.Fatalf("Build panicked: %v", panicked)
		}
		if err != nil {
			if be := (*allot.BuildError)(nil); !errors.As(err, &be) {
				t.Fatalf("Build: %v is not a *allot.BuildError", err)
			}
			return
		}
		store := allot.NewStore(s)
		for i, r := range w.reqs {
			if ev := w.events[i]; ev != nil {
				_, err, panicked := apply(store, ev)
				if panicked != nil {
					t.Fatalf("event %d (%+v) panicked: %v", i, ev, panicked)
				}
				var be *allot.BuildError
				if err != nil && !errors.As(err, &be) && !errors.Is(err, allot.ErrUnknownNode) {
					t.Fatalf("event %d (%+v): %v", i, ev, err)
				}
			}
			cur := store.Load()
			d := allot.Decide(cur, r)
			label := fmt.Sprintf("request %d", i)
			if d.Verdict == allot.VerdictAdmit {
				checkServed(t, label, cur, r, d)
				if _, err, panicked := commit(store, d); panicked != nil || err != nil {
					t.Fatalf("%s: commit: %v %v", label, err, panicked)
				}
			}
			rebuilt(t, label, store.Load(), w.reqs)
		}
	})
}

// checkServed fails when decision d places a pod of request r on a node
// that, by the descriptions alone, does not serve the pod set's flavor or
// has a repelling taint the pod set (with the flavor's tolerations) does
// not tolerate.
func checkServed(t *testing.T, label string, s *allot.Snapshot, r allot.Request, d allot.Decision) {
	t.Helper()
	flavors := map[string]allot.Flavor{}
	for _, f := range s.Flavors() {
		flavors[f.Name] = f
	}
	flavorOf := map[string]string{}
	for _, pf := range d.Flavors {
		flavorOf[pf.PodSet] = pf.Flavor
	}
	podSets := map[string]allot.PodSet{}
	for _, ps := range r.PodSets {
		podSets[ps.Name] = ps
	}
	for _, p := range d.Placement {
		nd, ok := s.Node(p.Node)
		if !ok {
			t.Fatalf("%s: pod on unknown node %q", label, p.Node)
		}
		fl, ps := flavors[flavorOf[p.PodSet]], podSets[p.PodSet]
		if !naiveServes(fl, nd, ps) {
			t.Fatalf("%s: pod %s/%d on node %+v, which does not serve flavor %+v for tolerations %+v", label, p.PodSet, p.Pod, nd, fl, ps.Tolerations)
		}
	}
}

// naiveServes says whether node nd (as the snapshot describes it) serves
// flavor fl to pod set ps: it names the flavor, or names none and carries
// the flavor's nodeLabels; and every NoSchedule or NoExecute taint of the
// flavor's and of the node's is tolerated by ps or by the flavor.
func naiveServes(fl allot.Flavor, nd allot.Node, ps allot.PodSet) bool {
	switch {
	case nd.Flavor != "" && nd.Flavor != fl.Name:
		return false
	case nd.Flavor == "" && len(fl.NodeLabels) == 0:
		return false
	}
	for k, v := range fl.NodeLabels {
		if got, ok := nd.Labels[k]; !ok || got != v {
			return false
		}
	}
	tols := append(append([]allot.Toleration(nil), ps.Tolerations...), fl.Tolerations...)
	for _, taint := range append(append([]allot.Taint(nil), fl.NodeTaints...), nd.Taints...) {
		if taint.Effect != allot.TaintNoSchedule && taint.Effect != allot.TaintNoExecute {
			continue
		}
		ok := false
		for _, tl := range tols {
			keyOK := tl.Key == taint.Key || (tl.Key == "" && tl.Operator == allot.TolerationExists)
			valueOK := tl.Operator == allot.TolerationExists || tl.Value == taint.Value
			ok = ok || (keyOK && valueOK && (tl.Effect == "" || tl.Effect == taint.Effect))
		}
		if !ok {
			return false
		}
	}
	return true
}

// bytePicker draws small choices from the fuzzer's bytes, zero once they
// run out.
type bytePicker struct {
	data []byte
	at   int
}

func (p *bytePicker) pick(n int) int {
	if p.at >= len(p.data) {
		return 0
	}
	b := int(p.data[p.at])
	p.at++
	return b % n
}

type flavorWorld struct {
	b      allot.Builder
	reqs   []allot.Request
	events []allot.Event // events[i] comes before reqs[i]
}

var (
	fuzzTaints = []allot.Taint{
		{Key: "dedicated", Value: "research", Effect: allot.TaintNoSchedule},
		{Key: "maintenance", Effect: allot.TaintNoExecute},
		{Key: "old", Effect: allot.TaintPreferNoSchedule},
		{Key: "bad", Effect: "Sometimes"}, // malformed
	}
	fuzzTolerations = []allot.Toleration{
		{Key: "dedicated", Value: "research"},
		{Key: "dedicated", Operator: allot.TolerationExists, Effect: allot.TaintNoSchedule},
		{Key: "maintenance", Operator: allot.TolerationExists},
		{Operator: allot.TolerationExists},
		{Operator: allot.TolerationExists, Effect: allot.TaintNoExecute},
		{Key: "dedicated", Operator: "In"}, // malformed
		{Value: "v"},                       // malformed: empty key needs Exists
	}
	fuzzPools = []string{"a", "b", "c"}
)

func genFlavorWorld(p *bytePicker) flavorWorld {
	var w flavorWorld
	b := &w.b
	b.Resources = []string{"gpu"}
	if p.pick(2) == 0 {
		b.Levels = []string{"rack"}
	}
	taints := func(most int) []allot.Taint {
		var out []allot.Taint
		for range p.pick(most + 1) {
			out = append(out, fuzzTaints[p.pick(len(fuzzTaints))])
		}
		return out
	}
	tolerations := func(most int) []allot.Toleration {
		var out []allot.Toleration
		for range p.pick(most + 1) {
			out = append(out, fuzzTolerations[p.pick(len(fuzzTolerations))])
		}
		return out
	}
	names := []string{"fa", "fb", "plain"}
	for i := range 1 + p.pick(3) {
		f := allot.Flavor{Name: names[i]}
		if i < 2 && p.pick(4) != 0 {
			f.NodeLabels = map[string]string{"pool": fuzzPools[p.pick(len(fuzzPools))]}
			if p.pick(3) == 0 {
				f.NodeLabels["zone"] = fuzzPools[p.pick(2)]
			}
		}
		f.NodeTaints, f.Tolerations = taints(1), tolerations(1)
		b.Flavors = append(b.Flavors, f)
	}
	node := func(name string) allot.Node {
		nd := allot.Node{Name: name, Labels: map[string]string{}, Capacity: allot.Resources{"gpu": int64(1 + p.pick(8))}}
		if len(b.Levels) > 0 {
			nd.Labels["rack"] = fmt.Sprintf("r%d", p.pick(2))
		}
		nd.Labels["pool"] = fuzzPools[p.pick(len(fuzzPools))]
		if p.pick(3) == 0 {
			nd.Labels["zone"] = fuzzPools[p.pick(2)]
		}
		if p.pick(3) == 0 {
			nd.Flavor = b.Flavors[p.pick(len(b.Flavors))].Name
		}
		nd.Taints = taints(2)
		return nd
	}
	for i := range 1 + p.pick(8) {
		b.Nodes = append(b.Nodes, node(fmt.Sprintf("n%d", i)))
	}
	q := allot.Queue{Name: "q"}
	for _, f := range b.Flavors {
		q.Quota = append(q.Quota, allot.FlavorQuota{Flavor: f.Name, Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: int64(p.pick(40))}}})
	}
	b.Queues = []allot.Queue{q}
	for i := range 1 + p.pick(6) {
		var ev allot.Event
		switch p.pick(5) {
		case 0:
			ev = allot.SetNode{Node: node(fmt.Sprintf("n%d", p.pick(len(b.Nodes)+1)))}
		case 1:
			ev = allot.AddNode{Node: node(fmt.Sprintf("x%d", i))}
		case 2:
			ev = allot.RemoveNode{Node: fmt.Sprintf("n%d", p.pick(len(b.Nodes)))}
		}
		w.events = append(w.events, ev)
		ps := allot.PodSet{Name: "main", Count: int32(1 + p.pick(3)), PerPod: allot.Resources{"gpu": int64(1 + p.pick(8))},
			Tolerations: tolerations(2)}
		if p.pick(3) == 0 {
			ps.Topology.Policy = allot.Spread
		}
		r := allot.Request{ID: fmt.Sprintf("r%d", i), Queue: "q", PodSets: []allot.PodSet{ps}}
		if p.pick(3) == 0 {
			second := ps
			second.Name, second.Tolerations = "second", tolerations(2)
			r.PodSets = append(r.PodSets, second)
		}
		w.reqs = append(w.reqs, r)
	}
	return w
}

// TestFlavorSelectionGenerated runs FuzzFlavorSelection's checks on a fixed
// set of pseudo-random inputs, so that plain go test covers more than the
// seeds.
func TestFlavorSelectionGenerated(t *testing.T) {
	admitted, refused := 0, 0
	for i := range 400 {
		data := make([]byte, 96)
		for k := range data {
			data[k] = byte((i*2654435761 + k*40503) >> 7)
		}
		w := genFlavorWorld(&bytePicker{data: data})
		s, err := w.b.Build()
		if err != nil {
			refused++
			continue
		}
		for _, r := range w.reqs {
			if d := allot.Decide(s, r); d.Verdict == allot.VerdictAdmit {
				admitted++
				checkServed(t, fmt.Sprintf("input %d", i), s, r, d)
			}
		}
	}
	if admitted == 0 || refused == 0 {
		t.Fatalf("the generated worlds admitted %d requests and %d builds were refused: both should happen", admitted, refused)
	}
}
