package allot

import "testing"

// TestResolveLimits pins the scales and the note a queue's windows and tier
// resolve to; quota's tests check the scaling rules themselves.
func TestResolveLimits(t *testing.T) {
	s := &Snapshot{fixed: &fixed{resIdx: map[string]int{"gpu": 0}, resources: []string{"gpu"}}}
	// Two overlapping windows: 18-24 ×2 and 22-06 ×1.5 are both in force
	// from 22:00 to 24:00 (×3); an SLA tier multiplies everything.
	q := Queue{Name: "q", Windows: []Window{{From: "18:00", To: "24:00", Scale: 2}, {From: "22:00", To: "06:00", Scale: 1.5}},
		SLATier: &SLATier{Availability: 0.9, Scale: 1.2}}
	l, err := resolveLimits(s, &q, "queues[0]", 12*3600)
	if err != nil {
		t.Fatal(err)
	}
	if l.scale != 1.2 || l.maxScale < 3.6-1e-9 || l.maxScale > 3.6+1e-9 || l.note != "SLA tier 90% ×1.2" {
		t.Fatalf("%+v", l)
	}
	l, _ = resolveLimits(s, &q, "queues[0]", 23*3600)
	if l.scale < 3.6-1e-9 || l.note != "window 18:00-24:00 ×2, window 22:00-06:00 ×1.5, SLA tier 90% ×1.2" {
		t.Fatalf("%+v", l)
	}
}

// TestResolveLimitsErrors pins the paths and details of the build errors a
// queue's windows and tier report: quota's error, under the field's path.
func TestResolveLimitsErrors(t *testing.T) {
	s := &Snapshot{fixed: &fixed{resIdx: map[string]int{"gpu": 0}, resources: []string{"gpu"}}}
	for _, c := range []struct {
		q    Queue
		want string
	}{
		{Queue{Windows: []Window{{From: "08:00", To: "09:00", Scale: 2}, {From: "9", To: "10:00", Scale: 1}}},
			`allot: invalid value: queues[3].windows[1]: "9" is not a time of day HH:MM`},
		{Queue{Windows: []Window{{From: "10:00", To: "10:00", Scale: 1}}},
			`allot: invalid value: queues[3].windows[0]: window 10:00-10:00 is empty`},
		{Queue{SLATier: &SLATier{Availability: 1.5, Scale: 1}},
			`allot: invalid value: queues[3].slaTier: availability must be in (0, 1] and scale positive, got 1.5 and 1`},
	} {
		_, err := resolveLimits(s, &c.q, "queues[3]", 0)
		if err == nil || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
}
