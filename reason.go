package allot

import "fmt"

// Reason is the stable code that explains a decision. Codes never change
// meaning; new ones may be added.
type Reason uint8

const (
	// InvalidRequest (Reject): the request is malformed; the message names
	// the field.
	InvalidRequest Reason = 1 + iota
	// UnknownQueue (Reject): the request names a queue the snapshot lacks.
	UnknownQueue
	// Unauthorized (Reject): the request's tenant is not on the queue's
	// allow-list.
	Unauthorized
	// ExceedsHardCap (Reject): the request alone exceeds the queue's hard cap.
	ExceedsHardCap
	// ExceedsUserCap (Reject): the request alone exceeds the per-user cap.
	ExceedsUserCap
	// NeverFits (Reject): no flavor's quota at its largest, and no domain or
	// node of any allowed flavor, could ever hold the request.
	NeverFits
	// QueueHeld (Queue): the queue is on hold and admits nothing new.
	QueueHeld
	// QuotaExhausted (Queue): the quota the request needs is in use.
	QuotaExhausted
	// HardCapReached (Queue): with current usage the request would pass the
	// queue's hard cap.
	HardCapReached
	// UserCapReached (Queue): with current usage the request would pass the
	// per-user cap.
	UserCapReached
	// NonPreemptibleCapReached (Queue): the queue's never-preemptible work
	// would pass its cap.
	NonPreemptibleCapReached
	// InsufficientCapacity (Queue): not enough free resources in the flavor.
	InsufficientCapacity
	// TopologyUnsatisfiable (Queue): enough free resources, in the wrong
	// shape (fragmentation).
	TopologyUnsatisfiable
	// BackfillReservation (Queue): admitting now would delay a reserved
	// higher-priority workload.
	BackfillReservation
	// Cooldown (Queue): it fits only on nodes still cooling down.
	Cooldown
	// HigherPriorityPending (Queue): over the soft cap while a higher-priority
	// workload of the same cohort waits, or behind a waiting workload of a
	// StrictFIFO queue.
	HigherPriorityPending
	// Fits (Admit): within the queue's nominal quota.
	Fits
	// Borrowing (Admit): on quota borrowed from the cohort.
	Borrowing
	// OverSoftCap (Admit): beyond the soft cap, on idle capacity, preemptible.
	OverSoftCap
	// PriorityPreemption (Preempt): lower-priority work of the same queue
	// makes room.
	PriorityPreemption
	// ReclaimQuota (Preempt): the queue reclaims its nominal quota from
	// borrowers in its cohort.
	ReclaimQuota
	// FairSharePreemption (Preempt): fair sharing makes room.
	FairSharePreemption
	// PriorityNotAllowed (Reject): the request claims a priority class the
	// snapshot lacks or its queue does not allow, claims none where the
	// queue allows only its classes, or carries a priority above its
	// class's value.
	PriorityNotAllowed
)

var reasonNames = [...]string{"",
	"InvalidRequest", "UnknownQueue", "Unauthorized", "ExceedsHardCap", "ExceedsUserCap", "NeverFits",
	"QueueHeld", "QuotaExhausted", "HardCapReached", "UserCapReached", "NonPreemptibleCapReached",
	"InsufficientCapacity", "TopologyUnsatisfiable", "BackfillReservation", "Cooldown", "HigherPriorityPending",
	"Fits", "Borrowing", "OverSoftCap",
	"PriorityPreemption", "ReclaimQuota", "FairSharePreemption",
	"PriorityNotAllowed",
}

// Reasons lists every reason code in declaration order.
func Reasons() []Reason {
	out := make([]Reason, 0, len(reasonNames)-1)
	for i := 1; i < len(reasonNames); i++ {
		out = append(out, Reason(i))
	}
	return out
}

func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// Verdict is the verdict a decision with this reason carries.
func (r Reason) Verdict() Verdict {
	switch {
	case r >= InvalidRequest && r <= NeverFits:
		return VerdictReject
	case r >= QueueHeld && r <= HigherPriorityPending:
		return VerdictQueue
	case r >= Fits && r <= OverSoftCap:
		return VerdictAdmit
	case r >= PriorityPreemption && r <= FairSharePreemption:
		return VerdictPreempt
	case r == PriorityNotAllowed:
		return VerdictReject
	}
	return 0
}

// MarshalText renders the reason's code.
func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses a reason code.
func (r *Reason) UnmarshalText(b []byte) error { return parseEnum(r, b, reasonNames[:], "reason") }
