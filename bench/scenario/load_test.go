package scenario_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/scenario"
)

// cluster is the part of a test scenario before its checks: now is 10, a
// rack level, one a100 node, one queue q.
const cluster = `"name": "t", "now": 10,
 "resources": ["gpu", "cpu", "memory"],
 "topology": {"levels": ["rack"]},
 "flavors": [{"name": "a100"}],
 "nodes": [{"name": "n0", "flavor": "a100", "labels": {"rack": "r0"},
            "capacity": {"gpu": 8, "cpu": "96", "memory": "1Ti"}}],
 "queues": [{"name": "q", "quota": {"a100": {"gpu": {"nominal": 8}}}}]`

// withSteps is a scenario on cluster whose steps are the given JSON list.
func withSteps(steps string) string { return "{" + cluster + `, "steps": ` + steps + "}" }

// decide is a decide step on queue q whose pod set has the given fields.
func decide(podSet string) string {
	return `{"decide": {"id": "w", "queue": "q", "podSets": [{"name": "main", "count": 1, ` + podSet + `}]}}`
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		path  string // the error's JSON path
		want  string // a substring of its reason
		exact bool   // want is all of it
	}{
		{
			name: "unknown top-level field",
			data: "{" + cluster + `, "stpes": []}`,
			path: "$.stpes", want: `unknown field "stpes" (did you mean "steps"?)`,
		},
		{
			name: "unknown nested field",
			data: withSteps(`[{"advance": 1}, {"advance": 2}, ` + decide(`"perPod": {"gpu": 1}, "topology": {"requierd": "rack"}`) + `]`),
			path: "$.steps[2].decide.podSets[0].topology.requierd", want: `unknown field "requierd" (did you mean "required"?)`,
		},
		{
			name: "unknown resource",
			data: withSteps(`[{"advance": 1}, {"advance": 2}, ` + decide(`"perPod": {"gpuu": 1}`) + `]`),
			path: "$.steps[2].decide.podSets[0].perPod.gpuu", want: `unknown resource "gpuu" (did you mean "gpu"?)`,
		},
		{
			name: "unknown field, nothing near",
			data: "{" + cluster + `, "colour": "red"}`,
			path: "$.colour", want: `unknown field "colour"`, exact: true,
		},
		{
			name: "unknown field, case",
			data: withSteps(`[` + decide(`"perpod": {"gpu": 1}`) + `]`),
			path: "$.steps[0].decide.podSets[0].perpod", want: `unknown field "perpod" (did you mean "perPod"?)`,
		},
		{
			name: "unknown enum value",
			data: `{` + cluster[:len(cluster)-2] + `, "preemption": {"withinQueue": "LowerPriorty"}}]}`,
			path: "$.queues[0].preemption.withinQueue", want: `"LowerPriorty" is not one of Never, LowerPriority, LowerOrNewerEqualPriority (did you mean "LowerPriority"?)`,
		},
		{
			name: "unknown flavor in a quota",
			data: `{` + cluster[:len(cluster)-2] + `}, {"name": "q2", "quota": {"a10": {"gpu": {"nominal": 1}}}}]}`,
			path: "$.queues[1].quota.a10", want: `unknown flavor "a10" (did you mean "a100"?)`,
		},
		{
			name: "unknown queue in a step",
			data: withSteps(`[{"removeQueue": "qq"}]`),
			path: "$.steps[0].removeQueue", want: `unknown queue "qq" (did you mean "q"?)`,
		},
		{
			name: "fractional gpu",
			data: withSteps(`[{"advance": 1}, {"advance": 2}, ` + decide(`"perPod": {"gpu": "1.5"}`) + `]`),
			path: "$.steps[2].decide.podSets[0].perPod.gpu", want: "gpu must be whole",
		},
		{
			name: "fractional gpu as a number",
			data: withSteps(`[` + decide(`"perPod": {"gpu": 0.5}`) + `]`),
			path: "$.steps[0].decide.podSets[0].perPod.gpu", want: "gpu must be whole",
		},
		{
			name: "bad quantity suffix",
			data: withSteps(`[` + decide(`"perPod": {"memory": "16GB"}`) + `]`),
			path: "$.steps[0].decide.podSets[0].perPod.memory", want: `unknown suffix "GB"`,
		},
		{
			name: "negative quantity",
			data: withSteps(`[` + decide(`"perPod": {"cpu": -1}`) + `]`),
			path: "$.steps[0].decide.podSets[0].perPod.cpu", want: "must not be negative",
		},
		{
			name: "quantity overflow",
			data: withSteps(`[` + decide(`"perPod": {"memory": "10E"}`) + `]`),
			path: "$.steps[0].decide.podSets[0].perPod.memory", want: "out of range",
		},
		{
			name: "quantity of the wrong type",
			data: withSteps(`[` + decide(`"perPod": {"gpu": true}`) + `]`),
			path: "$.steps[0].decide.podSets[0].perPod.gpu", want: "want a quantity (a number or a string), got a boolean",
		},
		{
			name: "bad placement policy",
			data: withSteps(`[` + decide(`"perPod": {"gpu": 1}, "topology": {"policy": "packed"}`) + `]`),
			path: "$.steps[0].decide.podSets[0].topology.policy", want: `unknown placement policy "packed"`,
		},
		{
			name: "bad preemption class",
			data: withSteps(`[{"decide": {"id": "w", "queue": "q", "preemption": {"class": "sometimes"}}}]`),
			path: "$.steps[0].decide.preemption.class", want: `unknown preemption class "sometimes"`,
		},
		{
			name: "bad verdict",
			data: withSteps(`[{"decide": {"id": "w", "queue": "q"}, "expect": {"verdict": "Admitted"}}]`),
			path: "$.steps[0].expect.verdict", want: `unknown verdict "Admitted"`,
		},
		{
			name: "bad reason",
			data: withSteps(`[{"decide": {"id": "w", "queue": "q"}, "expect": {"reason": "Fitz"}}]`),
			path: "$.steps[0].expect.reason", want: `unknown reason "Fitz"`,
		},
		{
			name: "empty verdict",
			data: withSteps(`[{"decide": {"id": "w", "queue": "q"}, "expect": {"verdict": ""}}]`),
			path: "$.steps[0].expect.verdict", want: "must not be empty",
		},
		{
			name: "reason of another verdict",
			data: withSteps(`[{"decide": {"id": "w", "queue": "q"}, "expect": {"verdict": "Admit", "reason": "QuotaExhausted"}}]`),
			path: "$.steps[0].expect.reason", want: "reason QuotaExhausted goes with verdict Queue, not Admit",
		},
		{
			name: "bad victim reason",
			data: withSteps(`[{"decide": {"id": "w", "queue": "q"}, "expect": {"victimReasons": {"v": "Because"}}}]`),
			path: "$.steps[0].expect.victimReasons.v", want: `"Because" is not one of InClusterQueue`,
		},
		{
			name: "expectation about an unknown pod set",
			data: withSteps(`[` + decide(`"perPod": {"gpu": 1}`)[:len(decide(`"perPod": {"gpu": 1}`))-1] + `, "expect": {"flavors": {"mian": "a100"}}}]`),
			path: "$.steps[0].expect.flavors.mian", want: `the request has no pod set "mian"`,
		},
		{
			name: "expectation about an unknown node",
			data: "{" + cluster + `, "request": {"id": "w", "queue": "q", "podSets": [{"name": "main", "count": 1}]},
				"expect": {"nodes": {"main": {"n9": 1}}}}`,
			path: "$.expect.nodes.main.n9", want: `unknown node "n9"`,
		},
		{
			name: "expectation about an unknown domain",
			data: "{" + cluster + `, "request": {"id": "w", "queue": "q", "podSets": [{"name": "main", "count": 1}]},
				"expect": {"domains": {"main": {"rack": ["r0", "r7"]}}}}`,
			path: "$.expect.domains.main.rack[1]", want: `no node has rack "r7"`,
		},
		{
			name: "expect without request",
			data: "{" + cluster + `, "expect": {"verdict": "Admit"}}`,
			path: "$.expect", want: "expect needs a request",
		},
		{
			name: "request and steps",
			data: "{" + cluster + `, "request": {"id": "w", "queue": "q"}, "steps": []}`,
			path: "$.steps", want: "not both",
		},
		{
			name: "admitted after now",
			data: "{" + cluster + `, "running": [{"id": "r", "queue": "q", "admittedAt": 20,
				"podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 1}, "flavor": "a100"}]}]}`,
			path: "$.running[0].admittedAt", want: "time 20 is later than now (10)",
		},
		{
			name: "checkpoint after now",
			data: "{" + cluster + `, "running": [{"id": "r", "queue": "q", "preemption": {"lastCheckpointAt": 11},
				"podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 1}, "flavor": "a100"}]}]}`,
			path: "$.running[0].preemption.lastCheckpointAt", want: "later than now",
		},
		{
			name: "submitted after now in a step",
			data: withSteps(`[{"advance": 5}, {"decide": {"id": "w", "queue": "q", "submittedAt": 16}}]`),
			path: "$.steps[1].decide.submittedAt", want: "time 16 is later than now (15)",
		},
		{
			name: "fractional time",
			data: "{" + cluster + `, "pending": [{"id": "p", "queue": "q", "submittedAt": 1.5,
				"podSets": [{"name": "main", "count": 1}]}]}`,
			path: "$.pending[0].submittedAt", want: "want a whole number, got 1.5",
		},
		{
			name: "negative now",
			data: `{"now": -1}`,
			path: "$.now", want: "out of range",
		},
		{
			name: "wrong type",
			data: withSteps(`[{"decide": {"id": "w", "queue": "q", "priority": "high"}}]`),
			path: "$.steps[0].decide.priority", want: `want a number, got a string`,
		},
		{
			name: "priority out of range",
			data: withSteps(`[{"decide": {"id": "w", "queue": "q", "priority": 3000000000}}]`),
			path: "$.steps[0].decide.priority", want: "out of range",
		},
		{
			name: "null",
			data: `{"name": null}`,
			path: "$.name", want: "want a string, got null",
		},
		{
			name: "not an object",
			data: `[]`,
			path: "$", want: "want an object, got an array",
		},
		{
			name: "placement on a pending workload",
			data: "{" + cluster + `, "pending": [{"id": "p", "queue": "q",
				"podSets": [{"name": "main", "count": 1, "flavor": "a100"}]}]}`,
			path: "$.pending[0].podSets[0].flavor", want: "only running workloads have a placement",
		},
		{
			name: "running workload without flavor",
			data: "{" + cluster + `, "running": [{"id": "r", "queue": "q", "podSets": [{"name": "main", "count": 1}]}]}`,
			path: "$.running[0].podSets[0]", want: `missing field "flavor"`,
		},
		{
			name: "one node per pod",
			data: "{" + cluster + `, "running": [{"id": "r", "queue": "q",
				"podSets": [{"name": "main", "count": 2, "flavor": "a100", "nodes": ["n0"]}]}]}`,
			path: "$.running[0].podSets[0].nodes", want: "1 nodes for 2 pods",
		},
		{
			name: "quota for an unknown flavor",
			data: `{"flavors": [{"name": "a100"}], "queues": [{"name": "q", "quota": {"h100": {"gpu": {"nominal": 8}}}}]}`,
			path: "$.queues[0].quota.h100", want: `unknown flavor "h100"`,
		},
		{
			name: "quota for an unknown resource",
			data: `{"resources": ["gpu"], "flavors": [{"name": "a100"}], "queues": [{"name": "q", "quota": {"a100": {"cpu": {"nominal": 8}}}}]}`,
			path: "$.queues[0].quota.a100.cpu", want: `unknown resource "cpu"`,
		},
		{
			name: "unknown quota field",
			data: `{"flavors": [{"name": "a100"}], "queues": [{"name": "q", "quota": {"a100": {"gpu": {"nominal": 8, "borowingLimit": 2}}}}]}`,
			path: "$.queues[0].quota.a100.gpu.borowingLimit", want: `unknown field "borowingLimit" (did you mean "borrowingLimit"?)`,
		},
		{
			name: "bad preemption policy",
			data: `{"queues": [{"name": "q", "preemption": {"withinQueue": "Lower"}}]}`,
			path: "$.queues[0].preemption.withinQueue", want: `"Lower" is not one of Never, LowerPriority, LowerOrNewerEqualPriority`,
		},
		{
			name: "negative cohort fair-sharing weight",
			data: `{"cohorts": [{"name": "ai", "fairSharing": {"weight": -2}}]}`,
			path: "$.cohorts[0].fairSharing.weight", want: "must not be negative",
		},
		{
			name: "unknown cohort fair-sharing field",
			data: `{"cohorts": [{"name": "ai", "fairSharing": {"weigth": 2}}]}`,
			path: "$.cohorts[0].fairSharing.weigth", want: "weigth",
		},
		{
			name: "bad window",
			data: `{"queues": [{"name": "q", "windows": [{"from": "20:00", "to": "8:00", "scale": 2}]}]}`,
			path: "$.queues[0].windows[0].to", want: `"8:00" is not a time of day HH:MM`,
		},
		{
			name: "bad label template",
			data: `{"nodeSets": [{"count": 2, "prefix": "n", "flavor": "a", "labels": {"rack": "r{i/0}"}}]}`,
			path: "$.nodeSets[0].labels.rack", want: "neither {i} nor {i/k}",
		},
		{
			name: "duplicate node from a node set",
			data: `{"nodes": [{"name": "n1", "flavor": "a"}], "nodeSets": [{"count": 2, "prefix": "n", "flavor": "a"}]}`,
			path: "$.nodeSets[0]", want: `duplicate node "n1"`,
		},
		{
			name: "node sets past the total",
			data: `{"nodes": [{"name": "n", "flavor": "a"}], "nodeSets": [{"count": 1048576, "prefix": "s", "flavor": "a"}]}`,
			path: "$.nodeSets[0].count", want: "1048576 nodes: total nodes would be 1048577, more than the limit of 1048576",
		},
		{
			name: "third node set past the total",
			data: `{"nodeSets": [{"count": 500000, "prefix": "a", "flavor": "a"}, {"count": 500000, "prefix": "b", "flavor": "a"},
			                 {"count": 500000, "prefix": "c", "flavor": "a"}, {"count": 500000, "prefix": "d", "flavor": "a"}]}`,
			path: "$.nodeSets[2].count", want: "500000 nodes: total nodes would be 1500000, more than the limit of 1048576",
		},
		{
			name: "step with two actions",
			data: withSteps(`[{"advance": 1, "finish": "w"}]`),
			path: "$.steps[0]", want: "a step has one action, this one has finish and advance",
		},
		{
			name: "step with no action",
			data: withSteps(`[{}]`),
			path: "$.steps[0]", want: "a step needs one of decide, finish",
		},
		{
			name: "commit without decide",
			data: withSteps(`[{"finish": "w", "commit": true}]`),
			path: "$.steps[0].commit", want: "expect and commit go with decide",
		},
		{
			name: "drain false",
			data: withSteps(`[{"drain": false}]`),
			path: "$.steps[0].drain", want: "drain takes true",
		},
		{
			name: "expectState about an unknown queue",
			data: withSteps(`[{"expectState": {"runningCount": {"qq": 1}}}]`),
			path: "$.steps[0].expectState.runningCount.qq", want: `unknown queue "qq"`,
		},
		{
			name: "expectOrder without pending",
			data: "{" + cluster + `, "expectOrder": ["a"]}`,
			path: "$.expectOrder", want: "expectOrder needs pending workloads",
		},
		{
			name: "key quoted in the path",
			data: `{"history": {"usage": {"team a": {"gpu": "x"}}}}`,
			path: `$.history.usage["team a"].gpu`, want: `quantity: not a Kubernetes quantity: "x": not a number`,
		},
		{
			name: "syntax error",
			data: "{\n  \"name\": \"t\",\n  \"now\": ,\n}",
			path: "", want: "invalid JSON at line 3, column 10",
		},
		{
			name: "trailing data",
			data: `{"name": "t"} {}`,
			path: "", want: "unexpected data after the top-level value",
		},
		{
			name: "empty file",
			data: ``,
			path: "", want: "unexpected end of input",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scenario.Parse("dir/case.json", []byte(tt.data))
			var serr *scenario.Error
			if !errors.As(err, &serr) {
				t.Fatalf("Parse: err = %v, want a *scenario.Error", err)
			}
			if serr.File != "dir/case.json" || serr.Path != tt.path || !strings.Contains(serr.Reason, tt.want) || tt.exact && serr.Reason != tt.want {
				t.Fatalf("Parse: err = %q\nwant file dir/case.json, path %s, reason containing %q", err, tt.path, tt.want)
			}
			wantPrefix := "dir/case.json: " + tt.path
			if tt.path == "" {
				wantPrefix = "dir/case.json: "
			}
			if !strings.HasPrefix(err.Error(), wantPrefix) {
				t.Fatalf("Error() = %q, want it to start with %q", err.Error(), wantPrefix)
			}
		})
	}
}

func TestParseConverts(t *testing.T) {
	data := `{
	  "description": "conversion", "now": 100,
	  "topology": {"levels": ["block", "rack"]},
	  "flavors": [{"name": "h100"}, {"name": "a100"}, {"name": "spot", "spot": true}],
	  "nodes": [{"name": "x0", "flavor": "a100", "labels": {"block": "b9", "rack": "r9"},
	             "capacity": {"gpu": 8, "cpu": "96", "memory": "1Ti"}, "gpuGroups": [4, 4],
	             "maxPods": 10, "cooldownUntil": 500, "unschedulable": true}],
	  "nodeSets": [{"count": 6, "prefix": "n", "flavor": "h100", "capacity": {"gpu": 8, "cpu": 64},
	                "labels": {"block": "b{i/4}", "rack": "r{i/2}"}}],
	  "cohorts": [{"name": "root"}, {"name": "ai", "parent": "root", "quota": {"a100": {"gpu": {"nominal": 4}}}}],
	  "queues": [{"name": "team-a", "cohort": "ai",
	              "quota": {"a100": {"memory": {"nominal": "1Gi"}, "gpu": {"nominal": 8, "borrowingLimit": 2, "lendingLimit": 4, "hard": 12, "soft": 10},
	                                 "cpu": {"nominal": "500m"}},
	                        "h100": {"gpu": {"nominal": 16}}},
	              "flavorOrder": ["a100", "h100"],
	              "flavorFungibility": {"whenCanBorrow": "Borrow", "whenCanPreempt": "TryNextFlavor"},
	              "preemption": {"withinQueue": "LowerPriority", "reclaimWithinCohort": "Any",
	                             "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100}},
	              "fairSharing": {"weight": 1.5},
	              "tenants": ["team-a"], "hold": false,
	              "userCap": {"gpu": 16}, "nonPreemptibleCap": {"gpu": 4},
	              "windows": [{"from": "20:00", "to": "08:00", "scale": 1.5}],
	              "slaTier": {"availability": 0.90, "scale": 1.2}}],
	  "running": [{"id": "w1", "queue": "team-a", "tenant": "team-a", "user": "alice", "priority": 100,
	               "submittedAt": 0, "admittedAt": 10, "expectedRuntime": 3600,
	               "preemption": {"class": "checkpointable", "lastCheckpointAt": 90},
	               "podSets": [{"name": "workers", "count": 2, "perPod": {"gpu": 4, "cpu": "32"},
	                            "flavors": ["h100"], "flavor": "h100", "nodes": ["n0", "n1"],
	                            "gpuIndices": [[0, 1, 2, 3], [4, 5, 6, 7]],
	                            "topology": {"required": "block", "policy": "spread", "slices": [{"level": "rack", "size": 2}], "group": "g"}}],
	               "borrowing": true}],
	  "pending": [{"id": "p1", "queue": "team-a", "submittedAt": 50,
	               "podSets": [{"name": "main", "count": 1, "perPod": {}, "tokens": {"prompt": 512, "maxTokens": 1024}}]}],
	  "history": {"usage": {"team-a": {"gpu": 3600}}, "preemptions": {"team-a": 3}, "halfLife": 86400},
	  "options": {"backfill": true, "topologyAware": false},
	  "fairSharing": {"enabled": true, "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]},
	  "expectOrder": ["p1"],
	  "steps": [
	    {"decide": {"id": "d1", "queue": "team-a", "submittedAt": 100,
	                "podSets": [{"name": "main", "count": 1, "perPod": {"gpu": 1}}]},
	     "expect": {"verdict": "Admit", "reason": "Borrowing", "victims": [], "flavors": {"main": "a100"},
	                "borrowing": true, "preemptible": true, "sameDomain": {"main": "rack"},
	                "domains": {"main": {"block": ["b0", "b1"], "node": ["n5"]}}, "nodes": {"main": {"n5": 1}},
	                "messageContains": "borrow"},
	     "commit": true},
	    {"finish": "w1"}, {"checkpoint": "w1"}, {"advance": 60}, {"nodeDown": "n0"}, {"nodeUp": "n0"},
	    {"submit": {"id": "s1", "queue": "team-a", "submittedAt": 160, "podSets": [{"name": "main", "count": 1}]}},
	    {"drain": true},
	    {"expectState": {"usage": {"team-a": {"a100": {"gpu": 8, "cpu": "1"}}}, "running": ["w1"], "pending": [],
	                     "runningCount": {"team-a": 1}, "freeGpus": 24}}
	  ]
	}`
	s, err := scenario.Parse("testdata/conversion.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "conversion" || s.Description != "conversion" || s.File != "testdata/conversion.json" {
		t.Errorf("name %q, description %q, file %q", s.Name, s.Description, s.File)
	}
	b := s.Builder()
	if b.Now != 100 || !slices.Equal(b.Resources, []string{"gpu", "cpu", "memory"}) || !slices.Equal(b.Levels, []string{"block", "rack"}) {
		t.Errorf("now %d, resources %v, levels %v", b.Now, b.Resources, b.Levels)
	}

	// Explicit nodes first, then the node sets.
	if len(b.Nodes) != 7 {
		t.Fatalf("%d nodes, want 7", len(b.Nodes))
	}
	x0 := b.Nodes[0]
	if x0.Name != "x0" || x0.Capacity["memory"] != 1<<40 || x0.Capacity["cpu"] != 96000 || x0.MaxPods != 10 ||
		x0.CooldownUntil != 500 || !x0.Unschedulable || !slices.Equal(x0.GPUGroups, []int{4, 4}) {
		t.Errorf("x0 = %+v", x0)
	}
	n5 := b.Nodes[6]
	if n5.Name != "n5" || n5.Labels["block"] != "b1" || n5.Labels["rack"] != "r2" || n5.Capacity["cpu"] != 64000 {
		t.Errorf("n5 = %+v", n5)
	}

	// Quota: flavors in the flavors list's order, resources in the
	// resources list's order, whatever the file's key order.
	q := b.Queues[0]
	var order []string
	for _, fq := range q.Quota {
		for _, rq := range fq.Resources {
			order = append(order, fq.Flavor+"/"+rq.Name)
		}
	}
	if want := []string{"h100/gpu", "a100/gpu", "a100/cpu", "a100/memory"}; !slices.Equal(order, want) {
		t.Errorf("quota order %v, want %v", order, want)
	}
	gpu := q.Quota[1].Resources[0]
	if gpu.Nominal != 8 || *gpu.BorrowingLimit != 2 || *gpu.LendingLimit != 4 || *gpu.Hard != 12 || *gpu.Soft != 10 {
		t.Errorf("a100 gpu quota = %+v", gpu)
	}
	if cpu := q.Quota[1].Resources[1]; cpu.Nominal != 500 || cpu.BorrowingLimit != nil || cpu.Hard != nil {
		t.Errorf("a100 cpu quota = %+v", cpu)
	}
	if q.Preemption.WithinQueue != "LowerPriority" || *q.Preemption.BorrowWithinCohort.MaxPriorityThreshold != 100 ||
		*q.FairSharing.Weight != 1.5 || q.SLATier.Scale != 1.2 || q.Windows[0].To != "08:00" || q.UserCap["gpu"] != 16 {
		t.Errorf("queue = %+v", q)
	}
	if c := b.Cohorts[1]; c.Parent != "root" || c.Quota[0].Flavor != "a100" || c.Quota[0].Resources[0].Nominal != 4 {
		t.Errorf("cohort = %+v", c)
	}

	w := b.Running[0]
	if w.Preemption.Class != allot.Checkpointable || w.Preemption.LastCheckpointAt != 90 || !w.Borrowing ||
		w.PodSets[0].PerPod["cpu"] != 32000 || w.PodSets[0].Topology.Policy != allot.Spread ||
		w.PodSets[0].Topology.Slices[0] != (allot.Slice{Level: "rack", Size: 2}) || len(w.PodSets[0].GPUIndices) != 2 {
		t.Errorf("running = %+v", w)
	}
	if p := b.Pending[0]; p.PodSets[0].Tokens.MaxTokens != 1024 || p.PodSets[0].PerPod == nil {
		t.Errorf("pending = %+v", p)
	}
	if b.History.Preemptions["team-a"] != 3 || b.History.Usage["team-a"]["gpu"] != 3600 || b.History.HalfLife != 86400 {
		t.Errorf("history = %+v", b.History)
	}
	if !*b.Options.Backfill || *b.Options.TopologyAware || !b.FairSharing.Enabled || len(b.FairSharing.PreemptionStrategies) != 2 {
		t.Errorf("options %+v, fair sharing %+v", b.Options, b.FairSharing)
	}
	if !slices.Equal(s.ExpectOrder, []string{"p1"}) {
		t.Errorf("expectOrder = %v", s.ExpectOrder)
	}

	var kinds []string
	for _, st := range s.Steps {
		kinds = append(kinds, st.String())
	}
	want := []string{`decide "d1"`, `finish "w1"`, `checkpoint "w1"`, "advance 60", `nodeDown "n0"`, `nodeUp "n0"`,
		`submit "s1"`, "drain", "expectState"}
	if !slices.Equal(kinds, want) {
		t.Errorf("steps %q, want %q", kinds, want)
	}
	e := s.Steps[0].Expect
	if !s.Steps[0].Commit || e.Verdict != allot.VerdictAdmit || e.Reason != allot.Borrowing || e.Victims == nil ||
		len(e.Victims) != 0 || !*e.Borrowing || e.Domains["main"]["node"][0] != "n5" || e.Nodes["main"]["n5"] != 1 {
		t.Errorf("expect = %+v", e)
	}
	if ev, ok := s.Steps[3].Event(); !ok || ev != (allot.AdvanceTime{Seconds: 60}) {
		t.Errorf("advance event = %#v, %t", ev, ok)
	}
	if _, ok := s.Steps[0].Event(); ok {
		t.Error("a decide step is not an event")
	}
	st := s.Steps[8].State
	if st.Usage["team-a"]["a100"]["cpu"] != 1000 || st.Pending == nil || *st.FreeGPUs != 24 || st.RunningCount["team-a"] != 1 {
		t.Errorf("state = %+v", st)
	}
}

func TestParseDefaults(t *testing.T) {
	s, err := scenario.Parse("dir/unnamed.json", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	b := s.Builder()
	if s.Name != "unnamed" || !slices.Equal(b.Resources, []string{"gpu", "cpu", "memory"}) || b.Now != 0 {
		t.Errorf("name %q, resources %v, now %d", s.Name, b.Resources, b.Now)
	}
	if s.Request != nil || s.Expect != nil || s.Steps != nil || s.ExpectOrder != nil {
		t.Errorf("an empty scenario checks nothing: %+v", s)
	}
}

// sharedScenarios is the directory of the contract's example scenarios,
// relative to this package.
const sharedScenarios = "../../../shared/scenarios"

func TestLoadSharedScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(sharedScenarios, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sharedScenarios); err != nil || len(files) == 0 {
		t.Skipf("no shared scenarios in %s", sharedScenarios)
	}
	for _, f := range files {
		s, err := scenario.Load(f)
		if err != nil {
			t.Errorf("Load: %v", err)
			continue
		}
		if want := strings.TrimSuffix(filepath.Base(f), ".json"); s.Name != want {
			t.Errorf("%s: name %q, want %q", f, s.Name, want)
		}
		if s.Request == nil && len(s.Steps) == 0 {
			t.Errorf("%s: checks nothing", f)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := scenario.Load(filepath.Join(t.TempDir(), "nope.json"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Load: err = %v, want one wrapping os.ErrNotExist", err)
	}
}

// sharedRepro holds reproductions of defects, relative to this package.
const sharedRepro = "../../../shared/repro"

// TestNodeLimit: a scenario's nodes, explicit and generated, are bounded
// in total before any is generated: many node sets of the largest count
// each are an error naming the set that passes the limit, and loading
// them allocates next to nothing (64 sets of 2^20 nodes ran out of
// memory). A cluster as large as the benchmarks' loads.
func TestNodeLimit(t *testing.T) {
	var sets []string
	for i := range 64 {
		sets = append(sets, fmt.Sprintf(`{"count": 1048576, "prefix": "s%d-", "flavor": "a100", "labels": {"rack": "r{i/16}"}}`, i))
	}
	inline := "{" + cluster + `, "nodeSets": [` + strings.Join(sets, ", ") + "]}"
	parse := func(name string, data []byte) {
		t.Helper()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := scenario.Parse(name, data)
		runtime.ReadMemStats(&after)
		var serr *scenario.Error
		if !errors.As(err, &serr) || serr.Path != "$.nodeSets[0].count" ||
			!strings.Contains(serr.Reason, "total nodes would be 1048577, more than the limit of 1048576") {
			t.Fatalf("%s: err = %v, want $.nodeSets[0].count past the limit of 1048576 nodes", name, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
			t.Fatalf("%s: %d MB allocated to refuse it", name, alloc>>20)
		}
	}
	parse("inline.json", []byte(inline))

	big := "{" + cluster + `, "nodeSets": [{"count": 12500, "prefix": "s", "flavor": "a100", "labels": {"rack": "r{i/16}"}}]}`
	s, err := scenario.Parse("big.json", []byte(big))
	if err != nil {
		t.Fatal(err)
	}
	if b := s.Builder(); len(b.Nodes) != 12501 {
		t.Fatalf("%d nodes, want 12501", len(b.Nodes))
	}

	repro := filepath.Join(sharedRepro, "nodesets-64.json")
	data, err := os.ReadFile(repro)
	if err != nil {
		t.Skipf("no reproduction at %s: %v", repro, err)
	}
	parse(repro, data)
}
