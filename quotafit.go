package allot

import (
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
)

// quotaFit is the outcome of checking what a request puts on one flavor
// against a queue's quota, as Kueue's flavor assigner does, with allot's
// hard and soft caps.
type quotaFit struct {
	verdict quota.Verdict
	// reason says why it does not fit: NeverFits, ExceedsHardCap,
	// HardCapReached or QuotaExhausted.
	reason Reason
	// Figures of the first resource that failed, for the message: the
	// queue's usage, the request's need, the limit it ran into and what is
	// available (the cohort and borrowing limits included).
	res                      int
	used, need, limit, avail int64
	// On a fit: the borrowing level (how far up the cohort tree the
	// capacity comes from, 0 within nominal), whether it borrows, and
	// whether it passes a soft cap.
	level    int
	borrow   bool
	overSoft bool
}

// fitQuota checks need on flavor fq of queue q, earlier being what other
// pod sets of the same request already put on that flavor. A request can
// never fit when it is larger than the queue's hard cap or than what the
// cohort tree could ever give it at the largest quota of any time of day;
// it waits when the hard cap or the available quota is in the way now.
func (s *Snapshot) fitQuota(q int32, fq *quota.FlavorQuota, earlier, need res.Vec) quotaFit {
	t := s.rtree
	f := int(fq.Flavor)
	used := s.usageOf(q, fq.Flavor)
	val := earlier.Add(need)
	out := quotaFit{verdict: quota.Fit, res: -1}
	fail := func(v quota.Verdict, why Reason, r int, limit, avail int64) quotaFit {
		return quotaFit{verdict: v, reason: why, res: r, used: used[r], need: val[r], limit: limit, avail: avail}
	}
	for r := range s.resources {
		if need[r] == 0 {
			continue
		}
		if fq.Covered&(1<<r) == 0 {
			return fail(quota.NoFitEver, NeverFits, r, 0, 0)
		}
		if fq.HardMask&(1<<r) != 0 && val[r] > fq.Hard[r] {
			return fail(quota.NoFitEver, ExceedsHardCap, r, fq.Hard[r], 0)
		}
		// maxQuantity bounds usage as a hard cap every queue has.
		if !bounded(0, val[r], 1) {
			return fail(quota.NoFitEver, ExceedsHardCap, r, maxQuantity, 0)
		}
		// What the tree could ever give, at the largest quota of the day.
		ever := quota.AddAmount(t.PotentialAvailable(q, t.FR(f, r)), max(0, fq.Ever[r]-fq.Nominal[r]))
		if val[r] > ever {
			return fail(quota.NoFitEver, NeverFits, r, ever, 0)
		}
	}
	for r := range s.resources {
		if need[r] == 0 {
			continue
		}
		if fq.HardMask&(1<<r) != 0 && used[r]+val[r] > fq.Hard[r] {
			return fail(quota.NoFitNow, HardCapReached, r, fq.Hard[r], 0)
		}
		if !bounded(used[r], val[r], 1) {
			return fail(quota.NoFitNow, HardCapReached, r, maxQuantity, 0)
		}
		if avail := t.AvailableClamped(s.usage, q, t.FR(f, r)); val[r] > avail {
			return fail(quota.NoFitNow, QuotaExhausted, r, fq.Nominal[r], avail)
		}
	}
	for r := range s.resources {
		if need[r] == 0 {
			continue
		}
		level, _ := t.BorrowingLevel(s.usage, q, t.FR(f, r), val[r])
		out.level = max(out.level, level)
		out.borrow = out.borrow || used[r]+val[r] > fq.Nominal[r]
		out.overSoft = out.overSoft || fq.SoftMask&(1<<r) != 0 && used[r]+val[r] > fq.Soft[r]
	}
	return out
}
