package guard

import (
	"fmt"

	"github.com/go-logr/logr"
)

// Options configure a Guard. The zero value is the safe default: the guard
// denies only a gang that can never be admitted as the cluster stands,
// fails open, and caches 4,096 gangs' answers.
type Options struct {
	// Disabled is the kill switch: every request is allowed, undecided.
	Disabled bool
	// DryRun decides as usual but allows what it would deny, with a
	// warning, and logs and counts it (Outcome.DryRun).
	DryRun bool
	// FailClosed denies when the source is not ready or deciding fails;
	// by default the guard allows then, with a warning, so that a guard
	// in trouble never blocks the cluster.
	FailClosed bool
	// DenyUndecodable denies an object the guard cannot decode; by default
	// it is allowed with a warning (Kubernetes' own validation judges it).
	DenyUndecodable bool
	// RequireTopology denies a gang (more than one pod) any of whose pod
	// sets declares neither a required nor a preferred topology.
	RequireTopology bool
	// SmallPodMinFreeShare, when above zero, denies a single pod asking
	// for one GPU whose decision places it on a flavor with less than
	// this share (0..1) of its GPUs free: the last free GPUs of a flavor
	// are kept for gangs instead of being fragmented by single-GPU pods.
	SmallPodMinFreeShare float64
	// CacheSize bounds the gangs whose answers are kept (0: 4,096). The
	// rest of a gang's pods get the answer of its first, while the
	// snapshot's version stays the same.
	CacheSize int
	// Observer, when set, hears every answer (for metrics).
	Observer Observer
	// Log receives what dry-run would deny, fail-open answers and errors;
	// the zero Logger discards.
	Log logr.Logger
}

// Validate checks the options.
func (o *Options) Validate() error {
	if o.SmallPodMinFreeShare < 0 || o.SmallPodMinFreeShare > 1 {
		return fmt.Errorf("guard: SmallPodMinFreeShare %v: must be within 0 and 1", o.SmallPodMinFreeShare)
	}
	if o.CacheSize < 0 {
		return fmt.Errorf("guard: CacheSize %d: must not be negative", o.CacheSize)
	}
	return nil
}

func (o *Options) cacheSize() int {
	if o.CacheSize == 0 {
		return 4096
	}
	return o.CacheSize
}

// An Observer hears the guard's answers. Observe is called from many
// requests at once.
type Observer interface {
	Observe(Outcome)
}

// Outcome is one answer of the guard.
type Outcome struct {
	// Kind is the object's kind (Pod, Job, JobSet, RayJob, Workload).
	Kind string
	// Verdict and Reason are the decision's (Admit, Fits), Kueue's no
	// (Queue, and Kueue's reason), or what the guard answered without a
	// decision: verdict "None" with reason Disabled, NotReady,
	// Undecodable, Unmanaged, Owned (a pod or job whose owner's gang was
	// judged), Invalid (Kueue's validation refuses the object), Error,
	// or the guard's own policies: TopologyRequired, SmallPodOnFullFlavor.
	Verdict string
	Reason  string
	// Denied says the guard denied; DryRun that it would have, had it not
	// been in dry-run mode.
	Denied bool
	DryRun bool
	// Cached says the answer was the gang's cached one.
	Cached bool
}
