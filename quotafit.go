// Quota's fit in the root's terms, its reasons the Reason codes messages
// are written for.

package allot

import (
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
)

// quotaFit is quota's FitResult in the root's terms: its reason is one of
// the Reason codes messages are written for.
type quotaFit struct {
	verdict quota.Verdict
	// reason says why it does not fit: NeverFits, ExceedsHardCap,
	// HardCapReached or QuotaExhausted.
	reason Reason
	// Figures of the first resource that failed, for the message; decide
	// also sets them for a placement failure.
	res                      int
	used, need, limit, avail int64
	// On a fit: the borrowing level and whether it passes a soft cap.
	level    int
	overSoft bool
}

// fitReasons maps quota's reasons to the root's.
var fitReasons = [...]Reason{
	quota.Uncovered:   NeverFits,
	quota.BeyondReach: NeverFits,
	quota.OverHardCap: ExceedsHardCap,
	quota.AtHardCap:   HardCapReached,
	quota.Exhausted:   QuotaExhausted,
}

// fitQuota checks need on flavor fq of queue q against the snapshot's usage
// (quota's ResourceTree.Fit), earlier being what other pod sets of the same
// request already put on that flavor. Only need's non-zero resources are
// checked: what it tells (fit, or why not) an explicit zero does not
// change.
func (s *Snapshot) fitQuota(q int32, fq *quota.FlavorQuota, earlier, need res.Vec) quotaFit {
	return fromFit(s.rtree.Fit(s.usage, q, fq, earlier, need, 0))
}

// fromFit is quota's answer in the root's terms.
func fromFit(f quota.FitResult) quotaFit {
	return quotaFit{verdict: f.Verdict, reason: fitReasons[f.Reason], res: f.Res,
		used: f.Used, need: f.Need, limit: f.Limit, avail: f.Avail,
		level: f.Level, overSoft: f.OverSoft}
}
