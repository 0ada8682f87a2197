// Package preempt holds the pieces of victim selection that do not depend on
// the snapshot: Kueue's preemption policies, the variants a candidate is
// collected under (and the victim reason each gives), the order candidates
// are tried in, and the cost of the work a victim would lose.
//
// The search itself runs in the root package, which owns the snapshot: it
// collects candidates the way Kueue's classical preemption does (the
// preemptor's own queue, then the cohort tree walked upward with
// hierarchical advantage), orders them with Less, removes them greedily from
// a copy-on-write view of quota usage and free capacity until the preemptor
// fits both its quota and a placement, and then fills back in reverse so
// that the victim set is minimal.
//
// allot's additions to Kueue's order act only where Kueue has no
// information: within one priority, victims that lose the least work go
// first (GPU-seconds since the last checkpoint, or since admission), then
// the more recently admitted, then ID; a class-never workload is nobody's
// victim unless it runs on a spot flavor.
package preempt
