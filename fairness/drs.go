package fairness

import (
	"math"

	"github.com/allot-sched/allot/quota"
)

// Share is a dominant resource share as Kueue computes it: what a node
// borrows beyond its subtree quota, per resource (flavors of one resource
// summed), over what its parent could ever lend of that resource, the
// largest ratio (×1000) divided by the node's weight.
type Share struct {
	// Ratio is the unweighted dominant ratio, ×1000.
	Ratio float64
	// Weighted is Ratio / weight: +Inf for a borrowing node of weight 0.
	Weighted float64
	// Borrowing is true when the node uses more than its subtree quota of
	// some flavor-resource; in the order keys (ShareAfter, Tournament), of
	// one the head asks for (Kueue's IsBorrowingOn): a queue that borrows
	// a100 is not borrowing for a head that asks only for h100.
	Borrowing bool
}

// DominantShare is node n's share with extra usage extra (indexed by
// flavor-resource; nil for none) added, for a node of weight weight. A root
// has share 0.
func DominantShare(t *quota.ResourceTree, u quota.Usage, n int32, extra []int64, weight float64) Share {
	return shareOn(t, u, n, extra, nil, weight)
}

// shareOn is DominantShare with Borrowing only for the flavor-resources
// requested holds more than 0 of (every one when requested is nil).
func shareOn(t *quota.ResourceTree, u quota.Usage, n int32, extra, requested []int64, weight float64) Share {
	parent := t.Parent(n)
	if parent < 0 {
		return Share{}
	}
	R := t.Resources()
	var s Share
	var borrowed, lendable [16]float64
	for fr := 0; fr < t.FRs(); fr++ {
		r := fr % R
		v := u.At(n, fr)
		if extra != nil {
			// A cohort's usage may have saturated near math.MaxInt64.
			v = quota.AddAmount(v, extra[fr])
		}
		if b := v - t.SubtreeQuota(n, fr); b > 0 {
			borrowed[r] += float64(b)
			s.Borrowing = s.Borrowing || requested == nil || requested[fr] > 0
		}
		if p := t.PotentialAvailable(parent, fr); p > 0 && p != quota.Unlimited {
			lendable[r] += float64(p)
		}
	}
	for r := 0; r < R; r++ {
		if borrowed[r] > 0 && lendable[r] > 0 {
			s.Ratio = max(s.Ratio, borrowed[r]*1000/lendable[r])
		}
	}
	switch {
	case s.Ratio == 0:
	case weight <= 0:
		s.Weighted = math.Inf(1)
	default:
		s.Weighted = s.Ratio / weight
	}
	return s
}

// Less orders two shares for admission: the lower goes first (Kueue's
// CompareDRS); two zero-weight borrowers compare by their unweighted ratio.
func (a Share) Less(b Share) bool {
	if math.IsInf(a.Weighted, 1) && math.IsInf(b.Weighted, 1) {
		return a.Ratio < b.Ratio
	}
	return a.Weighted < b.Weighted
}
