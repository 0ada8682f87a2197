package allot

import (
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
)

// Decide answers one request on one snapshot: Admit (here, on these GPUs),
// Preempt (after evicting these victims), Queue (and why) or Reject (and
// why). It is a pure function: the same snapshot and request give the same
// decision, byte for byte. It never modifies the snapshot, so any number of
// goroutines may decide on one snapshot at once.
//
// The checks run in DESIGN order: validate, authorize, hold, caps, flavor
// assignment against quota, gang placement on the chosen flavor, backfill,
// soft cap, preemption. The trail records each check that ran.
func Decide(s *Snapshot, r Request) Decision {
	var d Decision
	w := workspaces.Get().(*pooledWork)
	if w.text == nil {
		w.text = w.textArea[:0]
	}
	d.work, d.buf = &w.workspace, w.text
	decide(s, r, &d, true)
	// The decision's strings are a copy of the text: the workspace and the
	// text buffer go back for the next decision.
	w.text = d.buf[:0]
	workspaces.Put(w)
	d.decisionScratch = decisionScratch{}
	return d
}

// workspaces recycles the scratch memory of Decide between calls. It holds
// only buffers whose contents never reach a decision, so it cannot change
// any answer.
var workspaces = sync.Pool{New: func() any { return new(pooledWork) }}

// pooledWork is Decide's scratch memory: a workspace and the text buffer,
// copied into the decision's strings, which starts in textArea, allocated
// with the rest.
type pooledWork struct {
	workspace
	text     []byte
	textArea [512]byte
}

// DecideInto is Decide writing into d and reusing the memory d already
// holds, so a caller deciding in a loop allocates nothing once d has grown.
//
// The next DecideInto on the same d overwrites what this one wrote there:
// d.Message and every d.Trail[i].Detail are views of d's text buffer, and
// the Flavors, Placement, Borrowing, Victims and Trail slices are reused.
// The other strings (IDs, names, policies) stay valid. Keep d.Clone() for
// a decision that must outlive the next one.
func DecideInto(s *Snapshot, r Request, d *Decision) { decide(s, r, d, false) }

// decide decides r on s into d; its strings are copied out of the text
// buffer when copyText is set, and view it otherwise.
func decide(s *Snapshot, r Request, d *Decision, copyText bool) {
	d.reset()
	d.request = r
	d.Workload, d.Queue, d.Version = r.ID, r.Queue, s.version
	dc := decider{s: s, r: &d.request, d: d}
	dc.run()
	dc.finish(copyText)
}

// reset empties d, keeping its memory; a fresh d gets room for a typical
// decision in a few allocations.
func (d *Decision) reset() {
	if d.buf == nil {
		d.buf = make([]byte, 0, 512)
	}
	if d.Trail == nil {
		d.Trail = make([]Check, 0, 10)
	}
	if d.Flavors == nil {
		d.Flavors = make([]PodSetFlavor, 0, 2)
	}
	if d.work == nil {
		d.work = new(workspace)
	}
	d.work.asg = d.work.asg[:0]
	*d = Decision{
		Flavors:         d.Flavors[:0],
		Placement:       d.Placement[:0],
		Borrowing:       d.Borrowing[:0],
		Victims:         d.Victims[:0],
		Trail:           d.Trail[:0],
		decisionScratch: decisionScratch{buf: d.buf[:0], work: d.work},
	}
}

type span struct{ from, to int32 }

// decider is one decision in progress.
type decider struct {
	s *Snapshot
	r *Request
	d *Decision

	q  int32
	qc *quota.Queue
	// Per pod set: resolved vectors and the chosen flavor.
	n       int
	perPod  [maxPodSets]res.Vec // what a pod books on a node of its flavor
	need    [maxPodSets]res.Vec // what the pod set charges to quota, tokens included
	chosen  [maxPodSets]int32
	asgFrom [maxPodSets]int32 // first assignment of each pod set, -1 if none

	placerReady bool
	// level and overSoft gather the chosen flavors' borrowing level and
	// whether any passes a soft cap.
	level    int
	overSoft bool

	// Text spans into d.buf: the message and each trail check's detail.
	msg   span
	spans [16]span
	extra []span
}

// Check stage results go to the trail as they happen.
func (dc *decider) check(st Stage, passed bool, detail span) {
	i := len(dc.d.Trail)
	dc.d.Trail = append(dc.d.Trail, Check{Stage: st, Passed: passed})
	if i < len(dc.spans) {
		dc.spans[i] = detail
	} else {
		dc.extra = append(dc.extra, detail)
	}
}

// Text writing: everything goes to one buffer, turned into strings once.
func (dc *decider) mark() int32 { return int32(len(dc.d.buf)) }
func (dc *decider) since(m int32) span {
	return span{m, dc.mark()}
}
func (dc *decider) w(s string)  { dc.d.buf = append(dc.d.buf, s...) }
func (dc *decider) wi(i int64)  { dc.d.buf = strconv.AppendInt(dc.d.buf, i, 10) }
func (dc *decider) wq(s string) { dc.d.buf = strconv.AppendQuote(dc.d.buf, s) }
func (dc *decider) wres(r int)  { dc.w(dc.s.resources[r]) }

// wnote names the quota windows and tier in force, if any.
func (dc *decider) wnote() {
	if note := dc.s.limits[dc.q].note; note != "" {
		dc.w(" (")
		dc.w(note)
		dc.w(" in force)")
	}
}

// wqty writes a quantity of resource r the way people write it: cpu in
// cores (or millicores), memory with a binary suffix when it divides evenly.
func (dc *decider) wqty(r int, v int64) { dc.d.buf = appendQuantity(dc.d.buf, dc.s.resources[r], v) }

// finish turns the text buffer into the decision's strings: one copy of
// it, or (for DecideInto) views of it, which cost nothing.
func (dc *decider) finish(copyText bool) {
	d := dc.d
	if len(d.buf) == 0 {
		return
	}
	var text string
	if copyText {
		text = string(d.buf)
	} else {
		text = unsafe.String(unsafe.SliceData(d.buf), len(d.buf))
	}
	sub := func(sp span) string { return text[sp.from:sp.to] }
	d.Message = sub(dc.msg)
	for i := range d.Trail {
		var sp span
		if i < len(dc.spans) {
			sp = dc.spans[i]
		} else {
			sp = dc.extra[i-len(dc.spans)]
		}
		d.Trail[i].Detail = sub(sp)
	}
}

// conclude sets the verdict from the reason, with the message text between
// m and now; the last trail check records it too.
func (dc *decider) conclude(st Stage, reason Reason, m int32) {
	dc.msg = dc.since(m)
	dc.d.Reason, dc.d.Verdict = reason, reason.Verdict()
	v := reason.Verdict()
	dc.check(st, v == VerdictAdmit || v == VerdictPreempt, dc.msg)
}

func (dc *decider) run() {
	s, r := dc.s, dc.r
	// Validate.
	if msg, field := s.validate(r); msg != "" {
		m := dc.mark()
		dc.w(field)
		dc.w(": ")
		dc.w(msg)
		dc.conclude(StageValidate, InvalidRequest, m)
		return
	}
	// A workload that already runs cannot be admitted again; Commit would
	// refuse it, so say so now.
	if _, running := s.runningByID(r.ID); running {
		m := dc.mark()
		dc.w("id: workload ")
		dc.wq(r.ID)
		dc.w(" is already running")
		dc.conclude(StageValidate, InvalidRequest, m)
		return
	}
	dc.check(StageValidate, true, span{})
	q, ok := s.queueIdx[r.Queue]
	if !ok {
		m := dc.mark()
		dc.w("queue ")
		dc.wq(r.Queue)
		dc.w(" does not exist")
		dc.conclude(StageValidate, UnknownQueue, m)
		return
	}
	dc.q, dc.qc = q, &s.quota.Queues[q]
	// Authorize.
	if !dc.qc.Authorized(r.Tenant) {
		m := dc.mark()
		dc.w("tenant ")
		dc.wq(r.Tenant)
		dc.w(" may not submit to queue ")
		dc.wq(r.Queue)
		dc.conclude(StageAuthorize, Unauthorized, m)
		return
	}
	dc.check(StageAuthorize, true, span{})
	// Hold.
	if dc.qc.Hold {
		m := dc.mark()
		dc.w("queue ")
		dc.wq(r.Queue)
		dc.w(" is on hold: it admits nothing new")
		dc.conclude(StageHold, QueueHeld, m)
		return
	}
	if ahead := s.strictAhead(dc.q, r, dc.d.work); ahead != nil {
		m := dc.mark()
		dc.w("queue ")
		dc.wq(r.Queue)
		dc.w(" is StrictFIFO and ")
		dc.wq(ahead.ID)
		dc.w(" waits ahead of this request")
		dc.conclude(StageHold, HigherPriorityPending, m)
		return
	}
	dc.check(StageHold, true, span{})
	dc.resolve()
	if !dc.caps() {
		return
	}
	if !dc.assign() {
		return
	}
	dc.admit()
}

// caps checks the queue's per-user and non-preemptible caps (checkCaps).
func (dc *decider) caps() bool {
	s, r := dc.s, dc.r
	if !s.limits[dc.q].capped(r.Preemption.Class) {
		return true
	}
	var need res.Vec
	for i := 0; i < dc.n; i++ {
		need = need.Add(dc.need[i])
	}
	m := dc.mark()
	if b, over := s.checkCaps(dc.q, r.User, r.Preemption.Class, need); over {
		dc.d.buf = s.appendCapBreach(dc.d.buf, b, r.User, r.Queue)
		dc.conclude(StageCaps, b.reason, m)
		return false
	}
	dc.w("within the queue's caps")
	dc.check(StageCaps, true, dc.since(m))
	return true
}

// resolve turns the request's pod sets into vectors.
func (dc *decider) resolve() {
	s, r := dc.s, dc.r
	dc.n = len(r.PodSets)
	for i := range r.PodSets {
		ps := &r.PodSets[i]
		var v res.Vec
		for k, name := range s.resources {
			v[k] = ps.PerPod[name]
		}
		dc.perPod[i] = v
		if ps.Tokens != nil && s.tokens >= 0 {
			v[s.tokens] += ps.Tokens.Prompt + ps.Tokens.MaxTokens
		}
		dc.need[i] = v.Scale(int64(ps.Count))
		dc.chosen[i] = -1
		dc.asgFrom[i] = -1
	}
}

// attempt is the outcome of trying one flavor for one unit of pod sets.
type attempt struct {
	flavor int32
	reason Reason
	never  bool
	fit    quotaFit
	fail   gang.Failure
	podSet int
	// deferred marks a flavor that fits only by borrowing, passed over
	// for now under whenCanBorrow: TryNextFlavor.
	deferred bool
}

// rank orders failed attempts by how close they came: a flavor whose quota
// fits but whose nodes do not (yet) beats one that waits for quota, which
// beats one that can never hold the request.
func (a *attempt) rank() int {
	switch {
	case a.never:
		return 1
	case a.reason == QuotaExhausted || a.reason == HardCapReached:
		return 2
	}
	return 3
}

// assign picks a flavor for every pod set (a group's members together) and
// places it. It concludes the decision on failure.
func (dc *decider) assign() bool {
	r := dc.r
	for i := 0; i < dc.n; i++ {
		if dc.chosen[i] >= 0 {
			continue // placed with its group
		}
		members := dc.unit(i)
		var best attempt
		tried := false
		// Kueue's whenCanBorrow: TryNextFlavor passes over flavors that
		// need borrowing while a later one may fit within nominal quota;
		// the second pass takes the first of them that still fits.
		var deferredBuf [16]int // more flavors than this grow it
		deferred := deferredBuf[:0]
		for pass := 0; pass < 2; pass++ {
			for k := range dc.qc.Flavors {
				fq := &dc.qc.Flavors[k]
				f := fq.Flavor
				if !dc.allowed(members, f) || pass == 1 && !slices.Contains(deferred, k) {
					continue
				}
				a := dc.try(members, fq, pass == 1 || !dc.qc.TryNextWhenBorrowing)
				if a.deferred {
					deferred = append(deferred, k)
					continue
				}
				if a.reason == 0 {
					for m := 0; m < dc.n; m++ {
						if members&(1<<m) != 0 {
							dc.chosen[m] = f
						}
					}
					dc.level = max(dc.level, a.fit.level)
					dc.overSoft = dc.overSoft || a.fit.overSoft
					goto placed
				}
				if !tried || a.rank() > best.rank() {
					best, tried = a, true
				}
				// whenCanPreempt: Preempt stops at the first flavor where
				// victims make room for the whole request.
				if dc.qc.StopAtPreemption && !a.never {
					dc.explain(a)
					if dc.tryPreemption(f) {
						return false
					}
					dc.d.Trail = dc.d.Trail[:len(dc.d.Trail)-1]
				}
			}
			if len(deferred) == 0 {
				break
			}
		}
		// No flavor took the unit: explain the one that came closest.
		switch {
		case tried:
			dc.explain(best)
			// Not admissible as things stand: when the request could fit
			// later and the queue's policy allows, look for victims.
			if !best.never {
				dc.tryPreemption(-1)
			}
		default:
			m := dc.mark()
			dc.w("queue ")
			dc.wq(r.Queue)
			dc.w(" has no quota on any flavor pod set ")
			dc.wq(r.PodSets[i].Name)
			dc.w(" may use")
			dc.conclude(StageQuota, NeverFits, m)
		}
		return false
	placed:
	}
	return true
}

// unit is the set of pod sets placed together with pod set i: its group, or
// itself. Bit k set means pod set k.
func (dc *decider) unit(i int) uint16 {
	g := dc.r.PodSets[i].Topology.Group
	if g == "" {
		return 1 << i
	}
	var u uint16
	for k := i; k < dc.n; k++ {
		if dc.r.PodSets[k].Topology.Group == g {
			u |= 1 << k
		}
	}
	return u
}

// allowed reports whether every member may use flavor f.
func (dc *decider) allowed(u uint16, f int32) bool {
	name := dc.s.flavors[f].Name
	for k := 0; k < dc.n; k++ {
		if u&(1<<k) == 0 {
			continue
		}
		fs := dc.r.PodSets[k].Flavors
		if len(fs) == 0 {
			continue
		}
		ok := false
		for _, a := range fs {
			if a == name {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// try checks quota and placement of a unit on one flavor.
func (dc *decider) try(u uint16, fq *quota.FlavorQuota, mayBorrow bool) attempt {
	s := dc.s
	f := fq.Flavor
	a := attempt{flavor: f}
	// Quota: what earlier pod sets of this request put on the same flavor,
	// plus this unit, against the queue's quota in its cohort tree.
	var earlier, need res.Vec
	for k := 0; k < dc.n; k++ {
		switch {
		case u&(1<<k) != 0:
			need = need.Add(dc.need[k])
		case dc.chosen[k] == f:
			earlier = earlier.Add(dc.need[k])
		}
	}
	a.fit = s.fitQuota(dc.q, fq, earlier, need)
	switch a.fit.verdict {
	case quota.NoFitEver:
		a.reason, a.never = a.fit.reason, true
		return a
	case quota.NoFitNow:
		a.reason = a.fit.reason
		a.never = !dc.everPlaceable(u, f)
		return a
	}
	if a.fit.level > 0 && !mayBorrow {
		a.deferred = true
		return a
	}
	if !s.flavorHasNodes(f) {
		return a
	}
	sets := dc.gangSets(u, f)
	w := dc.d.work
	if len(sets) == 1 {
		w.capacity.Reset(s.capacity)
		if fail, never := w.capacity.Never(&sets[0]); never {
			a.reason, a.never, a.fail, a.podSet = NeverFits, true, fail, dc.memberIndex(u, 0)
			return a
		}
	}
	mark := len(w.asg)
	for i := range sets {
		w.asg = slices.Grow(w.asg, int(sets[i].Count))
	}
	pl := dc.placer()
	pl.Final = !dc.laterUnits(u)
	asg, fail, ok := pl.Place(sets, w.asg)
	w.asg = asg
	if ok {
		at := int32(mark)
		for k := 0; k < dc.n; k++ {
			if u&(1<<k) != 0 {
				dc.asgFrom[k] = at
				at += dc.r.PodSets[k].Count
			}
		}
		return a
	}
	w.asg = w.asg[:mark]
	a.fail, a.podSet = fail, dc.memberIndex(u, fail.PodSet)
	dc.classify(&a, u, sets)
	return a
}

// laterUnits reports whether pod sets after unit u are still to be placed.
func (dc *decider) laterUnits(u uint16) bool {
	for k := 0; k < dc.n; k++ {
		if u&(1<<k) == 0 && dc.chosen[k] < 0 {
			return true
		}
	}
	return false
}

// memberIndex maps an index into a unit's pod sets back to the request's.
func (dc *decider) memberIndex(u uint16, i int) int {
	for k := 0; k < dc.n; k++ {
		if u&(1<<k) != 0 {
			if i == 0 {
				return k
			}
			i--
		}
	}
	return 0
}

// gangSets resolves a unit's pod sets for the placer on flavor f.
func (dc *decider) gangSets(u uint16, f int32) []gang.PodSet {
	s := dc.s
	out := dc.d.work.gsets[:0]
	for k := 0; k < dc.n; k++ {
		if u&(1<<k) == 0 {
			continue
		}
		g := s.gangPodSet(&dc.r.PodSets[k], dc.perPod[k], f)
		if dc.r.PodSets[k].Topology.Group != "" {
			g.Group = 1
		}
		out = append(out, g)
	}
	dc.d.work.gsets = out
	return out
}

// everPlaceable reports whether the unit could be placed on flavor f of an
// empty cluster (always true on a quota-only flavor).
func (dc *decider) everPlaceable(u uint16, f int32) bool {
	if !dc.s.flavorHasNodes(f) {
		return true
	}
	sets := dc.gangSets(u, f)
	p := &dc.d.work.capacity
	p.Reset(dc.s.capacity)
	if len(sets) == 1 {
		if _, never := p.Never(&sets[0]); never {
			return false
		}
	}
	w := dc.d.work
	mark := len(w.asg)
	asg, _, ok := p.Place(sets, w.asg)
	w.asg = asg[:mark]
	return ok
}

// classify tells why a placement failed: it never fits, it waits for nodes
// to cool down, there is not enough free, or the free capacity has the
// wrong shape.
func (dc *decider) classify(a *attempt, u uint16, sets []gang.PodSet) {
	s := dc.s
	w := dc.d.work
	p := &w.capacity
	p.Reset(s.capacity)
	mark := len(w.asg)
	asg, fail, ok := p.Place(sets, w.asg)
	w.asg = asg[:mark]
	if !ok {
		a.reason, a.never, a.fail = NeverFits, true, fail
		return
	}
	if len(s.state.Cooling()) > 0 {
		p.Reset(s.state)
		p.IgnoreCooldown = true
		asg, _, ok := p.Place(sets, w.asg)
		w.asg = asg[:mark]
		if ok {
			a.reason = Cooldown
			return
		}
	}
	free := s.state.FlavorFree(a.flavor)
	var need res.Vec
	for i := range sets {
		need = need.Add(sets[i].Res.Scale(sets[i].Count))
	}
	for r := range s.resources {
		if need[r] > free[r] {
			a.reason = InsufficientCapacity
			a.fit.res, a.fit.need, a.fit.avail = r, need[r], free[r]
			return
		}
	}
	a.reason = TopologyUnsatisfiable
	if s.gpu >= 0 {
		a.fit.res, a.fit.need, a.fit.avail = s.gpu, need[s.gpu], free[s.gpu]
	}
}

// explain concludes a failed assignment from the attempt that tells most.
func (dc *decider) explain(a attempt) {
	s, r := dc.s, dc.r
	flavor := s.flavors[a.flavor].Name
	m := dc.mark()
	q := a.fit
	switch a.reason {
	case QuotaExhausted:
		dc.w("queue ")
		dc.wq(r.Queue)
		dc.w(" uses ")
		dc.wqty(q.res, q.used)
		dc.w("/")
		dc.wqty(q.res, q.limit)
		dc.w(" ")
		dc.wres(q.res)
		dc.w(" of ")
		dc.w(flavor)
		dc.w(" nominal quota, the request needs ")
		dc.wqty(q.res, q.need)
		dc.w(" and ")
		dc.wqty(q.res, q.avail)
		dc.w(" are available")
		if dc.qc.Cohort >= 0 {
			dc.w(" with what cohort ")
			dc.wq(s.quota.CohortName(dc.qc.Cohort))
			dc.w(" can lend")
		}
		dc.wnote()
		dc.conclude(StageQuota, QuotaExhausted, m)
	case HardCapReached:
		dc.w("queue ")
		dc.wq(r.Queue)
		dc.w(" holds ")
		dc.wqty(q.res, q.used)
		dc.w(" ")
		dc.wres(q.res)
		dc.w(" of ")
		dc.w(flavor)
		dc.w(" under a hard cap of ")
		dc.wqty(q.res, q.limit)
		dc.w(", the request needs ")
		dc.wqty(q.res, q.need)
		dc.wnote()
		dc.conclude(StageQuota, HardCapReached, m)
	case ExceedsHardCap:
		dc.w("the request needs ")
		dc.wqty(q.res, q.need)
		dc.w(" ")
		dc.wres(q.res)
		dc.w(" of ")
		dc.w(flavor)
		dc.w(", more than queue ")
		dc.wq(r.Queue)
		dc.w("'s hard cap of ")
		dc.wqty(q.res, q.limit)
		dc.wnote()
		dc.conclude(StageQuota, ExceedsHardCap, m)
	case NeverFits:
		if a.fail.Need == 0 { // quota
			dc.w("the request needs ")
			dc.wqty(q.res, q.need)
			dc.w(" ")
			dc.wres(q.res)
			dc.w(" of ")
			dc.w(flavor)
			if fq, ok := dc.qc.Quota(a.flavor); ok && fq.Covered&(1<<q.res) != 0 {
				dc.w(", more than queue ")
				dc.wq(dc.r.Queue)
				dc.w(" could ever get: ")
				dc.wqty(q.res, q.limit)
				dc.w(" (its largest nominal quota, the cohort and borrowing limits considered)")
			} else {
				dc.w(", on which queue ")
				dc.wq(dc.r.Queue)
				dc.w(" has no quota of it")
			}
			dc.conclude(StageQuota, NeverFits, m)
			return
		}
		dc.w("no domain of ")
		dc.w(flavor)
		dc.w(" could ever hold pod set ")
		dc.wq(r.PodSets[a.podSet].Name)
		dc.w(": on an empty cluster it fits only ")
		dc.wi(a.fail.Fit)
		dc.w(" of ")
		dc.wi(a.fail.Need)
		dc.w(" pods at level ")
		dc.w(s.levelName(a.fail.Level))
		dc.conclude(StagePlacement, NeverFits, m)
	case Cooldown:
		dc.w("pod set ")
		dc.wq(r.PodSets[a.podSet].Name)
		dc.w(" fits ")
		dc.w(flavor)
		dc.w(" only on nodes still cooling down")
		dc.conclude(StagePlacement, Cooldown, m)
	case InsufficientCapacity:
		dc.w(flavor)
		dc.w(" has ")
		dc.wqty(q.res, q.avail)
		dc.w(" ")
		dc.wres(q.res)
		dc.w(" free on usable nodes, the request needs ")
		dc.wqty(q.res, q.need)
		dc.conclude(StagePlacement, InsufficientCapacity, m)
	case TopologyUnsatisfiable:
		if s.gpu >= 0 {
			dc.w(flavor)
			dc.w(" has ")
			dc.wi(q.avail)
			dc.w(" gpu free for the ")
			dc.wi(q.need)
			dc.w(" needed, but ")
		}
		dc.w("pod set ")
		dc.wq(r.PodSets[a.podSet].Name)
		dc.w(" fits only ")
		dc.wi(a.fail.Fit)
		dc.w(" of ")
		dc.wi(a.fail.Need)
		dc.w(" pods at level ")
		dc.w(s.levelName(a.fail.Level))
		dc.conclude(StagePlacement, TopologyUnsatisfiable, m)
	}
}

// placer returns the decision's reusable placer, set to the snapshot on
// first use; later pod sets of the request see the earlier ones' pods.
func (dc *decider) placer() *gang.Placer {
	p := &dc.d.work.placer
	if !dc.placerReady {
		p.Reset(dc.s.state)
		dc.placerReady = true
	}
	return p
}

// admit fills in an admission.
func (dc *decider) admit() {
	s, r, d := dc.s, dc.r, dc.d
	// Quota figures of the first pod set's flavor, in its main resource.
	f := dc.chosen[0]
	res0 := dc.mainResource()
	fq, _ := dc.qc.Quota(f)
	used := s.usageOf(dc.q, f)[res0]
	var total int64
	for k := 0; k < dc.n; k++ {
		if dc.chosen[k] == f {
			total += dc.need[k][res0]
		}
	}
	qm := dc.mark()
	dc.w(s.flavors[f].Name)
	dc.w(": ")
	dc.wres(res0)
	dc.w(" ")
	dc.wqty(res0, used+total)
	dc.w("/")
	dc.wqty(res0, fq.Nominal[res0])
	dc.w(" of nominal after admission")
	if dc.level > 0 {
		// The level is the height of the lowest ancestor that holds the
		// request (Kueue's borrowing level), not its distance.
		path := s.rtree.Path(dc.q)
		from := path[len(path)-1]
		for _, a := range path[1:] {
			if s.rtree.Height(a) >= dc.level {
				from = a
				break
			}
		}
		dc.w(", borrowing from cohort ")
		dc.wq(s.rtree.Name(from))
		dc.w(" (borrowing level ")
		dc.wi(int64(dc.level))
		dc.w(")")
	}
	if dc.overSoft && fq.SoftMask&(1<<res0) != 0 {
		dc.w(", over the soft cap of ")
		dc.wqty(res0, fq.Soft[res0])
		dc.w(" on idle capacity")
	}
	dc.wnote()
	qs := dc.since(qm)
	dc.check(StageQuota, true, qs)
	placed, pods := false, int64(0)
	for i := 0; i < dc.n; i++ {
		if dc.asgFrom[i] >= 0 {
			placed = true
			pods += int64(r.PodSets[i].Count)
		}
	}
	var pm span
	if placed {
		pm = dc.describePlacement(pods)
		dc.check(StagePlacement, true, pm)
	}
	// Backfill safety, then the soft cap: either may still make it wait.
	if placed {
		if ok, moved := dc.backfillSafe(); !ok {
			return
		} else if moved {
			pm = dc.describePlacement(pods)
		}
	}
	if dc.overSoft && dc.higherPriorityPending() {
		return
	}
	spot := false
	for i := 0; i < dc.n; i++ {
		f := dc.chosen[i]
		d.Flavors = append(d.Flavors, PodSetFlavor{PodSet: r.PodSets[i].Name, Flavor: s.flavors[f].Name})
		spot = spot || s.flavors[f].Spot
	}
	// What the admission takes beyond nominal, per flavor and resource.
	for i := 0; i < dc.n; i++ {
		f := dc.chosen[i]
		if slices.IndexFunc(dc.chosen[:i], func(o int32) bool { return o == f }) >= 0 {
			continue
		}
		fq, _ := dc.qc.Quota(f)
		after := s.usageOf(dc.q, f)
		for k := i; k < dc.n; k++ {
			if dc.chosen[k] == f {
				after = after.Add(dc.need[k])
			}
		}
		for res := range s.resources {
			if over := after[res] - fq.Nominal[res]; over > 0 && fq.Covered&(1<<res) != 0 {
				d.Borrowing = append(d.Borrowing, Borrowed{Flavor: s.flavors[f].Name, Resource: s.resources[res], Amount: over})
			}
		}
	}
	d.BorrowingLevel = dc.level
	d.Reason = Fits
	switch {
	case dc.overSoft:
		d.Reason = OverSoftCap
	case len(d.Borrowing) > 0:
		d.Reason = Borrowing
	}
	// Beyond a soft cap, or on borrowed quota, the lender may reclaim it.
	d.Preemptible = spot || d.Reason != Fits
	if placed {
		if cap(d.Placement) < int(pods) {
			d.Placement = make([]PodPlacement, 0, pods)
		}
		for i := 0; i < dc.n; i++ {
			from := dc.asgFrom[i]
			if from < 0 {
				continue
			}
			ps := &r.PodSets[i]
			for p := int32(0); p < ps.Count; p++ {
				a := d.work.asg[from+p]
				d.Placement = append(d.Placement, PodPlacement{PodSet: ps.Name, Pod: p, Node: s.topo.NodeName(a.Node), GPUs: GPUSet(a.GPUs)})
			}
		}
	}
	if dc.overSoft {
		sm := dc.mark()
		dc.w("over the soft cap, on idle capacity, preemptible; no higher-priority workload of the cohort waits")
		dc.check(StageSoftCap, true, dc.since(sm))
	}
	m := dc.mark()
	switch d.Reason {
	case Borrowing:
		dc.w("admitted by borrowing on ")
	case OverSoftCap:
		dc.w("admitted over the soft cap on ")
	default:
		dc.w("admitted on ")
	}
	dc.d.buf = append(dc.d.buf, dc.d.buf[qs.from:qs.to]...)
	if placed {
		dc.w("; ")
		dc.d.buf = append(dc.d.buf, dc.d.buf[pm.from:pm.to]...)
	}
	dc.msg = dc.since(m)
	d.Verdict = VerdictAdmit
}

// backfillSafe checks the admission found against the reservations: a
// request that ends before a reservation starts, or takes none of its GPUs,
// may start now; otherwise it is placed again around the reserved GPUs
// (moved), or it waits: then it concludes the decision and reports false.
func (dc *decider) backfillSafe() (ok, moved bool) {
	s, r := dc.s, dc.r
	if !s.backfillOn() || s.pending.Len() == 0 {
		return true, false
	}
	p := s.reservationPlan(r, dc.d.work)
	n, self := p.aheadOf((*Workload)(r))
	count := n
	if self >= 0 {
		count--
	}
	if count == 0 {
		return true, false
	}
	asg := dc.d.work.asg
	var blocking *reservation
	for i := range p.rs[:n] {
		rv := &p.rs[i]
		if i == self {
			continue
		}
		if r.ExpectedRuntime > 0 && s.now+r.ExpectedRuntime <= rv.start {
			continue // it ends before the reservation starts
		}
		if fairness.Overlaps(asg, rv.pods) {
			blocking = rv
			break
		}
	}
	m := dc.mark()
	if blocking == nil {
		dc.w("takes none of the GPUs reserved for ")
		dc.wi(int64(count))
		dc.w(" blocked workload(s), or ends before they start")
		dc.check(StageBackfill, true, dc.since(m))
		return true, false
	}
	// Place again around every reserved GPU.
	if dc.replaceAround(p, n, self) {
		dc.w("placed again, around the GPUs reserved for ")
		dc.wq(blocking.w.ID)
		dc.check(StageBackfill, true, dc.since(m))
		return true, true
	}
	dc.w("starting now would delay workload ")
	dc.wq(blocking.w.ID)
	dc.w(" (priority ")
	dc.wi(int64(blocking.w.Priority))
	dc.w("), reserved to start at t=")
	dc.wi(blocking.start)
	if r.ExpectedRuntime > 0 {
		dc.w("; the request would run until t=")
		dc.wi(s.now + r.ExpectedRuntime)
	} else {
		dc.w("; the request has no expected run time to plan around it")
	}
	dc.conclude(StageBackfill, BackfillReservation, m)
	return false, false
}

// replaceAround places the request again on a view where the GPUs of the
// plan's first n reservations are taken, but for the request's own (self,
// -1 when none); it keeps the new placement when that fits.
func (dc *decider) replaceAround(p *backfillPlan, n, self int) bool {
	s := dc.s
	st := p.heldState(n)
	if self >= 0 {
		// Rare: the request is a pending workload asked for again with
		// another priority. Its own reservation is not in its way.
		st = p.heldState(self).Fork()
		for _, rv := range p.rs[self+1 : n] {
			for _, a := range rv.pods {
				st.Allocate(a.Node, a.GPUs, res.Vec{}, 0)
			}
		}
		st.Flush()
	}
	pl := &dc.d.work.search
	pl.Reset(st)
	w := dc.d.work
	w.asg = w.asg[:0]
	for i := 0; i < dc.n; i++ {
		dc.asgFrom[i] = -1
	}
	for i := 0; i < dc.n; i++ {
		f := dc.chosen[i]
		if dc.asgFrom[i] >= 0 || !s.flavorHasNodes(f) {
			continue
		}
		u := dc.unit(i)
		mark := len(w.asg)
		asg, _, ok := pl.Place(dc.gangSets(u, f), w.asg)
		if !ok {
			return false
		}
		w.asg = asg
		at := int32(mark)
		for k := 0; k < dc.n; k++ {
			if u&(1<<k) != 0 {
				dc.asgFrom[k] = at
				at += dc.r.PodSets[k].Count
			}
		}
	}
	return true
}

// higherPriorityPending concludes the decision when a workload of higher
// priority waits in the request's cohort (in its queue, without one): a
// request over its soft cap must not take the idle capacity that workload
// could use.
func (dc *decider) higherPriorityPending() bool {
	s, r := dc.s, dc.r
	var found *Workload
	s.pending.Scan(func(w *Workload) bool {
		if w.ID == r.ID || w.Priority <= r.Priority {
			return true
		}
		q, ok := s.queueIdx[w.Queue]
		if !ok || q != dc.q && (dc.qc.Cohort < 0 || s.quota.Queues[q].Cohort != dc.qc.Cohort) {
			return true
		}
		if found == nil || w.Priority > found.Priority {
			found = w
		}
		return true
	})
	if found == nil {
		return false
	}
	m := dc.mark()
	dc.w("over its soft cap, the request may use only idle capacity, and workload ")
	dc.wq(found.ID)
	dc.w(" (priority ")
	dc.wi(int64(found.Priority))
	dc.w(") of queue ")
	dc.wq(found.Queue)
	dc.w(" waits for it")
	dc.conclude(StageSoftCap, HigherPriorityPending, m)
	return true
}

// describePlacement writes "N pods on M nodes in rack r1".
func (dc *decider) describePlacement(pods int64) span {
	s, d := dc.s, dc.d
	m := dc.mark()
	nodes := 0
	last := int32(-1)
	asg := d.work.asg
	first := asg[0].Node
	shared := s.topo.NodeLevel() - 1 // narrowest level all pods share
	for _, a := range asg {
		if a.Node != last {
			nodes++
			last = a.Node
		}
		for shared > 0 && s.topo.NodeDomains(a.Node)[shared] != s.topo.NodeDomains(first)[shared] {
			shared--
		}
	}
	dc.wi(pods)
	if pods == 1 {
		dc.w(" pod on ")
	} else {
		dc.w(" pods on ")
	}
	dc.wi(int64(nodes))
	if nodes == 1 {
		dc.w(" node ")
		dc.w(s.topo.NodeName(first))
	} else {
		dc.w(" nodes")
		if shared > 0 {
			dc.w(" in ")
			dc.w(s.topo.Levels[shared-1])
			dc.w(" ")
			dc.w(s.topo.Domains[s.topo.NodeDomains(first)[shared]].Path)
		}
	}
	return dc.since(m)
}

// mainResource is the resource messages speak of: gpu when the request
// asks for GPUs, else the first resource it asks for.
func (dc *decider) mainResource() int {
	var all res.Vec
	for i := 0; i < dc.n; i++ {
		all = all.Add(dc.need[i])
	}
	if g := dc.s.gpu; g >= 0 && all[g] > 0 {
		return g
	}
	for r := range dc.s.resources {
		if all[r] > 0 {
			return r
		}
	}
	return 0
}

// strictAhead is, for a StrictFIFO queue, the first pending workload of
// the queue when it comes before r in the queue's order (higher priority,
// earlier submission, then ID); nil when none does or the queue is not
// strict.
func (s *Snapshot) strictAhead(q int32, r *Request, work *workspace) *Workload {
	if !s.limits[q].strict {
		return nil
	}
	me := (*Workload)(r)
	work.line = lineStart(r.Queue)
	head := s.queueHead(r.Queue, &work.line, func(w *Workload) bool { return w.ID == r.ID })
	if head == nil || !pendingBefore(head, me) {
		return nil
	}
	return head
}
