// Package sim replays a trace (bench/trace) on a cluster through allot's
// own machinery, a Store, Decide and its scheduling loop, under policies
// that switch that machinery's features on and off (fifo, kueue, slurm and
// allot), so that they compare on the same workload.
//
// Two replays:
//
//   - Run replays the trace in time: jobs arrive at their submit times,
//     run for their durations, finish or are preempted, and the report
//     holds utilization and throughput while jobs arrive, queue waits per
//     priority class and per queue, preemption, and fragmentation sampled
//     from the first arrival until the backlog clears for good (see
//     Result for each figure's definition). Preemptions are committed in two phases, as Kueue
//     does them: a victim takes Options.TerminationDelay (30 s by default)
//     to terminate, its GPUs booked and idle meanwhile (counted as lost
//     work), and its preemptor starts when its last victim is gone. The
//     run learns what the store admitted and evicted from its audit log.
//   - Pack is the packing experiment of FGD (Weng et al., ATC'23): every
//     job arrives once, in trace order, and never leaves, so the cluster
//     only fills; the report holds the GPUs left unallocated when the
//     arrived demand reaches the capacity and at the end, and the
//     fragmentation then against the trace's own pod mix.
//
// The cluster and queues are a team's own configuration (Options.Config, a
// scenario file, the trace's queues mapped onto its queues), or else one
// queue per queue of the trace with the GPUs split evenly among them; a
// policy overlays a configuration (see Config). The
// nodes are the configuration's, or a uniform Shape, or a trace's own
// node list (Options.Nodes). A node list that declares CPU and memory has them
// booked beside the GPUs. A policy without topology awareness admits on
// quota alone and the simulator binds the pods to nodes first fit, as
// Kueue does without topology-aware scheduling.
//
// Both replays are deterministic: same trace, policy and options, same
// result, byte for byte once marshalled. Nothing reads the wall clock.
package sim
