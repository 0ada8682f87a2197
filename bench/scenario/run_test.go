package scenario_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/allot-sched/allot/bench/scenario"
)

// small is a cluster of two 8-GPU nodes in two racks and a queue q with a
// nominal quota of 16 GPUs.
const small = `"name": "small", "now": 100, "resources": ["gpu"],
 "topology": {"levels": ["rack"]},
 "flavors": [{"name": "a100"}],
 "nodes": [{"name": "n0", "flavor": "a100", "labels": {"rack": "r0"}, "capacity": {"gpu": 8}},
           {"name": "n1", "flavor": "a100", "labels": {"rack": "r1"}, "capacity": {"gpu": 8}}],
 "queues": [{"name": "q", "quota": {"a100": {"gpu": {"nominal": 16}}}}]`

// job is a request of one 8-GPU pod on queue q.
func job(id string) string {
	return `{"id": "` + id + `", "queue": "q", "podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 8}}]}`
}

func mustParse(t *testing.T, data string) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse("test.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRunRequestPasses(t *testing.T) {
	s := mustParse(t, `{`+small+`, "request": `+job("w")+`,
		"expect": {"verdict": "Admit", "reason": "Fits", "victims": [], "flavors": {"main": "a100"},
		           "borrowing": false, "sameDomain": {"main": "rack"}, "messageContains": "a100"}}`)
	r := s.Run()
	if !r.Passed || len(r.Failures) != 0 || r.Name != "small" || r.File != "test.json" {
		t.Fatalf("result %+v", r)
	}
}

func TestRunStepsPass(t *testing.T) {
	s := mustParse(t, `{`+small+`, "steps": [
		{"decide": `+job("w")+`, "expect": {"verdict": "Admit"}, "commit": true},
		{"expectState": {"usage": {"q": {"a100": {"gpu": 8}}}, "running": ["w"], "pending": [],
		                 "runningCount": {"q": 1}, "freeGpus": 8}},
		{"decide": `+job("v")+`, "expect": {"verdict": "Admit"}},
		{"expectState": {"running": ["w"], "freeGpus": 8}},
		{"finish": "w"},
		{"advance": 50},
		{"submit": {"id": "s", "queue": "q", "submittedAt": 150, "podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 1}}]}},
		{"expectState": {"usage": {"q": {"a100": {"gpu": 0}}}, "running": [], "pending": ["s"],
		                 "runningCount": {"q": 0}, "freeGpus": 16}}
	]}`)
	if r := s.Run(); !r.Passed {
		t.Fatalf("failures:\n%s", strings.Join(r.Failures, "\n"))
	}
}

func TestRunReportsMismatches(t *testing.T) {
	s := mustParse(t, `{`+small+`, "steps": [
		{"decide": `+job("w")+`, "expect": {"verdict": "Queue", "borrowing": true, "nodes": {"main": {"n1": 1}},
		                                     "domains": {"main": {"rack": ["r1"]}}, "victims": ["x"],
		                                     "victimReasons": {"x": "InClusterQueue"}, "flavors": {"main": "a100"},
		                                     "messageContains": "no such words"},
		 "commit": true},
		{"decide": {"id": "lost", "queue": "nope", "podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 1}}]}, "expect": {"verdict": "Reject", "reason": "InvalidRequest"}},
		{"expectState": {"running": [], "runningCount": {"q": 0}, "freeGpus": 16, "usage": {"q": {"a100": {"gpu": 0}}}}}
	]}`)
	r := s.Run()
	if r.Passed {
		t.Fatal("passed")
	}
	// Admissions go to the least free node that fits; both are empty, so
	// which one is chosen is allot's business: read it off the failure.
	got := strings.Join(r.Failures, "\n")
	node, rack := "n0", "r0"
	if strings.Contains(got, "got {n1: 1}") {
		node, rack = "n1", "r1"
	}
	want := []string{
		`step 1 (decide "w"): verdict: want Queue, got Admit Fits (message: `,
		`step 1 (decide "w"): victims: want [x], got []`,
		`step 1 (decide "w"): victimReasons: x: want InClusterQueue, but it is not a victim`,
		`step 1 (decide "w"): borrowing: want true, got false`,
	}
	if node == "n0" {
		want = append(want,
			`step 1 (decide "w"): domains: main: rack: want [r1], got [r0]`,
			`step 1 (decide "w"): nodes: main: want {n1: 1}, got {n0: 1}`)
	}
	want = append(want,
		`step 1 (decide "w"): message: want it to contain "no such words", got "`,
		`step 2 (decide "lost"): reason: want InvalidRequest, got UnknownQueue (message: `,
		`step 3 (expectState): usage: q: a100: gpu: want 0, got 8`,
		`step 3 (expectState): running: want [], got [w]`,
		`step 3 (expectState): runningCount: q: want 0, got 1`,
		`step 3 (expectState): freeGpus: want 16, got 8`,
	)
	if len(r.Failures) != len(want) {
		t.Fatalf("%d failures, want %d (placed on %s in %s):\n%s", len(r.Failures), len(want), node, rack, got)
	}
	for i := range want {
		if !strings.HasPrefix(r.Failures[i], want[i]) {
			t.Errorf("failure %d:\n got %s\nwant %s...", i, r.Failures[i], want[i])
		}
	}
}

func TestRunDrainAndOrder(t *testing.T) {
	s := mustParse(t, `{`+small+`,
		"pending": [{"id": "p", "queue": "q", "podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 1}}]},
		            {"id": "o", "queue": "q", "priority": 5, "podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 1}}]}],
		"expectOrder": ["p", "o"],
		"steps": [{"drain": true}, {"expectState": {"running": ["nothing"]}}]}`)
	r := s.Run()
	want := []string{
		"expectOrder: want [p o], got [o p]",
		"step 2 (expectState): running: want [nothing], got [o, p]",
	}
	if r.Passed || !reflect.DeepEqual(r.Failures, want) {
		t.Fatalf("failures %q, want %q", r.Failures, want)
	}
	if _, err := s.Decide(); err == nil || !strings.Contains(err.Error(), "drain: a drain makes many decisions") {
		t.Errorf("Decide: err = %v", err)
	}
}

func TestRunBuildError(t *testing.T) {
	s := mustParse(t, `{`+small+`, "running": [{"id": "r", "queue": "q",
		"podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 1}, "flavor": "a100", "nodes": ["n7"]}]}],
		"request": `+job("w")+`, "expect": {"verdict": "Admit"}}`)
	r := s.Run()
	const want = `$.running[0].podSets[0].nodes[0]: unknown node: workload "r" runs on unknown node "n7"`
	if r.Passed || len(r.Failures) != 1 || r.Failures[0] != "build: "+want || r.Err == nil || r.Err.Error() != "test.json: "+want {
		t.Fatalf("failures %q, err %v", r.Failures, r.Err)
	}
	if _, err := s.Decide(); err == nil || err.Error() != "test.json: "+want {
		t.Errorf("Decide: err = %v", err)
	}
}

func TestRunEventErrorStops(t *testing.T) {
	s := mustParse(t, `{`+small+`, "steps": [{"finish": "ghost"}, {"expectState": {"running": ["nothing"]}}]}`)
	r := s.Run()
	if r.Passed || len(r.Failures) != 1 || !strings.HasPrefix(r.Failures[0], `step 1 (finish "ghost"): `) {
		t.Fatalf("failures %q", r.Failures)
	}
}

func TestDecide(t *testing.T) {
	s := mustParse(t, `{`+small+`, "steps": [{"advance": 10}, {"decide": `+job("first")+`}, {"decide": `+job("second")+`}]}`)
	d, err := s.Decide()
	if err != nil {
		t.Fatal(err)
	}
	if d.Workload != "first" {
		t.Errorf("decided %q, want the first decide step", d.Workload)
	}
	s = mustParse(t, `{`+small+`, "steps": [{"advance": 10}]}`)
	if _, err := s.Decide(); err == nil || !strings.Contains(err.Error(), "no request to decide") {
		t.Errorf("Decide without a request: err = %v", err)
	}
}

// TestRunDeterministic runs every shared scenario twice: the results must
// be the same, failures and messages included.
func TestRunDeterministic(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sharedScenarios, "*.json"))
	if len(files) == 0 {
		t.Skipf("no shared scenarios in %s", sharedScenarios)
	}
	for _, f := range files {
		s, err := scenario.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := s.Run(), s.Run(); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs differ:\n%+v\n%+v", f, a, b)
		}
	}
}
