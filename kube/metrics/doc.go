// Package metrics exports the guard's figures to Prometheus: the admission
// webhook's answers by verdict and reason (Recorder, a guard.Observer),
// its latency (Recorder.Instrument), and the cluster's health numbers
// computed live from the source's snapshot at every scrape (Health, a
// custom Collector over health.Measure): GPU utilization, queue wait by
// priority class, evictions and preemptions, fragmentation by both of the
// simulator's definitions, and per queue the admitted, pending and
// borrowing workloads and recent evictions. The names and labels are
// package health's, the ones the simulator's figures carry.
package metrics
