// Package quota decides whether a request fits a queue's quota.
//
// A Tree holds the queues (Kueue's ClusterQueues) and the cohorts they belong
// to. Each queue has, per flavor and resource, a nominal quota; the flavors it
// may use in the order it tries them; a tenant allow-list; and hold. Usage is
// per queue and flavor, kept by the snapshot and changed incrementally on
// every admission and finish.
//
// This cut checks a queue against its own nominal quota. The cohort tree is
// validated (unknown parents, cycles) and kept, so that borrowing, lending
// and hierarchical cohorts plug into Available without changing its callers.
package quota
