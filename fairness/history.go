package fairness

import "math"

// Decay returns v decayed over dt seconds with the given half-life: halved
// every halfLife seconds. Without a half-life (≤ 0) nothing decays.
func Decay(v float64, dt, halfLife int64) float64 {
	if halfLife <= 0 || dt <= 0 {
		return v
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

// FairShareFactor is Slurm's classic fair-share factor F = 2^(-U/S/d) for
// an account's normalized effective usage U, normalized shares S and
// damping factor d (1 when not set): 1 when it used nothing, 0.5 when it
// used exactly its share. A zero share gives 0 (no claim at all).
func FairShareFactor(usage, shares, damping float64) float64 {
	if shares <= 0 {
		return 0
	}
	if damping <= 0 {
		damping = 1
	}
	return math.Exp2(-usage / shares / damping)
}

// Account is a node of a Slurm-style fair-share tree: an account or, at
// the leaves, a user. Usage is the node's own actual usage (normalized to
// the cluster); an account's usage is that of its subtree.
type Account struct {
	Name   string
	Parent int // index of the parent account, -1 under the root
	Shares float64
	Usage  float64
}

// ClassicFairShare computes Slurm's classic fair-share factor of every
// account: normalized shares S multiply down the tree (a node's shares over
// its siblings'), effective usage is the actual usage for children of the
// root and UE = UA + (UE_parent − UA)·S_node/S_siblings below, and
// F = 2^(−UE/S). Parents must come before their children.
func ClassicFairShare(accounts []Account) []float64 {
	n := len(accounts)
	actual := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		actual[i] += accounts[i].Usage
		if p := accounts[i].Parent; p >= 0 {
			actual[p] += actual[i]
		}
	}
	siblings := make(map[int]float64, n)
	for _, a := range accounts {
		siblings[a.Parent] += a.Shares
	}
	norm, eff, out := make([]float64, n), make([]float64, n), make([]float64, n)
	for i, a := range accounts {
		frac := 0.0
		if s := siblings[a.Parent]; s > 0 {
			frac = a.Shares / s
		}
		if a.Parent < 0 {
			norm[i], eff[i] = frac, actual[i]
		} else {
			norm[i] = norm[a.Parent] * frac
			eff[i] = actual[i] + (eff[a.Parent]-actual[i])*frac
		}
		out[i] = FairShareFactor(eff[i], norm[i], 1)
	}
	return out
}
