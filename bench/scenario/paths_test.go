package scenario_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/scenario"
)

// TestBuildErrorPaths: a description allot.Builder.Build refuses is an
// *Error at the JSON path of the value at fault in the file (not the
// Builder's path), without allot's package prefix, wrapping the
// *allot.BuildError.
func TestBuildErrorPaths(t *testing.T) {
	const head = `"name": "p", "now": 100, "resources": ["gpu", "nvidia.com/gpu"], "topology": {"levels": ["rack"]},
	 "flavors": [{"name": "a100"}, {"name": "h100"}]`
	nodes := `"nodes": [{"name": "n0", "flavor": "a100", "labels": {"rack": "r0"}, "capacity": {"gpu": 8}}]`
	queue := func(quota string) string { return `"queues": [{"name": "q", "quota": ` + quota + `}]` }
	okQueue := queue(`{"a100": {"gpu": {"nominal": 8}}}`)
	for _, c := range []struct {
		name, body, path, reason string
		sentinel                 error
	}{
		{
			name: "a running pod beyond its node",
			body: nodes + `, ` + okQueue + `, "running": [{"id": "w", "queue": "q", "podSets": [{"name": "m", "count": 1,
				"perPod": {"gpu": 9}, "flavor": "a100", "nodes": ["n0"]}]}]`,
			path: "$.running[0].podSets[0].nodes[0]", sentinel: allot.ErrOverCapacity,
			reason: `beyond the node's capacity: node "n0" has 8 free GPUs, the pod needs 9`,
		},
		{
			// The file's quota is keyed by flavor and resource; the
			// Builder's is a list in the file's flavor order (h100 is
			// second), whatever the order of the file's keys.
			name: "a queue's lending limit",
			body: nodes + `, "cohorts": [{"name": "c"}], "queues": [{"name": "q", "cohort": "c",
				"quota": {"h100": {"nvidia.com/gpu": {"nominal": 4, "lendingLimit": 6}}, "a100": {"gpu": {"nominal": 8}}}}]`,
			path: `$.queues[0].quota.h100["nvidia.com/gpu"].lendingLimit`, sentinel: allot.ErrInvalid,
			reason: "invalid value: lending limit 6 above nominal 4",
		},
		{
			name: "a root cohort's borrowing limit",
			body: nodes + `, "cohorts": [{"name": "c", "quota": {"h100": {"nvidia.com/gpu": {"nominal": 8, "borrowingLimit": 2}},
				"a100": {"gpu": {"nominal": 8}}}}], ` + okQueue,
			path: `$.cohorts[0].quota.h100["nvidia.com/gpu"].borrowingLimit`, sentinel: allot.ErrInvalid,
			reason: "invalid value: a borrowingLimit needs a cohort to borrow from or lend to",
		},
		{
			name: "a queue's soft cap",
			body: nodes + `, ` + queue(`{"a100": {"gpu": {"nominal": 8, "soft": 9, "hard": 8}}}`),
			path: "$.queues[0].quota.a100.gpu.soft", sentinel: allot.ErrInvalid,
			reason: "invalid value: soft cap 9 above hard cap 8",
		},
		{
			name: "a node of a node set",
			body: nodes + `, "nodeSets": [{"count": 2, "prefix": "s", "flavor": "a100", "capacity": {"gpu": 8}, "labels": {"rack": "r1"}},
				{"count": 3, "prefix": "t", "flavor": "a100", "capacity": {"gpu": 80}, "labels": {"rack": "r2"}}], ` + okQueue,
			path: "$.nodeSets[1].capacity.gpu", sentinel: allot.ErrInvalid,
		},
		{
			name: "a top-level field",
			body: nodes + `, ` + okQueue + `, "gpuResource": "nvidia.com/gpu"`,
			path: "$.nodes[0].capacity.gpu", sentinel: allot.ErrGPUResource,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := mustParse(t, `{`+head+`, `+c.body+`}`)
			_, err := s.Build()
			var serr *scenario.Error
			if !errors.As(err, &serr) {
				t.Fatalf("Build: %v (%T), want a *scenario.Error", err, err)
			}
			if serr.File != "test.json" || serr.Path != c.path || c.reason != "" && serr.Reason != c.reason {
				t.Errorf("Build: file %q, path %q, reason %q; want test.json, %q, %q", serr.File, serr.Path, serr.Reason, c.path, c.reason)
			}
			if strings.Contains(err.Error(), "allot:") || !strings.HasPrefix(err.Error(), "test.json: "+c.path+": ") {
				t.Errorf("Error() = %q", err)
			}
			var be *allot.BuildError
			if !errors.Is(err, c.sentinel) || !errors.As(err, &be) {
				t.Errorf("%v does not wrap a *allot.BuildError of %v", err, c.sentinel)
			}
			r := s.Run()
			if !errors.Is(r.Err, c.sentinel) || len(r.Failures) != 1 || r.Failures[0] != "build: "+serr.Path+": "+serr.Reason {
				t.Errorf("Run: err %v, failures %q", r.Err, r.Failures)
			}
		})
	}
}

// TestStepErrorPaths: a step the store refuses fails at the step's path,
// into its value where allot names a field of it.
func TestStepErrorPaths(t *testing.T) {
	for _, c := range []struct{ steps, path, reason string }{
		{`[{"advance": 5}, {"finish": "ghost"}]`, "$.steps[1].finish", `unknown workload: "ghost" is not running`},
		{`[{"addNode": {"name": "n9", "flavor": "a100", "labels": {"rack": "r0"}, "capacity": {"gpu": 80}}}]`,
			"$.steps[0].addNode.capacity.gpu", "invalid value: "},
		{`[{"decide": ` + job("w") + `, "commit": true}, {"setNode": {"name": "n0", "flavor": "a100", "labels": {"rack": "r0"}, "capacity": {"gpu": 4}}}]`,
			"$.steps[1].setNode", `beyond the node's capacity: running["w"].podSets[0]`},
	} {
		s := mustParse(t, `{`+small+`, "steps": `+c.steps+`}`)
		r := s.Run()
		if len(r.Failures) != 1 || !strings.Contains(r.Failures[0], "): "+c.path+": "+c.reason) {
			t.Errorf("%s: failures %q, want %s: %s...", c.steps, r.Failures, c.path, c.reason)
		}
		_, _, err := s.StateAfter(-1)
		var serr *scenario.Error
		if !errors.As(err, &serr) || serr.Path != c.path || !strings.HasPrefix(serr.Reason, c.reason) || serr.Err == nil {
			t.Errorf("%s: StateAfter: %v", c.steps, err)
		}
	}
}

// TestValidate: Validate builds, replays the steps and checks every
// request on the snapshot of its step, at the request's JSON path, but
// leaves alone a request whose expect is its rejection.
func TestValidate(t *testing.T) {
	bad := func(id, fields string) string {
		return `{"id": "` + id + `", "queue": "q", "podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 8}` + fields + `}]}`
	}
	for _, c := range []struct{ name, body, path, reason string }{
		{"valid", `"steps": [{"decide": ` + job("a") + `, "commit": true}, {"finish": "a"}]`, "", ""},
		{"an unknown queue", `"steps": [{"advance": 1}, {"decide": {"id": "a", "queue": "qq", "podSets": [{"name": "m", "count": 1, "perPod": {"gpu": 1}}]}}]`,
			"$.steps[1].decide.queue", `Decide rejects the request (UnknownQueue): queue "qq" does not exist`},
		{"an unknown level", `"steps": [{"decide": ` + bad("a", `, "topology": {"required": "zone"}`) + `}]`,
			"$.steps[0].decide.podSets[0].topology.required", "Decide rejects the request (InvalidRequest): "},
		{"running already, at that step", `"steps": [{"decide": ` + job("a") + `, "commit": true}, {"decide": ` + job("a") + `}]`,
			"$.steps[1].decide.id", `Decide rejects the request (InvalidRequest): workload "a" is already running`},
		{"the top-level request", `"request": ` + bad("a", `, "topology": {"required": "zone"}`),
			"$.request.podSets[0].topology.required", "Decide rejects the request (InvalidRequest): "},
		{"a rejection expected", `"request": {"id": "a", "queue": "qq", "podSets": [{"name": "m", "count": 1, "perPod": {"gpu": 1}}]},
			"expect": {"verdict": "Reject", "reason": "UnknownQueue"}`, "", ""},
		{"another rejection expected", `"request": {"id": "a", "queue": "qq", "podSets": [{"name": "m", "count": 1, "perPod": {"gpu": 1}}]},
			"expect": {"verdict": "Reject", "reason": "InvalidRequest"}`, "$.request.queue", "Decide rejects the request (UnknownQueue): "},
		{"a step refused", `"steps": [{"finish": "ghost"}]`, "$.steps[0].finish", "unknown workload: "},
		{"a commit refused", `"steps": [{"decide": ` + job("a") + `, "commit": true}, {"decide": ` + job("b") + `, "commit": true},
			{"decide": ` + job("c") + `, "commit": true}]`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := mustParse(t, `{`+small+`, `+c.body+`}`)
			err := s.Validate()
			if c.path == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var serr *scenario.Error
			if !errors.As(err, &serr) || serr.File != "test.json" || serr.Path != c.path || !strings.HasPrefix(serr.Reason, c.reason) {
				t.Fatalf("Validate: %v, want %s: %s...", err, c.path, c.reason)
			}
		})
	}
}

// TestDecideStep decides any decide step on what the steps before it
// leave, commits and events included.
func TestDecideStep(t *testing.T) {
	s := mustParse(t, `{`+small+`, "steps": [{"decide": `+job("a")+`, "commit": true}, {"decide": `+job("b")+`, "commit": true},
		{"decide": `+job("c")+`}, {"finish": "a"}, {"decide": `+job("c")+`}]}`)
	for _, c := range []struct {
		step     int
		workload string
		verdict  allot.Verdict
	}{{1, "a", allot.VerdictAdmit}, {2, "b", allot.VerdictAdmit}, {3, "c", allot.VerdictQueue}, {5, "c", allot.VerdictAdmit}} {
		d, err := s.DecideStep(c.step)
		if err != nil || d.Workload != c.workload || d.Verdict != c.verdict {
			t.Errorf("step %d: %s %v (%s), err %v; want %s %v", c.step, d.Workload, d.Verdict, d.Message, err, c.workload, c.verdict)
		}
	}
	for _, c := range []struct {
		step       int
		path, want string
	}{{0, "$.steps", "no step 0: the file has 5"}, {6, "$.steps", "no step 6: the file has 5"}, {4, "$.steps[3]", `step 4 is finish "a", not a decide step`}} {
		_, err := s.DecideStep(c.step)
		var serr *scenario.Error
		if !errors.As(err, &serr) || serr.Path != c.path || serr.Reason != c.want {
			t.Errorf("step %d: err %v, want %s: %s", c.step, err, c.path, c.want)
		}
	}
}
