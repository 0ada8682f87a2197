package allot_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
)

// stateOf renders everything a caller can read of s, and the decisions it
// gives probes, as indented JSON: two snapshots that render alike answer
// alike. Node by node it reads the description and the status; queue by
// queue and cohort by cohort the configuration and the status (usage,
// quota in force, available); every running workload with its placement,
// every pending one, the admission order, the fragmentation and the
// fairness figures.
func stateOf(t testing.TB, s *allot.Snapshot, probes []allot.Request) string {
	t.Helper()
	type queue struct {
		Status     allot.QueueStatus
		Config     allot.Queue
		Count      int
		Debt, Used float64
	}
	type cohort struct {
		Status allot.CohortStatus
		Config allot.Cohort
	}
	type node struct {
		Desc   allot.Node
		Status allot.NodeStatus
	}
	out := struct {
		Version       uint64
		Now           int64
		Resources     []string
		Levels        []string
		Flavors       []allot.Flavor
		Nodes         []node
		Queues        []queue
		Cohorts       []cohort
		Running       []allot.Workload
		Pending       []allot.Workload
		FreeGPUs      int64
		Fragmentation any
		Order         []string
		Decisions     []allot.Decision
	}{Version: s.Version(), Now: s.Now(), Resources: s.Resources(), Levels: s.Levels(), Flavors: s.Flavors(),
		Pending: s.PendingWorkloads(), FreeGPUs: s.FreeGPUs(), Fragmentation: s.Fragmentation(), Order: allot.Order(s)}
	for _, n := range s.Nodes() {
		st, ok := s.NodeStatus(n.Name)
		if !ok {
			t.Fatalf("Nodes lists %q, NodeStatus knows no such node", n.Name)
		}
		if one, _ := s.Node(n.Name); !jsonEqual(t, one, n) {
			t.Fatalf("Node(%q) and Nodes differ", n.Name)
		}
		out.Nodes = append(out.Nodes, node{n, st})
	}
	for _, q := range s.Queues() {
		st, ok := s.QueueStatus(q.Name)
		if !ok {
			t.Fatalf("Queues lists %q, QueueStatus knows no such queue", q.Name)
		}
		out.Queues = append(out.Queues, queue{st, q, s.RunningCount(q.Name), s.Debt(q.Name), s.HistoricalUsage(q.Name)})
	}
	for _, c := range s.Cohorts() {
		st, ok := s.CohortStatus(c.Name)
		if !ok {
			t.Fatalf("Cohorts lists %q, CohortStatus knows no such cohort", c.Name)
		}
		out.Cohorts = append(out.Cohorts, cohort{st, c})
	}
	for _, id := range s.RunningIDs() {
		w, _ := s.Running(id)
		out.Running = append(out.Running, w)
	}
	for _, r := range probes {
		out.Decisions = append(out.Decisions, allot.Decide(s, r))
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jsonEqual(t testing.TB, a, b any) bool {
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

// firstDiff shows where two renderings part, a few lines either side.
func firstDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(x) || i < len(y); i++ {
		if i < len(x) && i < len(y) && x[i] == y[i] {
			continue
		}
		from, to := max(0, i-6), i+4
		var sb strings.Builder
		for k := from; k < to; k++ {
			l, r := "", ""
			if k < len(x) {
				l = x[k]
			}
			if k < len(y) {
				r = y[k]
			}
			mark := "  "
			if l != r {
				mark = "≠ "
			}
			sb.WriteString(mark + l + "   |   " + r + "\n")
		}
		return sb.String()
	}
	return "(no difference)"
}

// sameState fails the test when got and want render differently.
func sameState(t testing.TB, label string, got, want *allot.Snapshot, probes []allot.Request) {
	t.Helper()
	if a, b := stateOf(t, got, probes), stateOf(t, want, probes); a != b {
		t.Fatalf("%s: the snapshots differ (left: got, right: want):\n%s", label, firstDiff(a, b))
	}
}
