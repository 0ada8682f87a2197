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

// InUseError is the refusal to remove a queue that still runs workloads or
// a cohort that queues or cohorts still name (RemoveQueue, RemoveCohort).
type InUseError struct {
	// Queue or Cohort is what was to be removed.
	Queue, Cohort string
	// Running lists the queue's admitted workloads; Queues and Cohorts
	// those that name the cohort as theirs or as their parent. Sorted.
	Running, Queues, Cohorts []string
}

func (e *InUseError) Error() string {
	if e.Queue != "" {
		return fmt.Sprintf("allot: queue %q still runs %d workloads: %s", e.Queue, len(e.Running), strings.Join(e.Running, ", "))
	}
	var by []string
	if len(e.Queues) > 0 {
		by = append(by, "queues "+strings.Join(e.Queues, ", "))
	}
	if len(e.Cohorts) > 0 {
		by = append(by, "cohorts "+strings.Join(e.Cohorts, ", "))
	}
	return fmt.Sprintf("allot: cohort %q is named by %s", e.Cohort, strings.Join(by, " and "))
}

func (e *InUseError) Unwrap() error { return ErrInUse }
