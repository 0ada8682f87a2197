// Package quota holds queues, cohorts and the quantities of Kueue's quota
// model, and every quota rule of the decision pipeline: the quota fit, the
// caps and the scaling of quota by time-of-day windows and SLA tier. Each
// works over concrete inputs; the root package calls them, turns their
// reasons into its own codes and writes every message.
//
// One tree holds the queues (Kueue's ClusterQueues) and their cohorts: a
// ResourceTree, below, whose nodes are the queues and then the cohorts
// (Parents turns the cohorts' names into its links). A Tree keeps beside
// it each queue's configuration: per flavor and resource its nominal quota
// and allot's hard and soft caps (FlavorQuota), scaled; the flavors it
// tries, in order, and its flavor fungibility; and hold. Who may submit
// to a queue is the root's rule (its tenants, namespaces and priority
// classes).
//
// # The fit
//
// ResourceTree.Fit checks what a request puts on one flavor against a
// queue's FlavorQuota and the tree's usage, as Kueue's flavor assigner
// does. Its Verdict is NoFitEver when the request asks for a resource the
// flavor does not cover (Uncovered), is above the hard cap or MaxQuantity
// on its own (OverHardCap), or above what the cohort tree could ever give
// the queue at its largest quota of the day (BeyondReach); NoFitNow when
// the hard cap or MaxQuantity is reached with the queue's usage (AtHardCap)
// or the tree has too little available now (Exhausted); else Fit, with the
// borrowing level, whether it borrows and whether it passes a soft cap.
// The never-checks run over every resource before the now-checks, so a
// request that can never fit is not told to wait. MaxQuantity (2^61)
// bounds every quantity, every pod set's, request's and running workload's
// charge and every queue's usage of a flavor's resource, so that the sums
// the decision forms (never more than three bounded terms) cannot overflow;
// Bounded checks a pod set's charge and a queue's usage against it,
// AddCharge a request's or a workload's total over its pod sets.
//
// # Caps
//
// A Cap bounds what a group of a queue's workloads holds together, summed
// over flavors: one user's (Slurm's MaxTRESPerUser, held in a UserUsage)
// or the never-preemptible ones'. Cap.Over finds the first resource a
// request breaks, on its own (checked first, on every resource) or with
// what the group holds.
//
// # Windows and SLA tiers
//
// A Window scales a queue's quota during part of every day (UTC, wrapping
// past midnight); a Scaling is a queue's windows and its SLA tier's scale.
// Scaling.At is the scale in force, the product of the windows in force
// times the tier; Scaling.Max the largest scale at any window's opening.
// FlavorQuota.SetResource scales nominal quota and caps by the scale in
// force, and Ever, what decides that a request can never fit, by the
// largest; ResourceQuota.Scaled scales a tree node's nominal quota, and a
// lending limit above the scaled quota lends all of it.
// Scaled rounds down and saturates at MaxQuantity.
//
// # The resource-node tree
//
// ResourceTree is Kueue's resource-node tree (pkg/cache/scheduler,
// resource_node.go), the model that borrowing, lending and hierarchical
// cohorts need. Its nodes are cohorts (inner nodes) and queues (leaves),
// numbered by their index in the []NodeSpec given to NewResourceTree. Every
// node has, per flavor-resource fr = flavor*Resources() + resource, a
// ResourceQuota: a nominal quota (cohorts may hold quota of their own), an
// optional borrowing limit BL and an optional lending limit LL; limits are
// only allowed on nodes with a parent, and a queue's LL must not exceed its
// nominal quota. All of these formulas are per fr:
//
//	localQuota(n)   = max(0, SubtreeQuota(n) − LL(n)) with LL set, else 0
//	SubtreeQuota(q) = Nominal(q)                                    (queue)
//	SubtreeQuota(c) = Nominal(c) + Σ_children SubtreeQuota(child) − localQuota(child)
//	Usage(q)        = what the queue's admitted workloads use        (queue)
//	Usage(c)        = Σ_children max(0, Usage(child) − localQuota(child))
//	LocalAvailable(n) = max(0, localQuota(n) − Usage(n))
//
//	Available(root) = SubtreeQuota(root) − Usage(root)
//	Available(n)    = LocalAvailable(n) + min(Available(parent),
//	                  SubtreeQuota(n) − localQuota(n) − max(0, Usage(n) − localQuota(n)) + BL(n))
//	                  (the min only with BL set)
//	PotentialAvailable(root) = SubtreeQuota(root)
//	PotentialAvailable(n)    = min(localQuota(n) + PotentialAvailable(parent), SubtreeQuota(n) + BL(n))
//
// localQuota is the part of a subtree's quota its parent never sees.
// Without lending limits it is 0 everywhere, all quota is pooled at the
// root and a queue's nominal quota is not reserved for it: others borrow
// it, and the owner gets it back by preemption or by waiting. A borrowing
// limit caps a queue at Nominal + BL, and every limit on its path applies.
// Available is negative after over-admission (quota cut under admitted
// usage); AvailableClamped floors it at 0, and a request of v fits when
// v ≤ AvailableClamped. Borrowing, BorrowingWith and IsWithinNominal compare
// Usage (plus a request) with SubtreeQuota. BorrowingLevel is Kueue's
// FindHeightOfLowestSubtreeThatFits: 0 within the queue's nominal quota,
// else the Height of the lowest ancestor whose subtree holds the request
// (a cohort of queues has height 1), with whether capacity outside that
// subtree may be reclaimed.
//
// Quantities use Kueue's Amount arithmetic through AddAmount and
// SubAmount: Unlimited (math.MaxInt64) absorbs bounded amounts, bounded −
// Unlimited is math.MinInt64 ("no capacity"), and bounded sums saturate.
// A limit that is not set behaves exactly as an Unlimited one.
//
// # Who maintains usage
//
// The ResourceTree is immutable and shared by every reader; usage lives in
// a Usage, one []int64 row per node. Its single writer (the store that owns
// the master snapshot) calls AddUsage or AddVec with sign +1 when a
// workload reserves quota and RemoveUsage or AddVec with sign −1, with the
// same amounts, when it finishes or is evicted. They touch only the queue
// and the ancestors its usage spills into, exactly as Kueue's addUsage and
// removeUsage do, so cohort rows always equal the Σ max(0, …) definition.
// After a quota change, build a new ResourceTree over the same node list
// and call Recompute on the usage, which rebuilds every cohort row from
// the queues' rows under the new localQuota.
//
// # Copy-on-write
//
// Rows are shared between versions and never written in place: a write
// builds fresh rows (one allocation per call) and stores them in the
// writer's outer slice. So Usage.Clone, a shallow copy of the outer slice,
// is an independent version that costs one allocation; the writer publishes
// clones to readers, and readers only read them. A writer that publishes
// at nearly every write (a store's master) takes the rows and the clones
// from a Rows (AddVecFrom, CloneFrom), many to an allocation. Queries
// (Available, BorrowingLevel and the rest) do not allocate.
package quota
