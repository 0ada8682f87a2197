// Two-phase preemption (Options.TwoPhasePreemption): victims that evict
// while their resources stay booked, and the room their preemptor holds
// until they are gone.

package allot

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/view"
)

// inflight is the two-phase preemptions under way: the preemptors that
// hold room and the victims still evicting, each sorted by ID. Versions
// share it; a writer clones it first (own(rowInflight)), and its holds'
// slices are replaced, never written.
type inflight struct {
	holds    []hold
	evicting []evictingVictim
}

func (p *inflight) clone() *inflight {
	return &inflight{holds: slices.Clone(p.holds), evicting: slices.Clone(p.evicting)}
}

// hold is a preemptor's room while its victims evict.
type hold struct {
	// r is the preemptor as it will run, its pods resolved; it is not
	// among the running, and its quota and pods are booked only as far
	// as the victims' do not cover them (nodes, quota).
	r *running
	// victims are the ones still evicting; all are every victim.
	victims, all []string
	since        int64
	// wasPending: the preemptor was pending when its Preempt decision was
	// committed, and goes back to pending if its hold is released.
	wasPending bool
	// nodes and quota are what the hold books now, beyond what its
	// evicting victims book: per node, and per flavor of its queue.
	nodes []heldRun
	quota []heldQuota
}

type heldRun struct {
	node int32
	gpus uint64
	res  res.Vec
	pods int32
}

type heldQuota struct {
	flavor int32
	v      res.Vec
}

// evictingVictim is a running workload that a two-phase preemption
// evicts: its resources stay booked until an event says it is gone. Its
// preemptor is "" once the preemptor's hold was released.
type evictingVictim struct {
	id, preemptor string
	since         int64
}

// evictingByID finds an evicting victim.
func (s *Snapshot) evictingByID(id string) (int, bool) {
	if s.inflight == nil {
		return 0, false
	}
	return slices.BinarySearchFunc(s.inflight.evicting, id, func(e evictingVictim, id string) int { return strings.Compare(e.id, id) })
}

// heldByID finds a preemptor's hold.
func (s *Snapshot) heldByID(id string) (int, bool) {
	if s.inflight == nil {
		return 0, false
	}
	return slices.BinarySearchFunc(s.inflight.holds, id, func(h hold, id string) int { return strings.Compare(h.r.ID, id) })
}

// preempting is s's inflight to write: its own, made if there is none.
func (s *Snapshot) preempting() *inflight {
	if s.inflight == nil {
		s.inflight = &inflight{}
		s.shared &^= rowInflight
	} else {
		s.own(rowInflight)
	}
	return s.inflight
}

// tidyInflight drops an empty inflight, so that the snapshot's writers
// skip two-phase upkeep while no preemption is under way.
func (s *Snapshot) tidyInflight() {
	if p := s.inflight; p != nil && len(p.holds) == 0 && len(p.evicting) == 0 {
		s.inflight = nil
	}
}

// startHold is the first phase of a two-phase preemption, once Commit has
// checked that preemptor r fits with its victims evicted (evictFor has
// recorded their evictions and put them among the pending, admission has
// booked r's pods): the victims run on, booked again and no one's victim
// any more, and r, no longer pending, holds the part of its room they do
// not cover.
func (s *Snapshot) startHold(r *running, victims []*running) {
	p := s.preempting()
	h := hold{r: r, since: s.now}
	// r's pods first: the victims' GPUs, booked again, are among them.
	s.holdPods(r, len(r.Pods), -1)
	for _, vr := range victims {
		s.dequeue(vr.ID)
		c := new(running)
		*c = *vr
		c.Pinned = true // nobody's victim while it evicts
		s.holdPods(c, len(c.Pods), 1)
		s.insertRunning(c)
		h.all = append(h.all, vr.ID)
		i, _ := slices.BinarySearchFunc(p.evicting, vr.ID, func(e evictingVictim, id string) int { return strings.Compare(e.id, id) })
		p.evicting = slices.Insert(p.evicting, i, evictingVictim{id: vr.ID, preemptor: r.ID, since: s.now})
	}
	h.victims = h.all
	if _, h.wasPending = s.pendingByID(r.ID); h.wasPending {
		s.dequeue(r.ID)
	}
	s.trackLimits(r, 1)
	h.nodes, h.quota = s.holdBooking(r, h.victims)
	s.bookHold(&h, 1)
	i, _ := s.heldByID(r.ID)
	p.holds = slices.Insert(p.holds, i, h)
	s.note(AuditRecord{Kind: AuditHeld, Workload: r.ID, Queue: r.w.Queue, Priority: r.Priority, Victims: h.all})
}

// holdBooking is what preemptor r's hold books while victims still
// evict: on each node of its placement, the GPUs they do not hold and the
// resources and pods beyond theirs there; on each flavor, the quota
// beyond what the victims of its own queue charge. Booked on top of the
// victims', that holds the room r will have once they are gone, and
// exactly that once none is left.
func (s *Snapshot) holdBooking(r *running, victims []string) ([]heldRun, []heldQuota) {
	var runs []heldRun
	at := map[int32]int{}
	add := func(b *running, into []heldRun, grow bool) []heldRun {
		k := 0
		for i := range b.Sets {
			book := b.Book(i, s.nodeRes)
			for range b.Sets[i].Count {
				pa := b.Pods[k]
				k++
				if pa.Node < 0 {
					continue
				}
				j, ok := at[pa.Node]
				if !ok {
					if !grow {
						continue
					}
					j = len(into)
					at[pa.Node] = j
					into = append(into, heldRun{node: pa.Node})
				}
				into[j].gpus |= pa.GPUs
				into[j].res = into[j].res.Add(book)
				into[j].pods++
			}
		}
		return into
	}
	runs = add(r, runs, true)
	quota := make([]heldQuota, 0, len(r.Sets))
	for i := range r.Sets {
		f := r.Sets[i].Flavor
		j := slices.IndexFunc(quota, func(q heldQuota) bool { return q.flavor == f })
		if j < 0 {
			j = len(quota)
			quota = append(quota, heldQuota{flavor: f})
		}
		quota[j].v = quota[j].v.Add(r.Need(i, s.tokens))
	}
	covered := make([]heldRun, len(runs))
	for j := range runs {
		covered[j].node = runs[j].node
	}
	for _, id := range victims {
		v, ok := s.runningByID(id)
		if !ok {
			continue
		}
		covered = add(v, covered, false)
		if v.Queue != r.Queue {
			continue
		}
		for i := range v.Sets {
			if j := slices.IndexFunc(quota, func(q heldQuota) bool { return q.flavor == v.Sets[i].Flavor }); j >= 0 {
				n := v.Need(i, s.tokens)
				quota[j].v = quota[j].v.Sub(quota[j].v.Min(n))
			}
		}
	}
	for j := range runs {
		c, h := &covered[j], &runs[j]
		gpus := s.gpu >= 0 && h.res[s.gpu] > 0
		h.gpus &^= c.gpus
		h.res = h.res.Sub(h.res.Min(c.res))
		if gpus {
			// The node counts its GPUs by the mask, and so does the
			// hold: the GPUs of its own the victims do not hold.
			h.res[s.gpu] = int64(bits.OnesCount64(h.gpus))
		}
		h.pods -= min(h.pods, c.pods)
	}
	return runs, quota
}

// bookHold books (sign 1) or releases (-1) what hold h books.
func (s *Snapshot) bookHold(h *hold, sign int) {
	for _, run := range h.nodes {
		if sign > 0 {
			s.state.Allocate(run.node, run.gpus, run.res, run.pods)
		} else {
			s.state.Release(run.node, run.gpus, run.res, run.pods)
		}
	}
	for _, q := range h.quota {
		s.addUsage(h.r.Queue, q.flavor, q.v, int64(sign))
	}
}

// victimLeft is the upkeep when a running workload leaves (removeRunning)
// while a two-phase preemption evicts it: its preemptor's hold takes over
// the room it frees, and once its last victim is gone the preemptor is
// admitted where its decision placed it.
func (s *Snapshot) victimLeft(id string) {
	i, ok := s.evictingByID(id)
	if !ok {
		return
	}
	p := s.preempting()
	e := p.evicting[i]
	p.evicting = slices.Delete(p.evicting, i, i+1)
	if e.preemptor != "" {
		j, _ := s.heldByID(e.preemptor)
		h := p.holds[j]
		s.bookHold(&h, -1)
		h.victims = slices.DeleteFunc(slices.Clone(h.victims), func(v string) bool { return v == id })
		if len(h.victims) > 0 {
			h.nodes, h.quota = s.holdBooking(h.r, h.victims)
			s.bookHold(&h, 1)
			p.holds[j] = h
		} else {
			p.holds = slices.Delete(p.holds, j, j+1)
			s.trackLimits(h.r, -1)
			r := new(running)
			*r = *h.r
			r.AdmittedAt = s.now
			s.holdPods(r, len(r.Pods), 1)
			s.insertRunning(r)
			s.note(AuditRecord{Kind: AuditAdmitted, Workload: r.ID, Queue: r.w.Queue, Priority: r.Priority, Victims: h.all})
		}
	}
	s.tidyInflight()
}

// releaseHold releases hold j of s's inflight before its victims are all
// gone: what it booked is free again, the preemptor goes back to pending
// if it was pending (unless withdrawn) and its victims go on evicting for
// nobody.
func (s *Snapshot) releaseHold(j int, reason string, withdrawn bool) {
	p := s.preempting()
	h := p.holds[j]
	s.bookHold(&h, -1)
	s.trackLimits(h.r, -1)
	p.holds = slices.Delete(p.holds, j, j+1)
	for _, v := range h.victims {
		if i, ok := s.evictingByID(v); ok {
			p.evicting[i].preemptor = ""
		}
	}
	if h.wasPending && !withdrawn {
		w := s.requeued(h.r)
		s.enqueue(&w)
	}
	s.note(AuditRecord{Kind: AuditReleased, Workload: h.r.ID, Queue: h.r.w.Queue, Priority: h.r.Priority, Victims: h.victims, Reason: reason})
	s.tidyInflight()
}

// releaseHolds releases every hold for which touched says so, with the
// reason it gives.
func (s *Snapshot) releaseHolds(touched func(h *hold) (string, bool)) {
	for j := 0; s.inflight != nil && j < len(s.inflight.holds); {
		if reason, ok := touched(&s.inflight.holds[j]); ok {
			s.releaseHold(j, reason, false)
			continue
		}
		j++
	}
}

// releaseHoldsOfQueues releases, for reason, the holds whose preemptor,
// or a victim still evicting for it, is of a queue in touches: the
// queue's configuration changed, and the preemptor is decided again under
// the new one.
func (s *Snapshot) releaseHoldsOfQueues(reason string, touches func(q int32) bool) {
	s.releaseHolds(func(h *hold) (string, bool) {
		if touches(h.r.Queue) {
			return reason, true
		}
		for _, id := range h.victims {
			if v, ok := s.runningByID(id); ok && touches(v.Queue) {
				return reason, true
			}
		}
		return "", false
	})
}

// releaseHoldsOn releases the holds that place a pod on node n, which went
// down: the preemptor cannot start there.
func (s *Snapshot) releaseHoldsOn(n int32) {
	s.releaseHolds(func(h *hold) (string, bool) {
		if slices.ContainsFunc(h.r.Pods, func(p view.Pod) bool { return p.Node == n }) {
			return fmt.Sprintf("node %q went down", s.topo.NodeName(n)), true
		}
		return "", false
	})
}

// underCohort reports whether queue q sits in the cohort tree below (or
// in) cohort name.
func (s *Snapshot) underCohort(q int32, name string) bool {
	c := s.queues[q].Cohort
	for range len(s.cohorts) + 1 {
		if c == "" {
			return false
		}
		if c == name {
			return true
		}
		i := slices.IndexFunc(s.cohorts, func(k Cohort) bool { return k.Name == c })
		if i < 0 {
			return false
		}
		c = s.cohorts[i].Parent
	}
	return false
}

// Terminated says that an evicting victim of a two-phase preemption is
// gone: its pods terminated. What it held is freed; it goes back among the
// pending, as an evicted workload does, and the room it held passes to
// its preemptor, which is admitted once its last victim is gone. Only an
// evicting workload (Snapshot.Evicting) can terminate; Finish and Evict end
// one too (it completed, or the embedder evicted it, as on a node failure).
type Terminated struct{ ID string }

func (e Terminated) apply(s *Snapshot) error {
	r, err := admitted(s, e.ID)
	if err != nil {
		return err
	}
	if _, ok := s.evictingByID(e.ID); !ok {
		return fmt.Errorf("%w: %q is running, not evicting: Finish or Evict it", ErrInvalid, e.ID)
	}
	// Noted first: the preemptor's admission, which its going may bring,
	// follows it.
	s.note(AuditRecord{Kind: AuditTerminated, Workload: r.ID, Queue: r.w.Queue, Priority: r.Priority, Reason: "Terminated"})
	s.removeRunning(r)
	w := s.requeued(r)
	s.enqueue(&w)
	return nil
}

// Hold is a preemptor of a two-phase preemption that holds its room while
// its victims evict.
type Hold struct {
	// Workload is the preemptor as it will run: flavors, nodes and GPUs
	// per pod; AdmittedAt is zero until it is admitted.
	Workload Workload `json:"workload"`
	// Victims are the ones still evicting, by ID.
	Victims []string `json:"victims"`
	// Since is when the hold started.
	Since int64 `json:"since"`
}

// Held returns the hold of a preemptor waiting for its victims to
// terminate (Options.TwoPhasePreemption). Such a workload is neither
// running nor pending.
func (s *Snapshot) Held(id string) (Hold, bool) {
	j, ok := s.heldByID(id)
	if !ok {
		return Hold{}, false
	}
	h := &s.inflight.holds[j]
	w := h.r.workload(s)
	w.AdmittedAt = 0
	return Hold{Workload: w, Victims: slices.Clone(h.victims), Since: h.since}, true
}

// HeldIDs lists the preemptors that hold room, by ID.
func (s *Snapshot) HeldIDs() []string {
	if s.inflight == nil {
		return nil
	}
	ids := make([]string, len(s.inflight.holds))
	for j := range s.inflight.holds {
		ids[j] = s.inflight.holds[j].r.ID
	}
	return ids
}

// Evicting reports whether a running workload is an evicting victim of a
// two-phase preemption, the preemptor it makes room for ("" once that
// preemptor's hold was released) and since when. It stays running, its
// resources booked, until Terminated, Evict or Finish says it is gone;
// meanwhile no preemption chooses it again.
func (s *Snapshot) Evicting(id string) (preemptor string, since int64, ok bool) {
	i, ok := s.evictingByID(id)
	if !ok {
		return "", 0, false
	}
	e := s.inflight.evicting[i]
	return e.preemptor, e.since, true
}

// EvictingIDs lists the evicting victims, by ID.
func (s *Snapshot) EvictingIDs() []string {
	if s.inflight == nil {
		return nil
	}
	ids := make([]string, len(s.inflight.evicting))
	for i, e := range s.inflight.evicting {
		ids[i] = e.id
	}
	return ids
}
