package quota

import "github.com/allot-sched/allot/internal/res"

// Reason says why a request does not fit a flavor's quota. The root package
// maps it to its own reason codes and writes the message.
type Reason uint8

const (
	// Uncovered (NoFitEver): the request asks for a resource the flavor's
	// quota does not cover.
	Uncovered Reason = 1 + iota
	// BeyondReach (NoFitEver): more than the cohort tree could ever give
	// the queue, at its largest quota of the day.
	BeyondReach
	// OverHardCap (NoFitEver): more than the hard cap, or MaxQuantity, on
	// its own.
	OverHardCap
	// AtHardCap (NoFitNow): the hard cap, or MaxQuantity, with the queue's
	// usage.
	AtHardCap
	// Exhausted (NoFitNow): more than the cohort tree has available now.
	Exhausted
)

// FitResult is the outcome of Fit.
type FitResult struct {
	Verdict Verdict
	// Reason is set unless Verdict is Fit.
	Reason Reason
	// Figures of the first resource that failed (Res, -1 on a fit), for
	// the message: the queue's usage, what the request puts on the flavor,
	// the limit it ran into (the hard cap, MaxQuantity, what the tree could
	// ever give, or the nominal quota when exhausted) and, when exhausted,
	// what is available (the cohort and borrowing limits included).
	Res                      int
	Used, Need, Limit, Avail int64
	// On a fit: the borrowing level (how far up the cohort tree the
	// capacity comes from, 0 within nominal), whether it borrows, and
	// whether it passes a soft cap.
	Level    int
	Borrow   bool
	OverSoft bool
}

// Fit checks need on flavor quota fq of queue q under usage u, earlier being
// what other pod sets of the same request already put on that flavor, as
// Kueue's flavor assigner does, with allot's hard and soft caps.
//
// The resources checked are those the request asks for: need's non-zero
// ones and, as Kueue checks a resource requested as an explicit 0 while it
// leaves out one not requested, those with bit r of zeros set, when fq
// covers them (Kueue skips a zero request for a resource the queue does not
// define). An explicit zero asks for no more quota, but where the queue
// already borrows that resource it raises the borrowing level.
//
// A request can never fit (NoFitEver) when it asks for a resource fq does
// not cover, is larger than the hard cap or MaxQuantity, or is larger than
// what the cohort tree could ever give the queue at the largest quota of
// any time of day (fq.Ever). It waits (NoFitNow) when the hard cap or the
// available quota is in the way now. Each pass stops at the first resource
// that fails, in resource order; the never-checks come first so that a
// request that can never fit is never told to wait.
func (t *ResourceTree) Fit(u Usage, q int32, fq *FlavorQuota, earlier, need res.Vec, zeros uint16) FitResult {
	f := int(fq.Flavor)
	asked := t.asked(fq, need, zeros)
	used := u[q][f*t.resources : (f+1)*t.resources]
	val := earlier.Add(need)
	fail := func(v Verdict, why Reason, r int, limit, avail int64) FitResult {
		return FitResult{Verdict: v, Reason: why, Res: r, Used: used[r], Need: val[r], Limit: limit, Avail: avail}
	}
	for r := range t.resources {
		if asked&(1<<r) == 0 {
			continue
		}
		if fq.Covered&(1<<r) == 0 {
			return fail(NoFitEver, Uncovered, r, 0, 0)
		}
		if fq.HardMask&(1<<r) != 0 && val[r] > fq.Hard[r] {
			return fail(NoFitEver, OverHardCap, r, fq.Hard[r], 0)
		}
		// MaxQuantity bounds usage as a hard cap every queue has.
		if !Bounded(0, val[r], 1) {
			return fail(NoFitEver, OverHardCap, r, MaxQuantity, 0)
		}
		// What the tree could ever give, at the largest quota of the day:
		// the tree holds the quota in force now.
		ever := AddAmount(t.PotentialAvailable(q, t.FR(f, r)), max(0, fq.Ever[r]-fq.Nominal[r]))
		if val[r] > ever {
			return fail(NoFitEver, BeyondReach, r, ever, 0)
		}
	}
	for r := range t.resources {
		if asked&(1<<r) == 0 {
			continue
		}
		if fq.HardMask&(1<<r) != 0 && used[r]+val[r] > fq.Hard[r] {
			return fail(NoFitNow, AtHardCap, r, fq.Hard[r], 0)
		}
		if !Bounded(used[r], val[r], 1) {
			return fail(NoFitNow, AtHardCap, r, MaxQuantity, 0)
		}
		if avail := t.AvailableClamped(u, q, t.FR(f, r)); val[r] > avail {
			return fail(NoFitNow, Exhausted, r, fq.Nominal[r], avail)
		}
	}
	out := FitResult{Verdict: Fit, Res: -1}
	for r := range t.resources {
		if asked&(1<<r) == 0 {
			continue
		}
		level, _ := t.BorrowingLevel(u, q, t.FR(f, r), val[r])
		out.Level = max(out.Level, level)
		out.Borrow = out.Borrow || used[r]+val[r] > fq.Nominal[r]
		out.OverSoft = out.OverSoft || fq.SoftMask&(1<<r) != 0 && used[r]+val[r] > fq.Soft[r]
	}
	return out
}

// asked are the resources Fit checks of flavor fq: those need asks for,
// and those zeros names that fq covers.
func (t *ResourceTree) asked(fq *FlavorQuota, need res.Vec, zeros uint16) uint16 {
	asked := zeros & fq.Covered
	for r := range t.resources {
		if need[r] != 0 {
			asked |= 1 << r
		}
	}
	return asked
}

// WithinAvailable is the one check of Fit that other queues' usage moves:
// whether earlier plus need is within what the cohort tree makes available
// to queue q on every resource Fit asks of flavor fq (the same resources,
// by need and zeros). Every other check of Fit reads q's own usage or none:
// on a usage where q's row holds what it held when Fit said Fit, Fit says
// Fit again exactly when WithinAvailable holds.
func (t *ResourceTree) WithinAvailable(u Usage, q int32, fq *FlavorQuota, earlier, need res.Vec, zeros uint16) bool {
	f := int(fq.Flavor)
	asked := t.asked(fq, need, zeros)
	val := earlier.Add(need)
	for r := range t.resources {
		if asked&(1<<r) != 0 && val[r] > t.AvailableClamped(u, q, t.FR(f, r)) {
			return false
		}
	}
	return true
}
