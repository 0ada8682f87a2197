// Package kueuejob turns what a user submits to Kueue — a batch/v1 Job, a
// JobSet, a RayJob, a Kueue Workload, or the pods of a pod group — into the
// request allot decides, exactly as Kueue would see it.
//
// It has two steps, as Kueue has. Workload builds the Workload Kueue's job
// framework would create for the object: one pod set per Kueue pod set
// (a Job's "main" with min(parallelism, completions) pods; a JobSet's
// replicated jobs with replicas × that; a RayJob's head, worker groups
// (replicas × numOfHosts) and submitter; a pod group's roles by Kueue's
// role hash), the pod template of each, its topology request from the
// template's kueue.x-k8s.io/podset-required-topology,
// podset-preferred-topology, podset-unconstrained-topology,
// podset-slice-required-topology / podset-slice-size and
// podset-group-name annotations, its LocalQueue from the
// kueue.x-k8s.io/queue-name label (the namespace's LocalQueue "default"
// when there is none) and its priority from the kueue.x-k8s.io/priority-class
// label's WorkloadPriorityClass, else the pods' PriorityClass. Then
// kueueconfig.Config.WorkloadRequest turns the Workload into an
// allot.Request: its ClusterQueue, the effective request per pod (limits
// for missing requests, Kubernetes' init-container and overhead rule), and
// the flavors Kueue's flavor assigner would try.
//
// Request does both. An object Kueue's job webhooks refuse is an
// *kueueconfig.ObjectError; one Kueue would never admit (no queue, a
// LocalQueue that does not exist, a resource no quota covers) a
// *kueueconfig.InadmissibleError with Kueue's reason.
package kueuejob
