// Package preempt is victim selection: Kueue's classical preemption and
// its fair-sharing preemption, over concrete inputs.
//
// The root prepares a World (the cohort tree with its usage, the free and
// the empty cluster, each queue's fairness debt, fair sharing with its
// strategies and weights) and a Preemptor (its queue's policies, priority
// and submission time, and per flavor what one flavor assignment charges
// there, the queue's quota, and the pod sets to place), calls Find over
// the admitted workloads' bookings (view.Booking) as Admitted holds them,
// and renders the Result: the victims with the variant each was taken
// under, the placement they free, and whether the preemptor still borrows.
//
// The Index keeps each queue's workloads in runs of one priority, size and
// kind of lost work, each in the order lost work grows; a search merges the
// runs of the queues it may take from lazily (lists.go), so it reads about
// as many workloads as it looks at, whatever the number admitted. A lazy
// read costs several times a scan's, so a search that has read
// DefaultReadBound entries scans the index over the queues it may take
// from for the rest, and a caller with fewer than IndexFrom admitted
// workloads keeps no index and has the set scanned (scan.go). The lists
// yield the same candidates in the same order whichever way they read.
//
// The classical search collects candidates the way Kueue does (the
// preemptor's own queue, then the cohort tree walked upward with
// hierarchical advantage), in Less order, removes them greedily from
// a copy-on-write view of quota usage and free capacity (view.Sim) until
// the preemptor fits both its quota and a placement, and then fills back
// in reverse so that the victim set is minimal. The fair-sharing search
// picks target queues by dominant share from the root down, the request
// counted in its own queue's, and takes their candidates as its strategies
// allow, then fills back the same way (fair.go spells out Kueue's rules).
//
// Find is a function of its world and its preemptor, so a caller that
// asks the same search again on the same world may answer it from
// Failures, the preemptors Find found no victims for there: a scheduling
// loop asks it for head after head of one shape.
//
// allot's additions to Kueue's order act only where Kueue has no
// information: within one priority, victims that lose the least work go
// first (GPU-seconds since the last checkpoint, or since admission, as
// Cost prices it), then the more recently admitted, then ID; a pinned
// workload (class never, on no spot flavor) is nobody's victim.
package preempt
