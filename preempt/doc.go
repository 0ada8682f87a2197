// Package preempt will choose victims: candidates in Kueue's order, greedy
// removal with reverse fill-back so the set is minimal, re-running gang
// placement after each removal so the victims free a placement and not just
// quota, and the cost of lost work since the last checkpoint.
//
// It is part of the layout of DESIGN.md and holds no code yet: a queue whose
// preemption policy is not Never is refused by the root package's Builder
// with ErrUnsupported.
package preempt
