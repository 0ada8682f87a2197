package allot

import (
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/preempt"
)

// secondsPerDay is the period of time-of-day windows (UTC).
const secondsPerDay = 86400

// queueLimits are what a queue allows beyond its quota, resolved at the
// snapshot's time.
type queueLimits struct {
	// scale multiplies nominal (and soft and hard) quota: the product of
	// the windows in force and the SLA tier. note names them.
	scale float64
	note  string
	// maxScale is the largest scale at any time of day.
	maxScale float64
	// userCap bounds what one user's workloads hold in the queue, summed
	// over flavors (Slurm's MaxTRESPerUser); bit r of userMask set when
	// resource r is capped.
	userCap  res.Vec
	userMask uint16
	// neverCap bounds what the queue's never-preemptible workloads hold
	// together.
	neverCap  res.Vec
	neverMask uint16
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

// window is a parsed time-of-day window: [from, to) in seconds of the day,
// wrapping past midnight when to < from.
type window struct {
	from, to int64
	scale    float64
	text     string
}

func parseClock(s string) (int64, error) {
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || hh < 0 || hh > 24 || mm < 0 || mm > 59 || hh == 24 && mm != 0 {
		return 0, fmt.Errorf("%q is not a time of day HH:MM", s)
	}
	return int64(hh*3600 + mm*60), nil
}

func parseWindow(w Window) (window, error) {
	from, err := parseClock(w.From)
	if err != nil {
		return window{}, err
	}
	to, err := parseClock(w.To)
	if err != nil {
		return window{}, err
	}
	if from == to {
		return window{}, fmt.Errorf("window %s-%s is empty", w.From, w.To)
	}
	if !(w.Scale > 0) || math.IsInf(w.Scale, 0) {
		return window{}, fmt.Errorf("scale %v must be a positive number", w.Scale)
	}
	return window{from: from, to: to, scale: w.Scale, text: w.From + "-" + w.To}, nil
}

// in reports whether time now (seconds on the snapshot's clock, taken
// modulo one day) is inside the window.
func (w window) in(now int64) bool {
	t := now % secondsPerDay
	if t < 0 {
		t += secondsPerDay
	}
	if w.from < w.to {
		return t >= w.from && t < w.to
	}
	return t >= w.from || t < w.to
}

// resolveLimits validates a queue's caps, windows and tier and resolves
// them at time now.
func (s *Snapshot) resolveLimits(q *Queue, p string, now int64) (queueLimits, error) {
	l := queueLimits{scale: 1}
	var notes []string
	ws := make([]window, len(q.Windows))
	for i, w := range q.Windows {
		pw, err := parseWindow(w)
		if err != nil {
			return l, buildErr(ErrInvalid, fmt.Sprintf("%s.windows[%d]", p, i), "%v", err)
		}
		ws[i] = pw
		if pw.in(now) {
			l.scale *= pw.scale
			notes = append(notes, fmt.Sprintf("window %s ×%g", pw.text, pw.scale))
		}
	}
	// The product of the windows in force changes only where a window
	// opens, so its largest value is at one of those times (or 1).
	l.maxScale = 1
	for _, w := range ws {
		p := 1.0
		for _, o := range ws {
			if o.in(w.from) {
				p *= o.scale
			}
		}
		l.maxScale = max(l.maxScale, p)
	}
	if t := q.SLATier; t != nil {
		if !(t.Scale > 0) || math.IsInf(t.Scale, 0) || !(t.Availability > 0 && t.Availability <= 1) {
			return l, buildErr(ErrInvalid, p+".slaTier", "availability must be in (0, 1] and scale positive, got %v and %v", t.Availability, t.Scale)
		}
		l.scale *= t.Scale
		l.maxScale *= t.Scale
		notes = append(notes, fmt.Sprintf("SLA tier %g%% ×%g", 100*t.Availability, t.Scale))
	}
	l.note = strings.Join(notes, ", ")
	var err error
	if l.userCap, l.userMask, err = s.capVector(q.UserCap, p+".userCap"); err != nil {
		return l, err
	}
	if l.neverCap, l.neverMask, err = s.capVector(q.NonPreemptibleCap, p+".nonPreemptibleCap"); err != nil {
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

func (s *Snapshot) capVector(m Resources, p string) (res.Vec, uint16, error) {
	v, err := s.vector(m, p)
	if err != nil {
		return v, 0, err
	}
	var mask uint16
	for name := range m {
		mask |= 1 << s.resIdx[name]
	}
	return v, mask, nil
}

// capped reports whether a request of preemption class c meets any of the
// queue's caps.
func (l *queueLimits) capped(c PreemptionClass) bool {
	return l.userMask != 0 || l.neverMask != 0 && c == Never
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
// never-preemptible work, its non-preemptible cap. Decide's caps stage and
// Commit's re-check both ask it.
func (s *Snapshot) checkCaps(q int32, user string, c PreemptionClass, need res.Vec) (capBreach, bool) {
	l := &s.limits[q]
	if l.userMask != 0 {
		used := s.users[q][user]
		if r, over, alone := overCap(l.userCap, l.userMask, used, need); over {
			b := capBreach{reason: UserCapReached, res: r, used: used[r], limit: l.userCap[r], need: need[r]}
			if alone {
				b.reason = ExceedsUserCap
			}
			return b, true
		}
	}
	if l.neverMask != 0 && c == Never {
		used := s.never[q]
		if r, over, alone := overCap(l.neverCap, l.neverMask, used, need); over {
			b := capBreach{reason: NonPreemptibleCapReached, res: r, used: used[r], limit: l.neverCap[r], need: need[r]}
			if alone {
				b.reason = NeverFits
			}
			return b, true
		}
	}
	return capBreach{}, false
}

// overCap finds the first capped resource that need breaks: alone, or
// together with used.
func overCap(limit res.Vec, mask uint16, used, need res.Vec) (r int, over, alone bool) {
	for r := range limit {
		if mask&(1<<r) == 0 || need[r] == 0 {
			continue
		}
		if need[r] > limit[r] {
			return r, true, true
		}
	}
	for r := range limit {
		if mask&(1<<r) != 0 && need[r] > 0 && used[r]+need[r] > limit[r] {
			return r, true, false
		}
	}
	return 0, false, false
}

// appendCapBreach writes the message of b, a breach by a request of user in
// queue, to buf.
func (s *Snapshot) appendCapBreach(buf []byte, b capBreach, user, queue string) []byte {
	name := s.resources[b.res]
	switch b.reason {
	case ExceedsUserCap:
		buf = append(buf, "user "...)
		buf = strconv.AppendQuote(buf, user)
		buf = append(buf, " asks for "...)
		buf = appendQuantity(buf, name, b.need)
		buf = append(append(append(buf, ' '), name...), ", more than queue "...)
		buf = strconv.AppendQuote(buf, queue)
		buf = append(buf, "'s per-user cap of "...)
		buf = appendQuantity(buf, name, b.limit)
	case UserCapReached:
		buf = append(buf, "user "...)
		buf = strconv.AppendQuote(buf, user)
		buf = append(buf, " holds "...)
		buf = appendQuantity(buf, name, b.used)
		buf = append(buf, '/')
		buf = appendQuantity(buf, name, b.limit)
		buf = append(append(append(buf, ' '), name...), " of queue "...)
		buf = strconv.AppendQuote(buf, queue)
		buf = append(buf, "'s per-user cap, the request needs "...)
		buf = appendQuantity(buf, name, b.need)
	case NeverFits:
		buf = append(buf, "a never-preemptible request of "...)
		buf = appendQuantity(buf, name, b.need)
		buf = append(append(append(buf, ' '), name...), " exceeds queue "...)
		buf = strconv.AppendQuote(buf, queue)
		buf = append(buf, "'s non-preemptible cap of "...)
		buf = appendQuantity(buf, name, b.limit)
	default:
		buf = append(buf, "never-preemptible work of queue "...)
		buf = strconv.AppendQuote(buf, queue)
		buf = append(buf, " holds "...)
		buf = appendQuantity(buf, name, b.used)
		buf = append(buf, '/')
		buf = appendQuantity(buf, name, b.limit)
		buf = append(append(append(buf, ' '), name...), " of its cap, the request needs "...)
		buf = appendQuantity(buf, name, b.need)
	}
	return buf
}

// scaled applies a queue's scale to a quantity, rounding down.
func scaled(v int64, scale float64) int64 {
	if scale == 1 || v == 0 {
		return v
	}
	x := math.Floor(float64(v)*scale + 1e-9)
	if x >= float64(maxQuantity) {
		return maxQuantity
	}
	return int64(x)
}

// userUsage is what each user's admitted workloads hold in one queue, summed
// over flavors. A map is never written after it is shared: a change
// replaces the queue's map.
type userUsage map[string]res.Vec

func (u userUsage) with(user string, v res.Vec, sign int64) userUsage {
	next := maps.Clone(u)
	if next == nil {
		next = userUsage{}
	}
	cur := next[user]
	for i := range cur {
		cur[i] += sign * v[i]
	}
	if cur.IsZero() {
		delete(next, user)
	} else {
		next[user] = cur
	}
	return next
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

// trackLimits books (sign 1) or releases (sign -1) an admitted workload in
// the per-user and non-preemptible usage of its queue.
func (s *Snapshot) trackLimits(r *running, sign int64) {
	l := &s.limits[r.Queue]
	if l.userMask == 0 && l.neverMask == 0 {
		return
	}
	t := r.Total(s.tokens)
	s.own(rowUsers | rowNever)
	if l.userMask != 0 {
		s.users[r.Queue] = s.users[r.Queue].with(r.w.User, t, sign)
	}
	if l.neverMask != 0 && s.neverPreempted(r) {
		nu := s.never[r.Queue]
		for i := range nu {
			nu[i] += sign * t[i]
		}
		s.never[r.Queue] = nu
	}
}

// recountLimits rebuilds the per-user and non-preemptible usage of every
// queue from the admitted workloads (after a configuration change).
func (s *Snapshot) recountLimits() {
	s.limitUsage = &limitUsage{users: make([]userUsage, len(s.queues)), never: make([]res.Vec, len(s.queues))}
	s.shared &^= rowUsers | rowNever
	s.running.Scan(func(r *running) bool {
		s.trackLimits(r, 1)
		return true
	})
}
