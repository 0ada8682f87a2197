// Package fairness holds the fairness figures allot orders work by: decayed
// historical usage and Slurm's fair-share factor, and fairness debt (how
// often a queue has been preempted lately, decayed with a half-life), which
// makes a queue a later choice of victim.
//
// Dominant-resource shares, admission order and backfill reservations are
// the next parts of this package; a snapshot that turns fair sharing or
// backfill on is refused by the root package's Builder with ErrUnsupported
// until they are in place.
package fairness
