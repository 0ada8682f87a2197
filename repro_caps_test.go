package allot_test

// Reproduction of a defect (../shared/repro/commit_caps_and_decideinto_test.go):
// Commit did not re-check the per-user cap.

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
)

func capCluster(t *testing.T, q allot.Queue, opts ...allot.Options) *allot.Snapshot {
	t.Helper()
	b := &allot.Builder{Resources: []string{"gpu"}, Levels: []string{"rack"}, Flavors: []allot.Flavor{{Name: "h100"}}, Queues: []allot.Queue{q}}
	if len(opts) > 0 {
		b.Options = opts[0]
	}
	for i := 0; i < 4; i++ {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: "h100", Labels: map[string]string{"rack": "r0"}, Capacity: allot.Resources{"gpu": 8}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Two decisions made on one version, each within the per-user cap alone,
// committed one after the other: the second is re-validated on the newer
// version and must meet the per-user cap.
func TestProbeCommitRechecksUserCap(t *testing.T) {
	s := capCluster(t, allot.Queue{Name: "q", UserCap: allot.Resources{"gpu": 8},
		Quota: []allot.FlavorQuota{{Flavor: "h100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 32}}}}},
		allot.Options{TopologyAware: new(bool)})
	st := allot.NewStore(s)
	snap := st.Load()
	mk := func(id string) allot.Request {
		return allot.Request{ID: id, Queue: "q", User: "u", PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"gpu": 8}}}}
	}
	d1, d2 := allot.Decide(snap, mk("a")), allot.Decide(snap, mk("b"))
	if _, err := st.Commit(d1); err != nil {
		t.Fatal(err)
	}
	_, err := st.Commit(d2)
	fresh := allot.Decide(st.Load(), mk("c"))
	t.Logf("second commit err=%v; now: %v: %s", err, fresh.Reason, fresh.Message)
	if err == nil {
		t.Errorf("Commit admitted a stale decision past the per-user cap")
	}
}
