package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/scenario"
)

// runCmd runs the command and returns its exit status and output.
func runCmd(args ...string) (status int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	status = run(args, &out, &errOut)
	return status, out.String(), errOut.String()
}

// lastLine is the last line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestCheckPass(t *testing.T) {
	status, out, _ := runCmd("check", "testdata/pass.json")
	if status != 0 || out != "PASS testdata/pass.json\n1 passed, 0 failed\n" {
		t.Fatalf("status %d, output:\n%s", status, out)
	}
}

func TestCheckFail(t *testing.T) {
	status, out, _ := runCmd("check", "testdata/fail.json", "testdata/pass.json")
	if status != 1 || lastLine(out) != "1 passed, 1 failed" {
		t.Fatalf("status %d, output:\n%s", status, out)
	}
	lines := strings.Split(out, "\n")
	if lines[0] != "FAIL testdata/fail.json" || !strings.HasPrefix(lines[1], `    request "lost": verdict: want Admit Fits, got Reject UnknownQueue (message: `) {
		t.Errorf("output:\n%s", out)
	}
	if !strings.Contains(out, "\nPASS testdata/pass.json\n") {
		t.Errorf("no PASS line for testdata/pass.json:\n%s", out)
	}
}

// TestCheckDirectory: a directory stands for every *.json under it, sorted,
// each reported by its file; a file that cannot be loaded or built is one
// FAIL line naming the file, the JSON path and the reason, an unknown
// field with the known one nearest to it.
func TestCheckDirectory(t *testing.T) {
	status, out, _ := runCmd("check", "testdata")
	want := []string{
		"FAIL " + filepath.Join("testdata", "broken", "build.json") + `: $.queues[0].quota.default.gpu.soft: invalid value: soft cap 9 above hard cap 8`,
		"FAIL " + filepath.Join("testdata", "broken", "typo.json") + `: $.expect.verdcit: unknown field "verdcit" (did you mean "verdict"?)`,
		"FAIL " + filepath.Join("testdata", "fail.json"),
		`    request "lost": verdict: want Admit Fits, got Reject UnknownQueue (message: queue "no-such-queue" does not exist)`,
		"PASS " + filepath.Join("testdata", "pass.json"),
		"1 passed, 3 failed",
	}
	if got := strings.Split(strings.TrimRight(out, "\n"), "\n"); status != 1 || !slices.Equal(got, want) {
		t.Fatalf("status %d, output:\n%s\nwant:\n%s", status, out, strings.Join(want, "\n"))
	}
}

func TestCheckMissingPath(t *testing.T) {
	status, out, _ := runCmd("check", "testdata/nope.json")
	if status != 1 || !strings.HasPrefix(out, "FAIL testdata/nope.json: no such file or directory\n") || lastLine(out) != "0 passed, 1 failed" {
		t.Fatalf("status %d, output:\n%s", status, out)
	}
}

func TestDecide(t *testing.T) {
	status, out, errOut := runCmd("decide", "testdata/fail.json")
	if status != 0 {
		t.Fatalf("status %d, stderr %s", status, errOut)
	}
	if !strings.HasPrefix(out, "{\n  \"verdict\": ") {
		t.Errorf("not indented JSON:\n%s", out)
	}
	var d struct {
		Verdict, Reason, Workload string
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Verdict != "Reject" || d.Reason != "UnknownQueue" || d.Workload != "lost" {
		t.Errorf("decision %+v", d)
	}

	// With steps, the first decide step is decided.
	status, out, errOut = runCmd("decide", "testdata/pass.json")
	if status != 0 || !strings.Contains(out, `"workload": "lost"`) {
		t.Fatalf("status %d, stderr %s, output:\n%s", status, errOut, out)
	}
}

// TestDecideStep: -step N decides any decide step; a step that is not
// one, or is not there, is an error naming the file and the JSON path.
func TestDecideStep(t *testing.T) {
	for _, c := range []struct {
		args     []string
		status   int
		workload string // in the decision printed
		stderr   string // the start of the error
	}{
		{[]string{"-step", "1", "testdata/pass.json"}, 0, "lost", ""},
		{[]string{"-step", "2", "testdata/pass.json"}, 0, "intruder", ""},
		{[]string{"-step", "3", "testdata/pass.json"}, 1, "", "allot decide: testdata/pass.json: $.steps: no step 3: the file has 2\n"},
		{[]string{"-step", "1", "testdata/fail.json"}, 1, "", "allot decide: testdata/fail.json: $.steps: no step 1: the file has 0\n"},
		{[]string{"-step", "x", "testdata/pass.json"}, 2, "", ""},
		{[]string{"testdata/pass.json", "-step", "2"}, 2, "", ""}, // flags come first
	} {
		status, out, errOut := runCmd(append([]string{"decide"}, c.args...)...)
		if status != c.status || c.workload != "" && !strings.Contains(out, `"workload": "`+c.workload+`"`) || !strings.HasPrefix(errOut, c.stderr) {
			t.Errorf("decide %q: status %d, stdout %.80q, stderr %q; want status %d", c.args, status, out, errOut, c.status)
		}
	}
	// A step that is not a decide step.
	path := filepath.Join(t.TempDir(), "advance.json")
	data := `{"name": "advance", "resources": ["gpu"], "flavors": [{"name": "f"}], "queues": [{"name": "q", "quota": {"f": {"gpu": {"nominal": 8}}}}],
	  "steps": [{"advance": 10}, {"decide": {"id": "a", "queue": "q", "podSets": [{"name": "m", "count": 1, "perPod": {"gpu": 1}}]}}]}`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if status, _, errOut := runCmd("decide", "-step", "1", path); status != 1 || errOut != "allot decide: "+path+": $.steps[0]: step 1 is advance 10, not a decide step\n" {
		t.Errorf("decide -step 1 of an advance: status %d, stderr %q", status, errOut)
	}
}

// TestHelp: every command's -h prints its usage on stderr and exits 0.
func TestHelp(t *testing.T) {
	var cmds []string
	for _, line := range strings.Split(usageText, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "allot" {
			cmds = append(cmds, f[1])
		}
	}
	if len(cmds) != 6 {
		t.Fatalf("the usage lists %q", cmds)
	}
	for _, cmd := range cmds {
		for _, h := range []string{"-h", "-help", "--help"} {
			status, out, errOut := runCmd(cmd, h)
			if status != 0 || out != "" || !strings.Contains(errOut, "usage: allot "+cmd) {
				t.Errorf("allot %s %s: status %d, stdout %q, stderr %q; want status 0 and the usage on stderr", cmd, h, status, out, errOut)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	status, out, errOut := runCmd("validate", "testdata/pass.json", "testdata/broken/typo.json")
	if status != 1 || out != "ok testdata/pass.json\n" || !strings.Contains(errOut, `$.expect.verdcit: unknown field`) {
		t.Fatalf("status %d, stdout:\n%s\nstderr:\n%s", status, out, errOut)
	}
}

// TestValidateChecks: validate builds, replays the steps and checks the
// requests (fail.json's asks for a queue that does not exist, and expects
// an admission), each error naming the file and the JSON path.
func TestValidateChecks(t *testing.T) {
	dir := t.TempDir()
	steps := filepath.Join(dir, "steps.json")
	data := `{"name": "steps", "resources": ["gpu"], "flavors": [{"name": "f"}],
	  "nodes": [{"name": "n0", "flavor": "f", "capacity": {"gpu": 8}}],
	  "queues": [{"name": "q", "quota": {"f": {"gpu": {"nominal": 8}}}}],
	  "steps": [{"decide": {"id": "a", "queue": "q", "podSets": [{"name": "m", "count": 1, "perPod": {"gpu": 1}}]}, "commit": true},
	            {"decide": {"id": "b", "queue": "q", "podSets": [{"name": "m", "count": 0, "perPod": {"gpu": 1}}]}}]}`
	if err := os.WriteFile(steps, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{"testdata/fail.json", `testdata/fail.json: $.request.queue: Decide rejects the request (UnknownQueue): queue "no-such-queue" does not exist`},
		{"testdata/broken/build.json", "testdata/broken/build.json: $.queues[0].quota.default.gpu.soft: invalid value: soft cap 9 above hard cap 8"},
		{steps, steps + ": $.steps[1].decide.podSets[0].count: Decide rejects the request (InvalidRequest): "},
		{filepath.Join(dir, "nope.json"), filepath.Join(dir, "nope.json") + ": no such file or directory"},
	} {
		status, out, errOut := runCmd("validate", c.file)
		if status != 1 || out != "" || !strings.HasPrefix(errOut, c.want) {
			t.Errorf("validate %s: status %d, stdout %q, stderr %q; want status 1 and %q", c.file, status, out, errOut, c.want)
		}
	}
}

// TestValidateNodeLimit: validate and check load through bench/scenario,
// so a file of many large node sets is an error naming the set that
// passes the scenario's node limit, not a run out of memory.
func TestValidateNodeLimit(t *testing.T) {
	var sets []string
	for i := range 64 {
		sets = append(sets, fmt.Sprintf(`{"count": 1048576, "prefix": "s%d-", "flavor": "f", "capacity": {"gpu": 8}}`, i))
	}
	path := filepath.Join(t.TempDir(), "many-sets.json")
	data := `{"name": "many-sets", "resources": ["gpu"], "flavors": [{"name": "f"}], "nodeSets": [` + strings.Join(sets, ", ") + `],
	  "queues": [{"name": "q", "quota": {"f": {"gpu": {"nominal": 8}}}}],
	  "request": {"id": "r", "queue": "q", "podSets": [{"name": "m", "count": 1, "perPod": {"gpu": 4}}]}}`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "$.nodeSets[1].count: 1048576 nodes: total nodes would be 2097152, more than the limit of 1048576"
	if status, out, errOut := runCmd("validate", path); status != 1 || out != "" || !strings.Contains(errOut, want) {
		t.Fatalf("validate: status %d, stdout %q, stderr %q", status, out, errOut)
	}
	if status, out, _ := runCmd("check", path); status != 1 || !strings.Contains(out, want) || lastLine(out) != "0 passed, 1 failed" {
		t.Fatalf("check: status %d, output:\n%s", status, out)
	}
	if status, _, errOut := runCmd("decide", path); status != 1 || !strings.Contains(errOut, want) {
		t.Fatalf("decide: status %d, stderr %q", status, errOut)
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"simulate", "extra"},
		{"simulate", "-bogus"},
		{"chekc", "x.json"},
		{"check"},
		{"check", "-v", "testdata"},
		{"decide"},
		{"decide", "a.json", "b.json"},
		{"validate"},
	} {
		status, out, errOut := runCmd(args...)
		if status != 2 || out != "" || !strings.Contains(errOut, "usage") {
			t.Errorf("allot %q: status %d, stdout %q, stderr %q; want status 2 and usage on stderr", args, status, out, errOut)
		}
	}
	if status, out, _ := runCmd("help"); status != 0 || !strings.Contains(out, "allot check PATH...") {
		t.Errorf("help: status %d, output %q", status, out)
	}
}

func TestSimulate(t *testing.T) {
	dir := t.TempDir()
	status, out, errOut := runCmd("simulate", "-jobs", "300", "-nodes", "16", "-policies", "fifo,allot", "-out", dir)
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	for _, want := range []string{"300 jobs on 128 GPUs", "fifo", "allot", "wait normal"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	var rep struct {
		Results []struct {
			Policy    string `json:"policy"`
			Completed int    `json:"completed"`
			Rejected  int    `json:"rejected"`
		} `json:"results"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil || json.Unmarshal(b, &rep) != nil || len(rep.Results) != 2 {
		t.Fatalf("report.json: %v %s", err, b)
	}
	for _, r := range rep.Results {
		if r.Completed+r.Rejected != 300 {
			t.Fatalf("%s: %d completed and %d rejected of 300", r.Policy, r.Completed, r.Rejected)
		}
	}
	for _, f := range []string{"results.csv", "series.csv", "utilization.svg", "waits.svg", "fragmentation.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if status, _, _ := runCmd("simulate", "-policies", "nope"); status != 2 {
		t.Fatalf("an unknown policy: status %d", status)
	}
}

func TestSimulateNodeFailures(t *testing.T) {
	status, out, errOut := runCmd("simulate", "-jobs", "300", "-nodes", "16", "-policies", "allot", "-node-mtbf", "5000", "-repair-time", "600")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	if !strings.Contains(out, "allot: ") || !strings.Contains(out, "node failures stopped") {
		t.Fatalf("no failure line:\n%s", out)
	}
	if status, _, _ := runCmd("simulate", "-node-mtbf", "-5"); status != 2 {
		t.Fatalf("a negative MTBF: status %d", status)
	}
	if status, _, _ := runCmd("simulate", "-load", "0"); status != 2 {
		t.Fatalf("a zero load: status %d", status)
	}
}

// TestSimulateFlagRanges: a numeric flag out of its range is a usage
// error naming the flag and the range, before any trace is made: not the
// default in its place (-jobs 0 ran 3,000 jobs), nor a cluster or trace
// too large for memory.
func TestSimulateFlagRanges(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-jobs", "0"}, "-jobs 0 is out of range: want 1 to 1000000"},
		{[]string{"-jobs", "-3"}, "-jobs -3 is out of range: want 1 to 1000000"},
		{[]string{"-jobs", "1000000000000"}, "-jobs 1000000000000 is out of range: want 1 to 1000000"},
		{[]string{"-jobs", "9223372036854775807"}, "-jobs 9223372036854775807 is out of range"},
		{[]string{"-load", "0"}, "-load 0 is out of range: want a number above 0 and at most 100"},
		{[]string{"-load", "-1"}, "-load -1 is out of range"},
		{[]string{"-load", "NaN"}, "-load NaN is out of range"},
		{[]string{"-load", "+Inf"}, "-load +Inf is out of range"},
		{[]string{"-load", "1e300"}, "-load 1e+300 is out of range"},
		{[]string{"-nodes", "0"}, "-nodes 0 is out of range: want 1 to 65536"},
		{[]string{"-nodes", "1000000000"}, "-nodes 1000000000 is out of range: want 1 to 65536"},
		{[]string{"-gpus-per-node", "0"}, "-gpus-per-node 0 is out of range: want 1 to 64"},
		{[]string{"-gpus-per-node", "65"}, "-gpus-per-node 65 is out of range: want 1 to 64"},
		{[]string{"-nodes-per-rack", "0"}, "-nodes-per-rack 0 is out of range: want 1 to 65536"},
		{[]string{"-racks-per-block", "-2"}, "-racks-per-block -2 is out of range: want 1 to 65536"},
		{[]string{"-queue-depth", "-1"}, "-queue-depth -1 is out of range: want 0 or more (0: no bound)"},
		{[]string{"-node-mtbf", "-5"}, "-node-mtbf -5 is out of range: want 0 to 1000000000 seconds"},
		{[]string{"-node-mtbf", "9223372036854775807"}, "-node-mtbf 9223372036854775807 is out of range: want 0 to 1000000000 seconds"},
		{[]string{"-repair-time", "0"}, "-repair-time 0 is out of range: want 1 to 1000000000 seconds"},
		{[]string{"-repair-time", "-1"}, "-repair-time -1 is out of range"},
		{[]string{"-repair-time", "1000000001"}, "-repair-time 1000000001 is out of range"},
		{[]string{"-termination-delay", "-1"}, "-termination-delay -1 is out of range: want 0 to 1000000000 seconds (0: preemptions in one phase)"},
		{[]string{"-termination-delay", "1000000001"}, "-termination-delay 1000000001 is out of range"},
		// A bad flag is caught before a trace file is read.
		{[]string{"-trace", "missing.json", "-jobs", "0"}, "-jobs 0 is out of range"},
	} {
		args := append([]string{"simulate", "-policies", "fifo"}, c.args...)
		status, out, errOut := runCmd(args...)
		if status != 2 || out != "" || !strings.HasPrefix(errOut, "allot simulate: "+c.want) {
			t.Errorf("allot %q: status %d, stdout %q, stderr %q; want status 2 and %q", args, status, out, errOut, c.want)
		}
	}
	// The bounds themselves are in range.
	status, out, errOut := runCmd("simulate", "-policies", "fifo", "-jobs", "1", "-nodes", "1", "-gpus-per-node", "64",
		"-nodes-per-rack", "65536", "-racks-per-block", "1", "-queue-depth", "0", "-node-mtbf", "1000000000", "-repair-time", "1", "-load", "100", "-termination-delay", "0")
	if status != 0 || !strings.Contains(out, "1 jobs on 64 GPUs") {
		t.Fatalf("status %d, stderr %s, output:\n%s", status, errOut, out)
	}
}

// TestSimulatePack packs a trace with its own two nodes, an 8-GPU one
// listed first: first fit (kueue) strands the 8-GPU pod, allot's placer
// does not.
func TestSimulatePack(t *testing.T) {
	dir := t.TempDir()
	tracePath := filepath.Join(dir, "small.json")
	const small = `{"name": "small", "nodes": [{"name": "big", "gpus": 8, "cpuMilli": 64000}, {"name": "small", "gpus": 2, "cpuMilli": 16000}],
	  "jobs": [{"id": "a", "queue": "q", "submit": 0, "duration": 10, "gpus": 1, "cpuMilli": 4000},
	           {"id": "b", "queue": "q", "submit": 1, "duration": 10, "gpus": 1, "cpuMilli": 4000},
	           {"id": "c", "queue": "q", "submit": 2, "duration": 10, "gpus": 8, "cpuMilli": 32000},
	           {"id": "d", "queue": "q", "submit": 3, "duration": 10, "gpus": 2, "cpuMilli": 8000}]}`
	if err := os.WriteFile(tracePath, []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	status, stdout, errOut := runCmd("simulate", "-pack", "-trace", tracePath, "-out", out)
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	for _, want := range []string{"4 pods arrive in order on 10 GPUs", "unallocated @100%", "FGD (Weng et al., ATC'23)", "49%"} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("output lacks %q:\n%s", want, stdout)
		}
	}
	var rep struct {
		Pods    int `json:"pods"`
		Results []struct {
			Policy          string `json:"policy"`
			GPUs            int64  `json:"gpus"`
			Pods            int    `json:"pods"`
			Placed          int    `json:"placed"`
			Failed          int    `json:"failed"`
			AllocatedGPUs   int64  `json:"allocatedGpus"`
			UnallocatedGPUs int64  `json:"unallocatedGpus"`
			Full            *struct {
				UnallocatedGPUs int64 `json:"unallocatedGpus"`
			} `json:"full"`
			Curve []struct {
				ArrivedPct float64 `json:"arrivedPct"`
			} `json:"curve"`
		} `json:"results"`
	}
	b, err := os.ReadFile(filepath.Join(out, "pack.json"))
	if err != nil || json.Unmarshal(b, &rep) != nil || rep.Pods != 4 || len(rep.Results) != 4 {
		t.Fatalf("pack.json: %v %s", err, b)
	}
	// Unallocated GPUs at 100% demand and at the end.
	want := map[string][2]int64{"fifo": {0, 0}, "kueue": {8, 6}, "slurm": {0, 0}, "allot": {0, 0}}
	for _, r := range rep.Results {
		if r.Placed+r.Failed != r.Pods || r.AllocatedGPUs+r.UnallocatedGPUs != r.GPUs || r.GPUs != 10 || r.Full == nil || len(r.Curve) != 4 {
			t.Fatalf("%s: %+v", r.Policy, r)
		}
		if w := want[r.Policy]; r.Full.UnallocatedGPUs != w[0] || r.UnallocatedGPUs != w[1] {
			t.Errorf("%s: %d GPUs unallocated at 100%% and %d at the end, want %d and %d", r.Policy, r.Full.UnallocatedGPUs, r.UnallocatedGPUs, w[0], w[1])
		}
	}
	if status, _, errOut := runCmd("simulate", "-pack", "-trace", filepath.Join(dir, "missing.json")); status != 1 || !strings.Contains(errOut, "missing.json") {
		t.Fatalf("a missing trace: status %d, stderr %q", status, errOut)
	}
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte(`{"name": "empty", "jobs": [], "nodes": [{"name": "n", "gpus": 8}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if status, _, errOut := runCmd("simulate", "-pack", "-trace", empty); status != 1 || !strings.Contains(errOut, "no jobs") {
		t.Fatalf("an empty trace: status %d, stderr %q", status, errOut)
	}
}

// TestExport: the state a scenario reaches after some of its steps,
// written by allot export, passes allot check and decides the next
// request as the original does at that point.
func TestExport(t *testing.T) {
	src := filepath.Join("..", "..", "..", "testdata", "scenarios", "node-events.json")
	sc, err := scenario.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for n := 0; n <= len(sc.Steps); n++ {
		out := filepath.Join(dir, fmt.Sprintf("after-%d.json", n))
		if status, _, errOut := runCmd("export", "-after", fmt.Sprint(n), "-o", out, src); status != 0 {
			t.Fatalf("export -after %d: status %d: %s", n, status, errOut)
		}
		if status, stdout, _ := runCmd("check", out); status != 0 || lastLine(stdout) != "1 passed, 0 failed" {
			t.Fatalf("check of the export after %d steps: status %d:\n%s", n, status, stdout)
		}
		snap, req, err := sc.StateAfter(n)
		if err != nil {
			t.Fatal(err)
		}
		status, stdout, errOut := runCmd("decide", out)
		if req == nil {
			if status == 0 {
				t.Fatalf("after %d steps nothing is left to decide, yet decide printed:\n%s", n, stdout)
			}
			continue
		}
		if status != 0 {
			t.Fatalf("decide of the export after %d steps: status %d: %s", n, status, errOut)
		}
		want, err := json.MarshalIndent(allot.Decide(snap, *req), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if stdout != string(want)+"\n" {
			t.Fatalf("after %d steps the export decides\n%s\nthe original\n%s", n, stdout, want)
		}
	}
	// To stdout, the whole file replayed: what -o writes.
	status, stdout, _ := runCmd("export", src)
	written, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("after-%d.json", len(sc.Steps))))
	if status != 0 || err != nil || !strings.HasPrefix(stdout, "{\n  \"name\": \"node-events\"") ||
		strings.Replace(string(written), fmt.Sprintf(" after %d steps", len(sc.Steps)), "", 1) != stdout {
		t.Fatalf("status %d (%v), output:\n%.500s", status, err, stdout)
	}
}

func TestExportCluster(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cluster.json")
	if status, _, errOut := runCmd("export", "-cluster", "64", "-o", out); status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	if status, stdout, _ := runCmd("validate", out); status != 0 {
		t.Fatalf("validate: status %d: %s", status, stdout)
	}
	sc, err := scenario.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sc.Build()
	if err != nil || len(s.Nodes()) != 64 || len(s.RunningIDs()) == 0 {
		t.Fatalf("the cluster reads back with %v: %v", s, err)
	}
}

func TestExportUsage(t *testing.T) {
	if status, _, errOut := runCmd("export", "-h"); status != 0 || !strings.Contains(errOut, "usage: allot export") {
		t.Fatalf("-h: status %d, stderr:\n%s", status, errOut)
	}
	for _, args := range [][]string{{"export"}, {"export", "-cluster", "4", "x.json"}, {"export", "a.json", "b.json"}, {"export", "-nope", "a.json"}} {
		if status, _, _ := runCmd(args...); status != 2 {
			t.Errorf("%v: status %d, want 2", args, status)
		}
	}
	if status, _, errOut := runCmd("export", "testdata/nope.json"); status != 1 || !strings.Contains(errOut, "nope.json") {
		t.Errorf("a missing file: status %d, stderr %s", status, errOut)
	}
}
