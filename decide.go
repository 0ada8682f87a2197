package allot

import (
	"slices"
	"sync"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/internal/res"
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
	// A pooled workspace holds no snapshot: it would keep that version
	// alive until the workspace is reused.
	w.nominee.s, w.nominee.r, w.nominee.qc, w.nominee.usage = nil, nil, nil, nil
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
	d.request, d.decided = r, true
	d.Workload, d.Queue, d.Version = r.ID, r.Queue, s.version
	dc := decider{assigner: assigner{s: s, r: &d.request, usage: s.usage}, d: d}
	dc.useVectors(&d.work.vectors)
	partial := r.minCounted()
	if partial {
		d.work.placeable.start() // for the full counts and every count searched
	}
	dc.run()
	dc.finish(copyText)
	if partial {
		decidePartial(s, d)
		d.work.placeable.stop()
	}
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

// decider is one decision in progress.
type decider struct {
	// assigner is the request resolved and its flavor assignment.
	assigner
	d *Decision

	placerReady bool
	// placedAny says that the placer holds pods of the request: a unit
	// placed before.
	placedAny bool

	// Text spans into d.buf: the message and each trail check's detail.
	msg   span
	spans [16]span
	extra []span
}

func (dc *decider) run() {
	s, r := dc.s, dc.r
	// Validate.
	if msg, field := s.validateInto(r, &dc.assigner); msg != "" {
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
	// The queue, and authorize: tenant and priority (enter).
	e := s.enter(r)
	if e.q >= 0 {
		r.Queue, dc.d.Queue = e.queue, e.queue // a local queue's
	}
	if e.fault != entryOK {
		m := dc.mark()
		dc.d.buf = s.appendEntryFault(dc.d.buf, &e, r)
		dc.conclude(e.stage(), e.reason(), m)
		return
	}
	dc.q, dc.qc = e.q, &s.quota.Queues[e.q]
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

// admit fills in an admission.
func (dc *decider) admit() {
	s, r, d := dc.s, dc.r, dc.d
	// Quota figures of the first pod set's flavor, in its main resource.
	qs := dc.quotaAfter(dc.asg.flavor[0], 0, dc.asg.level, dc.asg.overSoft)
	dc.check(StageQuota, true, qs)
	placed, pods := false, int64(0)
	for i := 0; i < dc.n; i++ {
		if dc.asg.placed[i] >= 0 {
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
	if dc.asg.overSoft && dc.higherPriorityPending() {
		return
	}
	spot := false
	for i := 0; i < dc.n; i++ {
		f := dc.asg.flavor[i]
		d.Flavors = append(d.Flavors, PodSetFlavor{PodSet: r.PodSets[i].Name, Flavor: s.flavors[f].Name})
		spot = spot || s.flavors[f].Spot
	}
	// What the admission takes beyond nominal, per flavor and resource:
	// the resources its pod sets there ask for (as Kueue reports
	// borrowing, an explicit 0 included), not those the queue borrows
	// for others.
	for i := 0; i < dc.n; i++ {
		f := dc.asg.flavor[i]
		if slices.IndexFunc(dc.asg.flavor[:i], func(o int32) bool { return o == f }) >= 0 {
			continue
		}
		fq, _ := dc.qc.Quota(f)
		after := s.usageOf(dc.q, f)
		var asked uint16
		for k := i; k < dc.n; k++ {
			if dc.asg.flavor[k] == f {
				after = after.Add(dc.need[k])
				asked |= dc.zeros[k]
				for res := range s.resources {
					if dc.need[k][res] != 0 {
						asked |= 1 << res
					}
				}
			}
		}
		for res := range s.resources {
			if over := after[res] - fq.Nominal[res]; over > 0 && fq.Covered&asked&(1<<res) != 0 {
				d.Borrowing = append(d.Borrowing, Borrowed{Flavor: s.flavors[f].Name, Resource: s.resources[res], Amount: over})
			}
		}
	}
	d.BorrowingLevel = dc.asg.level
	d.Reason = Fits
	switch {
	case dc.asg.overSoft:
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
			from := dc.asg.placed[i]
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
	if dc.asg.overSoft {
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
				st.BookPod(a.Node, a.GPUs, a.Share, res.Vec{}, 0, 1)
			}
		}
		st.Flush()
	}
	pl := &dc.d.work.search
	pl.Reset(st)
	w := dc.d.work
	w.asg = w.asg[:0]
	for i := 0; i < dc.n; i++ {
		dc.asg.placed[i] = -1
	}
	for i := 0; i < dc.n; i++ {
		f := dc.asg.flavor[i]
		if dc.asg.placed[i] >= 0 || !s.flavorHasNodes(f) {
			continue
		}
		u := dc.unit(i)
		mark := len(w.asg)
		asg, _, ok := pl.Place(dc.gangSets(u, f), w.asg)
		if !ok {
			return false
		}
		w.asg = asg
		dc.markPlaced(u, int32(mark))
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
		if e := s.enter((*Request)(w)); e.fault != entryOK {
			return true // it may not claim that priority there: it holds nothing back
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
