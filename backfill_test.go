package allot_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/allot-sched/allot"
)

// backfillWorld is 4 racks of 4 nodes of 8 GPUs, every node busy but the
// last of each rack, each busy node's workload expected to end at its own
// time, a fifth rack of 2 free nodes, and blocked gangs of 4 pods × 8 GPUs
// within a rack, of higher priority than the requests of the tests, with
// a reservation each (never in the small rack).
func backfillWorld(t testing.TB, blocked int) *allot.Snapshot {
	t.Helper()
	return backfillWorldIn(t, blocked, "")
}

// backfillWorldIn is backfillWorld under semantics sem.
func backfillWorldIn(t testing.TB, blocked int, sem string) *allot.Snapshot {
	t.Helper()
	b := allot.Builder{Options: allot.Options{Semantics: sem}, Resources: []string{"gpu"}, Levels: []string{"rack"}, Flavors: []allot.Flavor{{Name: "h100"}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "h100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 1 << 20}}}}}},
		Now:    1000}
	b.Options.BackfillDepth = blocked
	for i := 0; i < 16; i++ {
		name := fmt.Sprintf("n%02d", i)
		b.Nodes = append(b.Nodes, allot.Node{Name: name, Flavor: "h100", Labels: map[string]string{"rack": fmt.Sprintf("r%d", i/4)}, Capacity: allot.Resources{"gpu": 8}})
		if i%4 == 3 {
			continue
		}
		b.Running = append(b.Running, allot.Workload{ID: "run-" + name, Queue: "q", ExpectedRuntime: 1000 + 60*int64(1+i*7%13),
			PodSets: []allot.PodSet{{Name: "m", Count: 1, Flavor: "h100", Nodes: []string{name}, PerPod: allot.Resources{"gpu": 8}}}})
	}
	for i := 16; i < 18; i++ {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%02d", i), Flavor: "h100", Labels: map[string]string{"rack": "r4"}, Capacity: allot.Resources{"gpu": 8}})
	}
	for i := 0; i < blocked; i++ {
		b.Pending = append(b.Pending, allot.Workload{ID: fmt.Sprintf("blocked-%d", i), Queue: "q", Priority: 10, SubmittedAt: int64(i),
			PodSets: []allot.PodSet{{Name: "w", Count: 4, PerPod: allot.Resources{"gpu": 8}, Topology: allot.TopologyRequest{Required: "rack"}}}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func backfillRequest(id string, runtime int64) allot.Request {
	return allot.Request{ID: id, Queue: "q", ExpectedRuntime: runtime, PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 8}}}}
}

// backfillDetail is the decision's backfill check, "" without one.
func backfillDetail(d *allot.Decision) string {
	for _, c := range d.Trail {
		if c.Stage == allot.StageBackfill {
			return c.Detail
		}
	}
	return ""
}

// Once a snapshot's reservations are planned, the backfill check of a
// decision made into a reused Decision allocates nothing: the plan is read
// without a lock, the reservations ahead of the request without a copy,
// and the request is placed again around them in the decision's scratch
// memory.
// TestBackfillOffInKueueMode: Kueue keeps no reservations, so in
// Kueue-exact mode a long request takes the free node a blocked gang's
// reservation would hold, unless Backfill is set.
func TestBackfillOffInKueueMode(t *testing.T) {
	long := backfillRequest("long", 1<<20)
	long.PodSets[0].Count = 4
	for _, c := range []struct {
		sem  string
		want allot.Verdict
	}{{allot.SemanticsAllot, allot.VerdictQueue}, {allot.SemanticsKueue, allot.VerdictAdmit}} {
		d := allot.Decide(backfillWorldIn(t, 4, c.sem), long)
		if d.Verdict != c.want {
			t.Errorf("semantics %q: %v (%s), want %v", c.sem, d.Verdict, d.Message, c.want)
		}
	}
}

func TestBackfillDecideIntoDoesNotAllocate(t *testing.T) {
	s := backfillWorld(t, 4)
	for _, c := range []struct {
		req  allot.Request
		want string
	}{
		{backfillRequest("early", 30), "takes none of the GPUs reserved for 4 blocked workload(s)"},
		{backfillRequest("around", 0), "placed again, around the GPUs reserved for"},
	} {
		var d allot.Decision
		allot.DecideInto(s, c.req, &d)
		if d.Verdict != allot.VerdictAdmit || !strings.HasPrefix(backfillDetail(&d), c.want) {
			t.Fatalf("%s: %v %v: %s; backfill: %q, want %q", c.req.ID, d.Verdict, d.Reason, d.Message, backfillDetail(&d), c.want)
		}
		if n := testing.AllocsPerRun(100, func() { allot.DecideInto(s, c.req, &d) }); n != 0 {
			t.Errorf("%s: DecideInto with the plan cached allocates %v times", c.req.ID, n)
		}
	}
}

// backfillRequests are requests at every place of the priority order of
// the blocked gangs: each of them, one in between and ones below them all.
func backfillRequests(blocked int) []allot.Request {
	var out []allot.Request
	for i := blocked - 1; i >= 0; i-- {
		g := allot.Request{ID: fmt.Sprintf("blocked-%d", i), Queue: "q", Priority: 10, SubmittedAt: int64(i),
			PodSets: []allot.PodSet{{Name: "w", Count: 4, PerPod: allot.Resources{"gpu": 8}, Topology: allot.TopologyRequest{Required: "rack"}}}}
		out = append(out, g)
	}
	mid := backfillRequest("mid", 0)
	mid.Priority, mid.SubmittedAt = 10, 1
	return append(out, mid, backfillRequest("early", 30), backfillRequest("around", 0), backfillRequest("late", 5000))
}

func decisionJSON(t testing.TB, d allot.Decision) string {
	t.Helper()
	js, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// The plan is extended as far down the priority order as the decisions so
// far needed: whichever order the requests come in, each gets the
// decision it gets alone on a fresh snapshot.
func TestBackfillPlanIndependentOfOrder(t *testing.T) {
	const blocked = 4
	reqs := backfillRequests(blocked)
	alone := make([]string, len(reqs))
	for i, r := range reqs {
		alone[i] = decisionJSON(t, allot.Decide(backfillWorld(t, blocked), r))
	}
	for _, order := range []string{"forward", "reverse"} {
		s := backfillWorld(t, blocked)
		for k := range reqs {
			i := k
			if order == "reverse" {
				i = len(reqs) - 1 - k
			}
			if got := decisionJSON(t, allot.Decide(s, reqs[i])); got != alone[i] {
				t.Errorf("%s order, %s:\n%s\nalone:\n%s", order, reqs[i].ID, got, alone[i])
			}
		}
	}
}

// Decisions racing to plan one snapshot's reservations each get the
// decision they get alone: a planner that loses the race has planned the
// same reservations.
func TestBackfillConcurrentPlanners(t *testing.T) {
	const blocked = 4
	reqs := backfillRequests(blocked)
	alone := make([]string, len(reqs))
	for i, r := range reqs {
		alone[i] = decisionJSON(t, allot.Decide(backfillWorld(t, blocked), r))
	}
	for round := 0; round < 20; round++ {
		s := backfillWorld(t, blocked)
		var wg sync.WaitGroup
		got := make([]string, len(reqs))
		for i := range reqs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var d allot.Decision
				allot.DecideInto(s, reqs[i], &d)
				got[i] = decisionJSON(t, d)
			}()
		}
		wg.Wait()
		for i := range reqs {
			if !bytes.Equal([]byte(got[i]), []byte(alone[i])) {
				t.Fatalf("round %d, %s decided concurrently:\n%s\nalone:\n%s", round, reqs[i].ID, got[i], alone[i])
			}
		}
	}
}

// Every reservation holds its GPUs from now on, so two reservations never
// share a GPU, though the GPUs of each are still busy with workloads that
// will leave: the plan of the next blocked workload must not take GPUs an
// earlier reservation holds once the workload on them leaves.
func TestBackfillReservationsShareNoGPU(t *testing.T) {
	b := allot.Builder{Resources: []string{"gpu"}, Flavors: []allot.Flavor{{Name: "h100"}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "h100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 64}}}}}},
		Now:    100, Options: allot.Options{BackfillDepth: 3}}
	for i, end := range []int64{200, 300} {
		name := fmt.Sprintf("n%d", i)
		b.Nodes = append(b.Nodes, allot.Node{Name: name, Flavor: "h100", Capacity: allot.Resources{"gpu": 8}})
		b.Running = append(b.Running, allot.Workload{ID: "run-" + name, Queue: "q", ExpectedRuntime: end,
			PodSets: []allot.PodSet{{Name: "m", Count: 1, Flavor: "h100", Nodes: []string{name}, PerPod: allot.Resources{"gpu": 8}}}})
	}
	for i := 0; i < 3; i++ {
		b.Pending = append(b.Pending, allot.Workload{ID: fmt.Sprintf("blocked-%d", i), Queue: "q", Priority: 10, SubmittedAt: int64(i),
			PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 8}}}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(s.Reservations(backfillRequest("low", 0)))
	// blocked-2 finds no room: both nodes are reserved for good.
	if want := "[{blocked-0 200 [{ 0 n0 [0 1 2 3 4 5 6 7]}]} {blocked-1 300 [{ 0 n1 [0 1 2 3 4 5 6 7]}]}]"; got != want {
		t.Errorf("reservations\n%s\nwant\n%s", got, want)
	}
	w := backfillWorld(t, 4)
	rs := w.Reservations(backfillRequest("low", 0))
	if len(rs) != 4 {
		t.Fatalf("%d reservations, want 4: %v", len(rs), rs)
	}
	owner := map[string]string{}
	for _, rv := range rs {
		for _, p := range rv.Pods {
			for _, g := range p.GPUs.Indices() {
				key := fmt.Sprintf("%s/%d", p.Node, g)
				if o, ok := owner[key]; ok {
					t.Errorf("GPU %s reserved for both %s and %s", key, o, rv.ID)
				}
				owner[key] = rv.ID
			}
		}
	}
}
