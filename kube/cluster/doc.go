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
//     RemoveQueue, RemoveCohort for what changed, comparing only what the
//     object can touch (a ClusterQueue's update, that queue and the
//     cohorts), and the gangs that read what changed of it described anew
//     (kueueconfig.Reads and Config.View: a quota is read by none).
//   - A ResourceFlavor added, deleted or described anew while every node
//     stays described as it was (kueueconfig.Config.NodeRule stays: the
//     levels, the labels flavors select by, the topology-aware flavors
//     and their nodeLabels): AddFlavor, SetFlavor, the queues and the
//     gangs with a pod off the store's nodes (Config.GangsOff) described
//     anew, RemoveFlavor. Nothing else is read again.
//   - A ResourceFlavor that moves the nodes, a Topology, or
//     the quotas coming to cover another set of resources: a resync, the
//     configuration's description compared with what the store was told
//     and the difference applied as one ordered batch — SetResources
//     (the resources of both, so nothing names one the store lacks), Finish
//     for the gangs on a node that comes to serve another flavor (they run
//     again at the end), RemoveNode, SetNode, AddFlavor (where its name
//     sorts, with the nodes that come to serve it), SetLevels, SetFlavor
//     (with the nodes of the labels it selects by), AddNode, the queues and
//     gangs, RemoveFlavor, and SetResources with the configuration's
//     resources alone. A ResourceFlavor changed in nothing allot reads
//     (Kueue's finalizer, a label), or a Topology whose levels stay, is
//     nothing. A Node whose labels move it, with gangs running, to another
//     flavor is a resync too.
//
// Only the first snapshot is built; every change after it is store
// events, and the Store, its versions, its fairness history and its audit
// log go on. A store event the store refuses is counted and logged (a
// logr.Logger in Options), never a panic: the store keeps what it
// applied, and a resync from what it was told follows at once and again
// at the next change, until the store is in step with the objects.
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
