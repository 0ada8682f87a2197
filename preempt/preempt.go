package preempt

import (
	"strings"

	"github.com/allot-sched/allot/internal/view"
)

// Policy is a Kueue preemption policy value.
type Policy uint8

const (
	// Never allows no preemption.
	Never Policy = iota
	// LowerPriority allows victims of lower priority.
	LowerPriority
	// LowerOrNewerEqualPriority also allows equal priority victims that
	// were queued after the preemptor.
	LowerOrNewerEqualPriority
	// Any allows any victim (reclaimWithinCohort only).
	Any
)

var policyNames = [...]string{"Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any"}

func (p Policy) String() string { return policyNames[p] }

// ParsePolicy reads a policy name; "" is Never. allowed lists the values
// the field accepts.
func ParsePolicy(s string, allowed ...Policy) (Policy, bool) {
	if s == "" {
		return Never, true
	}
	for _, p := range allowed {
		if strings.EqualFold(s, policyNames[p]) {
			return p, true
		}
	}
	return Never, false
}

// Allows reports whether policy p lets a preemptor of priority prio,
// queued at submitted, evict a candidate of priority cprio queued at
// csubmitted (Kueue's SatisfiesPreemptionPolicy).
func (p Policy) Allows(prio, cprio int32, submitted, csubmitted int64) bool {
	switch p {
	case LowerPriority:
		return cprio < prio
	case LowerOrNewerEqualPriority:
		return cprio < prio || cprio == prio && submitted < csubmitted
	case Any:
		return true
	}
	return false
}

// Variant is how a candidate was collected; it decides the victim reason
// and in which passes the candidate may be taken.
type Variant uint8

const (
	// WithinQueue: a workload of the preemptor's own queue.
	WithinQueue Variant = 1 + iota
	// HierarchicalReclaim: collected while the preemptor has hierarchical
	// advantage (its request fits the quota of a subtree that holds it).
	HierarchicalReclaim
	// ReclaimWithoutBorrowing: reclaiming quota the preemptor owns, which
	// it may take only if it then does not borrow.
	ReclaimWithoutBorrowing
	// ReclaimWhileBorrowing: borrowWithinCohort lets the preemptor evict
	// it even while borrowing.
	ReclaimWhileBorrowing
)

// FairSharing: taken by a fair-sharing strategy.
const FairSharing = ReclaimWhileBorrowing + 1

// Reason is the victim reason in Kueue's words.
func (v Variant) Reason() string {
	switch v {
	case WithinQueue:
		return "InClusterQueue"
	case ReclaimWhileBorrowing:
		return "InCohortReclaimWhileBorrowing"
	case FairSharing:
		return "InCohortFairSharing"
	}
	return "InCohortReclamation"
}

// Takeable reports whether any search may take b as a victim: a pinned
// booking never is, whatever the preemptor and its policies. A caller that
// knows no admitted workload is takeable says so (Admitted.NoneTakeable)
// and is answered without a search.
func Takeable(b *view.Booking) bool { return !b.Pinned }

// Candidate is a running workload that may be evicted, with the keys that
// order it. It holds no pointers, so ten thousand of them cost the garbage
// collector nothing to scan.
type Candidate struct {
	// Index identifies the candidate to the caller.
	Index int32
	// IDRank is the candidate's position among all workloads sorted by ID,
	// the last tie-break.
	IDRank int32
	// OwnQueue is true for a workload of the preemptor's queue.
	OwnQueue bool
	Priority int32
	// Debt is the candidate's queue's fairness debt: how often it was
	// preempted lately (decayed).
	Debt float64
	// LostWork is what eviction would throw away, in GPU-seconds (or
	// resource-seconds for a workload without GPUs).
	LostWork   int64
	AdmittedAt int64
}

// Less is the order in which candidates are tried: other queues before
// the preemptor's own, lower priority first, then (allot's additions)
// queues with less fairness debt, least lost work, then the more recently
// admitted, then ID. With equal debt and lost work it is Kueue's order.
func Less(a, b *Candidate) bool {
	if c := compareKeys(a, b); c != 0 {
		return c < 0
	}
	return a.IDRank < b.IDRank
}

// LostWork is the work an eviction at now throws away: the seconds since
// the last checkpoint (for a checkpointable workload that has one) or
// since admission, times its GPUs (or, without GPUs, times its largest
// other resource amount).
func LostWork(now, admittedAt, lastCheckpoint int64, checkpointable bool, size int64) int64 {
	since := admittedAt
	if checkpointable && lastCheckpoint > since {
		since = lastCheckpoint
	}
	d := max(0, now-since)
	if size > 0 && d > (1<<62)/size {
		return 1 << 62
	}
	return d * size
}

// Cost prices evictions at the snapshot's time Now. GPU and Tokens are the
// indices of those resources (-1 when undeclared), Resources how many are
// declared.
type Cost struct {
	Now                    int64
	GPU, Tokens, Resources int
}

// Lost is what evicting b at Now throws away (LostWork): its size is the
// GPUs it holds (charged to quota, on nodes or not), or without GPUs its
// largest other quantity.
func (c Cost) Lost(b *view.Booking) int64 {
	return LostWork(c.Now, b.AdmittedAt, b.LastCheckpoint, b.Checkpointable, c.size(b))
}

func (c Cost) size(b *view.Booking) int64 {
	if c.GPU >= 0 {
		if g := b.Charged(c.GPU, c.Tokens); g > 0 {
			return g
		}
	}
	size := int64(0)
	for k := range c.Resources {
		size = max(size, b.Charged(k, c.Tokens))
	}
	return size
}
