package quota

import (
	"math"
	"testing"
)

func TestParseWindow(t *testing.T) {
	cases := []struct {
		from, to string
		scale    float64
		want     Window
		err      string
	}{
		{"20:00", "08:00", 2, Window{From: 20 * 3600, To: 8 * 3600, Scale: 2}, ""},
		{"00:00", "24:00", 0.5, Window{From: 0, To: SecondsPerDay, Scale: 0.5}, ""},
		{"9", "10:00", 1, Window{}, `"9" is not a time of day HH:MM`},
		{"10:00", "11:60", 1, Window{}, `"11:60" is not a time of day HH:MM`},
		{"24:01", "11:00", 1, Window{}, `"24:01" is not a time of day HH:MM`},
		{"-1:00", "11:00", 1, Window{}, `"-1:00" is not a time of day HH:MM`},
		{"10:00", "10:00", 1, Window{}, "window 10:00-10:00 is empty"},
		{"10:00", "11:00", 0, Window{}, "scale 0 must be a positive number"},
		{"10:00", "11:00", math.Inf(1), Window{}, "scale +Inf must be a positive number"},
		{"10:00", "11:00", math.NaN(), Window{}, "scale NaN must be a positive number"},
	}
	for _, c := range cases {
		w, err := ParseWindow(c.from, c.to, c.scale)
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%s-%s ×%v: error %v, want %q", c.from, c.to, c.scale, err, c.err)
		case c.err == "" && (err != nil || w != c.want):
			t.Errorf("%s-%s ×%v: got %+v, %v, want %+v", c.from, c.to, c.scale, w, err, c.want)
		}
	}
}

func TestWindowIn(t *testing.T) {
	night := Window{From: 20 * 3600, To: 8 * 3600, Scale: 2}
	day := Window{From: 9 * 3600, To: 17*3600 + 30*60, Scale: 0.5}
	all := Window{From: 0, To: SecondsPerDay, Scale: 3}
	cases := []struct {
		name string
		w    Window
		at   int64
		in   bool
	}{
		{"wraps past midnight: evening", night, 22 * 3600, true},
		{"wraps past midnight: morning", night, 7*3600 + 3599, true},
		{"wraps past midnight: the end is out", night, 8 * 3600, false},
		{"wraps past midnight: the start is in", night, 20 * 3600, true},
		{"wraps past midnight: midday is out", night, 12 * 3600, false},
		{"the next day", night, SecondsPerDay + 21*3600, true},
		{"before the epoch", night, -3600, true},
		{"before the epoch, midday", night, -12 * 3600, false},
		{"within a day", day, 17*3600 + 29*60, true},
		{"the end of a day window", day, 17*3600 + 30*60, false},
		{"the whole day", all, 0, true},
		{"the whole day, last second", all, SecondsPerDay - 1, true},
	}
	for _, c := range cases {
		if got := c.w.In(c.at); got != c.in {
			t.Errorf("%s: In(%d) = %v", c.name, c.at, got)
		}
	}
}

func TestScaling(t *testing.T) {
	h := func(x int64) int64 { return x * 3600 }
	evening := Window{From: h(18), To: h(24), Scale: 2}
	night := Window{From: h(22), To: h(6), Scale: 1.5}
	low := Window{From: h(9), To: h(17), Scale: 0.5}
	cases := []struct {
		name    string
		s       Scaling
		at      int64
		now, mx float64
	}{
		{"nothing", Scaling{Tier: 1}, 0, 1, 1},
		{"a tier alone", Scaling{Tier: 1.2}, 0, 1.2, 1.2},
		{"one window, in force", Scaling{Windows: []Window{evening}, Tier: 1}, h(19), 2, 2},
		{"one window, not in force", Scaling{Windows: []Window{evening}, Tier: 1}, h(12), 1, 2},
		{"overlapping windows multiply", Scaling{Windows: []Window{evening, night}, Tier: 1}, h(23), 3, 3},
		{"one of two in force", Scaling{Windows: []Window{evening, night}, Tier: 1}, h(3), 1.5, 3},
		{"and the tier", Scaling{Windows: []Window{evening, night}, Tier: 1.2}, h(12), 1.2, 3 * 1.2},
		{"a window that scales down never makes the largest below 1", Scaling{Windows: []Window{low}, Tier: 1}, h(10), 0.5, 1},
		{"a window closing inside another can raise the scale", Scaling{Windows: []Window{{From: h(10), To: h(12), Scale: 0.5}, {From: h(11), To: h(13), Scale: 2}}, Tier: 1}, h(12) + 1800, 2, 2},
		{"windows over the whole day that scale down", Scaling{Windows: []Window{{From: h(0), To: h(12), Scale: 0.5}, {From: h(12), To: h(24), Scale: 0.5}}, Tier: 1}, h(3), 0.5, 0.5},
	}
	for _, c := range cases {
		if now, mx := c.s.At(c.at), c.s.Max(); math.Abs(now-c.now) > 1e-12 || math.Abs(mx-c.mx) > 1e-12 {
			t.Errorf("%s: At = %v, Max = %v, want %v and %v", c.name, now, mx, c.now, c.mx)
		}
	}
}

func TestTierScale(t *testing.T) {
	cases := []struct {
		availability, scale float64
		ok                  bool
	}{
		{0.999, 1.5, true},
		{1, 0.5, true},
		{0, 1, false},
		{1.01, 1, false},
		{0.9, 0, false},
		{0.9, math.Inf(1), false},
		{math.NaN(), 1, false},
	}
	for _, c := range cases {
		got, err := TierScale(c.availability, c.scale)
		if (err == nil) != c.ok || c.ok && got != c.scale {
			t.Errorf("TierScale(%v, %v) = %v, %v", c.availability, c.scale, got, err)
		}
	}
	if _, err := TierScale(2, 1); err == nil || err.Error() != "availability must be in (0, 1] and scale positive, got 2 and 1" {
		t.Errorf("message: %v", err)
	}
}

func TestScaled(t *testing.T) {
	cases := []struct {
		v     int64
		scale float64
		want  int64
	}{
		{10, 1.2, 12}, // whole in decimal, not 11.999…
		{8, 2, 16},
		{7, 0.5, 3}, // rounds down
		{0, 1e30, 0},
		{5, 1, 5},
		{MaxQuantity, 2, MaxQuantity}, // saturates
		{MaxQuantity - 1, 1, MaxQuantity - 1},
	}
	for _, c := range cases {
		if got := Scaled(c.v, c.scale); got != c.want {
			t.Errorf("Scaled(%d, %v) = %d, want %d", c.v, c.scale, got, c.want)
		}
	}
}

func TestSetResource(t *testing.T) {
	hard, soft := int64(10), int64(6)
	var fq FlavorQuota
	fq.SetResource(1, 8, &hard, &soft, 0.5, 2)
	fq.SetResource(0, 3, nil, nil, 1, 1)
	switch {
	case fq.Covered != 0b11 || fq.HardMask != 0b10 || fq.SoftMask != 0b10:
		t.Errorf("masks %b %b %b", fq.Covered, fq.HardMask, fq.SoftMask)
	case fq.Nominal[1] != 4 || fq.Ever[1] != 16 || fq.Hard[1] != 5 || fq.Soft[1] != 3:
		t.Errorf("scaled figures %+v", fq)
	case fq.Nominal[0] != 3 || fq.Ever[0] != 3 || fq.Hard[0] != 0:
		t.Errorf("unscaled figures %+v", fq)
	}
	// Ever is never below the quota in force.
	fq.SetResource(2, 8, nil, nil, 2, 1)
	if fq.Ever[2] != 16 {
		t.Errorf("Ever %d", fq.Ever[2])
	}
}

func TestResourceQuotaScaled(t *testing.T) {
	cases := []struct {
		name  string
		q     ResourceQuota
		scale float64
		want  ResourceQuota
	}{
		{"nominal only", ResourceQuota{Nominal: 10}, 1.5, ResourceQuota{Nominal: 15}},
		{"limits are not scaled", ResourceQuota{Nominal: 10, BorrowingLimit: lim(4), LendingLimit: lim(6)}, 2,
			ResourceQuota{Nominal: 20, BorrowingLimit: lim(4), LendingLimit: lim(6)}},
		{"a lending limit above the scaled quota lends all of it", ResourceQuota{Nominal: 10, LendingLimit: lim(8)}, 0.5,
			ResourceQuota{Nominal: 5, LendingLimit: lim(5)}},
	}
	deref := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	for _, c := range cases {
		got := c.q.Scaled(c.scale)
		if got.Nominal != c.want.Nominal || deref(got.BorrowingLimit) != deref(c.want.BorrowingLimit) || deref(got.LendingLimit) != deref(c.want.LendingLimit) {
			t.Errorf("%s: got %d %d %d", c.name, got.Nominal, deref(got.BorrowingLimit), deref(got.LendingLimit))
		}
	}
	ll := lim(8)
	ResourceQuota{Nominal: 10, LendingLimit: ll}.Scaled(0.5)
	if *ll != 8 {
		t.Error("Scaled wrote through the caller's limit")
	}
}
