// Package health computes the four health numbers of a GPU cluster from
// an allot snapshot — GPU utilization, queue wait by priority class,
// preemptions, and fragmentation by both of the simulator's definitions —
// and the per-queue figures beside them (admitted, pending, borrowing,
// evictions), and names the metrics that carry them.
//
// The names are the project's one list: the Kubernetes bridge's
// Prometheus collectors export them, and a dashboard built on them reads
// the simulator's figures under the same names (see Names).
//
// Measure reads a published snapshot and never changes it; it is a
// function of the snapshot alone (the waits are measured on the
// snapshot's clock), so two replicas holding the same snapshot report the
// same figures.
//
//	f := health.Measure(store.Load())
//	fmt.Println(f.GPUUtilization, f.Fragmentation.NodeShare)
package health
