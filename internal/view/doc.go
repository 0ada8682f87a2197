// Package view holds what an admitted workload holds, in the form the rules
// over it read, and a what-if view of the cluster with some of them taken
// out.
//
// A Booking is an admitted workload as the store books it: its queue, each
// pod set's flavor, count and per-pod resources, each pod's node and GPUs,
// and the facts victim order reads (priority, submission, admission and
// checkpoint times, whether it is checkpointable or pinned). Its methods
// are the one place that says what a pod set charges to quota (Need,
// Charged, Total) and what one of its pods books on its node (Book): the
// store, the preemption search and backfill all ask them.
//
// A Sim is a private, copy-on-write view of quota usage and free capacity
// over which bookings are evicted and restored: the preemption search
// removes candidates from it until the preemptor fits, and backfill
// planning lets running workloads leave it in the order they are expected
// to end.
package view
