package simcmd

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/allot-sched/allot/bench/sim"
)

// TestSimulateConfigs runs a trace on two configurations side by side:
// the trace's queues map onto each file's, and the per-queue table shows
// team-a capped at its nominal 128 and then 96 GPUs, team-b borrowing
// beyond 128 only in the second.
func TestSimulateConfigs(t *testing.T) {
	status, out, errOut := runSim("-jobs", "300", "-policies", "config",
		"-config", "../sim/testdata/teams.json", "-config", "../sim/testdata/teams-borrow.json")
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
	if status, _, errOut := runSim("-jobs", "10", "-policies", "config"); status != 2 || !strings.Contains(errOut, "give one with -config") {
		t.Fatalf("the config policy without -config: status %d, %s", status, errOut)
	}
	if status, _, errOut := runSim("-jobs", "10", "-config", "missing.json"); status != 1 || !strings.Contains(errOut, "missing.json") {
		t.Fatalf("a missing configuration: status %d, %s", status, errOut)
	}
}

// TestSimulateIsDeterministic: two runs print the same report, byte for
// byte, but for the line of wall-clock timing, which says so.
func TestSimulateIsDeterministic(t *testing.T) {
	var outs [2]string
	for k := range outs {
		status, out, errOut := runSim("-jobs", "200", "-nodes", "16")
		if status != 0 {
			t.Fatalf("status %d: %s", status, errOut)
		}
		lines := strings.Split(out, "\n")
		timing := 0
		for i, l := range lines {
			if strings.HasPrefix(l, "timing (wall clock, varies between runs): ") {
				lines[i] = ""
				timing++
			}
		}
		if timing != 1 || strings.Contains(strings.Join(lines, "\n"), "decisions/s") {
			t.Fatalf("want one timing line and no other rate of decisions:\n%s", out)
		}
		outs[k] = strings.Join(lines, "\n")
	}
	if outs[0] != outs[1] {
		t.Fatalf("two runs differ:\n%s\n----\n%s", outs[0], outs[1])
	}
}

// TestSimulateParallelIsTheSame: runs at once print the report runs one
// after another print, byte for byte, but for the timing line; on two
// configurations too, which the runs share. Under -race it checks that
// they share nothing they write.
func TestSimulateParallelIsTheSame(t *testing.T) {
	for _, args := range [][]string{
		{"-jobs", "200", "-nodes", "16", "-policies", "fifo,kueue,slurm,allot,kueue-tas"},
		{"-jobs", "150", "-config", "../sim/testdata/teams.json", "-config", "../sim/testdata/teams-borrow.json", "-policies", "config,kueue,allot"},
	} {
		var outs [2]string
		for k, parallel := range []string{"1", "3"} {
			status, out, errOut := runSim(append([]string{"-parallel", parallel}, args...)...)
			if status != 0 {
				t.Fatalf("%v -parallel %s: status %d: %s", args, parallel, status, errOut)
			}
			at := strings.Index(out, "\ntiming (wall clock")
			if at < 0 {
				t.Fatalf("no timing line:\n%s", out)
			}
			if timing := out[at:]; (parallel == "3") != strings.Contains(timing, "(3 at once)") {
				t.Fatalf("-parallel %s: timing line %q", parallel, timing)
			}
			outs[k] = out[:at]
		}
		if outs[0] != outs[1] {
			t.Fatalf("%v: one at a time and three at a time differ:\n%s\n----\n%s", args, outs[0], outs[1])
		}
	}
	if status, _, errOut := runSim("-jobs", "10", "-parallel", "0"); status != 2 || !strings.Contains(errOut, "-parallel 0 is out of range") {
		t.Fatalf("-parallel 0: status %d, %s", status, errOut)
	}
}

// tableHeads are the column names of the tables in a report: the lines
// that begin with "policy".
func tableHeads(out string) []string {
	var heads []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "policy" {
			heads = append(heads, regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1)...)
		}
	}
	return heads
}

// TestSimulateLegend: every column of the tables is explained under them
// and in -h, and the tables fit in 130 characters.
func TestSimulateLegend(t *testing.T) {
	status, out, errOut := runSim("-jobs", "200", "-nodes", "16", "-policies", "fifo,allot")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	_, _, help := runSim("-h")
	heads := tableHeads(out)
	if len(heads) < 20 {
		t.Fatalf("%d columns: %q", len(heads), heads)
	}
	legend := out[strings.Index(out, "Columns ("):]
	for _, h := range heads {
		name := h
		if strings.HasPrefix(h, "wait ") {
			name = "wait CLASS"
		}
		if h == "policy" {
			continue
		}
		for _, text := range []string{legend, help} {
			if !regexp.MustCompile(`(?m)^  (.*, )?` + regexp.QuoteMeta(name) + `(,|\s)`).MatchString(text) {
				t.Fatalf("column %q is not explained:\n%s", h, text)
			}
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 130 {
			t.Fatalf("a line of %d characters:\n%s", len(l), l)
		}
	}
}

// TestSimulateWaitColumns: each wait column is one priority class in
// every row, highest priority first, and results.csv has them too.
func TestSimulateWaitColumns(t *testing.T) {
	rs := []*sim.Result{
		{Policy: "p1", Waits: []sim.ClassWaits{{Class: "high", Priority: 100, Median: 1, P90: 2, P99: 3}, {Class: "low", Priority: 0, Median: 7, P90: 8, P99: 9}}},
		{Policy: "p2", Waits: []sim.ClassWaits{{Class: "low", Priority: 0, Median: 4, P90: 5, P99: 6}}},
	}
	var b strings.Builder
	printTable(&b, rs)
	rows := map[string][]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); len(f) > 4 && (f[0] == "policy" || f[0] == "p1" || f[0] == "p2") && rows[f[0]] == nil {
			rows[f[0]] = f
		}
	}
	if h := strings.Join(rows["policy"][:7], " "); h != "policy util useful wait high wait low" {
		t.Fatalf("head %q", h)
	}
	if rows["p1"][3] != "1/2/3" || rows["p1"][4] != "7/8/9" || rows["p2"][3] != "-" || rows["p2"][4] != "4/5/6" {
		t.Fatalf("rows %q and %q", rows["p1"], rows["p2"])
	}
	csv := resultRows(rs)
	want := []string{"wait_high_p50", "wait_high_p90", "wait_high_p99", "wait_low_p50", "wait_low_p90", "wait_low_p99"}
	if got := csv[0][6:12]; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("csv columns %q", csv[0])
	}
	if got := csv[2][6:12]; strings.Join(got, ",") != ",,,4,5,6" {
		t.Fatalf("csv row %q", csv[2])
	}
}

// TestSimulateWhatIf: on an exported state, the corrected configuration
// (team-b reclaims its lent quota) would admit team-b's waiting job by
// preempting team-a's borrowing one; the state's own configuration does
// nothing. Nothing is committed: the second answer is on the same state.
func TestSimulateWhatIf(t *testing.T) {
	status, out, errOut := runSim("-state", "../sim/testdata/whatif/state.json",
		"-config", "../sim/testdata/whatif/reclaim.json", "-config", "../sim/testdata/whatif/state.json")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	want := `state state under config reclaim: 2 running, 2 pending; nothing is committed

would admit 1 pending:
  b1 (team-b): once it has preempted a2

would preempt 1 running:
  a2 (team-a, priority 0): InCohortReclamation for b1, losing 24000 GPU-seconds

would leave 1 pending:
  1 Queue QuotaExhausted

state state under config state: 2 running, 2 pending; nothing is committed

would admit 0 pending:

would preempt 0 running:

would leave 2 pending:
  2 Queue QuotaExhausted
`
	if out != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	if status, _, errOut := runSim("-state", "../sim/testdata/whatif/state.json"); status != 2 || !strings.Contains(errOut, "give one with -config") {
		t.Fatalf("-state without -config: status %d, %s", status, errOut)
	}
}

// runSim runs allot simulate with args and returns its exit status and output.
func runSim(args ...string) (status int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	status = Run(args, &out, &errOut)
	return status, out.String(), errOut.String()
}
