package sim

import (
	"maps"
	"strings"
	"testing"

	"github.com/allot-sched/allot/bench/trace"
)

func loadConfig(t *testing.T, path string) *Config {
	t.Helper()
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func queueStats(t *testing.T, r *Result, name string) QueueStats {
	t.Helper()
	for _, q := range r.Queues {
		if q.Queue == name {
			return q
		}
	}
	t.Fatalf("%s: no queue %s in %+v", r.Policy, name, r.Queues)
	return QueueStats{}
}

// TestConfigWhatIf answers the question the example configurations ask:
// what if team-a's nominal quota goes from 128 to 96 GPUs and team-b may
// borrow 64? The trace's queues map as the files say, no queue runs on
// more GPUs than its quota and limit allow, team-b borrows only where it
// may, and team-a, with less quota, waits longer.
func TestConfigWhatIf(t *testing.T) {
	cfg := trace.DefaultSynthetic()
	cfg.Jobs, cfg.ClusterGPUs = 400, 256
	tr := trace.Synthetic(cfg)
	teamA := 0
	for _, j := range tr.Jobs {
		if j.Queue == "team-00" || j.Queue == "team-01" {
			teamA++
		}
	}
	// A victim terminating has passed its quota to its preemptor: it
	// counts in no queue's peak.
	var o Options
	base, what := loadConfig(t, "testdata/teams.json"), loadConfig(t, "testdata/teams-borrow.json")
	o.Config = base
	before := runTwice(t, tr, ConfigPolicy, o)
	o.Config = what
	after := runTwice(t, tr, ConfigPolicy, o)
	if before.Config != "teams" || after.Config != "teams-borrow" || before.GPUs != 256 {
		t.Fatalf("configs %q and %q on %d GPUs", before.Config, after.Config, before.GPUs)
	}
	for _, r := range []*Result{before, after} {
		if a, b := queueStats(t, r, "team-a"), queueStats(t, r, "team-b"); a.Jobs != teamA || b.Jobs != len(tr.Jobs)-teamA || len(r.Queues) != 2 {
			t.Fatalf("%s: team-a %d jobs, team-b %d, want %d and %d", r.Config, a.Jobs, b.Jobs, teamA, len(tr.Jobs)-teamA)
		}
	}
	a0, b0 := queueStats(t, before, "team-a"), queueStats(t, before, "team-b")
	a1, b1 := queueStats(t, after, "team-a"), queueStats(t, after, "team-b")
	if a0.PeakGPUs > 128 || b0.PeakGPUs > 128 {
		t.Fatalf("teams: peaks %d and %d GPUs, beyond the nominal 128 neither may borrow past", a0.PeakGPUs, b0.PeakGPUs)
	}
	if a1.PeakGPUs > 96 || b1.PeakGPUs <= 128 || b1.PeakGPUs > 128+64 {
		t.Fatalf("teams-borrow: team-a peaked at %d GPUs (nominal 96), team-b at %d (nominal 128, may borrow 64)", a1.PeakGPUs, b1.PeakGPUs)
	}
	if a1.P90 <= a0.P90 {
		t.Fatalf("team-a's p90 wait %v s at nominal 96, %v s at 128", a1.P90, a0.P90)
	}
	// fifo overlays the configuration with rigid quotas: team-b borrows
	// nothing.
	fifo, _ := PolicyByName("fifo")
	r := runTwice(t, tr, fifo, o)
	if b := queueStats(t, r, "team-b"); b.PeakGPUs > 128 {
		t.Fatalf("fifo: team-b peaked at %d GPUs beyond its rigid 128", b.PeakGPUs)
	}
}

func TestConfigAssign(t *testing.T) {
	c, err := ParseConfig("c.json", []byte(`{"flavors": [{"name": "f"}], "queues": [
		{"name": "x", "quota": {"f": {"gpu": {"nominal": 1}}}},
		{"name": "y", "quota": {"f": {"gpu": {"nominal": 1}}}},
		{"name": "z", "quota": {"f": {"gpu": {"nominal": 1}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		queueMap map[string]string
		want     map[string]string
	}{
		// Round robin over the configuration's queues, in name order of
		// the trace's; a trace queue of a configured name keeps it.
		{nil, map[string]string{"a": "x", "b": "y", "c": "z", "d": "x", "y": "y"}},
		{map[string]string{"b": "z"}, map[string]string{"a": "x", "b": "z", "c": "y", "d": "z", "y": "y"}},
		{map[string]string{"*": "z", "y": "x"}, map[string]string{"a": "z", "b": "z", "c": "z", "d": "z", "y": "x"}},
	} {
		c.QueueMap = tc.queueMap
		if got := c.Assign([]string{"d", "c", "y", "b", "a", "a"}); !maps.Equal(got, tc.want) {
			t.Errorf("queueMap %v: %v, want %v", tc.queueMap, got, tc.want)
		}
	}
}

func TestParseConfigRefuses(t *testing.T) {
	const queues = `"queues": [{"name": "x", "quota": {"f": {"gpu": {"nominal": 1}}}}]`
	for _, tc := range []struct{ file, want string }{
		{`{"flavors": [{"name": "f"}], ` + queues + `, "simulate": {"queuemap": {}}}`, `$.simulate: unknown field "queuemap"`},
		{`{"flavors": [{"name": "f"}], ` + queues + `, "simulate": {"queueMap": {"a": "nope"}}}`, `"nope" is not a queue`},
		{`{"flavors": [{"name": "f"}, {"name": "g"}], ` + queues + `}`, "2 flavors and no nodes"},
		{`{"flavors": [{"name": "f"}]}`, "no queues"},
		{`{"flavors": [{"name": "f"}], ` + queues + `, "typo": 1}`, `unknown field "typo"`},
		{`{"flavors": [{"name": "f"}],` + "\n" + `  "queues": [}`, "line 2"},
	} {
		_, err := ParseConfig("c.json", []byte(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.file, err, tc.want)
		}
	}
	tr := &trace.Trace{Jobs: []trace.Job{job("a", "q", 0, 10, 1, 0)}}
	if _, err := Run(tr, ConfigPolicy, tiny(1)); err == nil || !strings.Contains(err.Error(), "needs one") {
		t.Fatalf("the config policy without a configuration: %v", err)
	}
}

// TestConfigIgnoresState: a scenario file with a state and steps runs as
// a configuration, and says what it does not replay.
func TestConfigIgnoresState(t *testing.T) {
	c := loadConfig(t, "testdata/quota-borrow-from-cohort.json")
	if len(c.Ignored) == 0 || len(c.Cluster.Running) != 0 || len(c.Cluster.Queues) != 2 {
		t.Fatalf("ignored %v, running %d, queues %d", c.Ignored, len(c.Cluster.Running), len(c.Cluster.Queues))
	}
	tr := &trace.Trace{Jobs: []trace.Job{job("a", "team-a", 0, 10, 8, 0), job("b", "team-b", 0, 10, 8, 0), job("c", "vc", 0, 10, 64, 0)}}
	r, err := Run(tr, ConfigPolicy, tiny(4))
	if err == nil {
		t.Fatalf("ran without the configuration: %+v", r)
	}
	o := tiny(4)
	o.Config = c
	r = runTwice(t, tr, ConfigPolicy, o)
	// The 64-GPU job is beyond any quota of the file: rejected.
	if r.Completed != 2 || r.Rejected != 1 {
		t.Fatalf("%d completed, %d rejected", r.Completed, r.Rejected)
	}
}

// TestConfigBindsByFlavor: without topology awareness, the simulator
// binds a job's pods to nodes of the flavor its quota came from. Flavor
// b's quota is twice its node, so the second job waits for the first,
// though flavor a's node stands idle.
func TestConfigBindsByFlavor(t *testing.T) {
	c, err := ParseConfig("flavors.json", []byte(`{"resources": ["gpu"], "flavors": [{"name": "a"}, {"name": "b"}],
		"nodes": [{"name": "na", "flavor": "a", "capacity": {"gpu": 8}}, {"name": "nb", "flavor": "b", "capacity": {"gpu": 8}}],
		"queues": [{"name": "q", "quota": {"b": {"gpu": {"nominal": 16}}}}],
		"options": {"topologyAware": false}}`))
	if err != nil {
		t.Fatal(err)
	}
	tr := &trace.Trace{Jobs: []trace.Job{job("j1", "q", 0, 100, 8, 0), job("j2", "q", 0, 100, 8, 0)}}
	o := tiny(1)
	o.Config = c
	r := runTwice(t, tr, ConfigPolicy, o)
	if q := queueStats(t, r, "q"); q.P99 != 100 || q.PeakGPUs != 8 || r.GPUs != 16 {
		t.Fatalf("%+v on %d GPUs: want the second job to wait 100 s for flavor b's node", q, r.GPUs)
	}
}

// TestPolicyKnobsReachTheStore: a policy's backfill depth, order keys,
// reclaim setting and history half-life are the store's options, queues'
// and history's, with and without a configuration; without the policy's
// half-life a configuration's stays.
func TestPolicyKnobsReachTheStore(t *testing.T) {
	p := Policy{Name: "knobs", Borrowing: true, Preemption: true, Reclaim: "LowerPriority", Backfill: true, BackfillDepth: 3, OrderByDebt: true, OrderByUsage: true,
		TopologyAware: true, Semantics: "kueue", HalfLife: 3600}
	tr := &trace.Trace{Jobs: []trace.Job{job("a", "q1", 0, 10, 1, 0), job("b", "q2", 0, 10, 1, 0)}}
	cfg, err := ParseConfig("c.json", []byte(`{"resources": ["gpu"], "flavors": [{"name": "f"}], "cohorts": [{"name": "c"}],
		"queues": [{"name": "q1", "cohort": "c", "quota": {"f": {"gpu": {"nominal": 8}}}}, {"name": "q2", "cohort": "c", "quota": {"f": {"gpu": {"nominal": 8}}}}],
		"history": {"halfLife": 600}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Config{nil, cfg} {
		o := tiny(2)
		o.Config = c
		r, err := newRun(tr, p, o)
		if err != nil {
			t.Fatal(err)
		}
		b := r.st.Load().Builder()
		if opt := b.Options; opt.BackfillDepth != 3 || !opt.OrderByDebt || !opt.OrderByUsage || opt.Backfill == nil || !*opt.Backfill || opt.Semantics != "kueue" {
			t.Fatalf("config %v: options %+v", c != nil, opt)
		}
		for _, q := range b.Queues {
			if q.Preemption.ReclaimWithinCohort != "LowerPriority" || q.Preemption.WithinQueue != "LowerPriority" || q.Cohort == "" {
				t.Fatalf("config %v: queue %s: %+v in cohort %q", c != nil, q.Name, q.Preemption, q.Cohort)
			}
		}
		if b.History.HalfLife != 3600 {
			t.Fatalf("config %v: half-life %d, want the policy's 3600", c != nil, b.History.HalfLife)
		}
	}
	for _, pol := range []Policy{ConfigPolicy, {Name: "overlay", Borrowing: true}} {
		o := tiny(2)
		o.Config = cfg
		r, err := newRun(tr, pol, o)
		if err != nil {
			t.Fatal(err)
		}
		if h := r.st.Load().Builder().History.HalfLife; h != 600 {
			t.Fatalf("policy %s: half-life %d, want the configuration's 600", pol.Name, h)
		}
	}
}

// TestKueueTAS: the kueue-tas baseline is Kueue's semantics with pods
// placed at admission.
func TestKueueTAS(t *testing.T) {
	p, ok := PolicyByName("kueue-tas")
	if !ok {
		t.Fatal("no kueue-tas policy")
	}
	tr := &trace.Trace{Jobs: []trace.Job{job("a", "q", 0, 10, 16, 0)}}
	r, err := newRun(tr, p, tiny(4))
	if err != nil {
		t.Fatal(err)
	}
	o := r.st.Load().Builder().Options
	if o.Semantics != "kueue" || o.TopologyAware == nil || !*o.TopologyAware || !r.topo || r.level != "rack" {
		t.Fatalf("options %+v, topology-aware %v, level %q", o, r.topo, r.level)
	}
	if w := r.workload(&r.jobs[0]); w.PodSets[0].Topology.Preferred != "rack" {
		t.Fatalf("a gang's topology %+v", w.PodSets[0].Topology)
	}
}

// TestConfigFlavorByLabels: a configuration without nodes whose flavor
// selects its nodes by labels and taints them runs on nodes made with
// those labels and taints; the flavor's own toleration lets its jobs on.
func TestConfigFlavorByLabels(t *testing.T) {
	c, err := ParseConfig("labelled.json", []byte(`{"resources": ["gpu"],
		"flavors": [{"name": "h100", "nodeLabels": {"gpu": "h100"}, "nodeTaints": [{"key": "gpu", "value": "h100", "effect": "NoSchedule"}],
			"tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]}],
		"queues": [{"name": "q", "quota": {"h100": {"gpu": {"nominal": 16}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tr := &trace.Trace{Jobs: []trace.Job{job("j1", "q", 0, 100, 8, 0), job("j2", "q", 0, 100, 8, 0)}}
	o := tiny(2)
	o.Config = c
	r := runTwice(t, tr, ConfigPolicy, o)
	if r.Completed != 2 || r.Rejected != 0 {
		t.Fatalf("completed %d, rejected %d of 2", r.Completed, r.Rejected)
	}
}
