package quota

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SecondsPerDay is the period of time-of-day windows (UTC).
const SecondsPerDay = 86400

// Window scales a queue's quota during part of every day: [From, To) in
// seconds of the day, wrapping past midnight when To < From.
type Window struct {
	From, To int64
	Scale    float64
}

// parseClock reads a time of day HH:MM, 00:00 to 24:00.
func parseClock(s string) (int64, error) {
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || hh < 0 || hh > 24 || mm < 0 || mm > 59 || hh == 24 && mm != 0 {
		return 0, fmt.Errorf("%q is not a time of day HH:MM", s)
	}
	return int64(hh*3600 + mm*60), nil
}

// ParseWindow reads a window from from to to (HH:MM) with its scale: the
// window must not be empty and the scale must be a positive number.
func ParseWindow(from, to string, scale float64) (Window, error) {
	f, err := parseClock(from)
	if err != nil {
		return Window{}, err
	}
	t, err := parseClock(to)
	if err != nil {
		return Window{}, err
	}
	if f == t {
		return Window{}, fmt.Errorf("window %s-%s is empty", from, to)
	}
	if !positive(scale) {
		return Window{}, fmt.Errorf("scale %v must be a positive number", scale)
	}
	return Window{From: f, To: t, Scale: scale}, nil
}

// positive reports whether x is a finite number above 0.
func positive(x float64) bool { return x > 0 && !math.IsInf(x, 0) }

// In reports whether time now (seconds, taken modulo one day) is inside the
// window.
func (w Window) In(now int64) bool {
	t := now % SecondsPerDay
	if t < 0 {
		t += SecondsPerDay
	}
	if w.From < w.To {
		return t >= w.From && t < w.To
	}
	return t >= w.From || t < w.To
}

// TierScale checks an SLA tier, its availability in (0, 1] and its scale a
// positive number, and returns the scale.
func TierScale(availability, scale float64) (float64, error) {
	if !positive(scale) || !(availability > 0 && availability <= 1) {
		return 0, fmt.Errorf("availability must be in (0, 1] and scale positive, got %v and %v", availability, scale)
	}
	return scale, nil
}

// Scaling is what multiplies a queue's nominal quota and its soft and hard
// caps: the product of the windows in force and the SLA tier.
type Scaling struct {
	Windows []Window
	// Tier is the SLA tier's scale, 1 without a tier.
	Tier float64
}

// At is the scale at time now: the product of the windows in force, in
// order, times the tier.
func (s *Scaling) At(now int64) float64 {
	p := 1.0
	for _, w := range s.Windows {
		if w.In(now) {
			p *= w.Scale
		}
	}
	return p * s.Tier
}

// Max is the largest scale of the day: the product of the windows in
// force changes only where one opens or closes, so its largest value is at
// one of those times (1 without windows), times the tier.
func (s *Scaling) Max() float64 {
	if len(s.Windows) == 0 {
		return s.Tier
	}
	m := 0.0
	for _, w := range s.Windows {
		// A window is in force from its opening up to, not at, its closing.
		m = max(m, s.At(w.From), s.At(w.To))
	}
	return m
}

// Scaled applies a scale to a quantity, rounding down and saturating at
// MaxQuantity. The epsilon keeps a product that is whole in decimal (10 ×
// 1.2) from rounding down below it.
func Scaled(v int64, scale float64) int64 {
	if scale == 1 || v == 0 {
		return v
	}
	x := math.Floor(float64(v)*scale + 1e-9)
	if x >= float64(MaxQuantity) {
		return MaxQuantity
	}
	return int64(x)
}

// SetResource gives fq resource r as configured: nominal quota and the hard
// and soft caps (nil for none) scaled by now, the scale in force, and Ever
// by the larger of now and ever, the largest scale of the day.
func (fq *FlavorQuota) SetResource(r int, nominal int64, hard, soft *int64, now, ever float64) {
	fq.Covered |= 1 << r
	fq.Nominal[r] = Scaled(nominal, now)
	fq.Ever[r] = Scaled(nominal, max(now, ever))
	if hard != nil {
		fq.Hard[r] = Scaled(*hard, now)
		fq.HardMask |= 1 << r
	}
	if soft != nil {
		fq.Soft[r] = Scaled(*soft, now)
		fq.SoftMask |= 1 << r
	}
}

// Scaled is q with its nominal quota multiplied by scale. A lending limit
// above the scaled nominal quota lends all of it, so a scale below 1 never
// leaves a queue lending more than it has. Unscaled, q is as given: a
// cohort's lending limit bounds what its whole subtree lends, and may
// exceed the cohort's own nominal quota.
func (q ResourceQuota) Scaled(scale float64) ResourceQuota {
	if scale == 1 {
		return q
	}
	q.Nominal = Scaled(q.Nominal, scale)
	if q.LendingLimit != nil && *q.LendingLimit > q.Nominal {
		v := q.Nominal
		q.LendingLimit = &v
	}
	return q
}
