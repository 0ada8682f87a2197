package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSimulateConfigs runs a trace on two configurations side by side:
// the trace's queues map onto each file's, and the per-queue table shows
// team-a capped at its nominal 128 and then 96 GPUs, team-b borrowing
// beyond 128 only in the second.
func TestSimulateConfigs(t *testing.T) {
	status, out, errOut := runCmd("simulate", "-jobs", "300", "-policies", "config",
		"-config", "../../sim/testdata/teams.json", "-config", "../../sim/testdata/teams-borrow.json")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	for _, want := range []string{
		"trace synthetic-philly: 300 jobs\n",
		"config teams: 256 GPUs on 32 nodes, 2 queues\n  team-a <- team-00, team-01\n  team-b <- team-02,",
		"config teams-borrow: 256 GPUs on 32 nodes, 2 queues\n",
		"per queue:",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	peak := func(run, queue string) int {
		m := regexp.MustCompile(`(?m)^ *` + run + ` +` + queue + ` .* (\d+)$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no row for %s %s:\n%s", run, queue, out)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if a, b := peak("teams config", "team-a"), peak("teams config", "team-b"); a != 128 || b > 128 {
		t.Fatalf("teams: peaks %d and %d GPUs, want 128 and at most 128:\n%s", a, b, out)
	}
	if a, b := peak("teams-borrow config", "team-a"), peak("teams-borrow config", "team-b"); a != 96 || b <= 128 || b > 192 {
		t.Fatalf("teams-borrow: peaks %d and %d GPUs, want team-a at its nominal 96 and team-b borrowing:\n%s", a, b, out)
	}
	if status, _, errOut := runCmd("simulate", "-jobs", "10", "-policies", "config"); status != 2 || !strings.Contains(errOut, "give one with -config") {
		t.Fatalf("the config policy without -config: status %d, %s", status, errOut)
	}
	if status, _, errOut := runCmd("simulate", "-jobs", "10", "-config", "missing.json"); status != 1 || !strings.Contains(errOut, "missing.json") {
		t.Fatalf("a missing configuration: status %d, %s", status, errOut)
	}
}
