package fuzz

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
)

// FuzzPartial is FuzzDecide on worlds whose workloads carry minCounts
// (partial admission): on the requests, the pending workloads, the
// workloads Submit events add and now and then a running one, some of
// them malformed. Beside FuzzDecide's checks, a partial decision must
// admit counts from each pod set's minCount to its count, be the
// decision Decide gives at those counts, and reduce only when the full
// counts are not admitted; one that admits nothing must be the minimum's.
func FuzzPartial(f *testing.F) {
	for _, seed := range decideSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkWorld(t, genPartial(data), nil)
	})
}

// genPartial is gen's world with minCounts, drawn from a generator seeded
// by the bytes, so that gen's worlds (and FuzzDecide's golden records)
// stay as they are. In one world of four some minCounts are malformed:
// zero (none), negative, above the count, extreme.
func genPartial(data []byte) world {
	w := gen(data)
	h := fnv.New64a()
	h.Write(data)
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x5eed))
	hostile := rng.IntN(4) == 0
	minCounts := func(sets []allot.PodSet, running bool) {
		for i := range sets {
			ps := &sets[i]
			if rng.IntN(3) == 0 || ps.Count < 1 {
				continue
			}
			if !running && rng.IntN(3) == 0 && ps.Count <= 64 {
				ps.Count *= 4 // more to reduce; slices still divide it
			}
			ps.MinCount = 1 + rng.Int32N(ps.Count)
			if hostile && rng.IntN(5) == 0 {
				ps.MinCount = []int32{0, -1, ps.Count + 1, math.MinInt32, math.MaxInt32}[rng.IntN(5)]
			}
		}
	}
	for i := range w.Requests {
		minCounts(w.Requests[i].PodSets, false)
	}
	for i := range w.B.Pending {
		minCounts(w.B.Pending[i].PodSets, false)
	}
	for i := range w.B.Running {
		if rng.IntN(4) == 0 {
			minCounts(w.B.Running[i].PodSets, true)
		}
	}
	for i, ev := range w.Events {
		if s, ok := ev.(allot.Submit); ok {
			s.Workload.PodSets = slices.Clone(s.Workload.PodSets)
			minCounts(s.Workload.PodSets, false)
			w.Events[i] = s
		}
	}
	return w
}

// checkPartialDecision checks decision d of request r, which has a
// minCount, on snapshot s against Decide at fixed counts.
func checkPartialDecision(s *allot.Snapshot, r allot.Request, d allot.Decision, fail func(string, ...any)) {
	admits := func(d *allot.Decision) bool {
		return d.Verdict == allot.VerdictAdmit || d.Verdict == allot.VerdictPreempt
	}
	fixed := func(counts func(i int, ps allot.PodSet) int32) allot.Request {
		f := r
		f.PodSets = slices.Clone(r.PodSets)
		for i := range f.PodSets {
			f.PodSets[i].Count, f.PodSets[i].MinCount = counts(i, r.PodSets[i]), 0
		}
		return f
	}
	searched := slices.ContainsFunc(d.Trail, func(c allot.Check) bool { return c.Stage == allot.StagePartial })
	if !admits(&d) {
		if !searched {
			return
		}
		// The minimum's decision.
		min := allot.Decide(s, fixed(func(_ int, ps allot.PodSet) int32 {
			if ps.MinCount > 0 {
				return ps.MinCount
			}
			return ps.Count
		}))
		if admits(&min) || min.Verdict != d.Verdict || min.Reason != d.Reason {
			fail("not admitted (%v %v), at the minimums %v %v", d.Verdict, d.Reason, min.Verdict, min.Reason)
		}
		return
	}
	reduced := false
	for i, ps := range r.PodSets {
		c := d.Flavors[i].Count
		if c == 0 || c > ps.Count || c < ps.Count && (ps.MinCount < 1 || c < ps.MinCount) {
			fail("pod set %q admitted at %d, count %d, minCount %d", ps.Name, c, ps.Count, ps.MinCount)
		}
		reduced = reduced || c < ps.Count
	}
	if reduced != searched {
		fail("reduced %t, but searched %t", reduced, searched)
	}
	at := allot.Decide(s, fixed(func(i int, _ allot.PodSet) int32 { return d.Flavors[i].Count }))
	if at.Verdict != d.Verdict || at.Reason != d.Reason || !slices.Equal(at.Placement, d.Placement) ||
		!slices.Equal(at.Victims, d.Victims) || !slices.Equal(at.Borrowing, d.Borrowing) || at.Preemptible != d.Preemptible {
		fail("differs from the decision at its counts:\n%s", marshalAny(at))
	}
	if reduced {
		if full := allot.Decide(s, fixed(func(_ int, ps allot.PodSet) int32 { return ps.Count })); admits(&full) {
			fail("reduced, but the full counts are admitted: %v %v", full.Verdict, full.Reason)
		}
	}
}

// marshalAny renders v as JSON for a failure message.
func marshalAny(v any) string {
	b, _ := json.Marshal(v)
	return clip(b)
}

// TestPartialGeneratedWorlds runs FuzzPartial's checks on generated inputs
// and asks that the worlds reach what partial admission does: counts
// reduced and admitted, a minimum that waits, a malformed minCount.
func TestPartialGeneratedWorlds(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 200
	}
	rng := rand.New(rand.NewPCG(13, 17))
	outcomes := map[string]int{}
	for range n {
		data := randomInput(rng, 600)
		w := genPartial(data)
		if s, err, panicked := build(&w.B); err == nil && panicked == nil {
			for _, r := range w.Requests {
				d := allot.Decide(s, r)
				searched := slices.ContainsFunc(d.Trail, func(c allot.Check) bool { return c.Stage == allot.StagePartial })
				switch {
				case searched && d.Verdict == allot.VerdictAdmit:
					outcomes["reduced"]++
				case searched:
					outcomes["not even the minimum"]++
				case d.Reason == allot.InvalidRequest && strings.Contains(d.Message, "minCount"):
					outcomes["malformed"]++
				}
			}
		}
		checkWorld(t, w, nil)
		if t.Failed() {
			t.Fatalf("input %x", data)
		}
	}
	t.Logf("%d worlds: %v", n, outcomes)
	for _, o := range []string{"reduced", "not even the minimum", "malformed"} {
		if outcomes[o] == 0 && !testing.Short() {
			t.Errorf("no request %s in %d worlds", o, n)
		}
	}
}
