// Package cluster keeps an allot Store in step with a live Kubernetes
// cluster and its Kueue configuration, through client-go shared informers:
// Nodes, Pods, batch/v1 Jobs, Namespaces and PriorityClasses, and Kueue's
// ResourceFlavors, ClusterQueues, Cohorts, LocalQueues,
// WorkloadPriorityClasses and Topologies (v1beta2, through Kueue's own
// generated clientset).
//
// Every object is described by package kueueconfig, the importer, so that
// the live snapshot is the one `allot import kueue` makes of the same
// objects (its mapping has one owner). Each informer event becomes one
// store event, or a short batch, never a rebuild:
//
//   - A Node added, changed or deleted: AddNode, NodeCordon (cordon,
//     spec.unschedulable), NodeDown / NodeUp (the Ready condition),
//     SetNode (labels, capacity, taints), RemoveNode; then the gangs with
//     a pod on it are described anew.
//   - A Pod bound, changed or ended: its gang (Kueue's pod group, else its
//     owner, else itself) is described anew: SetRunning, or Finish once
//     none of its pods is active. Pods are bound by whoever binds them
//     (the scheduler, or a test writing spec.nodeName); a pod not bound
//     holds nothing.
//   - A Job added or changed: the gang of its pods is described anew (a
//     Kueue-managed Job carries the queue-name label and priority class
//     its pods do not, so without it they would count as unmanaged).
//   - A Pod's update that keeps its spec's generation and changes
//     nothing its gang's workload reads (a status heartbeat): nothing.
//   - A Namespace added, relabelled or deleted: SetNamespace or
//     RemoveNamespace (its local queues removed first); the queues'
//     selectors judge the labels, and stay as they are.
//   - A ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass or
//     PriorityClass: SetCohort, SetQueue, SetLocalQueue, RemoveLocalQueue,
//     RemoveQueue, RemoveCohort for what changed, and the gangs whose
//     queue or priority changed.
//   - A ResourceFlavor whose tolerations or node taints changed:
//     SetFlavor. One changed in nothing allot reads (Kueue's finalizer, a
//     label), or a Topology whose levels stay: nothing.
//
// What cannot be expressed as an event rebuilds the snapshot from the
// whole configuration, and only then: a ResourceFlavor added or deleted,
// or selecting other nodes (its node labels, or its topologyName set or
// cleared, which moves nodes to another flavor); a Topology that changes
// the levels (allot's flavors, the node labels they select by and the
// topology levels are fixed when a snapshot is built); and the quotas
// coming to cover another set of resources. A store event the store refuses is counted and logged (a
// logr.Logger in Options), never a panic, and rebuilds too, since the
// description it came from is what a fresh import builds. A rebuild
// replaces the Store: call Store for the current one.
//
// The live cluster models what runs, not what waits: Kueue's pending
// Workloads are not watched (a request is decided against what runs), and
// a gang evicted by a node's deletion is withdrawn from the pending set.
// The pods of a JobSet group by the JobSet its Jobs name (the informers
// read no JobSets: their labels are the Jobs' to carry, as JobSet's
// controller copies them).
//
// Readiness: WaitForSync returns once every informer's cache has synced
// and the first snapshot is built. Nothing on the decision path calls the
// API server: Store().Load() is the current snapshot, and WithConfig lends
// the current Kueue configuration for kueuejob's request translation.
package cluster
