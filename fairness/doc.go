// Package fairness will order queues and workloads fairly: dominant resource
// share with weights (Kueue's fair sharing, DRF), decayed historical usage
// (Slurm's fair-share factor), fairness debt, and backfill reservations.
//
// It is part of the layout of DESIGN.md and holds no code yet: a snapshot
// that asks for fair sharing, history or backfill is refused by the root
// package's Builder with ErrUnsupported.
package fairness
