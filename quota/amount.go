package quota

import (
	"math"

	"github.com/allot-sched/allot/internal/res"
)

// MaxQuantity bounds every configured and requested quantity, and every
// queue's usage of a flavor's resource, so that sums and products of pod
// counts cannot overflow int64. It is far below Unlimited.
const MaxQuantity = int64(1) << 56

// Bounded reports whether used plus count × q stays within MaxQuantity: the
// bound on what a pod set charges and on every queue's usage of a flavor's
// resource, which requests, running workloads and commits all keep to.
func Bounded(used, q int64, count int32) bool {
	c, ok := res.MulOK(q, int64(count))
	return ok && c <= MaxQuantity-used
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
