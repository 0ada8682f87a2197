package allot_test

// Reproduction of a defect (../shared/repro/usage_saturation_test.go): the
// Builder accepted running workloads charging more than 2^56.

import (
	"errors"
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
)

// The Builder refuses running workloads whose quota charge passes the
// bound (2^56 then, quota.MaxQuantity now):
// usage saturated, went negative after Finish, and a hard cap was passed.
func TestUsageSaturation(t *testing.T) {
	hard := int64(1 << 56)
	b := allot.Builder{
		Resources: []string{"cpu"},
		Flavors:   []allot.Flavor{{Name: "qo"}}, // quota-only: no nodes
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "qo",
			Resources: []allot.ResourceQuota{{Name: "cpu", Nominal: 1 << 56, Hard: &hard}}}}}},
	}
	// 8 running workloads of 1024 pods x 2^50 each: 2^60 each, 2^63 in all.
	for i := range 8 {
		b.Running = append(b.Running, allot.Workload{ID: fmt.Sprintf("r%d", i), Queue: "q",
			PodSets: []allot.PodSet{{Name: "w", Count: 1024, PerPod: allot.Resources{"cpu": 1 << 50}, Flavor: "qo"}}})
	}
	s, err := b.Build()
	if err != nil {
		var be *allot.BuildError
		if !errors.As(err, &be) || !errors.Is(err, allot.ErrInvalid) {
			t.Fatalf("Build refused with %T %v, want a *BuildError wrapping ErrInvalid", err, err)
		}
		t.Logf("Build refused: %v", err)
		return
	}
	st := allot.NewStore(s)
	t.Logf("built: Usage=%d (true total 2^63 = 9223372036854775808 does not fit int64; hard cap %d)", s.Usage("q", "qo", "cpu"), hard)
	st.Apply(allot.Finish{ID: "r0"})
	t.Logf("after Finish r0: Usage=%d, true 7*2^60 = %d", st.Load().Usage("q", "qo", "cpu"), int64(7)<<60)
	for i := 1; i < 8; i++ {
		st.Apply(allot.Finish{ID: fmt.Sprintf("r%d", i)})
	}
	u := st.Load().Usage("q", "qo", "cpu")
	t.Logf("after finishing all: Usage=%d (want 0), running=%v", u, st.Load().RunningIDs())
	d := allot.Decide(st.Load(), allot.Request{ID: "a", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"cpu": hard}}}})
	st.Commit(d)
	d2 := allot.Decide(st.Load(), allot.Request{ID: "b", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 1, PerPod: allot.Resources{"cpu": 2}}}})
	_, err = st.Commit(d2)
	t.Logf("admit cpu=hard (%s), then cpu=2 (%s, commit err %v): running=%v, true usage %d vs hard cap %d; Usage() says %d",
		d.Reason, d2.Reason, err, st.Load().RunningIDs(), hard+2, hard, st.Load().Usage("q", "qo", "cpu"))
	if u != 0 {
		t.Errorf("usage %d after every workload finished", u)
	}
}
