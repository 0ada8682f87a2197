package allot_test

import (
	"testing"

	"github.com/allot-sched/allot"
)

// TestWayIn: the way in WayIn gives for each queue of tenancyBuilder is
// one the queue's rule lets in (a request submitted that way is not
// refused for its namespace or local queue), and the first such by its
// order; a queue nobody may enter has none.
func TestWayIn(t *testing.T) {
	b := tenancyBuilder()
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		queue, tenant, local string
		ok                   bool
	}{
		{"open", "", "", true},
		{"named", "ml", "", true},        // the first declared namespace it names
		{"ml", "ml", "train", true},      // bare/train points at ml too, but bare is not admitted
		{"expr", "ml", "", true},         // research/lab points at it, but research is restricted
		{"everyone", "bare", "", true},   // the empty selector: every declared namespace
		{"nobody", "", "", false},        // no namespace matches
		{"leveled", "ml", "batch", true}, // open to any namespace: its local queue
		{"missing", "", "", false},       // no such queue
	} {
		tenant, local, ok := s.WayIn(tc.queue)
		if tenant != tc.tenant || local != tc.local || ok != tc.ok {
			t.Errorf("WayIn(%q) = %q, %q, %v; want %q, %q, %v", tc.queue, tenant, local, ok, tc.tenant, tc.local, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		r := ask("w", tc.queue, tenant, local, "", 0, 1)
		if d := allot.Decide(s, r); d.Reason == allot.Unauthorized || d.Reason == allot.UnknownQueue || d.Reason == allot.InvalidRequest {
			t.Errorf("%s: submitted by its way in: %s: %s", tc.queue, d.Reason, d.Message)
		}
	}
}
