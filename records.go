// The running records and the pending indexes, and their upkeep: every
// change to what is admitted or pending goes through here.

package allot

import (
	"math"
	"slices"
	"strings"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
)

func (s *Snapshot) initTrees() {
	s.running = newRunningSet(s.cost())
	s.pendingSet = &pendingSet{
		pending: cow.NewTree(func(a, b *Workload) bool { return a.ID < b.ID }),
		queued:  cow.NewTree(pendingBefore),
		byQueue: cow.NewTree(lineBefore),
		shapes:  cow.NewTree(shapeBefore),
	}
}

// runningByID and pendingByID look a workload up by ID.
func (s *Snapshot) runningByID(id string) (*running, bool) {
	return s.running.Find(func(r *running) int { return strings.Compare(r.ID, id) })
}

func (s *Snapshot) pendingByID(id string) (*Workload, bool) {
	return s.pending.Find(func(w *Workload) int { return strings.Compare(w.ID, id) })
}

// insertRunning books an admitted workload in the indexes and usage. Every
// caller has made sure that no workload of r's ID is running.
func (s *Snapshot) insertRunning(r *running) {
	s.bookRunning(r)
	s.running.Insert(r)
}

// bookRunning is insertRunning but for the set of admitted workloads,
// which Build fills with all of them at once.
func (s *Snapshot) bookRunning(r *running) {
	for i := range r.Sets {
		s.addUsage(r.Queue, r.Sets[i].Flavor, r.Need(i, s.tokens), 1)
	}
	s.trackLimits(r, 1)
	s.own(rowRunCount)
	s.runCount[r.Queue]++
}

// removeRunning releases an admitted workload. With two-phase preemption
// under way (inflight) it may be an evicting victim, which charges no
// quota and books its pods only as an orphan (victimLeft does the rest),
// or a holding preemptor, whose victims are orphans once it leaves
// (heldLeft).
func (s *Snapshot) removeRunning(r *running) {
	evicting, orphan, held := false, false, false
	if s.inflight != nil {
		var i int
		if i, evicting = s.evictingByID(r.ID); evicting {
			orphan = s.inflight.evicting[i].preemptor == ""
		}
		held = s.isHeld(r.ID)
	}
	if !evicting {
		for i := range r.Sets {
			s.addUsage(r.Queue, r.Sets[i].Flavor, r.Need(i, s.tokens), -1)
		}
	}
	if !evicting || orphan {
		s.holdPods(r, len(r.Pods), -1)
	}
	s.running.Delete(r)
	if !evicting {
		s.trackLimits(r, -1)
	}
	s.own(rowRunCount)
	s.runCount[r.Queue]--
	switch {
	case evicting:
		s.victimLeft(r.ID)
	case held:
		s.heldLeft(r.ID)
	}
}

func (s *Snapshot) addUsage(q, f int32, v res.Vec, sign int64) {
	s.rtree.AddVecFrom(s.usage, s.usageRows(), q, int(f), v, int(sign))
}

// trackLimits books (sign 1) or releases (sign -1) an admitted workload in
// the per-user and non-preemptible usage of its queue.
func (s *Snapshot) trackLimits(r *running, sign int64) {
	l := &s.limits[r.Queue]
	if !l.userCap.Set() && !l.neverCap.Set() {
		return
	}
	t := r.Total(s.tokens)
	s.own(rowUsers | rowNever)
	if l.userCap.Set() {
		s.users[r.Queue] = s.users[r.Queue].With(r.w.User, t, sign)
	}
	if l.neverCap.Set() && s.neverPreempted(r) {
		s.never[r.Queue] = quota.Held(s.never[r.Queue], t, sign)
	}
}

// recountLimits rebuilds the per-user and non-preemptible usage of every
// queue from the admitted workloads (after a configuration change), the
// evicting victims of two-phase preemptions left out.
func (s *Snapshot) recountLimits() {
	s.limitUsage = &limitUsage{users: make([]quota.UserUsage, len(s.queues)), never: make([]res.Vec, len(s.queues))}
	s.shared &^= rowUsers | rowNever
	if !slices.ContainsFunc(s.limits, func(l queueLimits) bool { return l.userCap.Set() || l.neverCap.Set() }) {
		return // nothing to count: trackLimits would skip every workload
	}
	s.running.Scan(func(r *running) bool {
		if _, evicting := s.evictingByID(r.ID); !evicting {
			s.trackLimits(r, 1)
		}
		return true
	})
}

// podRun is pods of one workload on one node, booked on the node at once.
type podRun struct {
	node   int32 // -1 for none
	gpus   uint64
	booked res.Vec
	pods   int32
}

func (run *podRun) add(gpus uint64, book res.Vec) {
	run.gpus |= gpus
	run.booked = run.booked.Add(book)
	run.pods++
}

// hold books (sign 1) or releases (sign -1) a run of pods on its node.
func (s *Snapshot) hold(run podRun, sign int) {
	switch {
	case run.node < 0 || run.pods == 0:
	case sign > 0:
		s.state.Allocate(run.node, run.gpus, run.booked, run.pods)
	default:
		s.state.Release(run.node, run.gpus, run.booked, run.pods)
	}
}

// holdPods books (sign 1) or releases (sign -1) the first count pods of r
// on their nodes, a run of pods on one node at once.
func (s *Snapshot) holdPods(r *running, count, sign int) {
	run := podRun{node: -1}
	k := 0
	for i := range r.Sets {
		book := r.Book(i, s.nodeRes)
		for range min(int(r.Sets[i].Count), count-k) {
			pa := r.Pods[k]
			k++
			if pa.Share > 0 {
				// A fractional pod books its GPU's share on its own.
				s.state.BookPod(pa.Node, pa.GPUs, pa.Share, book, 1, sign)
				continue
			}
			if pa.Node != run.node {
				s.hold(run, sign)
				run = podRun{node: pa.Node}
			}
			run.add(pa.GPUs, book)
		}
	}
	s.hold(run, sign)
}

// evict frees an admitted workload, puts it back among the pending (its
// placement cleared, to be admitted again) and records the eviction: an
// Evict event's, or another rule's that names no policy.
func (s *Snapshot) evict(r *running, e Eviction) { s.evictFor(r, e, "") }

// evictFor is evict for an eviction that policy allowed (a preemption's).
// A victim of a two-phase preemption that was evicting already is only
// gone: its eviction was recorded when it started. A preemptor evicted
// while it held its room loses no work: it never started.
func (s *Snapshot) evictFor(r *running, e Eviction, policy string) {
	_, evicting := s.evictingByID(r.ID)
	if s.isHeld(r.ID) {
		e.LostGPUSeconds = 0
	}
	if evicting {
		s.note(AuditRecord{Kind: AuditTerminated, Workload: r.ID, Queue: r.w.Queue, Priority: r.Priority, Reason: "Evicted"})
	}
	s.removeRunning(r)
	w := s.requeued(r)
	s.enqueue(&w)
	if evicting {
		return
	}
	s.evictions = append(s.evictions, e)
	if e.Preemptor != "" {
		s.own(rowDebt)
		s.debt[r.Queue] = s.debt[r.Queue].Add(s.now, s.history.HalfLife, 1)
	}
	rec := AuditRecord{Kind: AuditEvicted, Workload: r.ID, Queue: r.w.Queue, Priority: r.Priority, Preemptor: e.Preemptor,
		Reason: e.Reason, Policy: policy, LostGPUSeconds: e.LostGPUSeconds}
	if r.Checkpointable {
		rec.RecoveryPoint = r.LastCheckpoint
	}
	s.note(rec)
}

// requeued is admitted workload r as a pending one: its placement and
// admission cleared, to be admitted again.
func (s *Snapshot) requeued(r *running) Workload {
	w := r.admitted()
	w.AdmittedAt, w.Borrowing = 0, false
	w.PodSets = slices.Clone(w.PodSets)
	for i := range w.PodSets {
		w.PodSets[i].Flavor, w.PodSets[i].Nodes, w.PodSets[i].GPUIndices = "", nil, nil
		w.PodSets[i].PerPod = s.resourceMap(r.Sets[i].Per, r.Sets[i].Keys)
	}
	return w
}

// trimEvictions keeps the last evictionCap evictions once twice as many
// have gathered, so that a store's log of them stays bounded.
func (s *Snapshot) trimEvictions() {
	if n := len(s.evictions); s.evictionCap > 0 && n > 2*s.evictionCap {
		s.evictionsDropped += n - s.evictionCap
		s.evictions = slices.Clone(s.evictions[n-s.evictionCap:])
	}
}

// unevict undoes evict (the record is dropped by the caller).
func (s *Snapshot) unevict(r *running) {
	s.dequeue(r.ID)
	s.holdPods(r, len(r.Pods), 1)
	s.insertRunning(r)
}

// enqueue and dequeue keep the pending indexes and shape counts in step.
func (s *Snapshot) enqueue(w *Workload) {
	s.own(rowPending)
	if old, replaced := s.pending.Set(w); replaced {
		s.unindex(old)
	}
	s.queued.Set(w)
	s.byQueue.Set(w)
	s.countShapes(w, 1)
}

func (s *Snapshot) dequeue(id string) {
	if w, ok := s.pendingByID(id); ok {
		s.own(rowPending)
		s.pending.Delete(w)
		s.unindex(w)
	}
}

func (s *Snapshot) unindex(w *Workload) {
	s.queued.Delete(w)
	s.byQueue.Delete(w)
	s.countShapes(w, -1)
}

// addPending validates a workload joining the pending set, one of Build's
// or Submit's, and enqueues a copy of it.
func (s *Snapshot) addPending(w Workload, p string, seen map[string]string) error {
	if err := checkID(w.ID, p, seen); err != nil {
		return err
	}
	if err := resolveLocal(s, &w, p); err != nil {
		return err
	}
	if _, ok := s.queueIdx[w.Queue]; !ok {
		return buildErr(ErrUnknownQueue, p+".queue", "workload %q names queue %q", w.ID, w.Queue)
	}
	if w.SubmittedAt > s.now {
		return buildErr(ErrInvalid, p+".submittedAt", "%d is after now (%d)", w.SubmittedAt, s.now)
	}
	if msg, field := s.validate((*Request)(&w)); msg != "" {
		return buildErr(ErrInvalid, p+"."+field, "%s", msg)
	}
	// A deep copy: the caller's maps and slices stay the caller's, so
	// changing them after Build or Submit changes no version.
	cp := w.clone()
	s.enqueue(&cp)
	return nil
}

// checkID refuses an empty ID and one seen already, at another path of the
// description; with seen nil, only an empty one.
func checkID(id, p string, seen map[string]string) error {
	if id == "" {
		return buildErr(ErrInvalid, p+".id", "empty id")
	}
	if seen == nil {
		return nil
	}
	if prev, dup := seen[id]; dup {
		return buildErr(ErrDuplicateID, p+".id", "workload %q is also %s", id, prev)
	}
	seen[id] = p
	return nil
}

// lineBefore orders pending workloads by queue name, then in the queue's
// order.
func lineBefore(a, b *Workload) bool {
	if a.Queue != b.Queue {
		return a.Queue < b.Queue
	}
	return pendingBefore(a, b)
}

// pendingBefore is the order of a queue and of all pending workloads by
// priority (fairness.Turn): higher priority, then earlier submission, then
// ID.
func pendingBefore(a, b *Workload) bool { return turnOf(a).Before(turnOf(b)) }

// turnOf is what orders w among pending workloads once the fairness keys
// tie.
func turnOf(w *Workload) fairness.Turn {
	return fairness.Turn{Priority: w.Priority, SubmittedAt: w.SubmittedAt, ID: w.ID}
}

// lineStart sorts before every workload of queue q.
func lineStart(q string) Workload {
	return Workload{Queue: q, Priority: math.MaxInt32, SubmittedAt: math.MinInt64}
}

// queueHead is the first pending workload of queue q from the cursor after
// on (lineStart for the queue's start) that skip does not leave out; nil
// when none is left.
func (s *Snapshot) queueHead(q string, after *Workload, skip func(*Workload) bool) *Workload {
	var one [1]*Workload
	if a := s.queueAhead(q, after, skip, one[:0], 1); len(a) > 0 {
		return a[0]
	}
	return nil
}

// queueAhead appends to out the first n pending workloads of queue q from
// the cursor after on that skip does not leave out, in order: fewer when
// the queue has no more.
func (s *Snapshot) queueAhead(q string, after *Workload, skip func(*Workload) bool, out []*Workload, n int) []*Workload {
	left := n
	s.byQueue.Ascend(after, func(w *Workload) bool {
		if w.Queue != q {
			return false
		}
		if !skip(w) {
			out = append(out, w)
			left--
		}
		return left > 0
	})
	return out
}

// shapeBefore orders pending shapes; the count is not part of the key.
func shapeBefore(a, b gang.Demand) bool {
	if a.GPUs != b.GPUs {
		return a.GPUs < b.GPUs
	}
	if a.Flavors != b.Flavors {
		return a.Flavors < b.Flavors
	}
	for r := range a.Res {
		if a.Res[r] != b.Res[r] {
			return a.Res[r] < b.Res[r]
		}
	}
	return false
}

// countShapes adds (sign 1) or removes (-1) w's pods from the shape counts.
func (s *Snapshot) countShapes(w *Workload, sign int64) {
	q, ok := s.queueIdx[w.Queue]
	if !ok {
		return
	}
	for i := range w.PodSets {
		d, ok := s.podDemand(q, &w.PodSets[i])
		if !ok {
			continue
		}
		n := d.Count * sign
		d.Count = 0
		if cur, ok := s.shapes.Get(d); ok {
			n += cur.Count
		}
		d.Count = n
		if n > 0 {
			s.shapes.Set(d)
		} else {
			s.shapes.Delete(d)
		}
	}
}

// recountShapes rebuilds the shape counts after the queues' flavors change.
func (s *Snapshot) recountShapes() {
	s.own(rowPending)
	s.shapes = cow.NewTree(shapeBefore)
	s.pending.Scan(func(w *Workload) bool {
		s.countShapes(w, 1)
		return true
	})
}

// podDemand is what a pending pod set of queue q asks of the nodes: its
// per-pod resources that nodes of its allowed flavors hold, on those
// flavors.
func (s *Snapshot) podDemand(q int32, ps *PodSet) (gang.Demand, bool) {
	per, _, err := s.podVector(ps.PerPod, "perPod")
	if err != nil {
		return gang.Demand{}, false
	}
	d := gang.Demand{Count: int64(ps.Count)}
	var nodeRes uint16 // resources nodes of the allowed flavors hold
	for _, fq := range s.quota.Queues[q].Flavors {
		if fq.Flavor < 64 && s.serves(ps, fq.Flavor) {
			d.Flavors |= 1 << fq.Flavor
			nodeRes |= s.nodeRes[fq.Flavor]
		}
	}
	for r := range per {
		if nodeRes&(1<<r) != 0 {
			d.Res[r] = per[r]
		}
	}
	if s.gpu >= 0 {
		d.GPUs = int(per[s.gpu])
	}
	d.Share = s.shareOf(per)
	return d, true
}
