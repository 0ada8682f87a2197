package allot_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

// TestFlavorOrderProperty checks, on the preemption property test's random
// worlds in both semantics, a third of them with fair sharing, that an admission skipped no flavor Kueue's
// flavor assigner would take first. The reference is allot itself with
// the pod set pinned to one flavor at a time: under whenCanBorrow Borrow
// no flavor earlier in the queue's order admits the request; under
// TryNextFlavor no flavor admits it at a lower borrowing level, and no
// earlier one at the same level.
func TestFlavorOrderProperty(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 500
	}
	for _, sem := range []string{allot.SemanticsAllot, allot.SemanticsKueue} {
		t.Run(sem, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2026, 12))
			fair := rand.New(rand.NewPCG(2026, 14))
			checked := 0
			for i := range n {
				pw := &pworld{semantics: sem, fair: fair.IntN(3) == 0}
				if err := genPreemptWorld(rng, pw); err != nil {
					t.Fatalf("case %d: generated world does not build: %v", i, err)
				}
				r := pw.req
				if len(r.PodSets) != 1 || len(r.PodSets[0].Flavors) > 0 {
					continue
				}
				d := allot.Decide(pw.s, r)
				if d.Verdict != allot.VerdictAdmit {
					continue
				}
				checked++
				q := queueOf(pw.b, r.Queue)
				order := flavorOrder(pw.b, q)
				chosen := slices.Index(order, d.Flavors[0].Flavor)
				tryNext := q.FlavorFungibility.WhenCanBorrow == "TryNextFlavor"
				for k, f := range order {
					if k == chosen {
						continue
					}
					pinned := r
					pinned.PodSets = slices.Clone(r.PodSets)
					pinned.PodSets[0].Flavors = []string{f}
					got := allot.Decide(pw.s, pinned)
					if got.Verdict != allot.VerdictAdmit {
						continue
					}
					switch {
					case !tryNext && k < chosen:
						t.Errorf("case %d: admitted on %s, but %s comes first and admits it: %s\nworld: %s\nrequest: %s",
							i, d.Flavors[0].Flavor, f, got.Message, mustJSON(t, pw.b), mustJSON(t, r))
					case tryNext && (got.BorrowingLevel < d.BorrowingLevel || got.BorrowingLevel == d.BorrowingLevel && k < chosen):
						t.Errorf("case %d: admitted on %s at borrowing level %d, but %s admits it at level %d\nworld: %s\nrequest: %s",
							i, d.Flavors[0].Flavor, d.BorrowingLevel, f, got.BorrowingLevel, mustJSON(t, pw.b), mustJSON(t, r))
					}
				}
				if t.Failed() {
					return
				}
			}
			if checked < n/10 {
				t.Errorf("only %d of %d worlds admit a single pod set: the generator needs emptier clusters", checked, n)
			}
		})
	}
}

// queueOf is the builder's queue named name.
func queueOf(b allot.Builder, name string) allot.Queue {
	for _, q := range b.Queues {
		if q.Name == name {
			return q
		}
	}
	return allot.Queue{}
}

// flavorOrder is the order the queue's flavors are tried in: its
// flavorOrder, then the other flavors it has quota on in the snapshot's
// order.
func flavorOrder(b allot.Builder, q allot.Queue) []string {
	has := func(f string) bool {
		return slices.ContainsFunc(q.Quota, func(fq allot.FlavorQuota) bool { return fq.Flavor == f })
	}
	var out []string
	for _, f := range q.FlavorOrder {
		if has(f) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	for _, f := range b.Flavors {
		if has(f.Name) && !slices.Contains(out, f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}
