package allot_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench"
	"github.com/allot-sched/allot/quota"
)

// tib4 is the memory of the largest training nodes, in bytes.
const tib4 = int64(4) << 40

// TestLargestClusterBuildsAndDecides: 102,400 nodes of 4 TiB hold 4.5 ×
// 10^17 bytes, past the old bound of 2^56; the queue whose nominal quota is
// all of it builds, admits requests for memory, commits them, and refuses
// one byte more than the cluster holds with the exact figure.
func TestLargestClusterBuildsAndDecides(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 102,400 nodes")
	}
	const n = 102_400
	b := bench.Cluster(n, false)
	for i := range b.Nodes {
		b.Nodes[i].Capacity["memory"] = tib4
	}
	total := int64(n) * tib4
	for j := range b.Queues[0].Quota[0].Resources {
		if rq := &b.Queues[0].Quota[0].Resources[j]; rq.Name == "memory" {
			rq.Nominal = total
		}
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := allot.NewStore(s)
	req := func(id string, pods int32, mem int64) allot.Request {
		return allot.Request{ID: id, Queue: "train", PodSets: []allot.PodSet{{Name: "w", Count: pods,
			PerPod: allot.Resources{"gpu": 8, "memory": mem}, Topology: allot.TopologyRequest{Preferred: "block"}}}}
	}
	// Half the cluster, then the other half: every byte of it.
	for _, id := range []string{"first", "second"} {
		d := allot.Decide(st.Load(), req(id, n/2, tib4))
		if d.Verdict != allot.VerdictAdmit {
			t.Fatalf("%s: %v %v %s", id, d.Verdict, d.Reason, d.Message)
		}
		if _, err := st.Commit(d); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	if u := st.Load().Usage("train", "h100", "memory"); u != total {
		t.Fatalf("usage %d, want %d", u, total)
	}
	if _, err := st.Apply(allot.Finish{ID: "first"}); err != nil {
		t.Fatal(err)
	}
	if u := st.Load().Usage("train", "h100", "memory"); u != total/2 {
		t.Fatalf("usage after finishing half %d, want %d", u, total/2)
	}
	// One byte more than the whole cluster can never fit; the message
	// carries both figures.
	d := allot.Decide(s, allot.Request{ID: "more", Queue: "train", PodSets: []allot.PodSet{{Name: "w", Count: 1,
		PerPod: allot.Resources{"memory": total + 1}}}})
	if d.Verdict != allot.VerdictReject || d.Reason != allot.NeverFits {
		t.Fatalf("one byte more: %v %v %s", d.Verdict, d.Reason, d.Message)
	}
	// 102,400 × 4 TiB is 400 PiB exactly, as the quantity format names it.
	for _, want := range []string{strconv.FormatInt(total+1, 10), "could ever get: 400Pi "} {
		if !strings.Contains(d.Message, want) {
			t.Errorf("message %q does not carry %s", d.Message, want)
		}
	}
}

// TestBoundRefusesPastItByField: every quantity a description or a request
// carries may be quota.MaxQuantity, and one more is refused, naming the
// field.
func TestBoundRefusesPastItByField(t *testing.T) {
	const bound = quota.MaxQuantity
	p := func(v int64) *int64 { return &v }
	builder := func(node, nominal int64, hard, borrowing *int64, running int64) allot.Builder {
		b := allot.Builder{
			Resources: []string{"gpu", "memory"},
			Flavors:   []allot.Flavor{{Name: "h100"}},
			Cohorts:   []allot.Cohort{{Name: "c"}},
			Queues: []allot.Queue{{Name: "q", Cohort: "c", Quota: []allot.FlavorQuota{{Flavor: "h100", Resources: []allot.ResourceQuota{
				{Name: "gpu", Nominal: 8}, {Name: "memory", Nominal: nominal, Hard: hard, BorrowingLimit: borrowing}}}}}},
			Nodes: []allot.Node{{Name: "n0", Flavor: "h100", Capacity: allot.Resources{"gpu": 8, "memory": node}}},
		}
		if running > 0 {
			b.Running = []allot.Workload{{ID: "r", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 1, Flavor: "h100",
				PerPod: allot.Resources{"memory": running}}}}}
		}
		return b
	}
	for _, c := range []struct {
		name string
		b    allot.Builder
		path string // "" builds
	}{
		{name: "all at the bound", b: builder(bound, bound, p(bound), p(bound), bound)},
		{name: "node capacity", b: builder(bound+1, bound, nil, nil, 0), path: "nodes[0].capacity.memory"},
		{name: "nominal quota", b: builder(bound, bound+1, nil, nil, 0), path: "queues[0].quota[0].resources[1].nominal"},
		{name: "hard cap", b: builder(bound, bound, p(bound+1), nil, 0), path: "queues[0].quota[0].resources[1].hard"},
		{name: "borrowing limit", b: builder(bound, bound, nil, p(bound+1), 0), path: "queues[0].quota[0].resources[1].borrowingLimit"},
		{name: "running workload", b: builder(bound, bound, nil, nil, bound+1), path: "running[0].podSets[0].perPod.memory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := c.b.Build()
			var be *allot.BuildError
			switch {
			case c.path == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.path == "":
				if u := s.Usage("q", "h100", "memory"); u != bound {
					t.Errorf("usage %d, want %d", u, bound)
				}
			case !errors.As(err, &be) || !errors.Is(err, allot.ErrInvalid) || be.Path != c.path:
				t.Fatalf("got %v, want a *BuildError wrapping ErrInvalid at %s", err, c.path)
			}
		})
	}
}
