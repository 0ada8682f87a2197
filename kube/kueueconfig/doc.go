// Package kueueconfig reads a user's Kueue configuration and the cluster
// it runs on — Kueue's ResourceFlavors, ClusterQueues, Cohorts,
// LocalQueues, WorkloadPriorityClasses, Topologies and Workloads (v1beta1,
// converted by Kueue's own conversion, or v1beta2), and core/v1 Nodes,
// Namespaces and Pods, with scheduling.k8s.io PriorityClasses — into an
// allot description (an allot.Builder) in Kueue-exact mode.
//
// Reading is strict: Decode refuses an unknown or duplicated field, and
// Config.Add applies Kueue's own validation (Validate: every rule of its
// CRDs and webhooks that can refuse an object on create, with Kueue's
// messages), so that what is imported is what Kueue accepts. What allot
// cannot represent is an error (ErrNotModelled: a second resource group,
// two GPU resources, Topologies with different levels) or a Warning
// naming the object and field (admission checks, HoldAndDrain's
// eviction, admission fair sharing), never dropped without a word.
//
// The mapping:
//
//   - A ResourceFlavor is a flavor. One with a topologyName is
//     topology-aware: the Nodes carrying all its nodeLabels are its nodes
//     (of several that match, the one with most nodeLabels, then by name,
//     with a warning), placed on by the Topology's levels (node labels;
//     a last kubernetes.io/hostname level is allot's node level). Any
//     other flavor is quota-only, as Kueue without topology-aware
//     scheduling checks quota alone. A node's capacity is its
//     allocatable, its allocatable pods its maxPods; cordoned, or tainted
//     NoSchedule/NoExecute beyond its flavor's tolerations, it is
//     unschedulable; not Ready, down.
//   - A ClusterQueue is a queue: quota per flavor (nominal, borrowing and
//     lending limits, in allot's base units: cpu millicores, memory
//     bytes), cohort, flavor order, flavorFungibility, preemption,
//     fairSharing weight, queueingStrategy, stopPolicy Hold and
//     HoldAndDrain as hold, and its namespaceSelector as the queue's
//     (matchLabels and matchExpressions; Kueue's nil, which admits no
//     namespace, as kubernetes.io/metadata.name DoesNotExist). One that
//     Kueue keeps inactive (a flavor or Topology not found) is held.
//   - Namespaces are the snapshot's tenants, with their labels, which the
//     queues' selectors judge (a request's tenant is its namespace), and
//     LocalQueues its local queues (those whose namespace and
//     ClusterQueue were read).
//   - A Cohort is a cohort (parent, quota, fairSharing weight); one named
//     without an object is made implicitly, as Kueue does.
//   - Bound, active Pods are running workloads: a pod group, or the pods
//     of one top-level owner, is one gang; its queue comes from the
//     queue-name label on the pod or an owner, through its LocalQueue
//     (UnmanagedQueue without one), its priority from its
//     WorkloadPriorityClass or the pods' priority.
//   - Workloads that wait (no quota reserved, active) are pending.
//
// Config.WorkloadRequest turns a Workload into the allot.Request Kueue's
// scheduler would consider; package kueuejob makes that Workload from a
// Job, JobSet, RayJob or pod group.
//
// For a live cluster, every description is per object: Flavor, Queue,
// Cohort, Node (and NodeFlavor), LocalQueueWarnings, RunningGang (one
// gang, by the pod and node indexes GangsOn and PodGang read), Pending,
// with Add to record an object's new version and Remove to forget one, so
// that an informer can turn one object's change into one store event (a
// ClusterQueue into a queue set, a Node into a node event, a pod into its
// gang's SetRunning); package cluster does. A Namespace's labels change the allow-list
// of every ClusterQueue whose selector reads them.
package kueueconfig
