package allot_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
)

func stringsCluster(t *testing.T, q allot.Queue) *allot.Snapshot {
	b := &allot.Builder{Resources: []string{"gpu"}, Levels: []string{"rack"}, Flavors: []allot.Flavor{{Name: "h100"}}, Queues: []allot.Queue{q}}
	for i := 0; i < 4; i++ {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: "h100", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func stringsQueue() allot.Queue {
	return allot.Queue{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "h100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 32}}}}}
}

func stringsRequest(id, queue string) allot.Request {
	return allot.Request{ID: id, Queue: queue, PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 1}}}}
}

// DecideInto's Message and trail details view d's text buffer, which the
// next DecideInto on d rewrites: a decision kept the documented way, by
// Clone, keeps its text. Reproduction:
// ../shared/repro/commit_caps_and_decideinto_test.go.
func TestProbeDecideIntoMutatesStrings(t *testing.T) {
	s := stringsCluster(t, stringsQueue())
	var d allot.Decision
	allot.DecideInto(s, stringsRequest("a", "nope"), &d)
	kept := d.Clone()
	was := string([]byte(d.Message))
	var details []string
	for _, c := range d.Trail {
		details = append(details, string([]byte(c.Detail)))
	}
	allot.DecideInto(s, stringsRequest("b", "zzzz"), &d)
	if kept.Message != was {
		t.Errorf("a string returned by DecideInto changed: %q -> %q", was, kept.Message)
	}
	for i, c := range kept.Trail {
		if c.Detail != details[i] {
			t.Errorf("trail check %d of a cloned decision changed: %q -> %q", i, details[i], c.Detail)
		}
	}
}

// Decide's strings are its own: later decisions, which reuse Decide's
// scratch memory, leave them as they were.
func TestDecideStringsOutliveLaterDecisions(t *testing.T) {
	s := stringsCluster(t, stringsQueue())
	first := allot.Decide(s, stringsRequest("a", "nope"))
	msg, detail := string([]byte(first.Message)), string([]byte(first.Trail[len(first.Trail)-1].Detail))
	for _, q := range []string{"zzzz", "q", "other"} {
		allot.Decide(s, stringsRequest("b", q))
	}
	if first.Message != msg || first.Trail[len(first.Trail)-1].Detail != detail {
		t.Errorf("a decision's text changed with later decisions: %q -> %q, %q -> %q",
			msg, first.Message, detail, first.Trail[len(first.Trail)-1].Detail)
	}
}

// A clone is the decision: it renders the same and commits.
func TestDecisionCloneCommits(t *testing.T) {
	s := stringsCluster(t, stringsQueue())
	var d allot.Decision
	allot.DecideInto(s, stringsRequest("a", "q"), &d)
	if d.Verdict != allot.VerdictAdmit {
		t.Fatalf("%v: %s", d.Reason, d.Message)
	}
	c := d.Clone()
	want, _ := json.Marshal(&d)
	if got, _ := json.Marshal(&c); !bytes.Equal(got, want) {
		t.Fatalf("clone differs:\n%s\n%s", got, want)
	}
	allot.DecideInto(s, stringsRequest("b", "q"), &d)
	st := allot.NewStore(s)
	if _, err := st.Commit(c); err != nil {
		t.Fatal(err)
	}
	if got := st.Load().RunningIDs(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("running %v after committing the clone of a's admission", got)
	}
}
