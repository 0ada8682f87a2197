package allot_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/allot-sched/allot"
)

// TestPreemptionProperties decides a random preemptor on many small random
// worlds and, whenever the answer is Preempt, checks Kueue's classical
// preemption contract (reference §2):
//
//   - minimality: put any one victim back (evict all the others) and the
//     preemptor is no longer admitted. Two exceptions are counted and
//     reported by skipped subtests instead: Kueue's pass without borrowing
//     keeps a victim that only keeps the preemptor within nominal quota
//     (it would be admitted by borrowing without it: Kueue's rule, §2.3-2.4),
//     and a request of several pod sets that fits with its pod sets on
//     different flavors (a known issue: the search puts them on one);
//   - sufficiency: evict all victims and the preemptor is admitted on the
//     flavors the decision names; committing the decision succeeds, books
//     no GPU twice, evicts exactly the victims and adds one preemption per
//     victim to its queue's fairness debt;
//   - policy: every victim is one the preemptor's queue policies allow, of
//     the preemptor's queue or of a queue of its cohort tree that borrows,
//     never a class-never workload off spot, with Kueue's victim reason;
//   - determinism: deciding again gives the same JSON.
func TestPreemptionProperties(t *testing.T) {
	for _, sem := range []string{allot.SemanticsAllot, allot.SemanticsKueue} {
		t.Run(sem, func(t *testing.T) { preemptionProperties(t, sem) })
	}
}

// preemptionProperties checks the generated worlds under semantics sem:
// the properties hold in both modes.
func preemptionProperties(t *testing.T, sem string) {
	n := 5000
	if testing.Short() {
		n = 800
	}
	start := time.Now()
	rng := rand.New(rand.NewPCG(2026, 11))
	// Fair sharing is on in a third of the worlds, drawn apart so that the
	// worlds stay those of the classical cases.
	fair := rand.New(rand.NewPCG(2026, 13))
	verdicts := map[allot.Verdict]int{}
	reasons := map[string]int{}
	victims := 0
	var stats preemptStats
	for i := range n {
		pw := &pworld{semantics: sem, fair: fair.IntN(3) == 0}
		panicked := catch(func() {
			if err := genPreemptWorld(rng, pw); err != nil {
				t.Fatalf("case %d: generated world does not build: %v", i, err)
			}
			d := allot.Decide(pw.s, pw.req)
			verdicts[d.Verdict]++
			if d.Verdict != allot.VerdictPreempt {
				return
			}
			victims += len(d.Victims)
			for _, v := range d.Victims {
				reasons[v.Reason]++
			}
			checkPreempt(t, i, pw, d, &stats)
		})
		if panicked != nil {
			t.Fatalf("case %d: panic: %v\nworld: %s\nrequest: %s", i, panicked, mustJSON(t, pw.b), mustJSON(t, pw.req))
		}
		if t.Failed() {
			return
		}
	}
	preempts := verdicts[allot.VerdictPreempt]
	t.Logf("%d worlds in %v: verdicts %v; %d victims, reasons %v",
		n, time.Since(start).Round(time.Millisecond), verdicts, victims, reasons)
	if stats.noBorrowPass > 0 {
		t.Run("kueue-rule/minimality-in-pass-without-borrowing", func(t *testing.T) {
			t.Skipf("%d victims are needed only to keep the preemptor within its nominal quota: without one of them it would be "+
				"admitted by borrowing. Kueue's classical preemption does the same in its allowBorrowing=false pass "+
				"(reference §2.3-2.4), so strict minimality is not asserted there; the rest of minimality is", stats.noBorrowPass)
		})
	}
	if stats.reassigned > 0 {
		t.Run("kueue-rule/requeue-reassigns-flavors", func(t *testing.T) {
			t.Skipf("%d times a request of several pod sets, re-decided once its victims (or all but one) are gone, gets "+
				"other flavors than its Preempt decision: the decision keeps the flavors of the pod sets that fit, and a "+
				"fresh flavor assignment may put a pod set on an earlier flavor the evictions freed, as Kueue's does when "+
				"it requeues the preemptor (reference §1.4); Commit checks the decision's own assignment instead", stats.reassigned)
		})
	}
	if preempts*20 < n {
		t.Errorf("only %d of %d worlds reach Preempt: the generator needs fuller clusters", preempts, n)
	}
	for _, r := range []string{"InClusterQueue", "InCohortReclamation", "InCohortReclaimWhileBorrowing", "InCohortFairSharing"} {
		if reasons[r] == 0 && !testing.Short() {
			t.Errorf("no victim with reason %s in %d worlds", r, n)
		}
	}
}

// pworld is one generated world: the builder it was built from (running
// workloads with their placement, so a failing case can be rebuilt from
// its dump alone), the snapshot and the preemptor.
type pworld struct {
	// semantics is the snapshot's Options.Semantics, and fair turns fair
	// sharing on.
	semantics string
	fair      bool
	b         allot.Builder
	s         *allot.Snapshot
	req       allot.Request
	// total is the cluster's GPUs.
	total int64
}

// genPreemptWorld builds a random world. Running workloads are admitted by
// Decide and Commit on a store, the clock advancing between them, so the
// world's usage is one allot itself could reach; the result is then
// rebuilt from a plain Builder.
func genPreemptWorld(rng *rand.Rand, pw *pworld) error {
	pw.b = allot.Builder{Now: 1000, Resources: []string{"gpu", "cpu"}, Levels: []string{"rack"},
		Options: allot.Options{Semantics: pw.semantics}, FairSharing: allot.FairSharing{Enabled: pw.fair}}
	b := &pw.b
	regular := 1 + rng.IntN(2)
	for k := range regular {
		b.Flavors = append(b.Flavors, allot.Flavor{Name: []string{"a100", "h100"}[k]})
	}
	if rng.IntN(2) == 0 {
		b.Flavors = append(b.Flavors, allot.Flavor{Name: "spot", Spot: true})
	}
	quotaOnly := rng.IntN(5) == 0 // every flavor quota-only
	var total int64
	for _, f := range b.Flavors {
		if quotaOnly || rng.IntN(4) == 0 {
			continue
		}
		nodes := 2 + rng.IntN(3)
		gpus := []int64{4, 8, 8}[rng.IntN(3)]
		for k := range nodes {
			b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("%s-n%d", f.Name, k), Flavor: f.Name,
				Labels:   map[string]string{"rack": fmt.Sprintf("%s-r%d", f.Name, k%2)},
				Capacity: allot.Resources{"gpu": gpus, "cpu": 32_000}})
			total += gpus
		}
	}

	// Cohorts: none, one flat cohort (some queues outside it), or a tree.
	nq := 1 + rng.IntN(3)
	cohortOf := make([]string, nq)
	switch rng.IntN(4) {
	case 0:
	case 1, 2:
		b.Cohorts = []allot.Cohort{{Name: "co"}}
		for q := range cohortOf {
			if rng.IntN(6) != 0 {
				cohortOf[q] = "co"
			}
		}
	case 3:
		// A tree: q0 and q1 in cohort left, q2 in cohort right or right
		// under the root beside left.
		b.Cohorts = []allot.Cohort{{Name: "root"}, {Name: "left", Parent: "root"}, {Name: "right", Parent: "root"}}
		right := []string{"right", "root"}[rng.IntN(2)]
		for q := range cohortOf {
			cohortOf[q] = []string{"left", "left", right}[q]
		}
	}
	for c := range b.Cohorts {
		if rng.IntN(5) == 0 {
			f := b.Flavors[rng.IntN(len(b.Flavors))].Name
			b.Cohorts[c].Quota = []allot.FlavorQuota{{Flavor: f, Resources: []allot.ResourceQuota{
				{Name: "gpu", Nominal: int64(rng.IntN(9))}, {Name: "cpu", Nominal: 1 << 30}}}}
		}
	}
	within := []string{"Never", "LowerPriority", "LowerOrNewerEqualPriority"}
	reclaim := []string{"Never", "LowerPriority", "Any"}
	for q := range nq {
		qu := allot.Queue{Name: fmt.Sprintf("q%d", q), Cohort: cohortOf[q]}
		for _, f := range b.Flavors {
			if rng.IntN(7) == 0 && len(qu.Quota) > 0 {
				continue
			}
			gpu := allot.ResourceQuota{Name: "gpu", Nominal: int64(rng.IntN(17))}
			if qu.Cohort != "" {
				if rng.IntN(4) == 0 {
					v := int64(rng.IntN(int(gpu.Nominal) + 1))
					gpu.LendingLimit = &v
				}
				if rng.IntN(4) == 0 {
					v := int64(rng.IntN(9))
					gpu.BorrowingLimit = &v
				}
			}
			qu.Quota = append(qu.Quota, allot.FlavorQuota{Flavor: f.Name, Resources: []allot.ResourceQuota{
				gpu, {Name: "cpu", Nominal: 1 << 30}}})
		}
		qu.FlavorFungibility.WhenCanPreempt = []string{"", "Preempt", "TryNextFlavor"}[rng.IntN(3)]
		if rng.IntN(3) == 0 {
			qu.FlavorFungibility.WhenCanBorrow = "TryNextFlavor"
		}
		p := &qu.Preemption
		p.WithinQueue = within[rng.IntN(3)]
		p.ReclaimWithinCohort = reclaim[rng.IntN(5)%3]
		if p.ReclaimWithinCohort != "Never" && rng.IntN(2) == 0 {
			p.BorrowWithinCohort.Policy = "LowerPriority"
			if rng.IntN(2) == 0 {
				v := int32(rng.IntN(4))
				p.BorrowWithinCohort.MaxPriorityThreshold = &v
			}
		}
		b.Queues = append(b.Queues, qu)
	}
	// Preemptions suffered lately order the victims (fairness debt).
	if rng.IntN(3) == 0 {
		b.History.HalfLife = int64(rng.IntN(3)) * 600
		b.History.Preemptions = map[string]float64{}
		for _, q := range b.Queues {
			b.History.Preemptions[q.Name] = float64(rng.IntN(3))
		}
	}

	s, err := b.Build()
	if err != nil {
		return err
	}
	st := allot.NewStore(s)
	randomPodSet := func() allot.PodSet {
		ps := allot.PodSet{Name: "main", Count: int32(1 + rng.IntN(2)),
			PerPod: allot.Resources{"gpu": []int64{1, 2, 4, 4, 8}[rng.IntN(5)], "cpu": int64(1+rng.IntN(4)) * 1000}}
		if rng.IntN(4) == 0 {
			ps.Flavors = []string{b.Flavors[rng.IntN(len(b.Flavors))].Name}
		}
		return ps
	}
	// One queue takes more than its share, so that others may reclaim.
	hog := rng.IntN(nq)
	tries := 6 + rng.IntN(12)
	for k := range tries {
		if _, err := st.Apply(allot.AdvanceTime{Seconds: int64(rng.IntN(300))}); err != nil {
			return err
		}
		now := st.Load().Now()
		q := hog
		if rng.IntN(2) == 0 {
			q = rng.IntN(nq)
		}
		w := allot.Request{ID: fmt.Sprintf("w%02d", k), Queue: b.Queues[q].Name, Priority: int32(rng.IntN(4)),
			SubmittedAt: rng.Int64N(now + 1), PodSets: []allot.PodSet{randomPodSet()}}
		switch rng.IntN(6) {
		case 0:
			w.Preemption.Class = allot.Never
		case 1, 2:
			w.Preemption.Class = allot.Checkpointable
		case 3:
			w.Preemption.Class = allot.Preemptible
		}
		if d := allot.Decide(st.Load(), w); d.Verdict == allot.VerdictAdmit {
			if _, err := st.Commit(d); err != nil {
				return fmt.Errorf("admitting %s: %w", w.ID, err)
			}
		}
	}
	if _, err := st.Apply(allot.AdvanceTime{Seconds: int64(rng.IntN(300))}); err != nil {
		return err
	}
	cur := st.Load()
	for _, id := range cur.RunningIDs() {
		if w, _ := cur.Running(id); w.Preemption.Class == allot.Checkpointable && rng.IntN(2) == 0 {
			if _, err := st.Apply(allot.Checkpoint{ID: id}); err != nil {
				return err
			}
		}
	}
	if _, err := st.Apply(allot.AdvanceTime{Seconds: int64(rng.IntN(100))}); err != nil {
		return err
	}

	// Rebuild from a plain builder, so that a failure's dump is the world.
	cur = st.Load()
	b.Now = cur.Now()
	for _, id := range cur.RunningIDs() {
		w, _ := cur.Running(id)
		b.Running = append(b.Running, w)
	}
	if s, err = b.Build(); err != nil {
		return fmt.Errorf("rebuilding: %w", err)
	}

	pw.req = allot.Request{ID: "p", Queue: b.Queues[rng.IntN(nq)].Name, Priority: int32(1 + rng.IntN(4)),
		SubmittedAt: rng.Int64N(b.Now + 1), PodSets: []allot.PodSet{randomPodSet()}}
	pw.req.PodSets[0].Count = int32(1 + rng.IntN(3))
	if g := pw.req.PodSets[0].PerPod["gpu"]; int64(pw.req.PodSets[0].Count)*g > 16 {
		pw.req.PodSets[0].Count = int32(16 / g)
	}
	if rng.IntN(4) == 0 {
		pw.req.PodSets[0].Topology.Required = "rack"
	}
	if rng.IntN(4) == 0 {
		ps := randomPodSet()
		ps.Name = "second"
		pw.req.PodSets = append(pw.req.PodSets, ps)
	}
	pw.s, pw.total = s, total
	return nil
}

// catch runs fn and returns what it panicked with, if anything.
func catch(fn func()) (panicked any) {
	defer func() { panicked = recover() }()
	fn()
	return nil
}

// checkPreempt checks a Preempt decision d of world pw (case i).
func checkPreempt(t *testing.T, i int, pw *pworld, d allot.Decision, st *preemptStats) {
	t.Helper()
	s, r := pw.s, pw.req
	js := mustJSON(t, d)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("case %d: %s\nworld: %s\nrequest: %s\ndecision: %s", i, fmt.Sprintf(format, args...), mustJSON(t, pw.b), mustJSON(t, r), js)
	}
	if len(d.Victims) == 0 || len(d.Flavors) != len(r.PodSets) {
		fail("a Preempt decision with %d victims and %d flavors", len(d.Victims), len(d.Flavors))
	}
	// The flavors the preemptor gets.
	var flavors []string
	for _, f := range d.Flavors {
		if !slices.Contains(flavors, f.Flavor) {
			flavors = append(flavors, f.Flavor)
		}
	}

	// (d) Determinism.
	if again := allot.Decide(s, r); !bytes.Equal(mustJSON(t, again), js) {
		fail("deciding again gives\n%s", mustJSON(t, again))
	}

	// (c) Policy.
	queues := map[string]allot.Queue{}
	for _, q := range pw.b.Queues {
		queues[q.Name] = q
	}
	cohortParent := map[string]string{}
	for _, c := range pw.b.Cohorts {
		cohortParent[c.Name] = c.Parent
	}
	root := func(q string) string {
		c := queues[q].Cohort
		for c != "" && cohortParent[c] != "" {
			c = cohortParent[c]
		}
		return c
	}
	spot := map[string]bool{}
	for _, f := range pw.b.Flavors {
		spot[f.Name] = f.Spot
	}
	pol := queues[r.Queue].Preemption
	for _, v := range d.Victims {
		w, ok := s.Running(v.ID)
		if !ok {
			fail("victim %q is not running", v.ID)
		}
		if v.Queue != w.Queue || v.Priority != w.Priority || v.Preemptor != r.ID {
			fail("victim %q: queue %q priority %d preemptor %q; it runs in %q at priority %d", v.ID, v.Queue, v.Priority, v.Preemptor, w.Queue, w.Priority)
		}
		onSpot, onFlavor := false, false
		for _, ps := range w.PodSets {
			onSpot = onSpot || spot[ps.Flavor]
			onFlavor = onFlavor || slices.Contains(flavors, ps.Flavor)
		}
		if w.Preemption.Class == allot.Never && !onSpot {
			fail("victim %q is of class never and runs on no spot flavor", v.ID)
		}
		if !onFlavor {
			fail("victim %q holds nothing on the flavors %v the preemptor gets", v.ID, flavors)
		}
		if w.Queue == r.Queue {
			if !policyAllows(pol.WithinQueue, r, w) {
				fail("victim %q (priority %d, submitted %d) is not allowed by withinQueue %s for priority %d submitted %d",
					v.ID, w.Priority, w.SubmittedAt, pol.WithinQueue, r.Priority, r.SubmittedAt)
			}
			if v.Reason != "InClusterQueue" {
				fail("own-queue victim %q has reason %q", v.ID, v.Reason)
			}
			continue
		}
		if root(r.Queue) == "" || root(r.Queue) != root(w.Queue) {
			fail("victim %q of queue %q shares no cohort tree with queue %q", v.ID, w.Queue, r.Queue)
		}
		if !policyAllows(pol.ReclaimWithinCohort, r, w) {
			fail("victim %q (priority %d) is not allowed by reclaimWithinCohort %s for priority %d", v.ID, w.Priority, pol.ReclaimWithinCohort, r.Priority)
		}
		switch v.Reason {
		case "InCohortFairSharing":
			if !pw.fair {
				fail("victim %q has reason %q with fair sharing off", v.ID, v.Reason)
			}
		case "InCohortReclamation":
		case "InCohortReclaimWhileBorrowing":
			b := pol.BorrowWithinCohort
			if b.Policy != "LowerPriority" || w.Priority >= r.Priority || b.MaxPriorityThreshold != nil && w.Priority > *b.MaxPriorityThreshold {
				fail("victim %q (priority %d) reclaimed while borrowing under borrowWithinCohort %+v, preemptor priority %d", v.ID, w.Priority, b, r.Priority)
			}
		default:
			fail("victim %q of another queue has reason %q", v.ID, v.Reason)
		}
		// Kueue takes from another queue only while it borrows: its usage
		// above its nominal quota on a resource the preemptor needs (with
		// fair sharing, on any resource; a reclaim within nominal takes
		// from a borrower too).
		borrows := false
		for k, ps := range r.PodSets {
			f := d.Flavors[k].Flavor
			for res, amount := range ps.PerPod {
				if amount > 0 && s.Usage(w.Queue, f, res) > nominal(queues[w.Queue], f, res) {
					borrows = true
				}
			}
		}
		if pw.fair {
			for _, fq := range queues[w.Queue].Quota {
				for _, rq := range fq.Resources {
					borrows = borrows || s.Usage(w.Queue, fq.Flavor, rq.Name) > rq.Nominal
				}
			}
		}
		if !borrows {
			fail("victim %q of queue %q, which does not borrow on %v", v.ID, w.Queue, flavors)
		}
	}

	// (b) Sufficiency: with all victims gone the preemptor is admitted, on
	// the same flavors.
	evicted := func(except int) *allot.Snapshot {
		t.Helper()
		st := allot.NewStore(s)
		for k, v := range d.Victims {
			if k == except {
				continue
			}
			if _, err := st.Apply(allot.Evict{ID: v.ID}); err != nil {
				fail("evicting victim %q: %v", v.ID, err)
			}
		}
		return st.Load()
	}
	after := allot.Decide(evicted(-1), r)
	elsewhere := func(got allot.Decision) bool { return !slices.Equal(got.Flavors, d.Flavors) }
	// A decision with pod sets on several flavors kept the flavors the
	// pod sets that fit already had, as Kueue's assigner does; requeued
	// once its victims are gone, Kueue assigns flavors afresh, and an
	// earlier flavor the evictions freed may then take a pod set (so the
	// request may even preempt again). Commit, below, checks that the
	// decision's own assignment fits once the victims are gone.
	mixed := len(flavors) > 1 || len(r.PodSets) > 1
	switch {
	case after.Verdict == allot.VerdictAdmit && !elsewhere(after):
	case mixed:
		st.reassigned++
	case after.Verdict != allot.VerdictAdmit:
		fail("with every victim evicted the preemptor gets %v (%v): %s", after.Verdict, after.Reason, after.Message)
	default:
		fail("with every victim evicted the preemptor is admitted on %+v, the decision said %+v", after.Flavors, d.Flavors)
	}
	next, err := allot.NewStore(s).Commit(d)
	if err != nil {
		fail("Commit of the Preempt decision on its own snapshot: %v", err)
	}
	checkGPUBooks(t, next, pw.total, fail)
	if _, ok := next.Running(r.ID); !ok {
		fail("after Commit the preemptor is not running")
	}
	for _, q := range pw.b.Queues {
		want := s.Debt(q.Name)
		for _, v := range d.Victims {
			if v.Queue == q.Name {
				want++
			}
		}
		if got := next.Debt(q.Name); math.Abs(got-want) > 1e-9*max(1, want) {
			fail("after Commit queue %q has fairness debt %g, want %g", q.Name, got, want)
		}
	}
	ev := next.Evictions()
	if len(ev) != len(d.Victims) {
		fail("Commit recorded %d evictions for %d victims", len(ev), len(d.Victims))
	}
	for k, v := range d.Victims {
		if _, still := next.Running(v.ID); still {
			fail("after Commit victim %q still runs", v.ID)
		}
		if _, pending := next.Pending(v.ID); !pending {
			fail("after Commit victim %q is not pending again", v.ID)
		}
		if e := ev[k]; e.ID != v.ID || e.Preemptor != r.ID || e.Reason != v.Reason {
			fail("eviction record %+v for victim %+v", e, v)
		}
	}
	if freed, placed := victimGPUs(t, s, d), placedGPUs(d); next.FreeGPUs() != s.FreeGPUs()+freed-placed {
		fail("free GPUs %d after Commit, %d before, victims freed %d, the preemptor took %d", next.FreeGPUs(), s.FreeGPUs(), freed, placed)
	}

	// (a) Minimality: every victim is needed.
	for k, v := range d.Victims {
		got := allot.Decide(evicted(k), r)
		if got.Verdict != allot.VerdictAdmit {
			continue
		}
		if elsewhere(got) && mixed {
			st.reassigned++
			continue
		}
		if len(got.Borrowing) > 0 && len(after.Borrowing) == 0 {
			// Kueue's pass without borrowing (§2.3, §2.4): the preemptor
			// must then fit without borrowing, so a victim that keeps it
			// within nominal quota is needed although it would fit by
			// borrowing without that victim. Counted, reported by a
			// skipped subtest.
			st.noBorrowPass++
			continue
		}
		fail("not minimal: with every victim but %q evicted the preemptor is admitted: %s (borrowing %+v)", v.ID, got.Message, got.Borrowing)
	}
}

// preemptStats counts what the checks saw.
type preemptStats struct {
	// noBorrowPass counts victims needed only to keep the preemptor from
	// borrowing (Kueue's allowBorrowing=false pass).
	noBorrowPass int
	// reassigned counts re-decisions, after evictions, of a request of
	// several pod sets that assign its flavors differently.
	reassigned int
}

// policyAllows is Kueue's SatisfiesPreemptionPolicy for preemptor r and
// candidate w ("" is Never).
func policyAllows(policy string, r allot.Request, w allot.Workload) bool {
	switch policy {
	case "LowerPriority":
		return w.Priority < r.Priority
	case "LowerOrNewerEqualPriority":
		return w.Priority < r.Priority || w.Priority == r.Priority && r.SubmittedAt < w.SubmittedAt
	case "Any":
		return true
	}
	return false
}

// nominal is a queue's nominal quota of a flavor's resource.
func nominal(q allot.Queue, flavor, res string) int64 {
	for _, fq := range q.Quota {
		if fq.Flavor != flavor {
			continue
		}
		for _, rq := range fq.Resources {
			if rq.Name == res {
				return rq.Nominal
			}
		}
	}
	return 0
}

// checkGPUBooks checks that no GPU is booked twice on s: the running
// workloads' GPUs are disjoint and not free, and with the free ones they
// make up the cluster.
func checkGPUBooks(t *testing.T, s *allot.Snapshot, total int64, fail func(string, ...any)) {
	t.Helper()
	held := int64(0)
	booked := map[string]uint64{}
	for _, id := range s.RunningIDs() {
		w, _ := s.Running(id)
		for _, ps := range w.PodSets {
			for p, idx := range ps.GPUIndices {
				free, ok := s.NodeFreeGPUs(ps.Nodes[p])
				if !ok {
					fail("running %q on unknown node %q", id, ps.Nodes[p])
				}
				for _, g := range idx {
					bit := uint64(1) << g
					if booked[ps.Nodes[p]]&bit != 0 {
						fail("GPU %d of node %q is booked twice (again by %q)", g, ps.Nodes[p], id)
					}
					if free.Has(g) {
						fail("GPU %d of node %q is held by %q and free", g, ps.Nodes[p], id)
					}
					booked[ps.Nodes[p]] |= bit
					held++
				}
			}
		}
	}
	if s.FreeGPUs()+held != total {
		fail("%d free GPUs and %d held of %d", s.FreeGPUs(), held, total)
	}
}

// victimGPUs counts the GPUs the victims of d hold on s.
func victimGPUs(t *testing.T, s *allot.Snapshot, d allot.Decision) int64 {
	t.Helper()
	n := int64(0)
	for _, v := range d.Victims {
		w, _ := s.Running(v.ID)
		for _, ps := range w.PodSets {
			for _, idx := range ps.GPUIndices {
				n += int64(len(idx))
			}
		}
	}
	return n
}

// placedGPUs counts the GPUs a decision places its pods on.
func placedGPUs(d allot.Decision) int64 {
	n := int64(0)
	for _, p := range d.Placement {
		n += int64(p.GPUs.Len())
	}
	return n
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	return b
}
