// Package audit writes a store's audit trail out as JSON Lines, one record
// a line, for an embedder to keep or ship: every admission, every
// eviction with its preemptor, reason, policy, lost work and recovery
// point, and the states of two-phase preemptions.
//
// The core keeps the trail in memory, bounded (allot.StoreOptions'
// AuditCapacity), and does no I/O; this package is where the records meet
// an io.Writer. Drain after each write to the store, or often enough that
// the log does not fill between two drains:
//
//	w := audit.NewWriter(f)
//	if _, err := store.Commit(d); err == nil {
//		if _, err := w.Drain(store); err != nil { ... }
//	}
//
// Read parses what Writer wrote.
package audit
