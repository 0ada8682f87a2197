package quota

import (
	"math"

	"github.com/allot-sched/allot/internal/res"
)

// MaxQuantity bounds every configured and requested quantity, what a pod
// set, a request and a running workload charge of each resource over all
// their pod sets, and every queue's usage of a flavor's resource: 2^61,
// about 2.3 × 10^18, which holds the memory of 500,000 nodes of 4 TiB in
// bytes. It is far below Unlimited.
//
// The bound is what keeps the arithmetic exact without a check on the hot
// path: any sum of three bounded terms is below math.MaxInt64 (3 × 2^61 <
// 2^63), and no sum in the decision adds more than three (a queue's usage
// plus a request's total, or a pod's prompt, output and per-pod tokens).
// Sums over many bounded terms are checked where they are formed (Bounded,
// AddCharge), saturate as Kueue's Amount does (AddAmount: cohort usage and
// quota, a user's usage over flavors) or are kept wide (node totals), and
// products of a quantity and a pod count are checked (Bounded) or saturate
// (res.MulSat).
const MaxQuantity = int64(1) << 61

// MaxQuantityText is MaxQuantity as messages name it.
const MaxQuantityText = "2^61"

// Bounded reports whether used plus count × q stays within MaxQuantity: the
// bound on what a pod set charges and on every queue's usage of a flavor's
// resource, which requests, running workloads and commits all keep to.
func Bounded(used, q int64, count int32) bool {
	c, ok := res.MulOK(q, int64(count))
	return ok && c <= MaxQuantity-used
}

// AddCharge adds need, what one pod set charges, to total, what the pod sets
// before it charge, and returns the first resource whose sum would pass
// MaxQuantity (total then unchanged), or -1: the bound on what a request or
// a running workload charges over all its pod sets, so that every sum over
// them stays within it. need and total must be within MaxQuantity.
func AddCharge(total *res.Vec, need res.Vec) int {
	for r := range need {
		if need[r] > MaxQuantity-total[r] {
			return r
		}
	}
	*total = total.Add(need)
	return -1
}

// Unlimited is the quota amount with no bound. It is Kueue's
// resources.Unlimited: a borrowing limit that is not set behaves as
// Unlimited, and so does a sum that includes an Unlimited nominal quota.
// A bounded amount that saturates stays one below it, so a large bounded
// total is never mistaken for "no limit".
const Unlimited int64 = math.MaxInt64

// AddAmount returns a + b with Kueue's Amount.Add rules: Unlimited plus
// anything is Unlimited; a bounded sum saturates at Unlimited−1 above and
// at math.MinInt64 below.
func AddAmount(a, b int64) int64 {
	if a == Unlimited || b == Unlimited {
		return Unlimited
	}
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return Unlimited - 1
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	case s == Unlimited:
		return Unlimited - 1
	}
	return s
}

// SubAmount returns a − b with Kueue's Amount.Sub rules: Unlimited −
// Unlimited is 0; Unlimited − bounded is Unlimited; bounded − Unlimited is
// math.MinInt64, which every caller reads as "no capacity"; a bounded
// difference saturates at math.MaxInt64 and math.MinInt64, as Kueue's does.
func SubAmount(a, b int64) int64 {
	switch {
	case a == Unlimited && b == Unlimited:
		return 0
	case a == Unlimited:
		return Unlimited
	case b == Unlimited:
		return math.MinInt64
	}
	d := a - b
	switch {
	case a >= 0 && b < 0 && d < 0:
		return math.MaxInt64
	case a < 0 && b > 0 && d >= 0:
		return math.MinInt64
	}
	return d
}
