// Package guard is allot's validating admission webhook for Kubernetes
// clusters that run Kueue: the GPU fragmentation guard. On CREATE of a
// Pod, a batch/v1 Job, a JobSet, a RayJob or a Kueue Workload it turns
// the object into its whole gang's request as Kueue would
// (kueuejob.Request), decides it against a Source's snapshot of the
// cluster (allot.Decide), and answers the AdmissionReview.
//
// # What it denies
//
// A gang allot rejects: one that cannot be admitted as the cluster and
// its quotas stand however long it waits — a gang whose required topology
// no domain can hold even on an empty cluster (NeverFits), one above its
// queue's hard cap, one whose priority its queue does not allow. The
// message is the decision's ("allot: NeverFits: ..."), so that the user
// learns at once why, instead of the gang's pods squatting while it waits
// for room that never comes. A gang that waits for quota or for room that
// will free (a Queue verdict, TopologyUnsatisfiable included: the shape
// exists, it is only busy) is allowed: Kueue queues it. So is what Kueue
// itself keeps pending before quota is looked at (a LocalQueue that does
// not exist, a resource no quota covers), with a warning, and what Kueue
// does not manage (no queue-name label).
//
// Two policies are options: RequireTopology denies a gang that declares
// no topology, and SmallPodMinFreeShare denies a lone 1-GPU pod on a
// flavor whose free GPUs have fallen below a share, keeping them for
// gangs.
//
// # Gangs and the cache
//
// A pod of a Kueue pod group is decided as its whole group (at the
// group's total count); the group's other pods get the first one's
// answer from a bounded cache keyed by the gang and the snapshot's
// version. A Workload made for a job shares its job's key. A pod or Job
// made by a controller for a job the guard judges (a Job's pods, a
// JobSet's Jobs) is allowed: its gang was judged when its owner was
// created.
//
// # Failing safe
//
// A bad admission policy can block all scheduling in a cluster. The guard
// fails open by default: when its source is not ready or deciding fails,
// it allows with a warning (Options.FailClosed denies instead). An object
// it cannot decode is allowed with a warning unless
// Options.DenyUndecodable. Options.Disabled is the kill switch: everything
// is allowed, undecided. Options.DryRun decides and logs what it would
// deny, counts it, and allows it with a warning. A malformed
// AdmissionReview is an HTTP 400 with the reason.
//
// Decisions are deterministic functions of the snapshot, so replicas of
// the webhook that hold the same cluster give the same answers; each
// keeps its own cache and none needs leader election.
//
// # The simulator
//
// Simulate serves the pre-submission simulator on the same server: POST a
// job and get the decision, with nothing created.
package guard
