// The event that records a workload found running: admitted by another
// scheduler, or seen bound in the cluster an embedder watches.

package allot

import "fmt"

// SetRunning records a workload found running with its placement, or
// describes a running one anew (its pods changed: a gang growing pod by
// pod as they bind, or shrinking as they end). It is booked as Build
// books Builder.Running: on its nodes (the lowest free GPUs unless
// GPUIndices say which), its quota charged as found, even beyond nominal,
// every check of Build applied. A pending workload of the ID is taken out
// of the pending set: it runs now. A workload holding room or evicting
// under two-phase preemption is refused (ErrDuplicateID): its state is
// the preemption's, not the cluster's.
//
// Cost: the workload is booked once, on the store's master; a refusal
// found while booking (a pod over its node's capacity, say) restores the
// master from the current version, so that a refused event changes
// nothing.
type SetRunning struct{ Workload Workload }

func (e SetRunning) apply(s *Snapshot) error {
	id := e.Workload.ID
	if s.isHeld(id) {
		return fmt.Errorf("%w: %q holds room while its victims terminate", ErrDuplicateID, id)
	}
	if _, ok := s.evictingByID(id); ok {
		return fmt.Errorf("%w: %q is evicting", ErrDuplicateID, id)
	}
	if old, ok := s.runningByID(id); ok {
		s.removeRunning(old)
	}
	if _, ok := s.pendingByID(id); ok {
		s.dequeue(id)
	}
	if err := addRunning(s, new(running), e.Workload, "workload", map[string]string{}); err != nil {
		return masterWritten{err}
	}
	return nil
}
