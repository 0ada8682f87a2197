package allot

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors of the snapshot builder and the store; BuildError and
// ConflictError wrap them, so callers check with errors.Is.
var (
	ErrInvalid         = errors.New("allot: invalid value")
	ErrDuplicateID     = errors.New("allot: duplicate id")
	ErrUnknownResource = errors.New("allot: unknown resource")
	ErrUnknownFlavor   = errors.New("allot: unknown flavor")
	ErrUnknownQueue    = errors.New("allot: unknown queue")
	ErrUnknownCohort   = errors.New("allot: unknown cohort")
	ErrCohortCycle     = errors.New("allot: cycle in the cohort tree")
	ErrMissingLabel    = errors.New("allot: node misses a topology label")
	ErrUnknownNode     = errors.New("allot: unknown node")
	ErrOverCapacity    = errors.New("allot: beyond the node's capacity")
	ErrGPUResource     = errors.New("allot: a GPU under a resource not declared as the GPU")
	ErrUnknownWorkload = errors.New("allot: unknown workload")
	ErrConflict        = errors.New("allot: decision no longer holds")
	ErrInUse           = errors.New("allot: still in use")
	// ErrInFlight refuses a change of the cluster's configuration while
	// two-phase preemptions are under way (AddFlavor, RemoveFlavor, a
	// SetFlavor that selects other nodes, SetLevels, SetResources).
	ErrInFlight = errors.New("allot: two-phase preemptions in flight")
)

// BuildError says what is wrong with a snapshot and where.
type BuildError struct {
	// Err is one of the sentinel errors above.
	Err error
	// Path names the offending field, like "nodes[3].labels.rack".
	Path   string
	Detail string
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("%v: %s: %s", e.Err, e.Path, e.Detail)
}

func (e *BuildError) Unwrap() error { return e.Err }

func buildErr(err error, path, format string, args ...any) *BuildError {
	return &BuildError{Err: err, Path: path, Detail: fmt.Sprintf(format, args...)}
}

// ConflictError is Store.Commit's refusal of a decision that no longer holds
// on the current snapshot.
type ConflictError struct {
	Workload string
	// DecidedOn and Current are the snapshot versions.
	DecidedOn, Current uint64
	Detail             string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("allot: decision for %q made on version %d no longer holds on version %d: %s",
		e.Workload, e.DecidedOn, e.Current, e.Detail)
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// InUseError is the refusal to remove a queue that still runs workloads, a
// cohort that queues or cohorts still name (RemoveQueue, RemoveCohort), or
// a flavor that queues, cohorts, nodes or admitted workloads still use
// (RemoveFlavor).
type InUseError struct {
	// Queue, Cohort or Flavor is what was to be removed.
	Queue, Cohort, Flavor string
	// Running lists the queue's admitted workloads, or those with a pod
	// set on the flavor or allowing it, and Pending the pending ones
	// allowing it; Queues and Cohorts those that name the cohort as
	// theirs or as their parent, or the flavor in their quota (or, for a
	// queue, its flavor order); Nodes the nodes that serve the flavor.
	// Sorted.
	Running, Pending, Queues, Cohorts, Nodes []string
}

func (e *InUseError) Error() string {
	if e.Queue != "" {
		return fmt.Sprintf("allot: queue %q still runs %d workloads: %s", e.Queue, len(e.Running), strings.Join(e.Running, ", "))
	}
	var by []string
	for _, l := range []struct {
		what  string
		names []string
	}{{"queues", e.Queues}, {"cohorts", e.Cohorts}, {"nodes", e.Nodes}, {"running workloads", e.Running}, {"pending workloads", e.Pending}} {
		if len(l.names) > 0 {
			by = append(by, l.what+" "+strings.Join(l.names, ", "))
		}
	}
	if e.Flavor != "" {
		return fmt.Sprintf("allot: flavor %q is used by %s", e.Flavor, strings.Join(by, " and "))
	}
	return fmt.Sprintf("allot: cohort %q is named by %s", e.Cohort, strings.Join(by, " and "))
}

func (e *InUseError) Unwrap() error { return ErrInUse }
