package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/allot-sched/allot/bench/scenario"
	"github.com/allot-sched/allot/kube/internal/golden"
)

var config = []string{"--kueue", "../../testdata/seeds/training-cq-fixed.yaml", "--kueue", "../../testdata/seeds/team-a.yaml", "--cluster", "../../testdata/cluster"}

// TestImportGolden prints the seeds' configuration and the cluster as a
// scenario, which the core's scenario package loads and runs (what allot
// check does).
func TestImportGolden(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"import", "kueue", "../../testdata/seeds/training-cq-fixed.yaml", "../../testdata/seeds/team-a.yaml", "../../testdata/cluster"}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	golden.Check(t, "testdata/import-seeds.json", out.Bytes())
	golden.Check(t, "testdata/import-seeds.warnings", errs.Bytes())
	s, err := scenario.Parse("import-seeds.json", out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Run(); !r.Passed {
		t.Fatalf("allot check fails: %v", r.Failures)
	}
}

// TestImportRefusesTheSeedAsWritten: training-cq as the seed writes it
// sets a borrowingLimit without a cohort, which Kueue refuses.
func TestImportRefusesTheSeedAsWritten(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"import", "kueue", "../../testdata/seeds/training-cq.yaml"}, &out, &errs)
	want := `clusterqueues/training-cq: spec: Invalid value: "object": borrowingLimit must be nil when cohort is empty`
	if code != 1 || out.Len() != 0 || !strings.Contains(errs.String(), want) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out.String(), errs.String(), want)
	}
}

// TestDecideGolden decides each example job on the seeds' configuration,
// for a person and as JSON.
func TestDecideGolden(t *testing.T) {
	jobs, err := filepath.Glob("../../testdata/jobs/*.yaml")
	if err != nil || len(jobs) == 0 {
		t.Fatal(jobs, err)
	}
	for _, job := range jobs {
		name := strings.TrimSuffix(filepath.Base(job), ".yaml")
		t.Run(name, func(t *testing.T) {
			for _, format := range []struct{ ext, flag string }{{".txt", ""}, {".json", "-json"}} {
				args := append([]string{"decide"}, config...)
				args = append(args, "--job", job)
				if format.flag != "" {
					args = append(args, format.flag)
				}
				var out, errs bytes.Buffer
				if code := run(args, &out, &errs); code != 0 {
					t.Fatalf("exit %d: %s", code, errs.String())
				}
				golden.Check(t, filepath.Join("testdata", "decide", name+format.ext), out.Bytes())
			}
		})
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{nil, 2}, {[]string{"import"}, 2}, {[]string{"import", "slurm"}, 2}, {[]string{"import", "kueue"}, 2},
		{[]string{"decide"}, 2}, {[]string{"decide", "--kueue", "x"}, 2}, {[]string{"frobnicate"}, 2}, {[]string{"help"}, 0},
		{[]string{"import", "kueue", "no/such/dir"}, 1},
	} {
		var out, errs bytes.Buffer
		if code := run(tc.args, &out, &errs); code != tc.code {
			t.Errorf("%v: exit %d, want %d (%s)", tc.args, code, tc.code, errs.String())
		}
	}
}
