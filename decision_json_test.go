package allot_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
)

// travelCluster is three nodes of 8 GPUs of flavor f and one of flavor g,
// in one queue of tenant t that lets a higher priority preempt a lower
// one and has quota to spare: lo1 holds n0, lo2 and hi share n1, and n2 is
// free unless x is given.
func travelCluster(t *testing.T, x bool) *allot.Snapshot {
	t.Helper()
	on := func(id string, prio int32, node string, gpus ...int) allot.Workload {
		return allot.Workload{ID: id, Queue: "q", Tenant: "t", Priority: prio, PodSets: []allot.PodSet{{Name: "w", Count: 1, Flavor: "f",
			PerPod: allot.Resources{"gpu": int64(len(gpus))}, Nodes: []string{node}, GPUIndices: [][]int{gpus}}}}
	}
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "f"}, {Name: "g"}},
		Queues: []allot.Queue{{Name: "q", Tenants: []string{"t"}, Preemption: allot.QueuePreemption{WithinQueue: "LowerPriority"},
			Quota: []allot.FlavorQuota{{Flavor: "f", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 32}}},
				{Flavor: "g", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}}},
		Running: []allot.Workload{on("lo1", 0, "n0", 0, 1, 2, 3, 4, 5, 6, 7), on("lo2", 0, "n1", 0, 1, 2, 3), on("hi", 20, "n1", 4, 5, 6, 7)},
		Now:     1000,
	}
	if x {
		b.Running = append(b.Running, on("x", 30, "n2", 0, 1, 2, 3, 4, 5, 6, 7))
	}
	for i := range 3 {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: "f", Capacity: allot.Resources{"gpu": 8}})
	}
	b.Nodes = append(b.Nodes, allot.Node{Name: "g0", Flavor: "g", Capacity: allot.Resources{"gpu": 8}})
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// travelRequest asks for one pod of 8 GPUs on flavor f.
func travelRequest(id string, prio int32) allot.Request {
	return allot.Request{ID: id, Queue: "q", Tenant: "t", Priority: prio, SubmittedAt: 900,
		PodSets: []allot.PodSet{{Name: "w", Count: 1, Flavors: []string{"f"}, PerPod: allot.Resources{"gpu": 8}}}}
}

// decideAs decides r on s and checks the verdict.
func decideAs(t *testing.T, s *allot.Snapshot, r allot.Request, want allot.Verdict) allot.Decision {
	t.Helper()
	d := allot.Decide(s, r)
	if d.Verdict != want {
		t.Fatalf("test premise: %s is %v %v (%s), want %v", r.ID, d.Verdict, d.Reason, d.Message, want)
	}
	return d
}

// travel sends d through JSON and back.
func travel(t *testing.T, d allot.Decision) allot.Decision {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back allot.Decision
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return back
}

// dumpState renders what a snapshot holds: every running workload with its
// placement, the pending ones, the free GPUs, the evictions and the queue's
// usage. Two stores with the same dump hold the same state.
func dumpState(t *testing.T, s *allot.Snapshot) string {
	t.Helper()
	var running []allot.Workload
	for _, id := range s.RunningIDs() {
		w, _ := s.Running(id)
		running = append(running, w)
	}
	b, err := json.Marshal(struct {
		Running   []allot.Workload
		Pending   []allot.Workload
		Free      int64
		Evictions []allot.Eviction
		Usage     int64
	}{running, s.PendingWorkloads(), s.FreeGPUs(), s.Evictions(), s.Usage("q", "f", "gpu")})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDecisionJSONCarriesTheRequest: the JSON names what was decided, so
// that it stands alone.
func TestDecisionJSONCarriesTheRequest(t *testing.T) {
	d := decideAs(t, travelCluster(t, false), travelRequest("a", 0), allot.VerdictAdmit)
	b, err := json.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Version uint64
		Request allot.Request
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Request.ID != "a" || raw.Request.Tenant != "t" || raw.Request.PodSets[0].PerPod["gpu"] != 8 || raw.Request.SubmittedAt != 900 {
		t.Errorf("the JSON's request: %+v", raw.Request)
	}
	back := travel(t, d)
	if got := back.Request(); got.ID != "a" || got.PodSets[0].Flavors[0] != "f" {
		t.Errorf("the decoded decision's request: %+v", got)
	}
	if again, _ := json.Marshal(back); string(again) != string(b) {
		t.Errorf("a second round trip changes the JSON:\n%s\n%s", b, again)
	}
}

// TestTravelledDecisionCommits: a decision that went through JSON commits
// as the original does, to the same state, an Admit and a Preempt alike,
// on the store it was decided on or on another holding the same cluster.
func TestTravelledDecisionCommits(t *testing.T) {
	for _, c := range []struct {
		name string
		x    bool
		r    allot.Request
		want allot.Verdict
	}{
		{"admit", false, travelRequest("a", 0), allot.VerdictAdmit},
		{"preempt", true, travelRequest("p", 10), allot.VerdictPreempt},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := travelCluster(t, c.x)
			d := decideAs(t, s, c.r, c.want)
			orig, moved := allot.NewStore(s), allot.NewStore(s)
			want, err := orig.Commit(d)
			if err != nil {
				t.Fatal(err)
			}
			got, err := moved.Commit(travel(t, d))
			if err != nil {
				t.Fatalf("the travelled decision: %v", err)
			}
			if a, b := dumpState(t, want), dumpState(t, got); a != b {
				t.Errorf("states differ:\noriginal  %s\ntravelled %s", a, b)
			}
		})
	}
}

// TestTravelledDecisionIsStale: a travelled decision is checked as one made
// on an older version, whatever its version says, as versions of another
// store are not this one's. One whose room is still free commits after the
// store moved on; one made on another store's version of the same number
// is checked against this store's: a placement taken here is refused, and
// so is a Preempt whose room is free here.
func TestTravelledDecisionIsStale(t *testing.T) {
	s := travelCluster(t, false)
	d := decideAs(t, s, travelRequest("a", 0), allot.VerdictAdmit)
	moved := allot.NewStore(s)
	if _, err := moved.Apply(allot.AdvanceTime{Seconds: 60}); err != nil {
		t.Fatal(err)
	}
	if _, err := moved.Commit(travel(t, d)); err != nil {
		t.Fatalf("a travelled decision whose room is free: %v", err)
	}

	// Two stores at version 1: in one, b took n2; in the other a workload
	// was submitted and n2 is free.
	taken, free := allot.NewStore(s), allot.NewStore(s)
	if _, err := taken.Commit(decideAs(t, s, travelRequest("b", 15), allot.VerdictAdmit)); err != nil {
		t.Fatal(err)
	}
	if _, err := free.Apply(allot.Submit{Workload: allot.Workload{ID: "z", Queue: "q", Tenant: "t",
		PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 1}}}}}); err != nil {
		t.Fatal(err)
	}
	onFree := decideAs(t, free.Load(), travelRequest("c", 0), allot.VerdictAdmit)
	onTaken := decideAs(t, taken.Load(), travelRequest("p", 10), allot.VerdictPreempt)
	if onFree.Version != 1 || onTaken.Version != 1 || taken.Load().Version() != 1 || free.Load().Version() != 1 {
		t.Fatalf("test premise: versions %d and %d", onFree.Version, onTaken.Version)
	}
	var ce *allot.ConflictError
	if _, err := taken.Commit(travel(t, onFree)); !errors.As(err, &ce) || !strings.Contains(ce.Detail, `of node "n2" are no longer free`) {
		t.Errorf("an Admit placed on what this store's version 1 holds: %v", err)
	}
	if _, err := free.Commit(travel(t, onTaken)); !errors.As(err, &ce) || !strings.Contains(ce.Detail, `fits now without evicting "lo1"`) {
		t.Errorf("a Preempt whose room is free in this store's version 1: %v", err)
	}
	if n := free.Load().NumEvictions(); n != 0 {
		t.Errorf("%d evictions", n)
	}
}

// TestTamperedDecisionRefused changes a travelled decision in each way it
// could be changed on the way and checks that Commit refuses it, with a
// conflict or an invalid-value error, and leaves the store as it was.
func TestTamperedDecisionRefused(t *testing.T) {
	admit := func(t *testing.T) (*allot.Store, allot.Decision) {
		s := travelCluster(t, false)
		return allot.NewStore(s), travel(t, decideAs(t, s, travelRequest("a", 0), allot.VerdictAdmit))
	}
	preempt := func(t *testing.T) (*allot.Store, allot.Decision) {
		s := travelCluster(t, true)
		d := travel(t, decideAs(t, s, travelRequest("p", 10), allot.VerdictPreempt))
		if len(d.Victims) != 1 || d.Victims[0].ID != "lo1" {
			t.Fatalf("test premise: victims %+v", d.Victims)
		}
		return allot.NewStore(s), d
	}
	// request rewrites the request inside the decision's JSON.
	request := func(t *testing.T, d allot.Decision, fn func(r *allot.Request)) allot.Decision {
		r := d.Request()
		r.PodSets = append([]allot.PodSet(nil), r.PodSets...)
		fn(&r)
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m["request"], err = json.Marshal(r); err != nil {
			t.Fatal(err)
		}
		if b, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		var out allot.Decision
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	hiVictim := allot.Victim{ID: "hi", Queue: "q", Priority: 20, Reason: "InClusterQueue", Preemptor: "p"}
	lo2Victim := allot.Victim{ID: "lo2", Queue: "q", Reason: "InClusterQueue", Preemptor: "p"}
	for _, c := range []struct {
		name   string
		start  func(*testing.T) (*allot.Store, allot.Decision)
		tamper func(*testing.T, *allot.Decision)
		want   error
		detail string // a ConflictError's detail contains it
	}{
		{"placement on a full node", admit, func(_ *testing.T, d *allot.Decision) { d.Placement[0].Node = "n1" },
			allot.ErrConflict, `GPUs [0 1 2 3 4 5 6 7] of node "n1" are no longer free`},
		{"placement on a node of another flavor", admit, func(_ *testing.T, d *allot.Decision) { d.Placement[0].Node = "g0" },
			allot.ErrInvalid, ""},
		{"placement on an unknown node", admit, func(_ *testing.T, d *allot.Decision) { d.Placement[0].Node = "nowhere" },
			allot.ErrInvalid, ""},
		{"fewer GPUs", admit, func(_ *testing.T, d *allot.Decision) { d.Placement[0].GPUs = 0b1111 },
			allot.ErrInvalid, ""},
		{"GPUs beyond the node", admit, func(_ *testing.T, d *allot.Decision) { d.Placement[0].GPUs = 0xff00 },
			allot.ErrInvalid, ""},
		{"another pod index", admit, func(_ *testing.T, d *allot.Decision) { d.Placement[0].Pod = 3 },
			allot.ErrInvalid, ""},
		{"no placement", admit, func(_ *testing.T, d *allot.Decision) { d.Placement = nil },
			allot.ErrInvalid, ""},
		{"a pod more", admit, func(_ *testing.T, d *allot.Decision) { d.Placement = append(d.Placement, d.Placement[0]) },
			allot.ErrInvalid, ""},
		{"a flavor the pod set may not use", admit, func(_ *testing.T, d *allot.Decision) { d.Flavors[0].Flavor = "g" },
			allot.ErrInvalid, ""},
		{"an unknown flavor", admit, func(_ *testing.T, d *allot.Decision) { d.Flavors[0].Flavor = "h" },
			allot.ErrInvalid, ""},
		{"another workload", admit, func(_ *testing.T, d *allot.Decision) { d.Workload = "b" },
			allot.ErrInvalid, ""},
		{"another queue", admit, func(_ *testing.T, d *allot.Decision) { d.Queue = "r" },
			allot.ErrInvalid, ""},
		{"an Admit with victims", admit, func(_ *testing.T, d *allot.Decision) { d.Victims = []allot.Victim{hiVictim} },
			allot.ErrInvalid, ""},
		{"a Preempt without victims", admit, func(_ *testing.T, d *allot.Decision) { d.Verdict = allot.VerdictPreempt },
			allot.ErrInvalid, ""},
		{"a Queue", admit, func(_ *testing.T, d *allot.Decision) { d.Verdict = allot.VerdictQueue },
			allot.ErrInvalid, ""},
		{"a request of another ID", admit, func(t *testing.T, d *allot.Decision) {
			*d = request(t, *d, func(r *allot.Request) { r.ID = "b" })
		}, allot.ErrInvalid, ""},
		{"a request of fewer GPUs a pod", admit, func(t *testing.T, d *allot.Decision) {
			*d = request(t, *d, func(r *allot.Request) { r.PodSets[0].PerPod = allot.Resources{"gpu": 4} })
		}, allot.ErrInvalid, ""},
		{"a request of more pods", admit, func(t *testing.T, d *allot.Decision) {
			*d = request(t, *d, func(r *allot.Request) { r.PodSets[0].Count = 2 })
		}, allot.ErrInvalid, ""},
		{"a request of a tenant the queue refuses", admit, func(t *testing.T, d *allot.Decision) {
			*d = request(t, *d, func(r *allot.Request) { r.Tenant = "u" })
		}, allot.ErrConflict, `tenant "u" may no longer submit`},
		{"an invalid request", admit, func(t *testing.T, d *allot.Decision) {
			*d = request(t, *d, func(r *allot.Request) { r.PodSets[0].Count = -1 })
		}, allot.ErrInvalid, ""},
		{"no request", admit, func(t *testing.T, d *allot.Decision) {
			b, _ := json.Marshal(d)
			var m map[string]json.RawMessage
			_ = json.Unmarshal(b, &m)
			delete(m, "request")
			b, _ = json.Marshal(m)
			*d = allot.Decision{}
			if err := json.Unmarshal(b, d); err != nil {
				t.Fatal(err)
			}
		}, allot.ErrInvalid, ""},
		{"a victim the policy spares", preempt, func(_ *testing.T, d *allot.Decision) {
			d.Victims = []allot.Victim{hiVictim}
			d.Placement[0].Node = "n1"
		}, allot.ErrConflict, `deciding again evicts "lo1", which the decision does not`},
		{"a victim more", preempt, func(_ *testing.T, d *allot.Decision) {
			d.Victims = append(d.Victims, lo2Victim)
		}, allot.ErrConflict, `evicting "lo2" is no longer needed`},
		{"a victim admitted at another time", preempt, func(_ *testing.T, d *allot.Decision) {
			d.Victims[0].AdmittedAt = 999
		}, allot.ErrConflict, `victim "lo1" was admitted again since the decision`},
		{"victims out of order", preempt, func(_ *testing.T, d *allot.Decision) {
			d.Victims = []allot.Victim{lo2Victim, d.Victims[0]}
		}, allot.ErrInvalid, ""},
		{"a victim that does not run", preempt, func(_ *testing.T, d *allot.Decision) {
			d.Victims[0].ID = "ghost"
		}, allot.ErrConflict, `victim "ghost" no longer runs`},
		{"its own victim", preempt, func(_ *testing.T, d *allot.Decision) {
			d.Victims[0].ID = "p"
		}, allot.ErrInvalid, ""},
		{"a Preempt turned Admit", preempt, func(_ *testing.T, d *allot.Decision) {
			d.Verdict, d.Victims = allot.VerdictAdmit, nil
		}, allot.ErrConflict, `GPUs [0 1 2 3 4 5 6 7] of node "n0" are no longer free`},
		{"a preemptor of lower priority", preempt, func(t *testing.T, d *allot.Decision) {
			*d = request(t, *d, func(r *allot.Request) { r.Priority = 0 })
		}, allot.ErrConflict, "deciding again gives Queue"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, d := c.start(t)
			c.tamper(t, &d)
			before := dumpState(t, st.Load())
			commitRefused(t, st, d, c.want)
			_, err := st.Commit(d)
			var ce *allot.ConflictError
			if c.detail != "" && (!errors.As(err, &ce) || !strings.Contains(ce.Detail, c.detail)) {
				t.Errorf("got %v, want a conflict saying %q", err, c.detail)
			}
			if after := dumpState(t, st.Load()); after != before {
				t.Errorf("a refused commit changed the store:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}
