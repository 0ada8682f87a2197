package scenario_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench"
	"github.com/allot-sched/allot/bench/scenario"
)

// readout renders what a caller reads of s and the decisions it gives
// reqs, and the scheduling loop's decisions on a store of it: two
// snapshots that read alike answer alike.
func readout(t *testing.T, s *allot.Snapshot, reqs []allot.Request) string {
	t.Helper()
	type node struct {
		Desc   allot.Node
		Status allot.NodeStatus
	}
	var out struct {
		Version       uint64
		Now           int64
		Nodes         []node
		Queues        []allot.QueueStatus
		Cohorts       []allot.CohortStatus
		Debt, Used    []float64
		Running       []allot.Workload
		Pending       []allot.Workload
		Order         []string
		Fragmentation any
		Decisions     []allot.Decision
		Schedule      []allot.Decision
	}
	out.Version, out.Now, out.Pending, out.Order, out.Fragmentation = s.Version(), s.Now(), s.PendingWorkloads(), allot.Order(s), s.Fragmentation()
	for _, n := range s.Nodes() {
		st, _ := s.NodeStatus(n.Name)
		out.Nodes = append(out.Nodes, node{n, st})
	}
	for _, q := range s.Queues() {
		st, _ := s.QueueStatus(q.Name)
		out.Queues = append(out.Queues, st)
		out.Debt, out.Used = append(out.Debt, s.Debt(q.Name)), append(out.Used, s.HistoricalUsage(q.Name))
	}
	for _, c := range s.Cohorts() {
		st, _ := s.CohortStatus(c.Name)
		out.Cohorts = append(out.Cohorts, st)
	}
	for _, id := range s.RunningIDs() {
		w, _ := s.Running(id)
		out.Running = append(out.Running, w)
	}
	for _, r := range reqs {
		out.Decisions = append(out.Decisions, allot.Decide(s, r))
	}
	out.Schedule = allot.Schedule(allot.NewStore(s))
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// firstDifference is the first line where a and b differ, with its
// neighbours.
func firstDifference(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(x), len(y)) {
		if x[i] != y[i] {
			from := max(0, i-5)
			return fmt.Sprintf("%s\n≠ %s\n≠ %s", strings.Join(x[from:i], "\n"), x[i], y[i])
		}
	}
	return fmt.Sprintf("one is longer: %d and %d lines", len(x), len(y))
}

// exported writes s as a scenario, parses the file and builds it, and
// checks that the snapshot built reads as s and answers as s does (reqs,
// the request written into the file, the scheduling loop), and that the
// file is a fixed point: writing the rebuilt snapshot gives the same bytes.
func exported(t *testing.T, label string, s *allot.Snapshot, req *allot.Request, reqs []allot.Request) []byte {
	t.Helper()
	data, err := scenario.Marshal(label, s.Builder(), req)
	if err != nil {
		t.Fatalf("%s: Marshal: %v", label, err)
	}
	sc, err := scenario.Parse(label, data)
	if err != nil {
		t.Fatalf("%s: the file written does not parse: %v\n%s", label, err, data)
	}
	again, err := sc.Build()
	if err != nil {
		t.Fatalf("%s: the file written does not build: %v", label, err)
	}
	if req != nil {
		if sc.Request == nil || !jsonSame(t, *sc.Request, *req) {
			t.Fatalf("%s: the request reads back as %+v, was %+v", label, sc.Request, req)
		}
		reqs = append(reqs, *req)
	}
	if a, b := readout(t, again, reqs), readout(t, s, reqs); a != b {
		t.Fatalf("%s: the snapshot built from the file differs (first: rebuilt):\n%s", label, firstDifference(a, b))
	}
	back, err := scenario.Marshal(label, again.Builder(), sc.Request)
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != string(data) {
		t.Fatalf("%s: writing the rebuilt snapshot gives other bytes:\n%s", label, firstDifference(string(back), string(data)))
	}
	return data
}

func jsonSame(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

// TestMarshalScenarios writes every state every scenario file passes
// through (built, then after each step) as a scenario and reads it back.
func TestMarshalScenarios(t *testing.T) {
	dirs := []string{"testdata", "../../testdata/scenarios", sharedScenarios, "../../../shared/kueue-parity"}
	states := 0
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		if _, err := os.Stat(dir); err != nil || len(files) == 0 {
			t.Logf("no scenarios in %s", dir)
			continue
		}
		for _, f := range files {
			sc, err := scenario.Load(f)
			if err != nil {
				continue
			}
			if _, err := sc.Build(); err != nil {
				continue
			}
			for n := 0; n <= len(sc.Steps); n++ {
				s, req, err := sc.StateAfter(n)
				if err != nil {
					break // a step the scenario expects to fail
				}
				var reqs []allot.Request
				for _, w := range s.PendingWorkloads() {
					reqs = append(reqs, allot.Request(w))
				}
				exported(t, fmt.Sprintf("%s after %d steps", f, n), s, req, reqs)
				states++
			}
		}
	}
	if states < 100 {
		t.Fatalf("only %d states written", states)
	}
}

// TestMarshalBenchCluster writes the fragmented benchmark cluster, after
// admissions and node events, as a scenario and reads it back.
func TestMarshalBenchCluster(t *testing.T) {
	n := 10240
	if testing.Short() {
		n = 1024
	}
	s, err := bench.Cluster(n, true).Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(s)
	var reqs []allot.Request
	for i, c := range bench.GangCases() {
		reqs = append(reqs, c.Req)
		c.Req.ID = fmt.Sprintf("gang-%d", i)
		if d := allot.Decide(st.Load(), c.Req); d.Verdict == allot.VerdictAdmit {
			if _, err := st.Commit(d); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, ev := range []allot.Event{allot.RemoveNode{Node: "n3"}, allot.NodeDown{Node: "n9"}, allot.AdvanceTime{Seconds: 600},
		allot.NodeCooldown{Node: "n10", Until: 5000}, allot.NodeCordon{Node: "n11", Cordoned: true}} {
		if _, err := st.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	req := reqs[1]
	data := exported(t, "bench", st.Load(), &req, reqs)
	// Written in Kubernetes' notation: cpu in cores.
	if !strings.Contains(string(data), `"cpu": "192"`) {
		t.Fatalf("cpu is not written in cores:\n%.2000s", data)
	}
}

// TestMarshalNotation: quantities in Kubernetes' notation (counted
// resources as numbers), Kueue's
// MayStopSearch as Borrow and Preempt, history as a decayed count.
func TestMarshalNotation(t *testing.T) {
	b := allot.Builder{
		Now: 100, Resources: []string{"gpu", "cpu", "memory"}, Flavors: []allot.Flavor{{Name: "f"}},
		Nodes: []allot.Node{{Name: "n", Flavor: "f", Capacity: allot.Resources{"gpu": 8, "cpu": 1500, "memory": 1 << 30}, Down: true}},
		Queues: []allot.Queue{{Name: "q", FlavorFungibility: allot.FlavorFungibility{WhenCanBorrow: "MayStopSearch", WhenCanPreempt: "MayStopSearch"},
			Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "cpu", Nominal: 4000}}}}}},
		History: allot.History{Preemptions: map[string]float64{"q": 0.25}},
		Options: allot.Options{BackfillDepth: 3, OrderByDebt: true, QueueDepth: 7},
		Version: 42,
	}
	data, err := scenario.Marshal("n", b, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"cpu": "1500m"`, `"nominal": "4"`, `"memory": "1Gi"`, `"gpu": 8`, `"whenCanBorrow": "Borrow"`,
		`"whenCanPreempt": "Preempt"`, `"q": 0.25`, `"down": true`, `"backfillDepth": 3`, `"version": 42`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("no %s in\n%s", want, data)
		}
	}
	sc, err := scenario.Parse("n", data)
	if err != nil {
		t.Fatal(err)
	}
	got := sc.Builder()
	if got.Nodes[0].Capacity["cpu"] != 1500 || got.Queues[0].Quota[0].Resources[0].Nominal != 4000 || !got.Nodes[0].Down ||
		got.History.Preemptions["q"] != 0.25 || got.Options != b.Options || got.Version != 42 {
		t.Fatalf("read back as %+v", got)
	}
	if r := sc.Run(); !r.Passed {
		t.Fatalf("the file does not pass: %v", r.Failures)
	}
}

// TestMarshalRefuses what the format cannot hold.
func TestMarshalRefuses(t *testing.T) {
	base := func() allot.Builder {
		return allot.Builder{Now: 10, Resources: []string{"gpu"}, Flavors: []allot.Flavor{{Name: "f"}},
			Queues: []allot.Queue{{Name: "q"}}}
	}
	for _, c := range []struct {
		name   string
		mutate func(*allot.Builder)
		want   string
	}{
		{"time before zero", func(b *allot.Builder) { b.Now = -1 }, "before zero"},
		{"submitted after now", func(b *allot.Builder) {
			b.Pending = []allot.Workload{{ID: "w", Queue: "q", SubmittedAt: 11, PodSets: []allot.PodSet{{Name: "m", Count: 1}}}}
		}, "submittedAt 11"},
		{"undeclared resource", func(b *allot.Builder) {
			b.Nodes = []allot.Node{{Name: "n", Flavor: "f", Capacity: allot.Resources{"cpu": 1}}}
		}, `resource "cpu" is not declared`},
		{"negative quantity", func(b *allot.Builder) {
			b.Nodes = []allot.Node{{Name: "n", Flavor: "f", Capacity: allot.Resources{"gpu": -1}}}
		}, "negative quantity"},
		{"running without flavor", func(b *allot.Builder) {
			b.Running = []allot.Workload{{ID: "w", Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 1}}}}
		}, "has no flavor"},
	} {
		b := base()
		c.mutate(&b)
		if _, err := scenario.Marshal("x", b, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}

// TestChurnSteps runs a scenario whose steps add, remove and describe
// nodes anew and remove a queue and a cohort.
func TestChurnSteps(t *testing.T) {
	sc, err := scenario.Load("testdata/node-churn.json")
	if err != nil {
		t.Fatal(err)
	}
	if r := sc.Run(); !r.Passed {
		t.Fatalf("%v", r.Failures)
	}
	var kinds []string
	for _, st := range sc.Steps {
		kinds = append(kinds, st.String())
	}
	for _, want := range []string{`addNode "n3"`, `removeNode "n0"`, `setNode "n2"`, `removeQueue "idle"`, `removeCohort "spare"`} {
		if !slices.Contains(kinds, want) {
			t.Errorf("no step %s among %v", want, kinds)
		}
	}
	for _, c := range []struct{ step, want string }{
		{`{"removeNode": "n9"}`, `unknown node "n9"`},
		{`{"setNode": {"name": "n9", "flavor": "h100", "labels": {"rack": "r0"}}}`, `unknown node "n9"`},
		{`{"removeQueue": "nope"}`, `unknown queue "nope"`},
		{`{"addNode": {"name": "n9", "flavor": "h100", "colour": "red"}}`, `unknown field "colour"`},
	} {
		data := `{"resources": ["gpu"], "topology": {"levels": ["rack"]}, "flavors": [{"name": "h100"}],
			"nodes": [{"name": "n0", "flavor": "h100", "labels": {"rack": "r0"}}], "queues": [{"name": "q"}], "steps": [` + c.step + `]}`
		if _, err := scenario.Parse("x.json", []byte(data)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.step, err, c.want)
		}
	}
}
