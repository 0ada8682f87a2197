// A queue's limits beyond its quota (caps, windows and tier, preemption
// policies): resolving them from its configuration, and the caps check
// Decide and Commit make.

package allot

import (
	"fmt"
	"math"
	"strings"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/preempt"
	"github.com/allot-sched/allot/quota"
)

// queueLimits are what a queue allows beyond its quota, resolved at the
// snapshot's time.
type queueLimits struct {
	// scale multiplies nominal (and soft and hard) quota: the product of
	// the windows in force and the SLA tier. note names them.
	scale float64
	note  string
	// maxScale is the largest scale at any time of day.
	maxScale float64
	// userCap bounds what one user's workloads hold in the queue
	// (Slurm's MaxTRESPerUser); neverCap what the queue's
	// never-preemptible workloads hold together.
	userCap, neverCap quota.Cap
	// Kueue's preemption policies of the queue.
	withinQueue, reclaim, borrow preempt.Policy
	// threshold is borrowWithinCohort.maxPriorityThreshold, when set.
	threshold    int32
	hasThreshold bool
	// weight is the queue's fair-sharing weight (default 1).
	weight float64
	// strict is StrictFIFO: a waiting workload holds back everything
	// behind it in the queue.
	strict bool
}

// preempts reports whether any policy lets the queue preempt.
func (l *queueLimits) preempts() bool {
	return l.withinQueue != preempt.Never || l.reclaim != preempt.Never
}

// policies are the queue's preemption policies as the search reads them.
func (l *queueLimits) policies() preempt.Policies {
	return preempt.Policies{WithinQueue: l.withinQueue, Reclaim: l.reclaim, Borrow: l.borrow, Threshold: l.threshold, HasThreshold: l.hasThreshold}
}

// resolveLimits validates a queue's caps, windows and tier and resolves
// them at time now: quota computes the scales, the note names what is in
// force for messages.
func resolveLimits(s *Snapshot, q *Queue, p string, now int64) (queueLimits, error) {
	var l queueLimits
	var err error
	sc := quota.Scaling{Windows: make([]quota.Window, len(q.Windows)), Tier: 1}
	var notes []string
	for i, w := range q.Windows {
		pw, err := quota.ParseWindow(w.From, w.To, w.Scale)
		if err != nil {
			return l, buildErr(ErrInvalid, fmt.Sprintf("%s.windows[%d]", p, i), "%v", err)
		}
		sc.Windows[i] = pw
		if pw.In(now) {
			notes = append(notes, fmt.Sprintf("window %s ×%g", w.From+"-"+w.To, w.Scale))
		}
	}
	if t := q.SLATier; t != nil {
		if sc.Tier, err = quota.TierScale(t.Availability, t.Scale); err != nil {
			return l, buildErr(ErrInvalid, p+".slaTier", "%v", err)
		}
		notes = append(notes, fmt.Sprintf("SLA tier %g%% ×%g", 100*t.Availability, t.Scale))
	}
	l.scale, l.maxScale = sc.At(now), sc.Max()
	l.note = strings.Join(notes, ", ")
	if l.userCap, err = capVector(s, q.UserCap, p+".userCap"); err != nil {
		return l, err
	}
	if l.neverCap, err = capVector(s, q.NonPreemptibleCap, p+".nonPreemptibleCap"); err != nil {
		return l, err
	}
	pp := q.Preemption
	var ok bool
	if l.withinQueue, ok = preempt.ParsePolicy(pp.WithinQueue, preempt.Never, preempt.LowerPriority, preempt.LowerOrNewerEqualPriority); !ok {
		return l, buildErr(ErrInvalid, p+".preemption.withinQueue", "%q is not Never, LowerPriority or LowerOrNewerEqualPriority", pp.WithinQueue)
	}
	if l.reclaim, ok = preempt.ParsePolicy(pp.ReclaimWithinCohort, preempt.Never, preempt.LowerPriority, preempt.Any); !ok {
		return l, buildErr(ErrInvalid, p+".preemption.reclaimWithinCohort", "%q is not Never, LowerPriority or Any", pp.ReclaimWithinCohort)
	}
	if l.borrow, ok = preempt.ParsePolicy(pp.BorrowWithinCohort.Policy, preempt.Never, preempt.LowerPriority); !ok {
		return l, buildErr(ErrInvalid, p+".preemption.borrowWithinCohort.policy", "%q is not Never or LowerPriority", pp.BorrowWithinCohort.Policy)
	}
	if l.reclaim == preempt.Never && l.borrow != preempt.Never {
		return l, buildErr(ErrInvalid, p+".preemption.borrowWithinCohort", "needs reclaimWithinCohort other than Never (as in Kueue)")
	}
	if t := pp.BorrowWithinCohort.MaxPriorityThreshold; t != nil {
		l.threshold, l.hasThreshold = *t, true
	}
	switch q.QueueingStrategy {
	case "", BestEffortFIFO:
	case StrictFIFO:
		l.strict = true
	default:
		return l, buildErr(ErrInvalid, p+".queueingStrategy", "%q is not %s or %s", q.QueueingStrategy, StrictFIFO, BestEffortFIFO)
	}
	if l.weight, err = fairWeight(q.FairSharing, p); err != nil {
		return l, err
	}
	return l, nil
}

// fairWeight checks a queue's or cohort's fair-sharing weight; none means 1.
func fairWeight(fs *QueueFairSharing, p string) (float64, error) {
	if fs == nil || fs.Weight == nil {
		return 1, nil
	}
	if w := *fs.Weight; !(w >= 0) || math.IsInf(w, 0) || w > 0 && w < 1e-9 {
		return 0, buildErr(ErrInvalid, p+".fairSharing.weight", "weight %v must be 0 or at least 1e-9", w)
	}
	return *fs.Weight, nil
}

// capVector reads a cap: the resources m names are capped.
func capVector(s *Snapshot, m Resources, p string) (quota.Cap, error) {
	v, err := s.vector(m, p)
	if err != nil {
		return quota.Cap{}, err
	}
	c := quota.Cap{Limit: v}
	for name := range m {
		c.Mask |= 1 << s.resIdx[name]
	}
	return c, nil
}

// capped reports whether a request of preemption class c meets any of the
// queue's caps.
func (l *queueLimits) capped(c PreemptionClass) bool {
	return l.userCap.Set() || l.neverCap.Set() && c == Never
}

// capBreach is a request breaking one of its queue's caps, with the figures
// of the first capped resource it breaks.
type capBreach struct {
	// reason is ExceedsUserCap or NeverFits when the request breaks the
	// per-user or the non-preemptible cap on its own, UserCapReached or
	// NonPreemptibleCapReached when it does so with what is already held.
	reason            Reason
	res               int
	used, limit, need int64
}

// checkCaps checks need, what a request of user and preemption class c
// charges summed over its pod sets, against queue q's per-user cap and, for
// never-preemptible work, its non-preemptible cap (quota's Cap.Over). Decide's
// caps stage and Commit's re-check both ask it.
func (s *Snapshot) checkCaps(q int32, user string, c PreemptionClass, need res.Vec) (capBreach, bool) {
	l := &s.limits[q]
	if l.userCap.Set() {
		used := s.users[q][user]
		if r, over, alone := l.userCap.Over(used, need); over {
			b := capBreach{reason: UserCapReached, res: r, used: used[r], limit: l.userCap.Limit[r], need: need[r]}
			if alone {
				b.reason = ExceedsUserCap
			}
			return b, true
		}
	}
	if l.neverCap.Set() && c == Never {
		used := s.never[q]
		if r, over, alone := l.neverCap.Over(used, need); over {
			b := capBreach{reason: NonPreemptibleCapReached, res: r, used: used[r], limit: l.neverCap.Limit[r], need: need[r]}
			if alone {
				b.reason = NeverFits
			}
			return b, true
		}
	}
	return capBreach{}, false
}

// neverPreempted reports whether an admitted workload counts against its
// queue's non-preemptible cap: class never, and on no spot flavor.
func (s *Snapshot) neverPreempted(r *running) bool {
	if r.w.Class != Never {
		return false
	}
	for i := range r.Sets {
		if s.flavors[r.Sets[i].Flavor].Spot {
			return false
		}
	}
	return true
}
