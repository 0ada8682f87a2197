// Two-phase preemption (Options.TwoPhasePreemption): victims that evict
// while their pods keep their nodes booked, and the preemptor that holds
// its room until they are gone.

package allot

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/view"
)

// inflight is the two-phase preemptions under way: the holds, by
// preemptor ID, and the victims still evicting, by ID. Versions share it;
// a writer clones it first (own(rowInflight)), and its holds' slices are
// replaced, never written.
//
// A holding preemptor is among the running records, as admitted: its
// quota charged (Kueue's QuotaReserved) and its pods booked where its
// decision placed them, so that no one else takes the room and, like any
// admitted workload, it may be preempted in turn. The accessors and events
// do not show it as running until it starts. Its victims stay among the
// running records too, pinned (nobody's victim again) and charging no
// quota, which passed to the preemptor at once; their pods book what the
// preemptor's placement does not cover (hold.excess). A victim whose
// preemptor's hold went (an orphan) books its own pods again, until it is
// gone or another preemptor placed over it waits for it.
type inflight struct {
	holds    []hold
	evicting []evictingVictim
}

func (p *inflight) clone() *inflight {
	return &inflight{holds: slices.Clone(p.holds), evicting: slices.Clone(p.evicting)}
}

// hold is a preemptor waiting for its victims to be gone.
type hold struct {
	preemptor string
	// victims are the ones still evicting (those the decision named and
	// orphans its placement covers), sorted; decided are the decision's.
	victims, decided []string
	since            int64
	// wasPending: the preemptor was pending when its Preempt decision was
	// committed, and goes back to pending if its hold is released.
	wasPending bool
	// excess is what the victims' pods book beyond the preemptor's pods,
	// per node.
	excess []heldRun
}

// heldRun is a booking on one node.
type heldRun struct {
	node int32
	gpus uint64
	res  res.Vec
	pods int32
	// share, when not zero, makes the run one fractional pod's: share
	// thousandths of the one GPU of gpus.
	share int32
}

// evictingVictim is a running workload a two-phase preemption evicts. Its
// preemptor is "" once that preemptor's hold went: it is an orphan, which
// books its own pods.
type evictingVictim struct {
	id, preemptor string
	since         int64
}

func byVictimID(e evictingVictim, id string) int { return strings.Compare(e.id, id) }
func byPreemptor(h hold, id string) int          { return strings.Compare(h.preemptor, id) }

// evictingByID finds an evicting victim.
func (s *Snapshot) evictingByID(id string) (int, bool) {
	if s.inflight == nil {
		return 0, false
	}
	return slices.BinarySearchFunc(s.inflight.evicting, id, byVictimID)
}

// heldByID finds the hold of a preemptor.
func (s *Snapshot) heldByID(id string) (int, bool) {
	if s.inflight == nil {
		return 0, false
	}
	return slices.BinarySearchFunc(s.inflight.holds, id, byPreemptor)
}

// isHeld reports whether running record id is a preemptor that holds its
// room and has not started.
func (s *Snapshot) isHeld(id string) bool {
	_, ok := s.heldByID(id)
	return ok
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

// adoptOrphans releases the pods of the orphans with a pod on a node of
// d's placement, so that d's placement can be checked as if they were
// gone, and returns them: d's preemptor will wait for them too.
func (s *Snapshot) adoptOrphans(d *Decision) []string {
	if s.inflight == nil {
		return nil
	}
	var nodes []int32
	for _, pl := range d.Placement {
		if n, ok := s.topo.NodeIndex(pl.Node); ok && !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	var adopted []string
	for _, e := range s.inflight.evicting {
		if e.preemptor != "" {
			continue
		}
		v, ok := s.runningByID(e.id)
		if ok && slices.ContainsFunc(v.Pods, func(p view.Pod) bool { return slices.Contains(nodes, p.Node) }) {
			s.holdPods(v, len(v.Pods), -1)
			adopted = append(adopted, e.id)
		}
	}
	return adopted
}

// startHold is the first phase of a two-phase preemption, once Commit has
// found that preemptor r fits with the decided victims evicted (evictFor
// recorded their evictions and put them among the pending; victims are
// those of them that had started) and the orphans on its nodes adopted
// (adoptOrphans released their pods), and admission booked r's pods. r is admitted as holding: no longer pending, its quota charged
// and its pods booked. The victims run on: out of the pending again,
// pinned, charging no quota (it passed to r at once, as in one phase:
// were it still theirs, their queues would look as if they borrowed it
// until they are gone, and other preemptors would reclaim from those
// queues again for quota r has taken, a cascade of evictions), their pods
// booking what r's do not cover, the adopted orphans' among them.
func (s *Snapshot) startHold(r *running, victims []*running, decided, adopted []string) {
	_, wasPending := s.pendingByID(r.ID)
	if wasPending {
		s.dequeue(r.ID)
	}
	s.insertRunning(r)
	p := s.preempting()
	h := hold{preemptor: r.ID, since: s.now, wasPending: wasPending, decided: decided}
	for _, vr := range victims {
		s.dequeue(vr.ID)
		c := new(running)
		*c = *vr
		c.Pinned = true // nobody's victim again while it evicts
		s.running.Insert(c)
		s.own(rowRunCount)
		s.runCount[c.Queue]++
		h.victims = append(h.victims, vr.ID)
		i, _ := slices.BinarySearchFunc(p.evicting, vr.ID, byVictimID)
		p.evicting = slices.Insert(p.evicting, i, evictingVictim{id: vr.ID, preemptor: r.ID, since: s.now})
	}
	for _, id := range adopted {
		i, _ := slices.BinarySearchFunc(p.evicting, id, byVictimID)
		p.evicting[i].preemptor = r.ID
	}
	h.victims = append(h.victims, adopted...)
	if len(h.victims) == 0 {
		// Its victims all held their room and never started: nothing is
		// left to wait for.
		s.tidyInflight()
		s.note(AuditRecord{Kind: AuditAdmitted, Workload: r.ID, Queue: r.w.Queue, Priority: r.Priority, Victims: decided})
		return
	}
	slices.Sort(h.victims)
	h.excess = s.excessBooking(r, h.victims)
	s.bookRuns(h.excess, 1)
	i, _ := slices.BinarySearchFunc(p.holds, r.ID, byPreemptor)
	p.holds = slices.Insert(p.holds, i, h)
	s.note(AuditRecord{Kind: AuditHeld, Workload: r.ID, Queue: r.w.Queue, Priority: r.Priority, Victims: h.victims})
}

// excessBooking is what the pods of victims book beyond those of
// preemptor pre, per node: the GPUs pre's pods do not take, the resources
// and pods beyond pre's. Booked beside pre's pods, that covers what the
// victims' pods occupy until they are gone, and nothing once none is
// left. A victim's fractional pod keeps its share booked, a run of its
// own, unless pre's pods take that GPU (whole or a share of it). Where
// pre's fractional pods share a GPU a victim's pods are on, the rest of
// that GPU is booked too, a run of no pod, so that nobody else takes it
// before the victims are gone: an orphan books its own pods there again.
func (s *Snapshot) excessBooking(pre *running, victims []string) []heldRun {
	var runs []heldRun
	at := map[int32]int{}
	for _, id := range victims {
		v, ok := s.runningByID(id)
		if !ok {
			continue
		}
		runs = addRuns(s, v, runs, at)
	}
	// What pre's pods book on each node: mine for the victims' merged
	// runs, and the GPUs they touch, shares included.
	mine := make([]heldRun, len(runs))
	touch := make([]uint64, len(runs))
	for j := range runs {
		mine[j].node = runs[j].node
	}
	k := 0
	for i := range pre.Sets {
		book := pre.Book(i, s.nodeRes)
		for range pre.Sets[i].Count {
			pa := pre.Pods[k]
			k++
			j, ok := at[pa.Node]
			if pa.Node < 0 || !ok {
				continue
			}
			touch[j] |= pa.GPUs
			if pa.Share == 0 {
				mine[j].gpus |= pa.GPUs
			}
			mine[j].res = mine[j].res.Add(book)
			mine[j].pods++
		}
	}
	// The GPUs the victims' pods are on, per node.
	victimGPUs := make([]uint64, len(runs))
	for j := range runs {
		victimGPUs[at[runs[j].node]] |= runs[j].gpus
	}
	out := runs[:0]
	var blocks []heldRun
	for j := range runs {
		e, h := runs[j], &mine[j]
		if e.share > 0 {
			if touch[at[e.node]]&e.gpus == 0 {
				out = append(out, e)
			}
			continue
		}
		for m := touch[j] &^ h.gpus & victimGPUs[j]; m != 0; m &= m - 1 {
			gi := bits.TrailingZeros64(m)
			if room := s.state.ShareRoom(e.node, gi); room > 0 {
				blocks = append(blocks, heldRun{node: e.node, gpus: 1 << gi, share: room})
			}
		}
		gpus := s.gpu >= 0 && e.res[s.gpu] > 0
		e.gpus &^= touch[j]
		e.res = e.res.Sub(e.res.Min(h.res))
		if gpus {
			// The node counts its GPUs by the mask, and so does the
			// excess: the victims' GPUs the preemptor's pods do not take.
			e.res[s.gpu] = int64(bits.OnesCount64(e.gpus))
		}
		e.pods -= min(e.pods, h.pods)
		out = append(out, e)
	}
	return append(out, blocks...)
}

// addRuns adds what b's pods book to runs, per node (at maps a node to its
// run of whole-GPU pods, which it gets with the first pod there); a
// fractional pod gets a run of its own.
func addRuns(s *Snapshot, b *running, runs []heldRun, at map[int32]int) []heldRun {
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
				j = len(runs)
				at[pa.Node] = j
				runs = append(runs, heldRun{node: pa.Node})
			}
			if pa.Share > 0 {
				runs = append(runs, heldRun{node: pa.Node, gpus: pa.GPUs, res: book, pods: 1, share: pa.Share})
				continue
			}
			runs[j].gpus |= pa.GPUs
			runs[j].res = runs[j].res.Add(book)
			runs[j].pods++
		}
	}
	return runs
}

// bookRuns books (sign 1) or releases (-1) runs on their nodes.
func (s *Snapshot) bookRuns(runs []heldRun, sign int) {
	for _, run := range runs {
		switch {
		case run.share > 0:
			s.state.BookPod(run.node, run.gpus, run.share, run.res, run.pods, sign)
		case sign > 0:
			s.state.Allocate(run.node, run.gpus, run.res, run.pods)
		default:
			s.state.Release(run.node, run.gpus, run.res, run.pods)
		}
	}
}

// victimLeft is the upkeep when evicting victim id leaves the running
// (removeRunning has released an orphan's pods): what it booked beyond its
// preemptor's pods is free, and once the preemptor's last victim is gone
// the preemptor starts where its decision placed it.
func (s *Snapshot) victimLeft(id string) {
	i, _ := s.evictingByID(id)
	p := s.preempting()
	e := p.evicting[i]
	p.evicting = slices.Delete(p.evicting, i, i+1)
	if e.preemptor != "" {
		j, _ := s.heldByID(e.preemptor)
		h := p.holds[j]
		s.bookRuns(h.excess, -1)
		h.victims = slices.DeleteFunc(slices.Clone(h.victims), func(v string) bool { return v == id })
		pre, _ := s.runningByID(h.preemptor)
		if len(h.victims) > 0 {
			h.excess = s.excessBooking(pre, h.victims)
			s.bookRuns(h.excess, 1)
			p.holds[j] = h
		} else {
			p.holds = slices.Delete(p.holds, j, j+1)
			c := new(running)
			*c = *pre
			c.AdmittedAt = s.now
			s.running.Set(c)
			s.note(AuditRecord{Kind: AuditAdmitted, Workload: c.ID, Queue: c.w.Queue, Priority: c.Priority, Victims: h.decided})
		}
	}
	s.tidyInflight()
}

// heldLeft is the upkeep when holding preemptor id leaves the running
// (removeRunning has released its pods and quota): its hold goes, and its
// victims, evicting all the same, are orphans that book their own pods.
func (s *Snapshot) heldLeft(id string) {
	j, _ := s.heldByID(id)
	p := s.preempting()
	h := p.holds[j]
	s.bookRuns(h.excess, -1)
	p.holds = slices.Delete(p.holds, j, j+1)
	for _, v := range h.victims {
		i, _ := s.evictingByID(v)
		p.evicting[i].preemptor = ""
		if vr, ok := s.runningByID(v); ok {
			s.holdPods(vr, len(vr.Pods), 1)
		}
	}
	s.tidyInflight()
}

// releaseHold releases hold j before its victims are all gone: the
// preemptor leaves, pending again if it was (unless withdrawn), and its
// victims evict all the same, for nobody.
func (s *Snapshot) releaseHold(j int, reason string, withdrawn bool) {
	h := s.inflight.holds[j]
	r, _ := s.runningByID(h.preemptor)
	s.removeRunning(r)
	if h.wasPending && !withdrawn {
		w := s.requeued(r)
		s.enqueue(&w)
	}
	s.note(AuditRecord{Kind: AuditReleased, Workload: r.ID, Queue: r.w.Queue, Priority: r.Priority, Victims: h.victims, Reason: reason})
}

// releaseHolds releases every hold for which touched says so, with the
// reason it gives.
func (s *Snapshot) releaseHolds(touched func(pre *running, h *hold) (string, bool)) {
	for j := 0; s.inflight != nil && j < len(s.inflight.holds); {
		h := &s.inflight.holds[j]
		pre, _ := s.runningByID(h.preemptor)
		if reason, ok := touched(pre, h); ok {
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
	s.releaseHolds(func(pre *running, h *hold) (string, bool) {
		if touches(pre.Queue) {
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
	s.releaseHolds(func(pre *running, _ *hold) (string, bool) {
		if slices.ContainsFunc(pre.Pods, func(p view.Pod) bool { return p.Node == n }) {
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
// gone: its pods terminated. What they held is freed; it goes back among
// the pending, as an evicted workload does, and its preemptor starts once
// its last victim is gone. Only an evicting workload (Snapshot.Evicting)
// terminates; Finish and Evict end one too (it completed, or the embedder
// evicted it, as on a node failure).
type Terminated struct{ ID string }

func (e Terminated) apply(s *Snapshot) error {
	r, err := admitted(s, e.ID)
	if err != nil {
		return err
	}
	if _, ok := s.evictingByID(e.ID); !ok {
		return fmt.Errorf("%w: %q is running, not evicting: Finish or Evict it", ErrInvalid, e.ID)
	}
	// Noted first: the preemptor's start, which its going may bring,
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
	// per pod; AdmittedAt is zero until it starts.
	Workload Workload `json:"workload"`
	// Victims are the ones it still waits for, by ID: its decision's, and
	// any evicting workload of a released hold its placement covers.
	Victims []string `json:"victims"`
	// Since is when the hold started.
	Since int64 `json:"since"`
}

// Held returns the hold of a preemptor waiting for its victims to
// terminate (Options.TwoPhasePreemption). Such a workload is neither
// pending nor, to Running and the events, running: its pods must not
// start yet. Its quota is charged and its room booked, and a preemption
// may evict it, which releases its hold.
func (s *Snapshot) Held(id string) (Hold, bool) {
	j, ok := s.heldByID(id)
	if !ok {
		return Hold{}, false
	}
	h := &s.inflight.holds[j]
	r, _ := s.runningByID(id)
	w := r.workload(s)
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
		ids[j] = s.inflight.holds[j].preemptor
	}
	return ids
}

// Evicting reports whether a running workload is an evicting victim of a
// two-phase preemption, the preemptor it makes room for ("" once that
// preemptor's hold went) and since when. It stays running, its pods'
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
