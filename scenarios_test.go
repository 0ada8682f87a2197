package allot_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/allot-sched/allot/bench/scenario"
)

// sharedScenarios is where the public conformance scenarios live, next to
// the project's root.
const sharedScenarios = "../shared/scenarios"

// notYet lists the shared scenarios whose feature belongs to a later
// capability, each with the reason. This list only shrinks.
var notYet = map[string]string{}

func runScenarioDir(t *testing.T, dir string, skip map[string]string) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatalf("no scenarios in %s", dir)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			sc, err := scenario.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			res := sc.Run()
			why, skipped := skip[name]
			switch {
			case skipped && res.Passed:
				t.Fatalf("%s passes now: take it off the skip list", name)
			case skipped:
				t.Skipf("needs %s", why)
			case !res.Passed:
				t.Fatalf("%s:\n  %s", f, strings.Join(res.Failures, "\n  "))
			}
		})
	}
}

func TestSharedScenarios(t *testing.T) {
	if _, err := os.Stat(sharedScenarios); err != nil {
		t.Skipf("no shared scenarios at %s: %v", sharedScenarios, err)
	}
	runScenarioDir(t, sharedScenarios, notYet)
}

func TestOwnScenarios(t *testing.T) {
	runScenarioDir(t, "testdata/scenarios", nil)
}

// kueueParity holds the cases where allot's answer once departed from
// Kueue's own code, each expecting Kueue's answer.
const kueueParity = "../shared/kueue-parity"

// parityNotYet lists the parity cases still open, each with the reason.
// This list only shrinks.
var parityNotYet = map[string]string{
	"kueue-parity-tas-domain-block-unconstrained": "Kueue's single-node placement of unconstrained gangs",
	"kueue-parity-tas-domain-rack-unconstrained":  "Kueue's single-node placement of unconstrained gangs",
	"kueue-parity-tas-nodes-unconstrained":        "Kueue's single-node placement of unconstrained gangs",
}

func TestKueueParity(t *testing.T) {
	if _, err := os.Stat(kueueParity); err != nil {
		t.Skipf("no parity cases at %s: %v", kueueParity, err)
	}
	runScenarioDir(t, kueueParity, parityNotYet)
}
