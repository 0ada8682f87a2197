// The events a Store applies: each checks itself against the master
// snapshot and changes it through the snapshot's own upkeep.

package allot

import (
	"fmt"
	"math"
	"slices"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/quota"
)

// Event is a change to the cluster, applied with Store.Apply. Each is
// validated by the checks a Builder's description gets, changes nothing
// when it is refused, and leaves the snapshot Build would build from the
// description it edits. These are all of them:
//
// Workloads:
//   - Finish: an admitted workload ends and frees what it held.
//   - Evict: an admitted workload stops and waits again, recorded with
//     the work it lost.
//   - Checkpoint: a running workload saved its work.
//   - Submit: a workload joins the pending set.
//   - Withdraw: a pending workload leaves it (a preemptor holding its
//     room too, its hold released).
//   - SetRunning: a workload found running, with its placement, is
//     booked as Build books it, or described anew (events_running.go).
//   - Terminated: with two-phase preemption, an evicting victim is gone
//     (inflight.go); its preemptor starts when the last one is.
//
// Nodes:
//   - NodeDown, NodeUp: a node fails (nothing new lands there) and comes
//     back.
//   - NodeCordon: a node is cordoned or uncordoned.
//   - NodeCooldown: a node stays out of use until a time.
//   - AddNode: a node joins the cluster.
//   - RemoveNode: a node leaves it, the workloads on it evicted.
//   - SetNode: a node is described anew (capacity, labels, GPU groups,
//     flavor, condition).
//
// The cluster's configuration (events_config.go):
//   - SetFlavor: a flavor's spot-ness, node labels, taints and
//     tolerations anew (events_cluster.go).
//   - AddFlavor, RemoveFlavor: a flavor is added, or goes once nothing
//     uses it.
//   - SetLevels: the topology's levels anew.
//   - SetResources: the declared (and ignored) resources anew.
//
// Queues and time:
//   - SetQueue, SetCohort: a queue or cohort is added or configured anew.
//   - RemoveQueue, RemoveCohort: a queue or cohort goes, once nothing uses
//     it.
//   - AdvanceTime: the clock moves forward.
//
// Who may submit where, at which priority (events_tenancy.go):
//   - SetNamespace, RemoveNamespace: a namespace is added or labelled
//     anew, or goes once no local queue lives in it.
//   - SetLocalQueue, RemoveLocalQueue: a local queue is added (never
//     pointed elsewhere) or goes.
//   - SetPriorityClass, RemovePriorityClass: a priority class is added or
//     valued anew, or goes once no queue allows it.
//
// The cluster's churn (AddNode, RemoveNode, SetNode, SetFlavor,
// RemoveQueue, RemoveCohort) is in events_cluster.go; the changes of
// flavors, levels and resources, each the snapshot described and built
// anew, in events_config.go.
type Event interface {
	// apply checks the event against s and applies it; it changes nothing
	// when it returns an error.
	apply(s *Snapshot) error
}

// admitted finds an admitted workload for an event; a preemptor that holds
// its room (two-phase preemption) has not started and is none.
func admitted(s *Snapshot, id string) (*running, error) {
	r, ok := s.runningByID(id)
	if !ok || s.isHeld(id) {
		return nil, fmt.Errorf("%w: %q is not running", ErrUnknownWorkload, id)
	}
	return r, nil
}

// Finish ends an admitted workload and frees what it held. An evicting
// victim of a two-phase preemption that finishes is gone as if it had
// terminated, and is not pending again: it completed.
type Finish struct{ ID string }

func (e Finish) apply(s *Snapshot) error {
	r, err := admitted(s, e.ID)
	if err != nil {
		return err
	}
	if _, evicting := s.evictingByID(e.ID); evicting {
		s.note(AuditRecord{Kind: AuditTerminated, Workload: r.ID, Queue: r.w.Queue, Priority: r.Priority, Reason: "Finished"})
	}
	s.removeRunning(r)
	return nil
}

// Evict stops an admitted workload, frees what it held and puts it back in
// the pending set, without its placement, to be admitted again. An
// evicting victim of a two-phase preemption that is evicted is gone, as
// if it had terminated; its eviction was recorded when it started.
type Evict struct{ ID string }

func (e Evict) apply(s *Snapshot) error {
	r, err := admitted(s, e.ID)
	if err != nil {
		return err
	}
	s.evict(r, Eviction{ID: e.ID, Queue: r.w.Queue, Reason: "Evicted", LostGPUSeconds: s.cost().Lost(&r.Booking), At: s.now})
	return nil
}

// Checkpoint records that a running workload saved its work now.
type Checkpoint struct{ ID string }

func (e Checkpoint) apply(s *Snapshot) error {
	r, err := admitted(s, e.ID)
	if err != nil {
		return err
	}
	c := *r
	c.LastCheckpoint = s.now
	s.running.Set(&c)
	return nil
}

// NodeDown marks a node down: nothing new lands there. Workloads on it keep
// running until the embedder evicts them. A preemptor holding room on it
// (two-phase preemption) cannot start there: its hold is released.
type NodeDown struct{ Node string }

func (e NodeDown) apply(s *Snapshot) error {
	if err := setNode(s, e.Node, func(c *nodeCond) { c.down = true }); err != nil {
		return err
	}
	if s.inflight != nil {
		n, _ := s.topo.NodeIndex(e.Node)
		s.releaseHoldsOn(n)
	}
	return nil
}

// NodeUp brings a node back.
type NodeUp struct{ Node string }

func (e NodeUp) apply(s *Snapshot) error {
	return setNode(s, e.Node, func(c *nodeCond) { c.down = false })
}

// NodeCordon cordons (or uncordons) a node.
type NodeCordon struct {
	Node     string
	Cordoned bool
}

func (e NodeCordon) apply(s *Snapshot) error {
	return setNode(s, e.Node, func(c *nodeCond) { c.cordoned = e.Cordoned })
}

// NodeCooldown keeps a node out of use until a time (cleanup in flight).
type NodeCooldown struct {
	Node  string
	Until int64
}

func (e NodeCooldown) apply(s *Snapshot) error {
	return setNode(s, e.Node, func(c *nodeCond) { c.until = e.Until })
}

type nodeCond struct {
	cordoned, down bool
	until          int64
}

func setNode(s *Snapshot, name string, fn func(*nodeCond)) error {
	n, ok := s.topo.NodeIndex(name)
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownNode, name)
	}
	ns := s.state.Node(n)
	c := nodeCond{ns.Cordoned, ns.Down, ns.CooldownUntil}
	fn(&c)
	s.state.SetCondition(n, c.cordoned, c.down, c.until)
	return nil
}

// AdvanceTime moves the clock forward.
type AdvanceTime struct{ Seconds int64 }

func (e AdvanceTime) apply(s *Snapshot) error {
	if e.Seconds < 0 {
		return fmt.Errorf("%w: time moves forward only, got %d seconds", ErrInvalid, e.Seconds)
	}
	if s.now > math.MaxInt64-e.Seconds {
		return fmt.Errorf("%w: advancing %d seconds from %d overflows the clock", ErrInvalid, e.Seconds, s.now)
	}
	// What each queue held over the interval joins its decayed history.
	r := s.historyResource()
	s.own(rowUsed)
	for q := range s.used {
		held := int64(0)
		for f := range s.flavors {
			held = quota.AddAmount(held, s.usageOf(int32(q), int32(f))[r])
		}
		s.used[q] = s.used[q].Add(s.now, s.history.HalfLife, 0)
		s.used[q] = fairness.Debt{Value: fairness.Decay(s.used[q].Value, e.Seconds, s.history.HalfLife) + float64(held)*float64(e.Seconds), At: s.now + e.Seconds}
	}
	s.now += e.Seconds
	s.state.SetNow(s.now)
	for i := range s.queues {
		if len(s.queues[i].Windows) > 0 {
			// Windows may open or close: resolve quota at the new time.
			return requota(s, s.queues, -1)
		}
	}
	return nil
}

// requota rebuilds the queues' quota from their configuration at the
// snapshot's time, keeping every queue's usage (cohort usage follows from
// it). Queues keep their indices; new ones come last. changed is
// buildQueues': the one queue that changed, or -1.
func requota(s *Snapshot, queues []Queue, changed int) error {
	next := *s
	next.ownConfig() // buildQueues writes it
	if err := buildQueues(&next, s.cohorts, queues, changed); err != nil {
		return err
	}
	u := next.rtree.NewUsage()
	for q := range s.queues {
		for f := range s.flavors {
			if v := s.usageOf(int32(q), int32(f)); !v.IsZero() {
				next.rtree.AddVec(u, int32(q), f, v, 1)
			}
		}
	}
	next.queues = queues
	s.config, s.usage = next.config, u
	s.recountShapes() // a pending pod set may land on other flavors now
	return nil
}

// SetQueue adds a queue or replaces its configuration; usage is kept. The
// holds of two-phase preemptions whose preemptor or an evicting victim is
// of the queue are released.
type SetQueue struct{ Queue Queue }

func (e SetQueue) apply(s *Snapshot) error {
	queues := slices.Clone(s.queues)
	old, exists := s.queueIdx[e.Queue.Name]
	changed := int(old)
	if exists {
		queues[old] = cloneQueue(e.Queue)
	} else {
		changed = len(queues)
		queues = append(queues, cloneQueue(e.Queue))
	}
	if err := requota(s, queues, changed); err != nil {
		return err
	}
	if !exists {
		s.own(rowRunCount | rowDebt | rowUsed)
		s.runCount = append(s.runCount, 0)
		s.debt = append(s.debt, fairness.Debt{})
		s.used = append(s.used, fairness.Debt{})
	}
	s.recountLimits()
	if exists && s.inflight != nil {
		s.releaseHoldsOfQueues(fmt.Sprintf("queue %q changed", e.Queue.Name), func(q int32) bool { return q == old })
	}
	return nil
}

// SetCohort adds a cohort or replaces its configuration (parent, quota);
// the queues' usage is kept and the cohorts' follows from it. The holds of
// two-phase preemptors whose queue, or an evicting victim's, is below the
// cohort are released.
type SetCohort struct{ Cohort Cohort }

func (e SetCohort) apply(s *Snapshot) error {
	cohorts := slices.Clone(s.cohorts)
	if i := slices.IndexFunc(cohorts, func(c Cohort) bool { return c.Name == e.Cohort.Name }); i >= 0 {
		cohorts[i] = cloneCohort(e.Cohort)
	} else {
		cohorts = append(cohorts, cloneCohort(e.Cohort))
	}
	old := s.config
	s.ownConfig()
	s.cohorts = cohorts
	if err := requota(s, s.queues, -1); err != nil {
		s.config = old
		return err
	}
	if s.inflight != nil {
		s.releaseHoldsOfQueues(fmt.Sprintf("cohort %q changed", e.Cohort.Name), func(q int32) bool { return s.underCohort(q, e.Cohort.Name) })
	}
	return nil
}

// Submit adds a workload to the pending set.
type Submit struct{ Workload Workload }

func (e Submit) apply(s *Snapshot) error {
	id := e.Workload.ID
	if s.isHeld(id) {
		return fmt.Errorf("%w: %q holds room while its victims terminate", ErrDuplicateID, id)
	}
	if _, ok := s.runningByID(id); ok {
		return fmt.Errorf("%w: %q is running", ErrDuplicateID, id)
	}
	if _, ok := s.pendingByID(id); ok {
		return fmt.Errorf("%w: %q is pending", ErrDuplicateID, id)
	}
	return s.addPending(e.Workload, "submit", map[string]string{})
}

// Withdraw removes a pending workload: one its owner cancelled, or one the
// embedder dropped after Decide rejected it. A preemptor that holds room
// while its victims terminate (two-phase preemption) is withdrawn too: its
// hold is released, and its victims evict all the same.
type Withdraw struct{ ID string }

func (e Withdraw) apply(s *Snapshot) error {
	if j, ok := s.heldByID(e.ID); ok {
		s.releaseHold(j, "Withdrawn", true)
		return nil
	}
	if _, ok := s.pendingByID(e.ID); !ok {
		return fmt.Errorf("%w: %q is not pending", ErrUnknownWorkload, e.ID)
	}
	s.dequeue(e.ID)
	return nil
}
