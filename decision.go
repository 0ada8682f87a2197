package allot

import (
	"fmt"
	"slices"
	"strings"
	"weak"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/preempt"
	"github.com/allot-sched/allot/quota"
)

// Decision is Decide's answer. It is a plain value that marshals to JSON
// with the request it answers (see MarshalJSON), so an admission webhook
// can return it as it is and a controller elsewhere can decode it and
// commit it.
type Decision struct {
	Verdict Verdict `json:"verdict"`
	Reason  Reason  `json:"reason"`
	// Message is one line for a person, with the figures that led to it.
	Message  string `json:"message"`
	Workload string `json:"workload"`
	Queue    string `json:"queue"`
	// Flavors is the flavor chosen for each pod set, in request order.
	Flavors []PodSetFlavor `json:"flavors,omitempty"`
	// Placement is one entry per pod, pod sets in request order; empty for
	// pod sets on quota-only flavors.
	Placement []PodPlacement `json:"placement,omitempty"`
	// Borrowing lists what the admission takes beyond the queue's nominal
	// quota, per flavor and resource.
	Borrowing []Borrowed `json:"borrowing,omitempty"`
	// BorrowingLevel is how far up the cohort tree the borrowed capacity
	// comes from: 0 within nominal quota, 1 from the queue's cohort, 2 from
	// the cohort above it, and so on (Kueue's borrowing level).
	BorrowingLevel int `json:"borrowingLevel,omitempty"`
	// Preemptible marks an admission that others may later reclaim.
	Preemptible bool     `json:"preemptible"`
	Victims     []Victim `json:"victims,omitempty"`
	// Trail is every check in the order it ran, passed or failed. A
	// decision that does not admit lists the checks it passed before the
	// one that failed: a request whose quota holds on a flavor whose nodes
	// cannot hold it shows the quota check passed, with the figures the
	// admission would have had, then the placement that failed.
	Trail []Check `json:"trail"`
	// Version is the snapshot version the decision was made on. A
	// decision that travelled (decoded from JSON) may come from another
	// store, whose versions are not this one's: Commit then takes it as a
	// decision made on an older version, whatever the number says.
	Version uint64 `json:"version"`

	// request is what was decided; Store.Commit applies it. It travels
	// in the JSON as "request".
	request Request
	// decided marks a decision Decide made in this process. One decoded
	// from JSON, or put together by hand, is not: Commit checks it as it
	// checks a decision made on an older version.
	decided bool
	decisionScratch
}

// PodSetFlavor names the flavor of one pod set and, for a request with a
// minCount (partial admission), the pods admitted.
type PodSetFlavor struct {
	PodSet string `json:"podSet"`
	Flavor string `json:"flavor"`
	// Count is the pods of the pod set the decision admits, set on every
	// pod set of a request where some pod set has a minCount; zero means
	// the pod set's count (as Kueue's PodSetAssignment.Count, when
	// missing, means the spec's).
	Count int32 `json:"count,omitempty"`
}

// PodPlacement is where one pod goes: a node and node-local GPU indices.
type PodPlacement struct {
	PodSet string `json:"podSet"`
	Pod    int32  `json:"pod"`
	Node   string `json:"node"`
	GPUs   GPUSet `json:"gpus,omitempty"`
}

// Borrowed is an amount taken beyond nominal quota.
type Borrowed struct {
	Flavor   string `json:"flavor"`
	Resource string `json:"resource"`
	Amount   int64  `json:"amount"`
}

// Victim is a running workload to evict before the preemptor is admitted.
type Victim struct {
	ID       string `json:"id"`
	Queue    string `json:"queue"`
	Priority int32  `json:"priority"`
	// Reason in Kueue's words: InClusterQueue, InCohortReclamation,
	// InCohortReclaimWhileBorrowing, InCohortFairSharing.
	Reason string `json:"reason"`
	// LostGPUSeconds is the work lost: seconds since the last checkpoint (or
	// admission) times the victim's GPUs (resource-seconds without GPUs).
	LostGPUSeconds int64 `json:"lostGpuSeconds"`
	// Preemptor is the workload the victim makes room for.
	Preemptor string `json:"preemptor"`
	// CheckpointAt is the checkpoint the victim can resume from (0: none).
	CheckpointAt int64 `json:"checkpointAt,omitempty"`
	// Policy is the queue policy that allowed the eviction.
	Policy string `json:"policy"`
	// AdmittedAt is when the victim was admitted; Store.Commit refuses the
	// decision if the victim has been admitted again since.
	AdmittedAt int64 `json:"admittedAt"`
}

// Stage names a check in the decision pipeline. The stages run in the
// order declared; a decision's trail holds the checks that ran, the last
// one failed unless the decision admits or preempts.
type Stage uint8

const (
	// StageValidate: the request is well formed (InvalidRequest, the
	// message naming the field), is not already running, and names a
	// queue the snapshot has (UnknownQueue).
	StageValidate Stage = 1 + iota
	// StageAuthorize: the request's tenant is on the queue's allow-list
	// (Unauthorized).
	StageAuthorize
	// StageHold: the queue is not on hold (QueueHeld) and, in a
	// StrictFIFO queue, no workload waits ahead of the request
	// (HigherPriorityPending).
	StageHold
	// StageCaps: the queue's per-user cap and its cap on never-preemptible
	// work (ExceedsUserCap, UserCapReached, NonPreemptibleCapReached,
	// NeverFits); it runs only for a queue with such a cap.
	StageCaps
	// StageQuota: the flavor assignment against quota, flavor by flavor in
	// the queue's order: nominal quota, borrowing and lending in the
	// cohort tree, hard caps, windows and the SLA tier (QuotaExhausted,
	// HardCapReached, ExceedsHardCap, NeverFits). Passed, its detail gives
	// the queue's usage after admission on the first pod set's flavor.
	StageQuota
	// StagePlacement: the gang placement on the chosen flavor's free
	// capacity (InsufficientCapacity, TopologyUnsatisfiable, Cooldown,
	// NeverFits). Passed, its detail says where the pods go; it does not
	// run when every flavor chosen is quota-only.
	StagePlacement
	// StageBackfill: the admission delays no reservation of a blocked
	// higher-priority workload (BackfillReservation); it runs only when
	// backfill is on and reservations are planned ahead of the request.
	StageBackfill
	// StageSoftCap: beyond the queue's soft cap, no higher-priority
	// workload of the cohort waits for the idle capacity taken
	// (HigherPriorityPending); it runs only for a request past a soft cap.
	StageSoftCap
	// StagePreemption: victims whose eviction lets the request fit, both
	// quota and a placement (PriorityPreemption, ReclaimQuota,
	// FairSharePreemption). It is in the trail only when victims are
	// found, after the check that failed.
	StagePreemption
	// StagePartial is partial admission's search for the largest count
	// that is admitted: the counts tried and why the next larger one is
	// not.
	StagePartial
)

var stageNames = [...]string{"", "validate", "authorize", "hold", "caps", "quota", "placement", "backfill", "softCap", "preemption", "partial"}

func (s Stage) String() string {
	if int(s) < len(stageNames) {
		return stageNames[s]
	}
	return fmt.Sprintf("Stage(%d)", uint8(s))
}

// MarshalText renders the stage's name.
func (s Stage) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a stage name.
func (s *Stage) UnmarshalText(b []byte) error { return parseEnum(s, b, stageNames[:], "stage") }

// Check is one step of the trail.
type Check struct {
	// Stage is the check that ran.
	Stage Stage `json:"stage"`
	// Passed reports that the request got through it.
	Passed bool `json:"passed"`
	// Detail gives its figures, when it has any; the check that
	// concluded the decision (the one that failed, or the preemption)
	// has the decision's Message.
	Detail string `json:"detail,omitempty"`
}

// FlavorOf returns the flavor chosen for the named pod set.
func (d *Decision) FlavorOf(podSet string) (string, bool) {
	for _, f := range d.Flavors {
		if f.PodSet == podSet {
			return f.Flavor, true
		}
	}
	return "", false
}

// CountOf returns the pods of the named pod set the decision admits: its
// count, or less under partial admission (PodSet.MinCount).
func (d *Decision) CountOf(podSet string) (int32, bool) {
	for i, f := range d.Flavors {
		if f.PodSet != podSet {
			continue
		}
		if f.Count != 0 {
			return f.Count, true
		}
		if i < len(d.request.PodSets) {
			return d.request.PodSets[i].Count, true
		}
	}
	return 0, false
}

// IsBorrowing reports whether the admission borrows any quota.
func (d *Decision) IsBorrowing() bool { return len(d.Borrowing) > 0 }

// Request returns what was decided.
func (d *Decision) Request() Request { return d.request }

// Clone returns a copy of d that owns its memory: its strings and slices
// stay as they are whatever is later decided into d (see DecideInto). The
// copy can be committed as d can.
func (d *Decision) Clone() Decision {
	c := *d
	c.decisionScratch = decisionScratch{}
	c.Flavors = slices.Clone(d.Flavors)
	c.Placement = slices.Clone(d.Placement)
	c.Borrowing = slices.Clone(d.Borrowing)
	c.Victims = slices.Clone(d.Victims)
	c.Trail = slices.Clone(d.Trail)
	// Message and the details may view d's text buffer: one string holds
	// a copy of them all.
	n := len(d.Message)
	for i := range d.Trail {
		n += len(d.Trail[i].Detail)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(d.Message)
	for i := range d.Trail {
		b.WriteString(d.Trail[i].Detail)
	}
	text := b.String()
	c.Message, text = text[:len(d.Message)], text[len(d.Message):]
	for i := range c.Trail {
		c.Trail[i].Detail, text = text[:len(d.Trail[i].Detail)], text[len(d.Trail[i].Detail):]
	}
	return c
}

// Reusable memory of a decision (see DecideInto). buf holds the text the
// strings of a DecideInto decision view; work is scratch that no output
// refers to.
type decisionScratch struct {
	buf  []byte
	work *workspace
}

// workspace is the scratch memory of one decision in progress: the placer
// and its buffers, the pods' assignments and the resolved pod sets.
type workspace struct {
	placer gang.Placer
	// capacity places on the empty cluster, to prove a request never fits.
	capacity gang.Placer
	// search places during a preemption search, on simulated states, the
	// workloads ahead of a request when planning backfill and the request
	// around the reservations; ahead holds those workloads' pod sets and
	// planned the placement of the one being planned.
	search  gang.Placer
	ahead   []gang.PodSet
	planned []gang.Assignment
	// line looks up the start of a request's queue among the pending
	// workloads.
	line  Workload
	asg   []gang.Assignment
	gsets []gang.PodSet
	// weights holds each cohort tree node's fair-sharing weight for a
	// fair-sharing preemption search.
	weights []float64
	// nominee nominates the workloads ahead of a request when planning
	// backfill.
	nominee assigner
	// vectors are the decision's pod sets resolved (its decider's).
	vectors vectors
	// placeable remembers, while a request with a minCount is decided,
	// which of its counts could be placed on the empty cluster.
	placeable placeableMemo
	// failed remembers the preemption searches that found no victims on
	// the snapshot failedOn (weak: the workspace keeps no version alive),
	// which a scheduling loop asks again for head after head.
	failed   preempt.Failures
	failedOn weak.Pointer[Snapshot]
	// preemptVecs, preemptQuota and preemptSets are the memory of the
	// preemptor a search is run for.
	preemptVecs  []res.Vec
	preemptQuota []*quota.FlavorQuota
	preemptSets  []gang.PodSet
	// placedOnCapacity remembers what units placed on the empty cluster
	// gave, failedOnState the units that did not fit the free capacity of
	// the snapshot last decided on.
	placedOnCapacity, failedOnState placeMemo
}

// failures is the memory of the preemption searches that failed on s:
// the workspace's, forgotten when it was another snapshot's.
func (w *workspace) failures(s *Snapshot) *preempt.Failures {
	if w.failedOn.Value() != s {
		w.failed.Reset()
		w.failedOn = weak.Make(s)
	}
	return &w.failed
}
