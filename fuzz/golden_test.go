package fuzz

// TestGoldenFuzzCorpus locks in what allot answers on the worlds the fuzz
// targets generate, before code moves: from their committed corpora, their
// seeds and the first goldenGenerated inputs of TestDecideGeneratedWorlds,
// TestPartialGeneratedWorlds and TestPreemptGeneratedWorlds. It records
// every decision checkWorld and checkPreemptWorld make (one line of JSON
// each), every event's error or the store after it, every commit, and the
// scheduling loop FuzzDecide and FuzzPartial run at the end, and compares them with testdata/golden/<FuzzName>.golden. A
// change fails the test with the first record that differs and where it
// comes from (corpus file, seed or generated input, and request or step).
// When a change is meant, regenerate the files, with the root package's,
// and review their diff:
//
//	go test -run Golden . ./fuzz -rewrite
//
// The golden-file handling repeats the root package's golden_test.go: test
// files of two packages cannot share code.

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/internal/golden"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files")

// record is one entry of a golden file.
type record = golden.Record

// recorder collects the records of one world; a nil recorder records
// nothing, so the fuzz targets run the same checks without one.
type recorder struct {
	recs []record
}

func (r *recorder) add(label string, body []byte) {
	if r != nil {
		r.recs = append(r.recs, record{Source: label, Body: string(body)})
	}
}

// value records v as one line of JSON.
func (r *recorder) value(label string, v any) {
	if r != nil {
		r.add(label, mustMarshal(v))
	}
}

func (r *recorder) decision(label string, d *allot.Decision) { r.value(label, d) }

func (r *recorder) err(label string, err error) {
	if r != nil {
		r.add(label, []byte("error: "+err.Error()))
	}
}

// state records what a golden record shows of a store's snapshot s: cheap
// to render, and what a change in the store would move.
func (r *recorder) state(label string, s *allot.Snapshot) {
	if r == nil {
		return
	}
	r.value(label, struct {
		Version   uint64           `json:"version"`
		FreeGPUs  int64            `json:"freeGPUs"`
		Running   []string         `json:"running"`
		Pending   []string         `json:"pending"`
		Evictions []allot.Eviction `json:"evictions,omitempty"`
	}{s.Version(), s.FreeGPUs(), s.RunningIDs(), s.PendingIDs(), s.Evictions()})
}

// corpusInput is one input of a fuzz target: a committed corpus file or a
// seed the target adds.
type corpusInput struct {
	name string
	data []byte
}

// goldenGenerated is how many of the generated inputs of each target's
// Generated test the golden files record.
const goldenGenerated = 200

// corpus reads the committed corpus of a fuzz target, sorted by file name,
// and appends the target's seeds and n inputs of at most maxLen bytes drawn
// from rng.
func corpus(t *testing.T, target string, seeds [][]byte, rng *rand.Rand, n, maxLen int) []corpusInput {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no corpus in %s", dir)
	}
	slices.Sort(files)
	var in []corpusInput
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data, err := decodeCorpusFile(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		in = append(in, corpusInput{name: filepath.Base(f), data: data})
	}
	for i, s := range seeds {
		in = append(in, corpusInput{name: fmt.Sprintf("seed %d", i), data: s})
	}
	for i := range n {
		in = append(in, corpusInput{name: fmt.Sprintf("generated %d", i), data: randomInput(rng, maxLen)})
	}
	return in
}

// decodeCorpusFile reads a corpus file of a fuzz target that takes one
// []byte: "go test fuzz v1" and a line []byte("...").
func decodeCorpusFile(raw []byte) ([]byte, error) {
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" {
		return nil, fmt.Errorf("not a corpus file of one value: %q", raw)
	}
	lit, ok := strings.CutPrefix(lines[1], "[]byte(")
	if lit, ok = strings.CutSuffix(lit, ")"); !ok {
		return nil, fmt.Errorf("not a []byte value: %q", lines[1])
	}
	s, err := strconv.Unquote(lit)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", lit, err)
	}
	return []byte(s), nil
}

// TestGoldenFuzzCorpus runs each fuzz target's checks on its corpus, seeds
// and generated inputs with a recorder and compares the records with the
// target's golden file.
func TestGoldenFuzzCorpus(t *testing.T) {
	t.Run("FuzzDecide", func(t *testing.T) {
		var recs []record
		// The generated inputs are TestDecideGeneratedWorlds' first ones.
		for _, in := range corpus(t, "FuzzDecide", decideSeeds(), rand.New(rand.NewPCG(7, 11)), goldenGenerated, 600) {
			rec := &recorder{}
			checkWorld(t, gen(in.data), rec)
			recs = appendSourced(recs, in.name, rec.recs)
		}
		checkGolden(t, "FuzzDecide.golden", recs)
	})
	t.Run("FuzzPartial", func(t *testing.T) {
		var recs []record
		// The generated inputs are TestPartialGeneratedWorlds' first ones.
		for _, in := range corpus(t, "FuzzPartial", decideSeeds(), rand.New(rand.NewPCG(13, 17)), goldenGenerated, 600) {
			rec := &recorder{}
			checkWorld(t, genPartial(in.data), rec)
			recs = appendSourced(recs, in.name, rec.recs)
		}
		checkGolden(t, "FuzzPartial.golden", recs)
	})
	t.Run("FuzzPreempt", func(t *testing.T) {
		var recs []record
		// The generated inputs are TestPreemptGeneratedWorlds' first ones.
		for _, in := range corpus(t, "FuzzPreempt", preemptSeeds(), rand.New(rand.NewPCG(5, 3)), goldenGenerated, 400) {
			rec := &recorder{}
			checkPreemptWorld(t, genPreempt(in.data), nil, rec)
			recs = appendSourced(recs, in.name, rec.recs)
		}
		checkGolden(t, "FuzzPreempt.golden", recs)
	})
}

// appendSourced appends recs to out, each source prefixed with the input's
// name.
func appendSourced(out []record, name string, recs []record) []record {
	for _, r := range recs {
		r.Source = name + " " + r.Source
		out = append(out, r)
	}
	return out
}

// checkGolden compares recs with the golden file testdata/golden/name, or
// writes them there with -rewrite.
func checkGolden(t *testing.T, name string, recs []record) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), recs, *rewrite)
}
