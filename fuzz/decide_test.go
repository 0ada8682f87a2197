package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
)

func FuzzDecide(f *testing.F) {
	for _, seed := range decideSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w := gen(data)
		checkWorld(t, w, nil)
		checkWorld(t, tenanted(data, w), nil)
	})
}

// decideSeeds are FuzzDecide's seeds: a few byte patterns; gofuzz reads
// them eight bytes at a time and seeds its fallback generator from the
// first eight.
func decideSeeds() [][]byte {
	var seeds [][]byte
	for i := range 16 {
		seed := make([]byte, 8+i*8)
		for k := range seed {
			seed[k] = byte(i*31 + k*7)
		}
		seeds = append(seeds, seed)
	}
	return append(seeds, []byte{}, []byte("allot"), bytes.Repeat([]byte{0xff}, 64))
}

// checkWorld builds the world's snapshot and decides its requests in order
// on a store, committing admissions, checking every decision; rec (when
// not nil) records what allot answered on the way.
func checkWorld(t *testing.T, w world, rec *recorder) {
	t.Helper()
	s, err, panicked := build(&w.B)
	if panicked != nil {
		t.Fatalf("Build panicked: %v", panicked)
	}
	if err != nil {
		var be *allot.BuildError
		if !errors.As(err, &be) {
			t.Fatalf("Build: %v is not a *allot.BuildError", err)
		}
		if s != nil {
			t.Fatalf("Build returned a snapshot and an error")
		}
		rec.err("build", err)
		return
	}
	rec.state("build", s)
	store := allot.NewStore(s)
	for i, r := range w.Requests {
		if i > 0 && w.Events[i-1] != nil {
			applyEvent(t, store, w.Events[i-1], rec, fmt.Sprintf("event %d (%T)", i-1, w.Events[i-1]))
		}
		cur := store.Load()
		d := allot.Decide(cur, r)
		label := fmt.Sprintf("request %d (%q)", i, r.ID)
		rec.decision(label, &d)
		checkDecision(t, &w.B, cur, r, d)
		if _, dup := cur.Running(r.ID); dup && (d.Verdict != allot.VerdictReject || d.Reason != allot.InvalidRequest) {
			t.Fatalf("request %d (%q) is already running: Decide gives %v %v", i, r.ID, d.Verdict, d.Reason)
		}
		if d.Verdict != allot.VerdictAdmit {
			continue
		}
		next, err, panicked := commit(store, d)
		if panicked != nil {
			t.Fatalf("request %d (%q): Commit panicked: %v", i, r.ID, panicked)
		}
		if err != nil {
			t.Fatalf("request %d (%q): Commit on the store: %v", i, r.ID, err)
		}
		if next.Version() != cur.Version()+1 {
			t.Fatalf("request %d: version %d after commit, was %d", i, next.Version(), cur.Version())
		}
		rec.state(label+" commit", next)
	}
	checkLoop(t, store, rec)
}

// checkLoop runs the scheduling loop over what the events left pending:
// the admission order lists every pending workload once, every admission
// the loop reports ends up running or evicted again, and the loop leaves
// the fragmentation measurable. rec (when not nil) records the order, the
// loop's decisions and the store it leaves.
func checkLoop(t *testing.T, store *allot.Store, rec *recorder) {
	t.Helper()
	before := store.Load()
	order := allot.Order(before)
	rec.value("order", order)
	if got, want := slices.Sorted(slices.Values(order)), before.PendingIDs(); !slices.Equal(got, want) {
		t.Fatalf("Order lists %v, the pending workloads are %v", got, want)
	}
	var ds []allot.Decision
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Schedule panicked: %v", r)
			}
		}()
		ds = allot.Schedule(store)
	}()
	after := store.Load()
	for k := range ds {
		rec.decision(fmt.Sprintf("schedule decision %d", k+1), &ds[k])
		if w, ok := before.Pending(ds[k].Workload); ok && ds[k].Verdict == allot.VerdictAdmit {
			// The loop admits only what may enter where it waits.
			if why, _ := naiveEntry(before, allot.Request(w)); why != 0 {
				t.Fatalf("Schedule admitted %q, which the rule of entry refuses: %v", w.ID, why)
			}
		}
	}
	rec.state("schedule end", after)
	for _, d := range ds {
		if d.Verdict != allot.VerdictAdmit {
			continue
		}
		_, running := after.Running(d.Workload)
		_, pending := after.Pending(d.Workload)
		if !running && !pending {
			t.Fatalf("Schedule admitted %q, which is neither running nor pending after the loop", d.Workload)
		}
	}
	if f := after.Fragmentation(); f.NodeShare < 0 || f.NodeShare > 1 || f.StrandedShare < 0 || f.StrandedShare > 1+1e-9 {
		t.Fatalf("fragmentation out of range: %+v", f)
	}
}

// applyEvent applies a store event and checks what it did to the free GPUs
// and the running and pending workloads; rec (when not nil) records its
// error or the store after it under label.
func applyEvent(t *testing.T, store *allot.Store, ev allot.Event, rec *recorder, label string) {
	t.Helper()
	before := store.Load()
	freeBefore, versionBefore := before.FreeGPUs(), before.Version()
	var held int64 // the GPUs of a workload that finishes or is evicted
	id := ""
	switch e := ev.(type) {
	case allot.Finish:
		id = e.ID
	case allot.Evict:
		id = e.ID
	}
	w, running := before.Running(id)
	if running {
		for _, ps := range w.PodSets {
			for _, idx := range ps.GPUIndices {
				held += int64(len(idx))
			}
		}
	}
	after, err, panicked := apply(store, ev)
	if panicked != nil {
		t.Fatalf("event %#v panicked: %v", ev, panicked)
	}
	if err != nil {
		rec.err(label, err)
	} else {
		rec.state(label, after)
	}
	if adv, isAdv := ev.(allot.AdvanceTime); isAdv && adv.Seconds > math.MaxInt64-before.Now() && err == nil {
		// The clock would wrap around (see TestRegressAdvanceTimeOverflow).
		t.Fatalf("AdvanceTime(%d) from %d accepted: now %d", adv.Seconds, before.Now(), after.Now())
	}
	if err != nil {
		if cur := store.Load(); cur != before {
			t.Fatalf("event %#v failed (%v) but published version %d", ev, err, cur.Version())
		}
		if id != "" && running {
			t.Fatalf("event %#v on a running workload failed: %v", ev, err)
		}
		return
	}
	if after.Version() != before.Version()+1 || store.Load() != after {
		t.Fatalf("event %#v: version %d after %d, or not published", ev, after.Version(), before.Version())
	}
	if id != "" {
		if _, still := after.Running(id); still {
			t.Fatalf("event %#v: %q still running", ev, id)
		}
		if got := after.FreeGPUs(); got != before.FreeGPUs()+held {
			t.Fatalf("event %#v: free GPUs %d, was %d, the workload held %d", ev, got, before.FreeGPUs(), held)
		}
		if _, pending := after.Pending(id); pending != (ev == allot.Event(allot.Evict{ID: id})) {
			t.Fatalf("event %#v: pending %v afterwards", ev, pending)
		}
	} else if after.FreeGPUs() != before.FreeGPUs() {
		t.Fatalf("event %#v changed the free GPUs from %d to %d", ev, before.FreeGPUs(), after.FreeGPUs())
	}
	if before.FreeGPUs() != freeBefore || before.Version() != versionBefore {
		t.Fatalf("event %#v changed the published snapshot before it", ev)
	}
}

// build runs Build, turning a panic into a value.
func build(b *allot.Builder) (s *allot.Snapshot, err error, panicked any) {
	defer func() { panicked = recover() }()
	s, err = b.Build()
	return s, err, nil
}

// apply runs Store.Apply, turning a panic into a value.
func apply(st *allot.Store, ev allot.Event) (s *allot.Snapshot, err error, panicked any) {
	defer func() { panicked = recover() }()
	s, err = st.Apply(ev)
	return s, err, nil
}

// commit runs Store.Commit, turning a panic into a value.
func commit(st *allot.Store, d allot.Decision) (s *allot.Snapshot, err error, panicked any) {
	defer func() { panicked = recover() }()
	s, err = st.Commit(d)
	return s, err, nil
}

// clip shortens JSON for a failure message.
func clip(b []byte) string {
	if len(b) > 3000 {
		return string(b[:3000]) + "…"
	}
	return string(b)
}

// marshal renders a decision as JSON.
func marshal(t *testing.T, d *allot.Decision) []byte {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatalf("json.Marshal(decision): %v", err)
	}
	return b
}

// checkDecision checks one decision d of request r on snapshot s, built from
// b (through a store, maybe with commits since).
func checkDecision(t *testing.T, b *allot.Builder, s *allot.Snapshot, r allot.Request, d allot.Decision) {
	t.Helper()
	js := marshal(t, &d)
	fail := func(format string, args ...any) {
		t.Helper()
		req, _ := json.Marshal(r)
		t.Fatalf("%s\nrequest: %s\ndecision: %s", fmt.Sprintf(format, args...), clip(req), clip(js))
	}
	if d.Verdict == 0 || d.Reason == 0 {
		fail("no verdict or reason")
	}
	if d.Verdict != d.Reason.Verdict() {
		fail("verdict %v, reason %v means %v", d.Verdict, d.Reason, d.Reason.Verdict())
	}
	if d.Reason == allot.InvalidRequest && d.Verdict != allot.VerdictReject {
		fail("InvalidRequest with verdict %v", d.Verdict)
	}
	if d.Version != s.Version() || d.Workload != r.ID || d.Queue != r.Queue && r.LocalQueue == "" {
		fail("decision names version %d, workload %q, queue %q", d.Version, d.Workload, d.Queue)
	}
	checkEntry(s, r, &d, fail)
	if d.Message == "" || len(d.Trail) == 0 {
		fail("no message or trail")
	}
	if d.Verdict != allot.VerdictAdmit {
		if len(d.Placement) != 0 {
			fail("a %v decision with a placement", d.Verdict)
		}
		if !slices.ContainsFunc(d.Trail, func(c allot.Check) bool { return !c.Passed }) {
			fail("a %v decision whose trail failed no check", d.Verdict)
		}
	}

	// Deterministic: again, and again into a decision that held another.
	if again := allot.Decide(s, r); !bytes.Equal(marshal(t, &again), js) {
		fail("deciding again gives\n%s", marshal(t, &again))
	}
	var reused allot.Decision
	other := r
	other.ID += "-other"
	other.PodSets = slices.Clone(r.PodSets)
	if len(other.PodSets) > 0 {
		other.PodSets[0].Count = 1
	}
	allot.DecideInto(s, other, &reused)
	allot.DecideInto(s, r, &reused)
	if got := marshal(t, &reused); !bytes.Equal(got, js) {
		fail("DecideInto on a reused decision gives\n%s", got)
	}

	if slices.ContainsFunc(r.PodSets, func(ps allot.PodSet) bool { return ps.MinCount != 0 }) {
		checkPartialDecision(s, r, d, fail)
	}
	if d.Verdict == allot.VerdictAdmit {
		checkAdmission(t, b, s, r, d, fail)
	}
}

// checkAdmission checks that an admission is sound.
func checkAdmission(t *testing.T, b *allot.Builder, s *allot.Snapshot, r allot.Request, d allot.Decision, fail func(string, ...any)) {
	t.Helper()
	if len(d.Flavors) != len(r.PodSets) {
		fail("%d flavors for %d pod sets", len(d.Flavors), len(r.PodSets))
	}
	flavorOfNode := map[string]string{}
	gpusOfNode := map[string]int64{}
	for _, n := range b.Nodes {
		flavorOfNode[n.Name] = n.Flavor
		gpusOfNode[n.Name] = n.Capacity["gpu"]
	}
	topologyAware := b.Options.TopologyAware == nil || *b.Options.TopologyAware
	q, _ := s.Queue(d.Queue)

	// Which pod sets are placed, and how many GPUs each pod gets.
	k := 0
	placedGPUs := int64(0)
	booked := map[string]uint64{} // node → GPUs this decision takes
	podsOn := map[string]int{}
	for i, ps := range r.PodSets {
		pf := d.Flavors[i]
		if pf.PodSet != ps.Name {
			fail("flavor %d names pod set %q, want %q", i, pf.PodSet, ps.Name)
		}
		if len(ps.Flavors) > 0 && !slices.Contains(ps.Flavors, pf.Flavor) {
			fail("pod set %q on flavor %q, allowed %v", ps.Name, pf.Flavor, ps.Flavors)
		}
		if !slices.ContainsFunc(q.Quota, func(fq allot.FlavorQuota) bool { return fq.Flavor == pf.Flavor }) {
			fail("pod set %q on flavor %q, where queue %q has no quota", ps.Name, pf.Flavor, d.Queue)
		}
		hasNodes, hasGPUs := false, false
		for _, n := range b.Nodes {
			if n.Flavor == pf.Flavor {
				hasNodes = true
				hasGPUs = hasGPUs || n.Capacity["gpu"] > 0
			}
		}
		if !hasNodes || !topologyAware {
			continue // quota only
		}
		wantGPUs := 0
		if hasGPUs {
			wantGPUs = int(ps.PerPod["gpu"])
		}
		count, _ := d.CountOf(ps.Name) // ps.Count, or fewer under partial admission
		if k+int(count) > len(d.Placement) {
			fail("placement has %d entries, pod set %q needs %d from %d", len(d.Placement), ps.Name, count, k)
		}
		pods := d.Placement[k : k+int(count)]
		k += int(count)
		perNode := map[string]int{}
		for p, pp := range pods {
			if pp.PodSet != ps.Name || pp.Pod != int32(p) {
				fail("placement entry %d is pod %d of %q, want pod %d of %q", k-int(count)+p, pp.Pod, pp.PodSet, p, ps.Name)
			}
			if flavorOfNode[pp.Node] != pf.Flavor {
				fail("pod %d of %q on node %q of flavor %q, not %q", p, ps.Name, pp.Node, flavorOfNode[pp.Node], pf.Flavor)
			}
			if pp.GPUs.Len() != wantGPUs {
				fail("pod %d of %q has GPUs %v, wants %d", p, ps.Name, pp.GPUs, wantGPUs)
			}
			free, ok := s.NodeFreeGPUs(pp.Node)
			if !ok {
				fail("pod %d of %q on unknown node %q", p, ps.Name, pp.Node)
			}
			for _, g := range pp.GPUs.Indices() {
				if g < 0 || int64(g) >= gpusOfNode[pp.Node] {
					fail("pod %d of %q: GPU %d of node %q with %d GPUs", p, ps.Name, g, pp.Node, gpusOfNode[pp.Node])
				}
				bit := uint64(1) << g
				if !free.Has(g) {
					fail("pod %d of %q: GPU %d of node %q is not free", p, ps.Name, g, pp.Node)
				}
				if booked[pp.Node]&bit != 0 {
					fail("pod %d of %q: GPU %d of node %q booked twice", p, ps.Name, g, pp.Node)
				}
				booked[pp.Node] |= bit
				placedGPUs++
			}
			perNode[pp.Node]++
			podsOn[pp.Node]++
		}
		topo := ps.Topology
		if topo.Policy == allot.Spread {
			for n, c := range perNode {
				if c > 1 {
					fail("spread pod set %q has %d pods on %q", ps.Name, c, n)
				}
			}
		}
		if topo.Required != "" {
			if dom, ok := oneDomain(s, pods, topo.Required); !ok {
				fail("pod set %q requires one %s, got %s", ps.Name, topo.Required, dom)
			}
		}
		for _, sl := range topo.Slices {
			for i := 0; i < len(pods); i += int(sl.Size) {
				if dom, ok := oneDomain(s, pods[i:min(i+int(sl.Size), len(pods))], sl.Level); !ok {
					fail("pod set %q: slice of pods %d..%d spans %ss %s", ps.Name, i, i+int(sl.Size)-1, sl.Level, dom)
				}
			}
		}
	}
	// Running workloads whose GPUs are on record hold none of them.
	for _, id := range s.RunningIDs() {
		rw, _ := s.Running(id)
		for _, ps := range rw.PodSets {
			for p, idx := range ps.GPUIndices {
				if p >= len(ps.Nodes) {
					break
				}
				for _, g := range idx {
					if booked[ps.Nodes[p]]&(1<<g) != 0 {
						fail("GPU %d of node %q is held by running %q", g, ps.Nodes[p], id)
					}
				}
			}
		}
	}
	if k != len(d.Placement) {
		fail("placement has %d entries, the placed pod sets %d pods", len(d.Placement), k)
	}
	// Pod sets of a group share a domain of the narrowest level one of them
	// requires.
	groups := map[string][]int{}
	for i, ps := range r.PodSets {
		if g := ps.Topology.Group; g != "" {
			groups[g] = append(groups[g], i)
		}
	}
	for g, members := range groups {
		level, depth := "", -1
		for _, i := range members {
			if l := r.PodSets[i].Topology.Required; l != "" && levelDepth(s, l) > depth {
				level, depth = l, levelDepth(s, l)
			}
		}
		if level == "" {
			continue
		}
		var pods []allot.PodPlacement
		for _, pp := range d.Placement {
			for _, i := range members {
				if pp.PodSet == r.PodSets[i].Name {
					pods = append(pods, pp)
				}
			}
		}
		if dom, ok := oneDomain(s, pods, level); !ok {
			fail("group %q requires one %s, got %s", g, level, dom)
		}
	}
	// Max pods.
	for _, n := range b.Nodes {
		if n.MaxPods > 0 && podsOn[n.Name] > int(n.MaxPods) {
			fail("%d pods on node %q of at most %d", podsOn[n.Name], n.Name, n.MaxPods)
		}
	}

	// Committing it on its own snapshot must succeed and take exactly the
	// GPUs placed; the snapshot itself must not change.
	if _, dup := s.Running(r.ID); dup {
		return // a conflict (see checkWorld)
	}
	before := s.FreeGPUs()
	next, err, panicked := commit(allot.NewStore(s), d)
	if panicked != nil {
		fail("Commit panicked: %v", panicked)
	}
	if err != nil {
		fail("Commit: %v", err)
	}
	if got := next.FreeGPUs(); got != before-placedGPUs {
		fail("free GPUs %d after commit, %d before, %d placed", got, before, placedGPUs)
	}
	if s.FreeGPUs() != before {
		fail("committing changed the snapshot decided on: %d free GPUs, was %d", s.FreeGPUs(), before)
	}
	if _, ok := next.Running(r.ID); !ok {
		fail("after commit, %q is not running", r.ID)
	}
	if again := allot.Decide(s, r); !bytes.Equal(marshal(t, &again), marshal(t, &d)) {
		fail("after a commit, deciding on the old snapshot gives\n%s", marshal(t, &again))
	}
}

// levelDepth is the position of a level, the node level last.
func levelDepth(s *allot.Snapshot, level string) int {
	if level == "node" {
		return len(s.Levels())
	}
	return slices.Index(s.Levels(), level)
}

// domainPath is a node's domain at a level as its label path, so that racks
// of the same name in different blocks differ.
func domainPath(s *allot.Snapshot, node, level string) string {
	if level == "node" {
		return "node:" + node
	}
	var parts []string
	for _, l := range s.Levels() {
		v, _ := s.NodeLabel(node, l)
		parts = append(parts, v)
		if l == level {
			break
		}
	}
	return strings.Join(parts, "/")
}

// oneDomain reports whether pods share one domain of level, and lists the
// domains they use.
func oneDomain(s *allot.Snapshot, pods []allot.PodPlacement, level string) (string, bool) {
	var doms []string
	for _, pp := range pods {
		d := domainPath(s, pp.Node, level)
		if !slices.Contains(doms, d) {
			doms = append(doms, d)
		}
	}
	return strings.Join(doms, ", "), len(doms) <= 1
}
