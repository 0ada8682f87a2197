// Package fairness owns the rules that order pending work and plan when
// blocked work starts. It works on concrete inputs the root package
// resolves (the quota.ResourceTree and a quota.Usage, a topology.State,
// per-flavor charge vectors, gang pod sets); the root keeps resolving
// workloads into them, the trail and messages, and the backfill plan's
// cache on the snapshot.
//
// The order of a scheduling cycle's heads (Order, Key) is Kueue's: without
// fair sharing the lower borrowing level, with it heads that do not borrow
// what they ask for first (Kueue's FairSharingPrioritizeNonBorrowing), then
// the lower dominant share after admission (ShareAfter); then priority;
// then the optional history keys, higher fairness debt and lower decayed
// usage per weight (PerWeight), which so order the heads of one priority;
// then submission, queue name and ID. Turn, priority
// then submission then ID, is also each queue's order. With fair sharing
// and queues below nested cohorts, Kueue's fair-sharing tournament orders
// the heads instead, from each tree's root down, by the shares of the nodes
// at every level: a Bracket picks one winner on a given usage, so that the
// root's loop can run it again after each admission (Kueue's cycles, and
// progressive filling), and Tournament orders a whole cycle as if each
// winner were admitted.
//
// Dominant resource shares are computed as Kueue does (DominantShare):
// what a node borrows beyond its subtree quota over what its parent could
// ever lend, per resource, the largest ratio divided by the node's weight.
// The root's fair-sharing preemption uses them too. Fairness debt (Debt),
// how often a queue has been preempted lately, and historical usage decay
// with a half-life (Decay); debt also makes a queue a later choice of
// victim.
//
// Backfill planning (Planner) is EASY backfill's time rule: running
// workloads are expected to leave at admission plus expected run time
// (EndOf), in that order, ties by ID (SortLeaving); a blocked workload
// starts at the first such moment its quota fits and the placer finds room,
// never before now, around the GPUs reserved for the blocked workloads
// ahead of it (AddReserved), which no leaving workload frees. A request
// that takes none of the reserved GPUs (Overlaps) may start now.
package fairness
