// Package fairness holds the fairness figures allot orders work by: decayed
// historical usage and fairness debt (how often a queue has been preempted
// lately, decayed with a half-life), which makes a queue a later choice of
// victim.
//
// It also computes dominant resource shares as Kueue does (DominantShare):
// what a node borrows beyond its subtree quota over what its parent could
// ever lend, per resource, the largest ratio divided by the node's weight.
// The root package's scheduling loop and fair-sharing preemption use them.
package fairness
