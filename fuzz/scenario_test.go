package fuzz

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/scenario"
)

// maxFuzzNodes bounds the clusters FuzzScenarioLoader runs: node sets may
// legally generate a million nodes, which is slow, not wrong.
const maxFuzzNodes = 256

func FuzzScenarioLoader(f *testing.F) {
	// The contract's example scenarios, when the shared folder is there;
	// the committed corpus holds small ones besides.
	for _, dir := range []string{"../../shared/scenarios", "../testdata/scenarios"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"name": "x", "resources": ["gpu"], "flavors": [{"name": "f"}],
 "nodes": [{"name": "n0", "flavor": "f", "capacity": {"gpu": 8}}],
 "queues": [{"name": "q", "quota": {"f": {"gpu": {"nominal": 8}}}}],
 "request": {"id": "r", "queue": "q", "podSets": [{"name": "m", "count": 2, "perPod": {"gpu": 4}}]},
 "expect": {"verdict": "Admit", "reason": "Fits", "nodes": {"m": {"n0": 2}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scenario.Parse("fuzz.json", data)
		if err != nil {
			var se *scenario.Error
			if !errors.As(err, &se) {
				t.Fatalf("Parse: %v (%T) is not a *scenario.Error", err, err)
			}
			if s != nil {
				t.Fatalf("Parse returned a scenario and an error")
			}
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Fatalf("Parse: %q does not name the file", err)
			}
			return
		}
		if len(s.Builder().Nodes) > maxFuzzNodes {
			return
		}
		// Run recovers a panic in allot into a failure line; a panic is
		// still a bug.
		res := s.Run()
		for _, line := range res.Failures {
			if strings.Contains(line, "panic:") {
				t.Fatalf("Run: %s", line)
			}
		}
		if res.Passed != (len(res.Failures) == 0) {
			t.Fatalf("Run: passed %v with %d failures", res.Passed, len(res.Failures))
		}
		if s.Request != nil || len(s.Steps) > 0 {
			if _, err, panicked := decideScenario(s); panicked != nil {
				t.Fatalf("Decide panicked: %v (error %v)", panicked, err)
			}
		}
	})
}

// decideScenario runs Scenario.Decide, turning a panic into a value.
func decideScenario(s *scenario.Scenario) (d allot.Decision, err error, panicked any) {
	defer func() { panicked = recover() }()
	d, err = s.Decide()
	return d, err, nil
}
