package fairness

import "math"

// Decay returns v decayed over dt seconds with the given half-life: halved
// every halfLife seconds. Without a half-life (≤ 0) nothing decays.
func Decay(v float64, dt, halfLife int64) float64 {
	if halfLife <= 0 || dt <= 0 || v == 0 {
		return v // nothing decays (no debt, the common case, costs no Exp2)
	}
	return v * math.Exp2(-float64(dt)/float64(halfLife))
}

// Debt is a decayed count of the preemptions a queue has suffered: its
// value at time At.
type Debt struct {
	Value float64
	At    int64
}

// Now is the debt's value at time now.
func (d Debt) Now(now, halfLife int64) float64 { return Decay(d.Value, now-d.At, halfLife) }

// Add records n more preemptions at time now.
func (d Debt) Add(now, halfLife int64, n float64) Debt {
	return Debt{Value: d.Now(now, halfLife) + n, At: max(now, d.At)}
}
