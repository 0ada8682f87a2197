package allot_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

// TestTwoPhaseMatchesOnePhase commits the Preempt decisions of many random
// worlds (the preemption property test's) on a store of each mode. While
// the victims evict, the two-phase store books no GPU twice, counts the
// victims and the hold as neither free nor anyone else's, and lets a
// decision made meanwhile place nothing on them; once the victims have
// terminated, in any order, it holds the state the one-phase store reached
// at once: the same running workloads where they run, the same pending,
// usage, free capacity, evictions and fairness debt.
func TestTwoPhaseMatchesOnePhase(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(2026, 13))
	checked, multi := 0, 0
	for i := range n {
		pw := &pworld{}
		if err := genPreemptWorld(rng, pw); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		d := allot.Decide(pw.s, pw.req)
		if d.Verdict != allot.VerdictPreempt {
			continue
		}
		panicked := catch(func() { checkTwoPhase(t, i, pw, d, rng) })
		if panicked != nil {
			t.Fatalf("case %d: panic: %v\nworld: %s\nrequest: %s", i, panicked, mustJSON(t, pw.b), mustJSON(t, pw.req))
		}
		if t.Failed() {
			t.Fatalf("case %d: world %s\nrequest %s", i, mustJSON(t, pw.b), mustJSON(t, pw.req))
		}
		checked++
		if len(d.Victims) > 1 {
			multi++
		}
	}
	t.Logf("%d Preempt decisions of %d worlds, %d with several victims", checked, n, multi)
	if checked*20 < n || multi == 0 {
		t.Errorf("only %d Preempt decisions (%d with several victims) in %d worlds", checked, multi, n)
	}
}

// checkTwoPhase checks one Preempt decision d of world pw (case i).
func checkTwoPhase(t *testing.T, i int, pw *pworld, d allot.Decision, rng *rand.Rand) {
	t.Helper()
	one := allot.NewStore(pw.s)
	want, err := one.Commit(d)
	if err != nil {
		t.Fatalf("case %d: one phase: %v", i, err)
	}
	b := pw.b
	b.Options.TwoPhasePreemption = true
	base, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d2 := allot.Decide(base, pw.req)
	if a, b := mustJSON(t, d), mustJSON(t, d2); string(a) != string(b) {
		t.Fatalf("case %d: the option changes the decision:\n%s\n%s", i, a, b)
	}
	two := allot.NewStore(base)
	s, err := two.Commit(d2)
	if err != nil {
		t.Fatalf("case %d: two phases: %v", i, err)
	}
	h, ok := s.Held("p")
	if !ok {
		t.Fatalf("case %d: the preemptor holds no room", i)
	}
	for _, v := range d.Victims {
		if preemptor, _, ok := s.Evicting(v.ID); !ok || preemptor != "p" {
			t.Fatalf("case %d: victim %q: Evicting = %q, %v", i, v.ID, preemptor, ok)
		}
	}
	checkInFlight(t, i, s, h, pw.total)
	// A decision made meanwhile places nothing on the held room or the
	// victims' GPUs, and chooses none of the victims.
	probe := pw.req
	probe.ID = "probe"
	if m := allot.Decide(s, probe); m.Verdict == allot.VerdictAdmit || m.Verdict == allot.VerdictPreempt {
		for _, v := range m.Victims {
			if slices.ContainsFunc(d.Victims, func(o allot.Victim) bool { return o.ID == v.ID }) {
				t.Fatalf("case %d: a preemption meanwhile evicts %q, evicting already", i, v.ID)
			}
		}
		if m.Verdict == allot.VerdictAdmit {
			held := heldGPUs(s, h)
			for _, pl := range m.Placement {
				if held[pl.Node]&uint64(pl.GPUs) != 0 {
					t.Fatalf("case %d: a decision meanwhile places %v on node %q, held %08b", i, pl.GPUs, pl.Node, held[pl.Node])
				}
			}
		}
	}
	for k, j := range rng.Perm(len(d.Victims)) {
		s, err = two.Apply(allot.Terminated{ID: d.Victims[j].ID})
		if err != nil {
			t.Fatalf("case %d: Terminated %q: %v", i, d.Victims[j].ID, err)
		}
		if k < len(d.Victims)-1 {
			h, ok := s.Held("p")
			if !ok || len(h.Victims) != len(d.Victims)-k-1 {
				t.Fatalf("case %d: %d victims gone: Held = %+v, %v", i, k+1, h, ok)
			}
			checkInFlight(t, i, s, h, pw.total)
		}
	}
	if len(s.HeldIDs()) != 0 || len(s.EvictingIDs()) != 0 {
		t.Fatalf("case %d: still in flight: held %v, evicting %v", i, s.HeldIDs(), s.EvictingIDs())
	}
	if a, b := fullState(t, &pw.b, want), fullState(t, &pw.b, s); a != b {
		t.Fatalf("case %d: states differ\none phase  %s\ntwo phases %s", i, a, b)
	}
	got, wantKinds := kinds(two.DrainAudit(nil)), []string{}
	for _, v := range d.Victims {
		wantKinds = append(wantKinds, "evicted:"+v.ID)
	}
	wantKinds = append(wantKinds, "held:p")
	if !slices.Equal(got[:len(wantKinds)], wantKinds) || got[len(got)-1] != "admitted:p" || len(got) != 2*len(d.Victims)+2 {
		t.Fatalf("case %d: audit %v", i, got)
	}
}

// heldGPUs is, per node, the GPUs a hold's placement takes.
func heldGPUs(s *allot.Snapshot, h allot.Hold) map[string]uint64 {
	out := map[string]uint64{}
	for _, ps := range h.Workload.PodSets {
		for k, node := range ps.Nodes {
			if k < len(ps.GPUIndices) {
				for _, g := range ps.GPUIndices[k] {
					out[node] |= 1 << g
				}
			}
		}
	}
	return out
}

// checkInFlight checks a two-phase store's GPUs while a preemption is in
// flight: the running workloads' GPUs are disjoint, and they and the
// hold's (which may overlap the evicting victims') are not free; with the
// free ones they make up the cluster.
func checkInFlight(t *testing.T, i int, s *allot.Snapshot, h allot.Hold, total int64) {
	t.Helper()
	taken := map[string]uint64{}
	for _, id := range s.RunningIDs() {
		w, _ := s.Running(id)
		for _, ps := range w.PodSets {
			for k, idx := range ps.GPUIndices {
				for _, g := range idx {
					bit := uint64(1) << g
					if taken[ps.Nodes[k]]&bit != 0 {
						t.Fatalf("case %d: GPU %d of node %q is booked twice (again by %q)", i, g, ps.Nodes[k], id)
					}
					taken[ps.Nodes[k]] |= bit
				}
			}
		}
	}
	for node, g := range heldGPUs(s, h) {
		taken[node] |= g
	}
	n := int64(0)
	for node, g := range taken {
		free, _ := s.NodeFreeGPUs(node)
		if uint64(free)&g != 0 {
			t.Fatalf("case %d: node %q: GPUs %v free, %08b taken", i, node, free, g)
		}
		n += int64(bits.OnesCount64(g))
	}
	if s.FreeGPUs()+n != total {
		t.Fatalf("case %d: %d free GPUs and %d taken of %d", i, s.FreeGPUs(), n, total)
	}
}

// fullState renders everything of a snapshot of world b a commit may
// change, but its version.
func fullState(t *testing.T, b *allot.Builder, s *allot.Snapshot) string {
	t.Helper()
	var running []allot.Workload
	for _, id := range s.RunningIDs() {
		w, _ := s.Running(id)
		running = append(running, w)
	}
	usage := map[string]int64{}
	debt := map[string]float64{}
	counts := map[string]int{}
	for _, q := range b.Queues {
		for _, f := range b.Flavors {
			for _, r := range b.Resources {
				if u := s.Usage(q.Name, f.Name, r); u != 0 {
					usage[fmt.Sprintf("%s/%s/%s", q.Name, f.Name, r)] = u
				}
			}
		}
		debt[q.Name] = s.Debt(q.Name)
		counts[q.Name] = s.RunningCount(q.Name)
	}
	nodes := map[string]allot.Resources{}
	for _, n := range b.Nodes {
		nodes[n.Name], _ = s.NodeFree(n.Name)
	}
	out, err := json.Marshal(struct {
		Running   []allot.Workload
		Pending   []allot.Workload
		Free      int64
		Nodes     map[string]allot.Resources
		Usage     map[string]int64
		Debt      map[string]float64
		Counts    map[string]int
		Evictions []allot.Eviction
	}{running, s.PendingWorkloads(), s.FreeGPUs(), nodes, usage, debt, counts, s.Evictions()})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestTwoPhaseRandomEvents drives two-phase stores of random worlds
// through random decisions, commits and events (victims terminating,
// finishing or evicted, holds withdrawn, nodes going down and up, queue
// changes, time) and checks after each step that no GPU is booked twice
// nor lost, counting the holds' placements, and that every queue's usage
// is what its running, non-evicting workloads and holds charge; at the
// end, once every victim has terminated, nothing is left in flight.
func TestTwoPhaseRandomEvents(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	rng := rand.New(rand.NewPCG(2026, 17))
	holds, preempted, churned := 0, 0, 0
	for i := range n {
		pw := &pworld{}
		if err := genPreemptWorld(rng, pw); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		b := pw.b
		b.Options.TwoPhasePreemption = true
		base, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		st := allot.NewStore(base)
		var nodes []string
		for _, nd := range b.Nodes {
			nodes = append(nodes, nd.Name)
		}
		for step := range 30 {
			s := st.Load()
			var ev allot.Event
			switch k := rng.IntN(10); {
			case k < 4:
				r := pw.req
				r.ID = fmt.Sprintf("r%02d", step)
				r.Priority = int32(rng.IntN(6))
				r.Queue = b.Queues[rng.IntN(len(b.Queues))].Name
				if rng.IntN(2) == 0 {
					if _, err := st.Apply(allot.Submit{Workload: allot.Workload(r)}); err != nil {
						t.Fatalf("case %d step %d: submit: %v", i, step, err)
					}
				}
				d := allot.Decide(st.Load(), r)
				if d.Verdict == allot.VerdictAdmit || d.Verdict == allot.VerdictPreempt {
					victims := d.Victims
					if _, err := st.Commit(d); err != nil {
						t.Fatalf("case %d step %d: commit: %v", i, step, err)
					}
					for _, v := range victims {
						if slices.Contains(s.HeldIDs(), v.ID) {
							preempted++
						}
					}
					if d.Verdict == allot.VerdictPreempt {
						holds++
					}
				}
			case k == 4 && len(s.EvictingIDs()) > 0:
				ids := s.EvictingIDs()
				ev = allot.Terminated{ID: ids[rng.IntN(len(ids))]}
			case k == 5 && len(s.RunningIDs()) > 0:
				ids := s.RunningIDs()
				if rng.IntN(2) == 0 {
					ev = allot.Finish{ID: ids[rng.IntN(len(ids))]}
				} else {
					ev = allot.Evict{ID: ids[rng.IntN(len(ids))]}
				}
			case k == 6 && len(s.HeldIDs()) > 0:
				ids := s.HeldIDs()
				ev = allot.Withdraw{ID: ids[rng.IntN(len(ids))]}
			case k == 7 && len(nodes) > 0:
				node := nodes[rng.IntN(len(nodes))]
				if rng.IntN(2) == 0 {
					ev = allot.NodeDown{Node: node}
				} else {
					ev = allot.NodeUp{Node: node}
				}
			case k == 8:
				q, _ := s.Queue(b.Queues[rng.IntN(len(b.Queues))].Name)
				ev = allot.SetQueue{Queue: q}
			case k == 9 && len(nodes) > 0 && rng.IntN(2) == 0:
				// The cluster's churn, holds in flight: a node taken out,
				// added or described anew with other labels or capacity.
				nd, _ := s.Node(nodes[rng.IntN(len(nodes))])
				var churn allot.Event
				switch rng.IntN(3) {
				case 0:
					churn = allot.RemoveNode{Node: nd.Name}
				case 1:
					nd.Name = fmt.Sprintf("added-%d-%d", i, step)
					churn = allot.AddNode{Node: nd}
				default:
					nd.Labels = map[string]string{"rack": fmt.Sprintf("moved-%d", rng.IntN(2))}
					nd.Capacity = maps.Clone(nd.Capacity)
					nd.Capacity["cpu"] += 1000
					churn = allot.SetNode{Node: nd}
				}
				before := st.Load()
				if _, err := st.Apply(churn); err != nil {
					var be *allot.BuildError
					if !errors.As(err, &be) || st.Load() != before {
						t.Fatalf("case %d step %d: %#v: %v", i, step, churn, err)
					}
					break
				}
				churned++
				nodes = nodes[:0]
				for _, n := range st.Load().Nodes() {
					nodes = append(nodes, n.Name)
				}
			default:
				ev = allot.AdvanceTime{Seconds: int64(rng.IntN(60))}
			}
			if ev != nil {
				if _, err := st.Apply(ev); err != nil {
					t.Fatalf("case %d step %d: %#v: %v", i, step, ev, err)
				}
			}
			checkTwoPhaseBooks(t, fmt.Sprintf("case %d step %d", i, step), &b, st.Load(), clusterGPUs(st.Load()))
		}
		for _, id := range st.Load().EvictingIDs() {
			if _, err := st.Apply(allot.Terminated{ID: id}); err != nil {
				t.Fatalf("case %d: Terminated %q: %v", i, id, err)
			}
		}
		s := st.Load()
		if len(s.EvictingIDs()) != 0 || len(s.HeldIDs()) != 0 {
			t.Fatalf("case %d: left in flight: evicting %v, held %v", i, s.EvictingIDs(), s.HeldIDs())
		}
		checkTwoPhaseBooks(t, fmt.Sprintf("case %d end", i), &b, s, clusterGPUs(s))
	}
	t.Logf("%d worlds: %d two-phase preemptions, %d holds preempted, %d node events", n, holds, preempted, churned)
	if holds < n/2 || preempted == 0 || churned < n/4 {
		t.Errorf("%d preemptions and %d holds preempted in %d worlds: the test reaches too little", holds, preempted, n)
	}
}

// clusterGPUs is the GPUs of s's nodes.
func clusterGPUs(s *allot.Snapshot) int64 {
	total := int64(0)
	for _, n := range s.Nodes() {
		total += n.Capacity["gpu"]
	}
	return total
}

// checkTwoPhaseBooks checks a two-phase store's books (see
// TestTwoPhaseRandomEvents).
func checkTwoPhaseBooks(t *testing.T, where string, b *allot.Builder, s *allot.Snapshot, total int64) {
	t.Helper()
	taken := map[string]uint64{}
	held := int64(0)
	charged := map[string]int64{}
	charge := func(w allot.Workload) {
		for _, ps := range w.PodSets {
			for r, v := range ps.PerPod {
				charged[w.Queue+"/"+ps.Flavor+"/"+r] += v * int64(ps.Count)
			}
		}
	}
	for _, id := range s.RunningIDs() {
		w, _ := s.Running(id)
		for _, ps := range w.PodSets {
			for k, idx := range ps.GPUIndices {
				for _, g := range idx {
					bit := uint64(1) << g
					if taken[ps.Nodes[k]]&bit != 0 {
						t.Fatalf("%s: GPU %d of node %q is booked twice (again by %q)", where, g, ps.Nodes[k], id)
					}
					taken[ps.Nodes[k]] |= bit
				}
			}
		}
		if _, _, evicting := s.Evicting(id); !evicting {
			charge(w)
		}
	}
	for _, id := range s.HeldIDs() {
		h, _ := s.Held(id)
		charge(h.Workload)
		for node, g := range heldGPUs(s, h) {
			taken[node] |= g
		}
	}
	for node, g := range taken {
		free, _ := s.NodeFreeGPUs(node)
		if uint64(free)&g != 0 {
			t.Fatalf("%s: node %q: GPUs %v free, %08b taken", where, node, free, g)
		}
		held += int64(bits.OnesCount64(g))
	}
	if s.FreeGPUs()+held != total {
		t.Fatalf("%s: %d free GPUs and %d taken of %d", where, s.FreeGPUs(), held, total)
	}
	for _, q := range b.Queues {
		for _, f := range b.Flavors {
			for _, r := range b.Resources {
				if got, want := s.Usage(q.Name, f.Name, r), charged[q.Name+"/"+f.Name+"/"+r]; got != want {
					t.Fatalf("%s: queue %s uses %d %s of %s, its workloads and holds charge %d", where, q.Name, got, r, f.Name, want)
				}
			}
		}
	}
}
