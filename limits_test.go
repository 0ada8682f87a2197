package allot

import "testing"

func TestWindows(t *testing.T) {
	cases := []struct {
		w        Window
		at       int64
		in       bool
		parseErr bool
	}{
		{Window{From: "20:00", To: "08:00", Scale: 2}, 22 * 3600, true, false},
		{Window{From: "20:00", To: "08:00", Scale: 2}, 7*3600 + 3599, true, false},
		{Window{From: "20:00", To: "08:00", Scale: 2}, 8 * 3600, false, false},
		{Window{From: "20:00", To: "08:00", Scale: 2}, 86400 + 21*3600, true, false}, // the next day
		{Window{From: "09:00", To: "17:30", Scale: 0.5}, 17*3600 + 29*60, true, false},
		{Window{From: "09:00", To: "17:30", Scale: 0.5}, 17*3600 + 30*60, false, false},
		{Window{From: "00:00", To: "24:00", Scale: 3}, 0, true, false},
		{Window{From: "9", To: "10:00", Scale: 1}, 0, false, true},
		{Window{From: "10:00", To: "10:00", Scale: 1}, 0, false, true},
		{Window{From: "10:00", To: "11:60", Scale: 1}, 0, false, true},
		{Window{From: "10:00", To: "11:00", Scale: 0}, 0, false, true},
	}
	for _, c := range cases {
		w, err := parseWindow(c.w)
		if (err != nil) != c.parseErr {
			t.Fatalf("%+v: parse error %v", c.w, err)
		}
		if err == nil && w.in(c.at) != c.in {
			t.Errorf("%+v at %d: in=%v, want %v", c.w, c.at, !c.in, c.in)
		}
	}
}

func TestScaledAndMaxScale(t *testing.T) {
	if got := scaled(10, 1.2); got != 12 {
		t.Fatalf("10 × 1.2 = %d", got)
	}
	if got := scaled(8, 2); got != 16 {
		t.Fatalf("8 × 2 = %d", got)
	}
	if got := scaled(7, 0.5); got != 3 {
		t.Fatalf("7 × 0.5 rounds down, got %d", got)
	}
	s := &Snapshot{fixed: &fixed{resIdx: map[string]int{"gpu": 0}, resources: []string{"gpu"}}}
	// Two overlapping windows: 18-24 ×2 and 22-06 ×1.5 are both in force
	// from 22:00 to 24:00 (×3); an SLA tier multiplies everything.
	q := Queue{Name: "q", Windows: []Window{{From: "18:00", To: "24:00", Scale: 2}, {From: "22:00", To: "06:00", Scale: 1.5}},
		SLATier: &SLATier{Availability: 0.9, Scale: 1.2}}
	l, err := s.resolveLimits(&q, "queues[0]", 12*3600)
	if err != nil {
		t.Fatal(err)
	}
	if l.scale != 1.2 || l.maxScale < 3.6-1e-9 || l.maxScale > 3.6+1e-9 || l.note != "SLA tier 90% ×1.2" {
		t.Fatalf("%+v", l)
	}
	l, _ = s.resolveLimits(&q, "queues[0]", 23*3600)
	if l.scale < 3.6-1e-9 || l.note != "window 18:00-24:00 ×2, window 22:00-06:00 ×1.5, SLA tier 90% ×1.2" {
		t.Fatalf("%+v", l)
	}
}
