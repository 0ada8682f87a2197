package quota

import (
	"errors"
	"fmt"

	"github.com/allot-sched/allot/internal/res"
)

// Errors returned by Parents and NewResourceTree.
var (
	ErrUnknownCohort = errors.New("quota: unknown cohort")
	ErrCohortCycle   = errors.New("quota: cycle in the cohort tree")
)

// FlavorQuota is a queue's quota on one flavor.
type FlavorQuota struct {
	Flavor int32
	// Covered has bit r set when the queue has quota for resource r on this
	// flavor; a request for an uncovered resource cannot use the flavor.
	Covered uint16
	// Nominal is the quota in force now; Ever is the largest it gets at
	// any time of day (windows), which decides what can never fit.
	Nominal res.Vec
	Ever    res.Vec
	// Hard and Soft are the queue's hard and soft caps (bits set in
	// HardMask and SoftMask for the resources that have one), scaled like
	// Nominal. A hard cap is never exceeded; beyond a soft cap admission
	// uses idle capacity only and is preemptible.
	Hard, Soft         res.Vec
	HardMask, SoftMask uint16
}

// Queue is a queue's quota configuration.
type Queue struct {
	Name string
	// Cohort is the queue's cohort, -1 without one (set by NewTree).
	Cohort int32
	// Flavors in the order the queue tries them.
	Flavors []FlavorQuota
	Hold    bool
	// TryNextWhenBorrowing is Kueue's whenCanBorrow: TryNextFlavor. A
	// flavor that fits only by borrowing is kept as a fallback while later
	// flavors are tried for a fit within nominal quota.
	TryNextWhenBorrowing bool
	// StopAtPreemption is Kueue's whenCanPreempt: Preempt (MayStopSearch):
	// preempt on the first flavor where victims make room rather than try
	// later flavors for a fit without them.
	StopAtPreemption bool
}

// Tree is every queue's configuration beside Nodes, the ResourceTree of
// the queues and their cohorts: queue q is node q, and cohort c is node
// len(Queues)+c.
type Tree struct {
	Queues []Queue
	Nodes  *ResourceTree
}

// NewTree keeps queues beside nodes, their tree, and sets each queue's
// Cohort from its node's parent.
func NewTree(queues []Queue, nodes *ResourceTree) *Tree {
	q := int32(len(queues))
	for i := range queues {
		queues[i].Cohort = -1
		if p := nodes.Parent(int32(i)); p >= 0 {
			queues[i].Cohort = p - q
		}
	}
	return &Tree{Queues: queues, Nodes: nodes}
}

// CohortName is the name of cohort c.
func (t *Tree) CohortName(c int32) string { return t.Nodes.Name(int32(len(t.Queues)) + c) }

// CohortSpec names a cohort and its parent ("" for none).
type CohortSpec struct{ Name, Parent string }

// Parents resolves the cohort tree's names to the parent of every node of
// its ResourceTree, queues first (queueCohorts[q] naming queue q's cohort,
// "" for none), then cohorts, -1 at a root. Every parent and every queue's
// cohort must exist, and no cohort may be its own ancestor.
func Parents(cohorts []CohortSpec, queues []Queue, queueCohorts []string) ([]int32, error) {
	nq := int32(len(queues))
	parents := make([]int32, int(nq)+len(cohorts))
	idx := make(map[string]int32, len(cohorts))
	for i, c := range cohorts {
		idx[c.Name] = int32(i)
	}
	// up is each cohort's parent cohort.
	up := parents[nq:]
	for i, c := range cohorts {
		up[i] = -1
		if c.Parent == "" {
			continue
		}
		p, ok := idx[c.Parent]
		if !ok {
			return nil, fmt.Errorf("%w: cohort %q names parent %q", ErrUnknownCohort, c.Name, c.Parent)
		}
		up[i] = p
	}
	// Each cohort is walked up once: a walk stops at a cohort an earlier
	// walk cleared, and meeting a cohort of its own walk is a cycle.
	state := make([]int32, len(cohorts)) // 0 unseen, i+1 on walk i, -1 cleared
	for i := range cohorts {
		c := int32(i)
		for c >= 0 && state[c] == 0 {
			state[c] = int32(i) + 1
			c = up[c]
		}
		if c >= 0 && state[c] == int32(i)+1 {
			return nil, fmt.Errorf("%w: through cohort %q", ErrCohortCycle, cohorts[i].Name)
		}
		for c := int32(i); c >= 0 && state[c] == int32(i)+1; c = up[c] {
			state[c] = -1
		}
	}
	for i := range queues {
		parents[i] = -1
		if name := queueCohorts[i]; name != "" {
			c, ok := idx[name]
			if !ok {
				return nil, fmt.Errorf("%w: queue %q names cohort %q", ErrUnknownCohort, queues[i].Name, name)
			}
			parents[i] = nq + c
		}
	}
	for i, p := range up {
		if p >= 0 {
			up[i] = nq + p
		}
	}
	return parents, nil
}

// Quota returns the queue's quota on flavor f.
func (q *Queue) Quota(f int32) (*FlavorQuota, bool) {
	for i := range q.Flavors {
		if q.Flavors[i].Flavor == f {
			return &q.Flavors[i], true
		}
	}
	return nil, false
}

// Verdict is the outcome of a quota check on one flavor (the root package
// checks a request against the cohort tree and the caps).
type Verdict uint8

const (
	// Fit: within the queue's nominal quota, with current usage.
	Fit Verdict = 1 + iota
	// NoFitNow: it would fit the nominal quota, but current usage is in the
	// way.
	NoFitNow
	// NoFitEver: it exceeds the nominal quota on its own, or asks for a
	// resource the flavor's quota does not cover.
	NoFitEver
)
