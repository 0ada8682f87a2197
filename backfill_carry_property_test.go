package allot

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-sched/allot/gang"
)

// carryWorld is a random world for the backfill plan carried from version
// to version: two flavors with nodes in racks and one quota-only, queues
// in flat and nested cohorts with tight quotas, some hard caps, borrowing and lending
// limits and either flavor fungibility, running workloads expected to end, preemption,
// and pending workloads of one or two pod sets, some held, some asking for
// a rack, enough of them for nominations and placements to flip as the
// loop admits.
func carryWorld(rng *rand.Rand) Builder {
	b := Builder{Resources: []string{"gpu", "cpu"}, Levels: []string{"rack"}, Now: 1000,
		Flavors: []Flavor{{Name: "a"}, {Name: "b"}, {Name: "q"}},
		Cohorts: []Cohort{{Name: "root"}, {Name: "left", Parent: "root"}, {Name: "flat"}},
		Options: Options{BackfillDepth: 1 + rng.IntN(3), QueueDepth: rng.IntN(3) * 4}}
	b.FairSharing.Enabled = rng.IntN(2) == 0
	if rng.IntN(4) == 0 {
		b.Options.Semantics = SemanticsKueue
		on := true
		b.Options.Backfill = &on
	}
	for i := range 6 + rng.IntN(6) {
		f := []string{"a", "b"}[rng.IntN(2)]
		b.Nodes = append(b.Nodes, Node{Name: fmt.Sprintf("n%d", i), Flavor: f,
			Labels:   map[string]string{"rack": fmt.Sprintf("%s%d", f, i%3)},
			Capacity: Resources{"gpu": 4, "cpu": 16}})
	}
	limit := func(most int64) *int64 {
		if rng.IntN(3) > 0 {
			return nil
		}
		v := rng.Int64N(most + 1)
		return &v
	}
	for q := range 3 + rng.IntN(4) {
		queue := Queue{Name: fmt.Sprintf("q%d", q), Cohort: []string{"root", "left", "flat", ""}[rng.IntN(4)]}
		for _, f := range [][]string{{"a"}, {"b"}, {"a", "b"}, {"b", "a", "q"}}[rng.IntN(4)] {
			nominal := rng.Int64N(10)
			gpu := ResourceQuota{Name: "gpu", Nominal: nominal}
			if queue.Cohort != "" {
				gpu.BorrowingLimit, gpu.LendingLimit = limit(4), limit(nominal)
			}
			if rng.IntN(3) == 0 {
				// A hard cap reads the queue's own usage.
				hard := nominal + rng.Int64N(3)
				gpu.Hard = &hard
			}
			queue.Quota = append(queue.Quota, FlavorQuota{Flavor: f, Resources: []ResourceQuota{gpu,
				{Name: "cpu", Nominal: 8 + rng.Int64N(40)}}})
		}
		if rng.IntN(3) == 0 {
			queue.FlavorFungibility.WhenCanBorrow = "TryNextFlavor"
		}
		if rng.IntN(2) == 0 {
			// Victims evicted: usage falls between versions.
			queue.Preemption = QueuePreemption{WithinQueue: "LowerPriority", ReclaimWithinCohort: "Any"}
		}
		b.Queues = append(b.Queues, queue)
	}
	for i, n := range b.Nodes {
		if rng.IntN(3) > 0 {
			continue
		}
		q := b.Queues[rng.IntN(len(b.Queues))]
		if !slices.ContainsFunc(q.Quota, func(fq FlavorQuota) bool { return fq.Flavor == n.Flavor }) {
			continue
		}
		b.Running = append(b.Running, Workload{ID: fmt.Sprintf("r%d", i), Queue: q.Name, AdmittedAt: 900, Priority: -1,
			ExpectedRuntime: 100 + rng.Int64N(500),
			PodSets: []PodSet{{Name: "main", Count: 1, Flavor: n.Flavor, Nodes: []string{n.Name},
				PerPod: Resources{"gpu": 1 + rng.Int64N(4), "cpu": 1}}}})
	}
	for i := range 8 + rng.IntN(20) {
		q := b.Queues[rng.IntN(len(b.Queues))]
		ps := []PodSet{{Name: "a", Count: int32(1 + rng.IntN(3)), PerPod: Resources{"gpu": 1 + rng.Int64N(4), "cpu": rng.Int64N(4)}}}
		if rng.IntN(3) == 0 {
			ps[0].Topology.Required = "rack"
		}
		if rng.IntN(4) == 0 {
			ps = append(ps, PodSet{Name: "b", Count: 1, PerPod: Resources{"cpu": 1 + rng.Int64N(3)}})
		}
		b.Pending = append(b.Pending, Workload{ID: fmt.Sprintf("w%02d", i), Queue: q.Name,
			Priority: int32(rng.IntN(3)), SubmittedAt: int64(rng.IntN(50)), ExpectedRuntime: rng.Int64N(3) * 200, PodSets: ps})
	}
	if rng.IntN(5) == 0 {
		b.Queues[0].Hold = true
	}
	return b
}

// planEvery plans s's reservations as far as the plan goes, for a request
// after every pending workload: with what s was handed (s.bf.prior) when
// carried, else afresh on a copy of s that was handed nothing.
func planEvery(s *Snapshot, carried bool) *backfillPlan {
	last := Workload{ID: "~", Priority: math.MinInt32, SubmittedAt: math.MaxInt64}
	depth := max(1, s.options.BackfillDepth)
	var work workspace
	if carried {
		return s.extendPlan(nil, &last, depth, &work)
	}
	fresh := *s
	fresh.bf = new(backfillCache)
	return fresh.extendPlan(nil, &last, depth, &work)
}

// samePlan fails unless the plans examined the same workloads with the same
// answers and nominations and reserved the same GPUs at the same times.
func samePlan(t *testing.T, where string, got, want *backfillPlan) {
	t.Helper()
	if got.next != want.next || len(got.rs) != len(want.rs) {
		t.Fatalf("%s: carried plan examined %d and reserved %d, afresh %d and %d", where, got.next, len(got.rs), want.next, len(want.rs))
	}
	for i := range got.answers[:got.next] {
		g, w := &got.answers[i], &want.answers[i]
		if g.w != w.w || g.enters != w.enters || g.waits != w.waits || (g.nom == nil) != (w.nom == nil) {
			t.Fatalf("%s: workload %s: carried %+v, afresh %+v", where, w.w.ID, *g, *w)
		}
		if g.nom != nil && (g.nom.fits != w.nom.fits || !slices.EqualFunc(g.nom.sets, w.nom.sets, func(a, b gang.PodSet) bool { return a.Flavor == b.Flavor && a.Res == b.Res && a.Count == b.Count })) {
			t.Fatalf("%s: workload %s nominated: carried fits=%v %v, afresh fits=%v %v", where, w.w.ID, g.nom.fits, g.nom.sets, w.nom.fits, w.nom.sets)
		}
	}
	for i := range got.rs {
		g, w := &got.rs[i], &want.rs[i]
		if g.w != w.w || g.start != w.start || !slices.Equal(g.pods, w.pods) {
			t.Fatalf("%s: reservation %d: carried %s at %d on %v, afresh %s at %d on %v", where, i, g.w.ID, g.start, g.pods, w.w.ID, w.start, w.pods)
		}
	}
}

// The plan a version plans with what the loop carried from the one before
// is the plan it makes afresh, at every version of random loops: whether
// each workload ahead waits, its nomination and its pod sets, and every
// reservation. Each world is run with a second writer now and then
// (another queue's hold, a time advance) to show what the carried answers
// must not survive.
func TestBackfillCarriedPlanIsFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 29))
	carriedSome, preempted := 0, 0
	// A usage that falls under an answer (a victim of another queue of
	// the cohort) is rare: the first world to need it is past 2,000.
	worlds := 2500
	if testing.Short() {
		worlds = 300
	}
	for world := range worlds {
		b := carryWorld(rng)
		s, err := b.Build()
		if err != nil {
			t.Fatalf("world %d: %v", world, err)
		}
		st := NewStore(s)
		step := 0
		ScheduleFunc(st, func(d *Decision) {
			step++
			if d.Verdict == VerdictPreempt {
				preempted++
			}
			cur := st.Load()
			if cur.bf.prior.Load() != nil {
				carriedSome++
			}
			samePlan(t, fmt.Sprintf("world %d, decision %d (%s)", world, step, d.Workload), planEvery(cur, true), planEvery(cur, false))
		})
		// A second loop after time moves on starts from a version that was
		// handed nothing, and carries again from there.
		if _, err := st.Apply(AdvanceTime{Seconds: 150}); err != nil {
			t.Fatalf("world %d: %v", world, err)
		}
		ScheduleFunc(st, func(d *Decision) {
			cur := st.Load()
			samePlan(t, fmt.Sprintf("world %d, second loop (%s)", world, d.Workload), planEvery(cur, true), planEvery(cur, false))
		})
	}
	if carriedSome == 0 || preempted == 0 {
		t.Fatalf("%d versions handed a plan, %d preemptions: the property is vacuous", carriedSome, preempted)
	}
	t.Logf("%d versions handed a plan, %d preemptions", carriedSome, preempted)
}

// Holding back only lower priorities changes which reservations a request
// answers to, never the plan: on random worlds the plan is the same in both
// modes, the reservations that hold a request back are those of a higher
// priority (all those ahead of it by default), and a request that the
// same reservations hold back either way gets the same decision.
func TestBackfillHoldsLowerPriority(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 43))
	passed, same := 0, 0
	for world := range 400 {
		b := carryWorld(rng)
		all, err := b.Build()
		if err != nil {
			t.Fatalf("world %d: %v", world, err)
		}
		b.Options.BackfillHolds = BackfillHoldsLowerPriority
		lower, err := b.Build()
		if err != nil {
			t.Fatalf("world %d: %v", world, err)
		}
		pa, pl := planEvery(all, false), planEvery(lower, false)
		if pa.next != pl.next || len(pa.rs) != len(pl.rs) {
			t.Fatalf("world %d: by default the plan examined %d and reserved %d, holding back lower priorities only %d and %d", world, pa.next, len(pa.rs), pl.next, len(pl.rs))
		}
		for i := range pa.rs {
			a, l := &pa.rs[i], &pl.rs[i]
			if a.w.ID != l.w.ID || a.start != l.start || !slices.Equal(a.pods, l.pods) {
				t.Fatalf("world %d: reservation %d: %s at %d on %v by default, %s at %d on %v holding back lower priorities only", world, i, a.w.ID, a.start, a.pods, l.w.ID, l.start, l.pods)
			}
		}
		for _, w := range b.Pending {
			for _, prio := range []int32{w.Priority, w.Priority + 1, w.Priority - 1} {
				r := Request(w)
				r.Priority = prio
				rw := (*Workload)(&r)
				wantAll, wantLower := 0, 0
				for _, rv := range pa.rs {
					if pendingBefore(rv.w, rw) {
						wantAll++
					}
					if rv.w.Priority > prio {
						wantLower++
					}
				}
				if n, _ := pa.aheadOf(rw); n != wantAll {
					t.Fatalf("world %d, %s at %d: %d reservations ahead by default, want %d", world, w.ID, prio, n, wantAll)
				}
				if n, self := pl.aheadOf(rw); n != wantLower || (self >= 0 && pl.rs[self].w.ID != w.ID) {
					t.Fatalf("world %d, %s at %d: %d reservations (self %d) hold it back, want %d of a higher priority", world, w.ID, prio, n, self, wantLower)
				}
				da, dl := Decide(all, r), Decide(lower, r)
				if da.Verdict != VerdictAdmit && da.Reason == BackfillReservation && dl.Verdict == VerdictAdmit {
					passed++
				}
				if wantAll == wantLower && (da.Verdict != dl.Verdict || da.Reason != dl.Reason || !slices.Equal(da.Placement, dl.Placement)) {
					t.Fatalf("world %d, %s at %d: the same reservations hold it back, yet %v %v by default and %v %v holding back lower priorities only",
						world, w.ID, prio, da.Verdict, da.Reason, dl.Verdict, dl.Reason)
				}
				if wantAll == wantLower {
					same++
				}
			}
		}
	}
	if passed == 0 || same == 0 {
		t.Fatalf("%d requests passed a reservation of their own priority, %d compared: the property is vacuous", passed, same)
	}
	t.Logf("%d requests passed a reservation of their own priority, %d decided alike", passed, same)
}
