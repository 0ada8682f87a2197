package allot_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/allot-sched/allot"
)

// TestPartialAdmissionProperties decides requests with a minCount on the
// random worlds of the preemption properties (quota, cohorts, racks,
// preemption policies, fair sharing in a third of them, both semantics)
// and holds each partial decision to a deliberately naive reference:
// decide the request at every search index from the full counts down to
// the minimums, each count fixed (no minCount), and note which indexes
// Decide admits (Admit or Preempt).
//
//   - Where admission is monotone (an index admitted, every later one, at
//     fewer pods, admitted too), the partial decision's counts are those
//     of the first index admitted: for one pod set, the largest count
//     from its count down to its minCount that Decide admits.
//   - Always, they are the counts Kueue's search finds on that table
//     (sort.Search over the indexes, the full counts first); a world where
//     admission is not monotone is counted and reported apart.
//   - The partial decision is the decision at its counts: the same
//     verdict, reason, flavors, placement, borrowing and victims; when no
//     index is admitted, it has the minimum's verdict and reason.
//   - An admission commits, booking the admitted counts and the quota
//     they charge; deciding again gives the same JSON.
func TestPartialAdmissionProperties(t *testing.T) {
	for _, sem := range []string{allot.SemanticsAllot, allot.SemanticsKueue} {
		t.Run(sem, func(t *testing.T) { partialProperties(t, sem) })
	}
}

func partialProperties(t *testing.T, sem string) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(2026, 17))
	fair := rand.New(rand.NewPCG(2026, 19))
	shape := rand.New(rand.NewPCG(2026, 23))
	var reduced, atFull, none, nonMonotone, preempts int
	for i := range n {
		pw := &pworld{semantics: sem, fair: fair.IntN(3) == 0}
		panicked := catch(func() {
			if err := genPreemptWorld(rng, pw); err != nil {
				t.Fatalf("case %d: generated world does not build: %v", i, err)
			}
			elasticRequest(shape, &pw.req)
			switch checkPartial(t, i, pw) {
			case partialReduced:
				reduced++
			case partialFull:
				atFull++
			case partialNone:
				none++
			case partialNonMonotone:
				nonMonotone++
			}
		})
		if panicked != nil {
			t.Fatalf("case %d: panic: %v\nworld: %s\nrequest: %s", i, panicked, mustJSON(t, pw.b), mustJSON(t, pw.req))
		}
		if t.Failed() {
			return
		}
		if d := allot.Decide(pw.s, pw.req); d.Verdict == allot.VerdictPreempt {
			preempts++
		}
	}
	t.Logf("%d worlds: %d admitted at reduced counts, %d at full counts, %d not even at the minimum, %d not monotone; %d preempt",
		n, reduced, atFull, none, nonMonotone, preempts)
	if nonMonotone > 0 {
		t.Run("kueue-rule/non-monotone", func(t *testing.T) {
			t.Skipf("%d worlds admit some counts but not smaller ones: at fewer pods the flavor assignment chose another "+
				"flavor, whose quota holds the request but where it is neither placed nor preempted for (in Kueue-exact mode "+
				"the flavor is chosen by quota alone, as Kueue chooses it), or the preemption search found victims at one "+
				"count and not at a smaller one (fair sharing's strategies compare shares); there the search finds the "+
				"index Kueue's search finds (checked), not necessarily the largest count admitted", nonMonotone)
		})
	}
	if reduced*10 < n || none*20 < n || preempts*50 < n {
		t.Errorf("the generator needs other worlds: %d reduced, %d below the minimum, %d preempt of %d", reduced, none, preempts, n)
	}
}

// elasticRequest gives the request's pod sets counts to reduce: the first
// a count of up to 12 pods of one or two GPUs and a minCount, sometimes
// the second too.
func elasticRequest(rng *rand.Rand, r *allot.Request) {
	for k := range r.PodSets {
		ps := &r.PodSets[k]
		if k > 0 && rng.IntN(2) == 0 {
			continue
		}
		ps.PerPod = allot.Resources{"gpu": int64(1 + rng.IntN(2)), "cpu": 1000}
		ps.Count = int32(2 + rng.IntN(11))
		ps.MinCount = int32(1 + rng.IntN(int(ps.Count)))
	}
}

// The outcomes checkPartial tells apart.
const (
	partialReduced = 1 + iota
	partialFull
	partialNone
	partialNonMonotone
)

// checkPartial checks the partial decision of world pw (case i) against
// the naive reference and returns which outcome it is.
func checkPartial(t *testing.T, i int, pw *pworld) int {
	t.Helper()
	s, r := pw.s, pw.req
	d := allot.Decide(s, r)
	js := mustJSON(t, d)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("case %d: %s\nworld: %s\nrequest: %s\ndecision: %s", i, fmt.Sprintf(format, args...), mustJSON(t, pw.b), mustJSON(t, r), js)
	}
	if again := allot.Decide(s, r); !bytes.Equal(mustJSON(t, again), js) {
		fail("deciding again gives\n%s", mustJSON(t, again))
	}

	// The reference: every index decided at fixed counts.
	var total int64
	for _, ps := range r.PodSets {
		if ps.MinCount > 0 {
			total += int64(ps.Count - ps.MinCount)
		}
	}
	countsAt := func(at int64) []int32 {
		out := make([]int32, len(r.PodSets))
		for k, ps := range r.PodSets {
			out[k] = ps.Count
			if ps.MinCount > 0 && total > 0 {
				out[k] -= int32(int64(ps.Count-ps.MinCount) * at / total)
			}
		}
		return out
	}
	fixed := func(counts []int32) allot.Request {
		f := r
		f.PodSets = slices.Clone(r.PodSets)
		for k := range f.PodSets {
			f.PodSets[k].Count, f.PodSets[k].MinCount = counts[k], 0
		}
		return f
	}
	admits := func(d allot.Decision) bool {
		return d.Verdict == allot.VerdictAdmit || d.Verdict == allot.VerdictPreempt
	}
	at := make([]allot.Decision, total+1)
	ok := make([]bool, total+1)
	for k := range at {
		at[k] = allot.Decide(s, fixed(countsAt(int64(k))))
		ok[k] = admits(at[k])
	}
	naive := slices.Index(ok, true) // the largest counts admitted
	kueue := -1                     // Kueue's: the full counts, else its search
	if ok[0] {
		kueue = 0
	} else if total > 0 {
		if k := sort.Search(len(ok), func(k int) bool { return ok[k] }); k < len(ok) && ok[k] {
			kueue = k
		}
	}
	monotone := true
	for k := 1; k < len(ok); k++ {
		monotone = monotone && (!ok[k-1] || ok[k])
	}
	if monotone && naive != kueue {
		t.Fatalf("case %d: the reference is wrong: monotone, first admitted %d, Kueue's search %d", i, naive, kueue)
	}

	got := make([]int32, len(r.PodSets))
	for k, ps := range r.PodSets {
		if c, found := d.CountOf(ps.Name); found {
			got[k] = c
		}
	}
	if kueue < 0 {
		if admits(d) {
			fail("admitted at %v, but no count from the full ones to the minimums is", got)
		}
		min := at[total]
		if d.Verdict != min.Verdict || d.Reason != min.Reason {
			fail("not admitted: %v %v, the minimum gives %v %v", d.Verdict, d.Reason, min.Verdict, min.Reason)
		}
		return partialNone
	}
	want := countsAt(int64(kueue))
	if !admits(d) || !slices.Equal(got, want) {
		fail("%v at counts %v, Kueue's search on the reference gives counts %v (first admitted at %v, monotone %t)",
			d.Verdict, got, want, countsAt(int64(max(naive, 0))), monotone)
	}
	same := at[kueue]
	if d.Verdict != same.Verdict || d.Reason != same.Reason || !slices.Equal(d.Placement, same.Placement) ||
		!slices.Equal(d.Borrowing, same.Borrowing) || !slices.Equal(d.Victims, same.Victims) || len(d.Flavors) != len(same.Flavors) {
		fail("differs from the decision at its counts:\n%s", mustJSON(t, same))
	}
	for k := range d.Flavors {
		if d.Flavors[k].Flavor != same.Flavors[k].Flavor {
			fail("pod set %d on %s, at its counts on %s", k, d.Flavors[k].Flavor, same.Flavors[k].Flavor)
		}
	}

	// An admission commits at its counts.
	if d.Verdict == allot.VerdictAdmit {
		next, err := allot.NewStore(s).Commit(d)
		if err != nil {
			fail("Commit: %v", err)
		}
		w, _ := next.Running(r.ID)
		for k, ps := range w.PodSets {
			if ps.Count != got[k] || ps.MinCount != r.PodSets[k].MinCount {
				fail("running pod set %q has count %d minCount %d, admitted at %d", ps.Name, ps.Count, ps.MinCount, got[k])
			}
		}
		for _, f := range pw.b.Flavors {
			var want int64
			for k, ps := range r.PodSets {
				if d.Flavors[k].Flavor == f.Name {
					want += int64(got[k]) * ps.PerPod["gpu"]
				}
			}
			if use := next.Usage(r.Queue, f.Name, "gpu") - s.Usage(r.Queue, f.Name, "gpu"); use != want {
				fail("the commit charges %d gpu of %s, the admitted counts %d", use, f.Name, want)
			}
		}
	}
	switch {
	case !monotone:
		return partialNonMonotone
	case kueue == 0:
		return partialFull
	}
	return partialReduced
}
