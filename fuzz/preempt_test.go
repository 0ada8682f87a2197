package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	gofuzz "github.com/google/gofuzz"

	"github.com/allot-sched/allot"
)

// FuzzPreempt decides requests on worlds built for preemption: queues with
// random Kueue preemption policies in flat or nested cohorts with lending
// and borrowing limits, full nodes and quota-only flavors, running
// workloads of every priority and preemption class, some on a spot flavor.
// Every decision is deterministic and never panics, no victim is a
// class-never workload off spot, and committing a decision, after events
// that may have made it stale, either succeeds (evicting exactly the
// victims, each adding one preemption to its queue's fairness debt) or is
// refused with an allot.ErrConflict and changes nothing, and never books a
// GPU twice, and a refused commit leaves no fairness debt behind.
func FuzzPreempt(f *testing.F) {
	for _, seed := range preemptSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkPreemptWorld(t, genPreempt(data), nil, nil)
	})
}

// preemptSeeds are FuzzPreempt's seeds.
func preemptSeeds() [][]byte {
	var seeds [][]byte
	for i := range 12 {
		seed := make([]byte, 16+i*24)
		for k := range seed {
			seed[k] = byte(i*57 + k*13 + k*k)
		}
		seeds = append(seeds, seed)
	}
	return append(seeds, []byte("preempt"), bytes.Repeat([]byte{0x80}, 96))
}

// TestPreemptGeneratedWorlds runs FuzzPreempt's checks on fixed
// pseudo-random inputs, so that plain go test covers more than the seed
// corpus, and checks that the generator reaches what it is for: Preempt
// decisions, their commits, and commits refused as stale.
func TestPreemptGeneratedWorlds(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 400
	}
	rng := rand.New(rand.NewPCG(5, 3))
	counts := preemptCounts{Reasons: map[allot.Reason]int{}}
	for range n {
		data := randomInput(rng, 400)
		t.Run("", func(t *testing.T) {
			checkPreemptWorld(t, genPreempt(data), &counts, nil)
			if t.Failed() {
				t.Fatalf("input %x", data)
			}
		})
		if t.Failed() {
			return
		}
	}
	t.Logf("%d inputs: %+v", n, counts)
	if !testing.Short() && (counts.Preempt*20 < counts.Decisions || counts.PreemptCommitted == 0 || counts.PreemptConflicts == 0 ||
		counts.CrossQueue == 0 || counts.NeverOnSpot == 0) {
		t.Errorf("the generator is lopsided: %+v", counts)
	}
}

// preemptCounts counts what checkPreemptWorld saw.
type preemptCounts struct {
	Built, Decisions, Preempt, Victims, PreemptCommitted, Conflicts, PreemptConflicts int
	// CrossQueue counts victims of another queue than the preemptor's,
	// NeverOnSpot victims of class never (on a spot flavor).
	CrossQueue, NeverOnSpot int
	Reasons                 map[allot.Reason]int
}

// preemptWorld is what FuzzPreempt decides on.
type preemptWorld struct {
	B allot.Builder
	// Steps are decided in order on a store.
	Steps []preemptStep
}

// preemptStep is one request and what happens between its decision and
// the commit of that decision.
type preemptStep struct {
	Request allot.Request
	// Between is applied after the decision, before its commit: events
	// and decisions of other requests committed first.
	Between []stepEvent
}

// stepEvent is an event to apply, or (Other set) a competing request to
// decide and commit.
type stepEvent struct {
	Event allot.Event
	// Victim, when at least zero, makes Event (a Finish, Evict or
	// Checkpoint) name the decision's victim of that index, if any. A
	// NodeDown or NodeCordon names the node of the decision's first pod.
	Victim int
	Other  *allot.Request
}

// genPreempt turns fuzzer bytes into a world.
func genPreempt(data []byte) preemptWorld {
	var w preemptWorld
	gofuzz.NewFromGoFuzz(data).NilChance(0).Funcs(func(w *preemptWorld, c gofuzz.Continue) {
		g := &preemptGen{c: c}
		g.world(w)
	}).Fuzz(&w)
	return w
}

type preemptGen struct {
	c       gofuzz.Continue
	b       *allot.Builder
	queues  []string
	flavors []string
	// nodesOf lists each flavor's nodes; free is each node's free GPUs
	// while running workloads are placed.
	nodesOf map[string][]string
	free    map[string]int64
}

func (g *preemptGen) pick(pool []string) string { return pool[g.c.Intn(len(pool))] }

func (g *preemptGen) world(w *preemptWorld) {
	c := g.c
	w.B = allot.Builder{Now: genNow, Resources: []string{"gpu", "cpu"}, Levels: []string{"rack"}}
	b := &w.B
	g.b = b
	for i := range 1 + c.Intn(2) {
		b.Flavors = append(b.Flavors, allot.Flavor{Name: []string{"a100", "h100"}[i]})
	}
	if c.Intn(2) == 0 {
		b.Flavors = append(b.Flavors, allot.Flavor{Name: "spot", Spot: true})
	}
	g.nodesOf, g.free = map[string][]string{}, map[string]int64{}
	for _, f := range b.Flavors {
		g.flavors = append(g.flavors, f.Name)
		if c.Intn(4) == 0 {
			continue // quota-only
		}
		gpus := []int64{2, 4, 8, 8, 8}[c.Intn(5)]
		for k := range 1 + c.Intn(4) {
			name := fmt.Sprintf("%s-%d", f.Name, k)
			n := allot.Node{Name: name, Flavor: f.Name, Labels: map[string]string{"rack": fmt.Sprintf("r%d", k%2)},
				Capacity: allot.Resources{"gpu": gpus, "cpu": 64_000}}
			switch c.Intn(16) {
			case 0:
				n.Down = true
			case 1:
				n.Unschedulable = true
			}
			b.Nodes = append(b.Nodes, n)
			g.nodesOf[f.Name] = append(g.nodesOf[f.Name], name)
			g.free[name] = gpus
		}
	}

	nq := 1 + c.Intn(3)
	cohortOf := make([]string, nq)
	switch c.Intn(5) {
	case 1, 2:
		b.Cohorts = []allot.Cohort{{Name: "co"}}
		for q := range cohortOf {
			if c.Intn(5) != 0 {
				cohortOf[q] = "co"
			}
		}
	case 3, 4:
		// A tree; with q2 directly under the root beside a cohort, its
		// height is not its depth.
		b.Cohorts = []allot.Cohort{{Name: "root"}, {Name: "left", Parent: "root"}, {Name: "right", Parent: "root"}}
		for q := range cohortOf {
			cohortOf[q] = []string{"left", g.pick([]string{"left", "right"}), g.pick([]string{"right", "root"})}[q]
		}
	}
	for i := range b.Cohorts {
		if c.Intn(4) == 0 {
			b.Cohorts[i].Quota = []allot.FlavorQuota{{Flavor: g.pick(g.flavors), Resources: []allot.ResourceQuota{
				{Name: "gpu", Nominal: c.Int63n(9)}}}}
			if b.Cohorts[i].Parent != "" && c.Intn(2) == 0 {
				v := c.Int63n(5)
				b.Cohorts[i].Quota[0].Resources[0].LendingLimit = &v
			}
		}
	}
	for q := range nq {
		qu := allot.Queue{Name: fmt.Sprintf("q%d", q), Cohort: cohortOf[q]}
		g.queues = append(g.queues, qu.Name)
		for _, f := range g.flavors {
			if c.Intn(6) == 0 && len(qu.Quota) > 0 {
				continue
			}
			gpu := allot.ResourceQuota{Name: "gpu", Nominal: c.Int63n(17)}
			if c.Intn(2) == 0 {
				gpu.Nominal = 8 + c.Int63n(9)
			}
			if qu.Cohort != "" {
				if c.Intn(4) == 0 {
					v := c.Int63n(gpu.Nominal + 1)
					gpu.LendingLimit = &v
				}
				if c.Intn(4) == 0 {
					v := c.Int63n(9)
					gpu.BorrowingLimit = &v
				}
			}
			fq := allot.FlavorQuota{Flavor: f, Resources: []allot.ResourceQuota{gpu, {Name: "cpu", Nominal: 64_000}}}
			if c.Intn(8) == 0 {
				fq.Resources = fq.Resources[:1] // cpu never fits
			}
			qu.Quota = append(qu.Quota, fq)
		}
		if c.Intn(4) == 0 {
			qu.FlavorOrder = []string{g.pick(g.flavors)}
		}
		qu.FlavorFungibility.WhenCanPreempt = g.pick([]string{"", "", "Preempt", "TryNextFlavor"})
		if c.Intn(3) == 0 {
			qu.FlavorFungibility.WhenCanBorrow = "TryNextFlavor"
		}
		p := &qu.Preemption
		p.WithinQueue = g.pick([]string{"", "LowerPriority", "LowerPriority", "LowerOrNewerEqualPriority"})
		p.ReclaimWithinCohort = g.pick([]string{"", "Never", "LowerPriority", "Any", "Any"})
		if p.ReclaimWithinCohort != "" && p.ReclaimWithinCohort != "Never" && c.Intn(2) == 0 {
			p.BorrowWithinCohort.Policy = "LowerPriority"
			if c.Intn(2) == 0 {
				v := int32(c.Intn(5))
				p.BorrowWithinCohort.MaxPriorityThreshold = &v
			}
		}
		if c.Intn(16) == 0 {
			qu.NonPreemptibleCap = allot.Resources{"gpu": c.Int63n(9)}
		}
		b.Queues = append(b.Queues, qu)
	}

	if c.Intn(3) == 0 {
		b.History.HalfLife = c.Int63n(3) * 600
		b.History.Preemptions = map[string]float64{}
		for _, q := range g.queues {
			b.History.Preemptions[q] = float64(c.Int63n(3))
		}
	}
	for i := range 2 + c.Intn(12) {
		b.Running = append(b.Running, g.running(fmt.Sprintf("w%02d", i)))
	}
	for i := range 1 + c.Intn(4) {
		s := preemptStep{Request: g.request(fmt.Sprintf("p%d", i))}
		for range c.Intn(3) {
			s.Between = append(s.Between, g.between(i))
		}
		w.Steps = append(w.Steps, s)
	}
}

// preemption is a random preemption spec of any class.
func (g *preemptGen) preemption() allot.PreemptionSpec {
	var p allot.PreemptionSpec
	switch g.c.Intn(6) {
	case 0, 1:
		p.Class = allot.Never
	case 2:
		p.Class = allot.Checkpointable
		p.LastCheckpointAt = g.c.Int63n(genNow)
	case 3:
		p.Class = allot.Preemptible
	}
	return p
}

// running is an admitted workload on room the generator keeps track of
// (quota is not checked: a world may be over-admitted).
func (g *preemptGen) running(id string) allot.Workload {
	c := g.c
	w := allot.Workload{ID: id, Queue: g.pick(g.queues), Priority: int32(c.Intn(5)),
		SubmittedAt: c.Int63n(genNow + 1), AdmittedAt: c.Int63n(genNow + 1), Preemption: g.preemption()}
	if c.Intn(3) == 0 {
		w.ExpectedRuntime = 1 + c.Int63n(2*genNow)
	}
	for k := range 1 + c.Intn(2) {
		f := g.pick(g.flavors)
		if c.Intn(3) == 0 && slices.Contains(g.flavors, "spot") {
			f = "spot"
		}
		ps := allot.PodSet{Name: fmt.Sprintf("ps%d", k), Count: int32(1 + c.Intn(2)), Flavor: f,
			PerPod: allot.Resources{"gpu": []int64{0, 1, 2, 4, 8}[c.Intn(5)], "cpu": int64(c.Intn(4)) * 1000}}
		if nodes := g.nodesOf[f]; len(nodes) > 0 {
			for range ps.Count {
				var fit []string
				for _, n := range nodes {
					if g.free[n] >= ps.PerPod["gpu"] {
						fit = append(fit, n)
					}
				}
				if len(fit) == 0 {
					ps.PerPod["gpu"] = 0
					fit = nodes
				}
				n := g.pick(fit)
				g.free[n] -= ps.PerPod["gpu"]
				ps.Nodes = append(ps.Nodes, n)
			}
		}
		w.PodSets = append(w.PodSets, ps)
	}
	return w
}

// request is a preemptor.
func (g *preemptGen) request(id string) allot.Request {
	c := g.c
	r := allot.Request{ID: id, Queue: g.pick(g.queues), Priority: int32(1 + c.Intn(5)),
		SubmittedAt: c.Int63n(genNow + 1), Preemption: g.preemption()}
	if c.Intn(3) == 0 {
		r.ExpectedRuntime = 1 + c.Int63n(3600)
	}
	for k := range 1 + c.Intn(2) {
		ps := allot.PodSet{Name: fmt.Sprintf("ps%d", k), Count: int32(1 + c.Intn(3)),
			PerPod: allot.Resources{"gpu": []int64{1, 2, 2, 4, 4, 8}[c.Intn(6)]}}
		if g := ps.PerPod["gpu"]; int64(ps.Count)*g > 8 && c.Intn(4) != 0 {
			ps.Count = int32(max(1, 8/g))
		}
		if c.Intn(2) == 0 {
			ps.PerPod["cpu"] = int64(1+c.Intn(4)) * 1000
		}
		switch c.Intn(5) {
		case 0:
			ps.Topology.Required = "rack"
		case 1:
			ps.Topology.Preferred = "rack"
		}
		if c.Intn(4) == 0 {
			ps.Flavors = []string{g.pick(g.flavors)}
		}
		r.PodSets = append(r.PodSets, ps)
	}
	return r
}

// between is an event between a decision and its commit.
func (g *preemptGen) between(step int) stepEvent {
	c := g.c
	ev := stepEvent{Victim: -1}
	switch c.Intn(9) {
	case 0:
		ev.Event, ev.Victim = allot.Finish{}, c.Intn(2)
	case 1:
		ev.Event, ev.Victim = allot.Evict{}, c.Intn(2)
	case 2:
		ev.Event, ev.Victim = allot.Checkpoint{}, c.Intn(2)
	case 3:
		ev.Event = allot.NodeDown{}
	case 4:
		ev.Event = allot.NodeCordon{Cordoned: true}
	case 5:
		ev.Event = allot.AdvanceTime{Seconds: c.Int63n(600)}
	case 6:
		ev.Event = allot.Finish{ID: fmt.Sprintf("w%02d", c.Intn(12))}
	default:
		r := g.request(fmt.Sprintf("o%d-%d", step, c.Intn(1000)))
		ev.Other = &r
	}
	return ev
}

// checkPreemptWorld builds the world and runs its steps on a store; rec
// (when not nil) records what allot answered on the way.
func checkPreemptWorld(t *testing.T, w preemptWorld, counts *preemptCounts, rec *recorder) {
	t.Helper()
	if counts == nil {
		counts = new(preemptCounts)
	}
	s, err, panicked := build(&w.B)
	if panicked != nil {
		t.Fatalf("Build panicked: %v", panicked)
	}
	if err != nil {
		rec.err("build", err)
		return // FuzzDecide checks Build's errors
	}
	rec.state("build", s)
	var total int64
	for _, n := range w.B.Nodes {
		total += n.Capacity["gpu"]
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\nworld: %s", fmt.Sprintf(format, args...), clip(mustMarshal(w.B)))
	}
	checkBooks(s, total, fail)
	counts.Built++
	store := allot.NewStore(s)
	for i, step := range w.Steps {
		cur := store.Load()
		d := decideChecked(t, &w.B, cur, step.Request)
		label := fmt.Sprintf("step %d (%q)", i, step.Request.ID)
		rec.decision(label, &d)
		checkPreemptDecision(t, &w.B, cur, step.Request, d, fail)
		counts.Decisions++
		if counts.Reasons != nil {
			counts.Reasons[d.Reason]++
		}
		if d.Verdict == allot.VerdictPreempt {
			counts.Preempt++
			counts.Victims += len(d.Victims)
			for _, v := range d.Victims {
				if v.Queue != step.Request.Queue {
					counts.CrossQueue++
				}
				if w, _ := cur.Running(v.ID); w.Preemption.Class == allot.Never {
					counts.NeverOnSpot++
				}
			}
		}
		if d.Verdict != allot.VerdictAdmit && d.Verdict != allot.VerdictPreempt {
			continue
		}
		stale := false
		for k, ev := range step.Between {
			stale = applyBetween(t, &w.B, store, d, ev, total, fail, rec, fmt.Sprintf("%s between %d", label, k)) || stale
		}
		before := store.Load()
		next, err, panicked := commit(store, d)
		if panicked != nil {
			fail("step %d: Commit of %v panicked: %v\ndecision: %s", i, d.Verdict, panicked, marshal(t, &d))
		}
		if err != nil {
			rec.err(label+" commit", err)
			if !errors.Is(err, allot.ErrConflict) {
				fail("step %d: Commit of %v: %v, not a conflict\ndecision: %s", i, d.Verdict, err, marshal(t, &d))
			}
			if !stale {
				fail("step %d: Commit of %v on the snapshot it was decided on: %v\ndecision: %s", i, d.Verdict, err, marshal(t, &d))
			}
			if cur := store.Load(); cur != before || len(cur.Evictions()) != len(before.Evictions()) {
				fail("step %d: a refused Commit changed the store", i)
			}
			// Nothing of it shows in the next version either.
			after, err, panicked := apply(store, allot.AdvanceTime{})
			if panicked != nil || err != nil {
				fail("step %d: AdvanceTime{0} after a refused Commit: %v %v", i, err, panicked)
			}
			if !slices.Equal(after.RunningIDs(), before.RunningIDs()) || !slices.Equal(after.PendingIDs(), before.PendingIDs()) ||
				len(after.Evictions()) != len(before.Evictions()) {
				fail("step %d: a refused Commit changed the store: running %v pending %v, were %v %v", i,
					after.RunningIDs(), after.PendingIDs(), before.RunningIDs(), before.PendingIDs())
			}
			for _, q := range w.B.Queues {
				if a, b := after.Debt(q.Name), before.Debt(q.Name); a != b {
					fail("step %d: a refused Commit left queue %q with debt %g, was %g (%v)", i, q.Name, a, b, err)
				}
			}
			checkBooks(after, total, fail)
			counts.Conflicts++
			if d.Verdict == allot.VerdictPreempt {
				counts.PreemptConflicts++
			}
			continue
		}
		rec.state(label+" commit", next)
		if d.Verdict == allot.VerdictPreempt {
			counts.PreemptCommitted++
		}
		checkBooks(next, total, fail)
		if _, ok := next.Running(d.Workload); !ok {
			fail("step %d: after Commit %q is not running", i, d.Workload)
		}
		for _, v := range d.Victims {
			if _, ok := next.Running(v.ID); ok {
				fail("step %d: after Commit victim %q still runs", i, v.ID)
			}
		}
		if got := len(next.Evictions()) - len(before.Evictions()); got != len(d.Victims) {
			fail("step %d: Commit recorded %d evictions for %d victims", i, got, len(d.Victims))
		}
		// Each victim adds one preemption to its queue's fairness debt.
		for _, q := range w.B.Queues {
			want := before.Debt(q.Name)
			for _, v := range d.Victims {
				if v.Queue == q.Name {
					want++
				}
			}
			if got := next.Debt(q.Name); math.Abs(got-want) > 1e-9*max(1, want) {
				fail("step %d: after Commit queue %q has debt %g, want %g", i, q.Name, got, want)
			}
		}
	}
}

// decideChecked decides r on s; a panic fails the input.
func decideChecked(t *testing.T, b *allot.Builder, s *allot.Snapshot, r allot.Request) (d allot.Decision) {
	t.Helper()
	var panicked any
	func() {
		defer func() { panicked = recover() }()
		d = allot.Decide(s, r)
	}()
	if panicked != nil {
		t.Fatalf("Decide panicked: %v\nrequest: %s\nworld: %s", panicked, mustMarshal(r), clip(mustMarshal(b)))
	}
	return d
}

// checkPreemptDecision checks a decision's victims against the snapshot.
func checkPreemptDecision(t *testing.T, b *allot.Builder, s *allot.Snapshot, r allot.Request, d allot.Decision, fail func(string, ...any)) {
	t.Helper()
	js := marshal(t, &d)
	if again := decideChecked(t, b, s, r); !bytes.Equal(marshal(t, &again), js) {
		fail("deciding %q again gives\n%s\nwas\n%s", r.ID, marshal(t, &again), js)
	}
	if d.Verdict != allot.VerdictPreempt {
		if len(d.Victims) > 0 {
			fail("a %v decision with victims: %s", d.Verdict, js)
		}
		return
	}
	if len(d.Victims) == 0 {
		fail("a Preempt decision without victims: %s", js)
	}
	spot := map[string]bool{}
	for _, f := range b.Flavors {
		spot[f.Name] = f.Spot
	}
	seen := map[string]bool{}
	for _, v := range d.Victims {
		w, ok := s.Running(v.ID)
		if !ok {
			fail("victim %q is not running: %s", v.ID, js)
		}
		if seen[v.ID] {
			fail("victim %q twice: %s", v.ID, js)
		}
		seen[v.ID] = true
		onSpot := slices.ContainsFunc(w.PodSets, func(ps allot.PodSet) bool { return spot[ps.Flavor] })
		if w.Preemption.Class == allot.Never && !onSpot {
			fail("victim %q is of class never and runs on no spot flavor\nrequest: %s\ndecision: %s", v.ID, mustMarshal(r), js)
		}
		if v.Preemptor != r.ID || v.Queue != w.Queue {
			fail("victim %+v of queue %q", v, w.Queue)
		}
	}
}

// applyBetween applies one event between a decision and its commit and
// reports whether it may have made the decision stale; rec (when not nil)
// records, under label, the competing decision and its commit or the
// event's error or the store after it.
func applyBetween(t *testing.T, b *allot.Builder, store *allot.Store, d allot.Decision, ev stepEvent, total int64, fail func(string, ...any),
	rec *recorder, label string) bool {
	t.Helper()
	e := ev.Event
	switch x := e.(type) {
	case allot.Finish:
		if ev.Victim >= 0 && ev.Victim < len(d.Victims) {
			x.ID = d.Victims[ev.Victim].ID
		}
		e = x
	case allot.Evict:
		if ev.Victim >= 0 && ev.Victim < len(d.Victims) {
			x.ID = d.Victims[ev.Victim].ID
		}
		e = x
	case allot.Checkpoint:
		if ev.Victim >= 0 && ev.Victim < len(d.Victims) {
			x.ID = d.Victims[ev.Victim].ID
		}
		e = x
	case allot.NodeDown:
		if len(d.Placement) == 0 {
			return false
		}
		x.Node = d.Placement[0].Node
		e = x
	case allot.NodeCordon:
		if len(d.Placement) == 0 {
			return false
		}
		x.Node = d.Placement[0].Node
		e = x
	}
	if ev.Other != nil {
		cur := store.Load()
		o := decideChecked(t, b, cur, *ev.Other)
		rec.decision(fmt.Sprintf("%s (%q)", label, ev.Other.ID), &o)
		checkPreemptDecision(t, b, cur, *ev.Other, o, fail)
		if o.Verdict != allot.VerdictAdmit && o.Verdict != allot.VerdictPreempt {
			return false
		}
		next, err, panicked := commit(store, o)
		if panicked != nil {
			fail("Commit of competing %q panicked: %v", ev.Other.ID, panicked)
		}
		if err != nil {
			fail("Commit of competing %q on its own snapshot: %v", ev.Other.ID, err)
		}
		rec.state(fmt.Sprintf("%s (%q) commit", label, ev.Other.ID), next)
		checkBooks(next, total, fail)
		return true
	}
	if e == nil {
		return false
	}
	next, err, panicked := apply(store, e)
	if panicked != nil {
		fail("event %#v panicked: %v", e, panicked)
	}
	if err != nil {
		rec.err(fmt.Sprintf("%s (%T)", label, e), err)
		return false
	}
	rec.state(fmt.Sprintf("%s (%T)", label, e), next)
	checkBooks(next, total, fail)
	// A checkpoint or a later clock changes no booking, but the store's
	// version moves on; the other events may free or take what the
	// decision counted on.
	_, checkpoint := e.(allot.Checkpoint)
	_, advance := e.(allot.AdvanceTime)
	return !checkpoint && !advance
}

// checkBooks checks that no GPU is booked twice: running workloads hold
// disjoint GPUs that are not free, and with the free ones they make up the
// cluster.
func checkBooks(s *allot.Snapshot, total int64, fail func(string, ...any)) {
	held := int64(0)
	booked := map[string]uint64{}
	for _, id := range s.RunningIDs() {
		w, _ := s.Running(id)
		for _, ps := range w.PodSets {
			for p, idx := range ps.GPUIndices {
				node := ps.Nodes[p]
				free, ok := s.NodeFreeGPUs(node)
				if !ok {
					fail("%q runs on unknown node %q", id, node)
				}
				for _, g := range idx {
					bit := uint64(1) << g
					if booked[node]&bit != 0 {
						fail("version %d: GPU %d of node %q booked twice (again by %q)", s.Version(), g, node, id)
					}
					if free.Has(g) {
						fail("version %d: GPU %d of node %q held by %q and free", s.Version(), g, node, id)
					}
					booked[node] |= bit
					held++
				}
			}
		}
	}
	if s.FreeGPUs()+held != total {
		fail("version %d: %d free GPUs and %d held of %d", s.Version(), s.FreeGPUs(), held, total)
	}
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(err.Error())
	}
	return b
}
