package fuzz

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/allot-sched/allot"
)

// TestDecideGeneratedWorlds runs FuzzDecide's checks on a fixed set of
// pseudo-random inputs, so that plain go test covers more than the seed
// corpus, and checks that the generator is not lopsided: most snapshots
// build, and every verdict shows up.
func TestDecideGeneratedWorlds(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 200
	}
	rng := rand.New(rand.NewPCG(7, 11))
	built := 0
	buildErrs := map[error]int{}
	verdicts := map[allot.Verdict]int{}
	reasons := map[allot.Reason]int{}
	entry := map[allot.Reason]int{} // the tenanted worlds' reasons of entry
	admittedThrough := 0            // tenanted admissions through a local queue, claiming a class
	for range n {
		data := randomInput(rng, 600)
		tw := tenanted(data, gen(data))
		checkWorld(t, tw, nil)
		if s, err := tw.B.Build(); err == nil {
			for _, r := range tw.Requests {
				d := allot.Decide(s, r)
				entry[d.Reason]++
				if d.Verdict == allot.VerdictAdmit && r.LocalQueue != "" && r.PriorityClass != "" {
					admittedThrough++
				}
			}
		}
		w := gen(data)
		// A panic is checkWorld's to report.
		if s, err, panicked := build(&w.B); err != nil {
			var be *allot.BuildError
			if errors.As(err, &be) {
				buildErrs[be.Err]++
			}
		} else if panicked == nil {
			built++
			for _, r := range w.Requests {
				d := allot.Decide(s, r)
				verdicts[d.Verdict]++
				reasons[d.Reason]++
			}
		}
		checkWorld(t, w, nil)
		if t.Failed() {
			t.Fatalf("input %x", data)
		}
	}
	t.Logf("%d worlds, %d built; build errors %v; verdicts %v; reasons %v", n, built, buildErrs, verdicts, reasons)
	t.Logf("with tenancy: reasons %v; %d admitted through a local queue claiming a class", entry, admittedThrough)
	for _, r := range []allot.Reason{allot.Unauthorized, allot.PriorityNotAllowed, allot.UnknownQueue} {
		if entry[r] == 0 && !testing.Short() {
			t.Errorf("no %v among the decisions of %d worlds with tenancy", r, n)
		}
	}
	if admittedThrough == 0 && !testing.Short() {
		t.Errorf("no admission through a local queue claiming a class in %d worlds", n)
	}
	if built < n/3 {
		t.Errorf("only %d of %d snapshots build", built, n)
	}
	for _, v := range []allot.Verdict{allot.VerdictAdmit, allot.VerdictQueue, allot.VerdictReject} {
		if verdicts[v] == 0 && !testing.Short() {
			t.Errorf("no %v verdict in %d worlds", v, n)
		}
	}
}

// randomInput is an input of a fuzz target drawn from rng: shorter than
// maxLen, random bytes.
func randomInput(rng *rand.Rand, maxLen int) []byte {
	data := make([]byte, rng.IntN(maxLen))
	for k := range data {
		data[k] = byte(rng.Uint32())
	}
	return data
}
