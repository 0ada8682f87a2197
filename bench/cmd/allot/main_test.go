package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if status != 0 || out != "PASS cmd-pass\n1 passed, 0 failed\n" {
		t.Fatalf("status %d, output:\n%s", status, out)
	}
}

func TestCheckFail(t *testing.T) {
	status, out, _ := runCmd("check", "testdata/fail.json", "testdata/pass.json")
	if status != 1 || lastLine(out) != "1 passed, 1 failed" {
		t.Fatalf("status %d, output:\n%s", status, out)
	}
	lines := strings.Split(out, "\n")
	if lines[0] != "FAIL cmd-fail" || !strings.HasPrefix(lines[1], `    request "lost": verdict: want Admit Fits, got Reject UnknownQueue (message: `) {
		t.Errorf("output:\n%s", out)
	}
	if !strings.Contains(out, "\nPASS cmd-pass\n") {
		t.Errorf("no PASS line for cmd-pass:\n%s", out)
	}
}

// TestCheckDirectory: a directory stands for every *.json under it, sorted,
// and a file that cannot be loaded is a FAIL line naming the JSON path.
func TestCheckDirectory(t *testing.T) {
	status, out, _ := runCmd("check", "testdata")
	want := []string{
		"FAIL " + filepath.Join("testdata", "broken", "typo.json") + `: $.expect.verdcit: unknown field "verdcit"`,
		"FAIL cmd-fail",
	}
	lines := strings.Split(out, "\n")
	if status != 1 || lastLine(out) != "1 passed, 2 failed" || lines[0] != want[0] || lines[1] != want[1] {
		t.Fatalf("status %d, output:\n%s", status, out)
	}
}

func TestCheckMissingPath(t *testing.T) {
	status, out, _ := runCmd("check", "testdata/nope.json")
	if status != 1 || !strings.HasPrefix(out, "FAIL ") || lastLine(out) != "0 passed, 1 failed" {
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

func TestValidate(t *testing.T) {
	status, out, errOut := runCmd("validate", "testdata/pass.json", "testdata/broken/typo.json")
	if status != 1 || out != "ok testdata/pass.json\n" || !strings.Contains(errOut, `$.expect.verdcit: unknown field`) {
		t.Fatalf("status %d, stdout:\n%s\nstderr:\n%s", status, out, errOut)
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
	for _, want := range []string{"300 jobs on 128 GPUs", "fifo", "allot", "queue wait by priority class"} {
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
