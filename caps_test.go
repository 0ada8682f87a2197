package allot_test

import (
	"errors"
	"testing"

	"github.com/allot-sched/allot"
)

// TestCapsMessages pins Decide's caps messages, byte for byte, for each way
// a request breaks a cap.
func TestCapsMessages(t *testing.T) {
	q := allot.Queue{Name: "q", UserCap: allot.Resources{"gpu": 8}, NonPreemptibleCap: allot.Resources{"gpu": 6},
		Quota: []allot.FlavorQuota{{Flavor: "h100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 32}}}}}
	never := allot.PreemptionSpec{Class: allot.Never}
	req := func(id, user string, gpus int64, p allot.PreemptionSpec) allot.Request {
		return allot.Request{ID: id, Queue: "q", User: user, Preemption: p, PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": gpus}}}}
	}
	for _, c := range []struct {
		name   string
		before []allot.Request
		r      allot.Request
		reason allot.Reason
		msg    string
	}{
		{name: "user cap alone", r: req("a", "u", 16, allot.PreemptionSpec{}), reason: allot.ExceedsUserCap,
			msg: `user "u" asks for 16 gpu, more than queue "q"'s per-user cap of 8`},
		{name: "user cap with usage", before: []allot.Request{req("a", "u", 8, allot.PreemptionSpec{})}, r: req("b", "u", 4, allot.PreemptionSpec{}),
			reason: allot.UserCapReached, msg: `user "u" holds 8/8 gpu of queue "q"'s per-user cap, the request needs 4`},
		{name: "never cap alone", r: req("a", "u", 7, never), reason: allot.NeverFits,
			msg: `a never-preemptible request of 7 gpu exceeds queue "q"'s non-preemptible cap of 6`},
		{name: "never cap with usage", before: []allot.Request{req("a", "u", 4, never)}, r: req("b", "v", 4, never),
			reason: allot.NonPreemptibleCapReached, msg: `never-preemptible work of queue "q" holds 4/6 gpu of its cap, the request needs 4`},
		{name: "within", r: req("a", "u", 4, never), reason: allot.Fits},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := allot.NewStore(capCluster(t, q, allot.Options{TopologyAware: new(bool)}))
			for _, b := range c.before {
				if _, err := st.Commit(allot.Decide(st.Load(), b)); err != nil {
					t.Fatal(err)
				}
			}
			d := allot.Decide(st.Load(), c.r)
			if d.Reason != c.reason || c.msg != "" && d.Message != c.msg {
				t.Errorf("got %v: %q\nwant %v: %q", d.Reason, d.Message, c.reason, c.msg)
			}
			if c.msg == "" {
				for _, ch := range d.Trail {
					if ch.Stage == allot.StageCaps && (!ch.Passed || ch.Detail != "within the queue's caps") {
						t.Errorf("caps check %+v", ch)
					}
				}
			}
		})
	}
}

// TestCommitRechecksCaps commits two decisions made on one version, each
// within the queue's caps alone: the second, checked again on the newer
// version, breaks a cap and is refused, leaving the store as it was.
func TestCommitRechecksCaps(t *testing.T) {
	q := allot.Queue{Name: "q", UserCap: allot.Resources{"gpu": 8}, NonPreemptibleCap: allot.Resources{"gpu": 12},
		Quota: []allot.FlavorQuota{{Flavor: "h100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 32}}}}}
	req := func(id, user string, class allot.PreemptionClass) allot.Request {
		return allot.Request{ID: id, Queue: "q", User: user, Preemption: allot.PreemptionSpec{Class: class},
			PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 8}}}}
	}
	for _, c := range []struct {
		name   string
		a, b   allot.Request
		detail string
	}{
		{name: "per-user cap", a: req("a", "u", 0), b: req("b", "u", 0),
			detail: `caps: UserCapReached: user "u" holds 8/8 gpu of queue "q"'s per-user cap, the request needs 8`},
		{name: "non-preemptible cap", a: req("a", "u", allot.Never), b: req("b", "v", allot.Never),
			detail: `caps: NonPreemptibleCapReached: never-preemptible work of queue "q" holds 8/12 gpu of its cap, the request needs 8`},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := allot.NewStore(capCluster(t, q, allot.Options{TopologyAware: new(bool)}))
			snap := st.Load()
			da, db := allot.Decide(snap, c.a), allot.Decide(snap, c.b)
			if da.Verdict != allot.VerdictAdmit || db.Verdict != allot.VerdictAdmit {
				t.Fatalf("decisions %v, %v", da.Reason, db.Reason)
			}
			if _, err := st.Commit(da); err != nil {
				t.Fatal(err)
			}
			before := st.Load()
			_, err := st.Commit(db)
			var ce *allot.ConflictError
			if !errors.As(err, &ce) || ce.Detail != c.detail {
				t.Fatalf("second commit: %v, want a conflict %q", err, c.detail)
			}
			if st.Load() != before || len(before.RunningIDs()) != 1 {
				t.Errorf("a refused commit changed the store: running %v", st.Load().RunningIDs())
			}
		})
	}
}
