package allot_test

import (
	"strings"
	"testing"

	"github.com/allot-sched/allot"
)

// trailOf renders a trail as its stages, each marked + (passed) or -
// (failed).
func trailOf(d *allot.Decision) string {
	var parts []string
	for _, c := range d.Trail {
		mark := "-"
		if c.Passed {
			mark = "+"
		}
		parts = append(parts, c.Stage.String()+mark)
	}
	return strings.Join(parts, " ")
}

// A decision that does not admit lists the checks that passed before the
// one that failed: a request whose quota holds and whose nodes do not shows
// the quota check passed, with the figures the admission would have had.
func TestTrailListsPassedChecks(t *testing.T) {
	gpus := func(n int64) allot.Resources { return allot.Resources{"gpu": n} }
	one := func(id string, n int64) allot.Request {
		return allot.Request{ID: id, Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: gpus(n)}}}
	}
	cases := []struct {
		name    string
		world   func(b *allot.Builder)
		req     allot.Request
		reason  allot.Reason
		trail   string
		quota   string // the passed quota check's detail, when there is one
		message string // a part of the message
		nominal int64  // the queue's nominal gpu quota; zero means 32
	}{
		{
			name:   "insufficient capacity",
			world:  func(b *allot.Builder) { b.Running = []allot.Workload{running("a", "n0", 6), running("b", "n1", 6)} },
			req:    one("r", 8),
			reason: allot.InsufficientCapacity,
			trail:  "validate+ authorize+ hold+ quota+ placement-",
			quota:  "h100: gpu 20/32 of nominal after admission",
		},
		{
			name:    "wrong shape",
			world:   func(b *allot.Builder) { b.Running = []allot.Workload{running("a", "n0", 4), running("b", "n1", 4)} },
			req:     one("r", 8),
			reason:  allot.TopologyUnsatisfiable,
			trail:   "validate+ authorize+ hold+ quota+ placement-",
			quota:   "h100: gpu 16/32 of nominal after admission",
			message: "fits only 0 of 1 pods",
		},
		{
			name: "cooling down",
			world: func(b *allot.Builder) {
				b.Now, b.Nodes[1].CooldownUntil = 100, 200
				b.Running = []allot.Workload{running("a", "n0", 4)}
			},
			req:    one("r", 8),
			reason: allot.Cooldown,
			trail:  "validate+ authorize+ hold+ quota+ placement-",
			quota:  "h100: gpu 12/32 of nominal after admission",
		},
		{
			name:  "two pod sets on one flavor",
			world: func(b *allot.Builder) { b.Running = []allot.Workload{running("a", "n0", 4), running("b", "n1", 2)} },
			req: allot.Request{ID: "r", Queue: "q", PodSets: []allot.PodSet{
				{Name: "launcher", Count: 1, PerPod: gpus(2)}, {Name: "workers", Count: 1, PerPod: gpus(8)}}},
			reason:  allot.TopologyUnsatisfiable,
			trail:   "validate+ authorize+ hold+ quota+ placement-",
			quota:   "h100: gpu 16/32 of nominal after admission", // 6 used, 2 and 8 asked
			message: `pod set "workers"`,
		},
		{
			name: "borrowing",
			world: func(b *allot.Builder) {
				b.Queues[0].Quota[0].Resources[0].Nominal = 4
				b.Queues = append(b.Queues, allot.Queue{Name: "lender", Cohort: "ai", Quota: []allot.FlavorQuota{{Flavor: "h100",
					Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 28}}}}})
				b.Running = []allot.Workload{running("a", "n0", 4), running("b", "n1", 4)}
			},
			req:    one("r", 8),
			reason: allot.TopologyUnsatisfiable,
			trail:  "validate+ authorize+ hold+ quota+ placement-",
			quota:  `h100: gpu 16/4 of nominal after admission, borrowing from cohort "ai" (borrowing level 1)`,
		},
		{
			name: "victims for the nodes",
			world: func(b *allot.Builder) {
				b.Queues[0].Preemption.WithinQueue = "LowerPriority"
				b.Running = []allot.Workload{running("a", "n0", 4), running("b", "n1", 4)}
			},
			req:    allot.Request{ID: "r", Queue: "q", Priority: 10, PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: gpus(8)}}},
			reason: allot.PriorityPreemption,
			trail:  "validate+ authorize+ hold+ quota+ placement- preemption+",
			quota:  "h100: gpu 16/32 of nominal after admission",
		},
		{
			name:    "quota in the way",
			world:   func(b *allot.Builder) { b.Running = []allot.Workload{running("a", "n0", 8), running("b", "n1", 2)} },
			req:     one("r", 8),
			reason:  allot.QuotaExhausted,
			trail:   "validate+ authorize+ hold+ quota-",
			nominal: 16,
		},
		{
			name:   "held",
			world:  func(b *allot.Builder) { b.Queues[0].Hold = true },
			req:    one("r", 1),
			reason: allot.QueueHeld,
			trail:  "validate+ authorize+ hold-",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := baseBuilder()
			b.Queues[0].Quota[0].Resources[0].Nominal = 32
			if c.nominal != 0 {
				b.Queues[0].Quota[0].Resources[0].Nominal = c.nominal
			}
			c.world(&b)
			s, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			d := allot.Decide(s, c.req)
			if d.Reason != c.reason {
				t.Fatalf("%v %v: %s", d.Verdict, d.Reason, d.Message)
			}
			if got := trailOf(&d); got != c.trail {
				t.Errorf("trail %s, want %s", got, c.trail)
			}
			for _, ch := range d.Trail {
				if ch.Stage == allot.StageQuota && ch.Passed && ch.Detail != c.quota {
					t.Errorf("quota passed with %q, want %q", ch.Detail, c.quota)
				}
			}
			if !strings.Contains(d.Message, c.message) {
				t.Errorf("message %q lacks %q", d.Message, c.message)
			}
		})
	}
}
