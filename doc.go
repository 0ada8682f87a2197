// Package allot decides admission and placement for GPU clusters.
//
// An embedder (an admission webhook, a batch scheduler, a queue controller,
// a simulator) hands allot an immutable Snapshot of the cluster and one
// Request, and Decide answers with a Decision: Admit (here, on these nodes
// and GPUs), Preempt (after evicting these victims), Queue (and why) or
// Reject (and why). allot does no I/O: it never talks to an API server,
// never reads a clock, never logs, never starts a goroutine. The same
// snapshot and request give the same decision, byte for byte.
//
// # The loop
//
// Build the first snapshot from a Builder, which validates the whole state
// and refuses an invalid one with a *BuildError (wrapping a sentinel such as
// ErrDuplicateID or ErrCohortCycle). Put it in a Store. Then, for each
// request:
//
//	snap := store.Load()            // wait-free, never blocks
//	d := allot.Decide(snap, req)    // pure; safe from many goroutines
//	if d.Verdict == allot.VerdictAdmit {
//		_, err := store.Commit(d)   // re-validated if the store moved on
//	}
//
// Everything that changes the cluster is an Event applied through
// Store.Apply: Finish, Evict, Checkpoint, NodeDown, NodeUp, NodeCordon,
// NodeCooldown, AdvanceTime, SetQueue, SetCohort, Submit, Withdraw,
// Terminated for two-phase preemption, the cluster's churn: AddNode,
// RemoveNode (its workloads evicted, recorded with reason
// EvictedNodeRemoved), SetNode (a node's capacity, labels, flavor or
// condition anew), SetFlavor (a flavor's spot-ness, node labels, taints
// and tolerations anew), RemoveQueue and RemoveCohort (refused with an
// *InUseError while in use), the configuration: AddFlavor, RemoveFlavor
// (an *InUseError while in use), SetLevels and SetResources, and who may
// submit where: SetNamespace,
// RemoveNamespace, SetLocalQueue, RemoveLocalQueue, SetPriorityClass,
// RemovePriorityClass. Each is validated by the code that validates a
// Builder's description, leaves the snapshot Build would build from the
// description it edits, and changes nothing when it refuses. Commit
// re-checks a decision with the checks Decide runs (the request's
// validation, its queue, tenant and priority, the caps, quota, and the
// placement still free), and commits a Preempt decision made on an older
// version, or decoded from JSON, only if Decide now evicts exactly its
// victims. Each produces the next version by copy-on-write; readers of
// older versions are never disturbed.
//
// A Decision's JSON carries the request it answers, so one process (a
// webhook) can decide and another (a controller) commit what it decoded:
// such a decision is checked as one made on an older version, whatever its
// version says.
//
// With Options.TwoPhasePreemption a committed Preempt decision's victims
// start evicting, their pods still booked, and the preemptor holds its
// room (Snapshot.Held) until Terminated (or Evict, or Finish) says each
// victim is gone; then it starts. The embedder applies Terminated when it
// sees a victim's pods gone.
//
// Each store keeps a bounded audit log of what its writers did
// (admissions, evictions with their preemptor, reason, policy, lost work
// and recovery point, holds): drain it with Store.DrainAudit, after each
// write or often enough; package audit writes it as JSON Lines.
//
// # Resources
//
// A snapshot declares its resources (Builder.Resources) and which of them
// is the GPU (Builder.GPUResource: gpu unless named, nvidia.com/gpu on a
// Kubernetes cluster): the resource placed by index on each node's GPUs
// and counted by FreeGPUs, in whose GPU-seconds lost work is priced.
// A snapshot may also name the resource pods ask for part of one GPU by
// (Builder.GPUShareResource, thousandths), which packs them onto the
// nodes' shareable GPUs, one GPU a pod; and a node may list GPUs split
// into MIG instances (Node.MIG), each profile a resource of its own
// (share.go, mig.go).
// Quantities are int64 base units (cpu in millicores, memory in bytes);
// package quantity converts Kubernetes quantity strings to them, and
// Resources read such strings from JSON. Names a cluster's objects carry
// that the snapshot does not track (ephemeral-storage) are listed in
// Builder.IgnoredResources.
//
// # Tenants and priority
//
// A tenant is a Kubernetes namespace (Builder.Namespaces, with labels):
// Request.Tenant names it, and Request.LocalQueue may name a local queue
// of it (Builder.LocalQueues, Kueue's LocalQueue) in place of the queue.
// Who may submit to a queue is one rule over the tenant: the queue's
// Tenants by name and its NamespaceSelector (Kueue's namespaceSelector,
// package labels) by the namespace's labels; a request it refuses is
// Unauthorized, never admitted and never placed. Priority is authority
// only as far as a priority class grants it: Builder.PriorityClasses
// (Kueue's WorkloadPriorityClass) name the levels, Queue.PriorityClasses
// those a queue allows, and a request claiming another, none where the
// queue lists classes, or a priority above its class's value is
// PriorityNotAllowed. Decide, Commit, backfill's planning and the soft
// cap's look at what waits apply the same rule (entry.go); see Namespace
// and PriorityClass.
//
// # Reading and saving a snapshot
//
// A snapshot reads out as a Builder takes it: Nodes and Node (with their
// condition), Flavors, Queues, Cohorts, the workloads (Running,
// PendingWorkloads); and as it stands: NodeStatus (free capacity and
// GPUs, pods, usable), QueueStatus and CohortStatus (usage and the quota
// and caps in force after windows and SLA scaling, with Kueue's subtree
// quota and available figures). Snapshot.Builder describes the snapshot
// back, as a Builder that builds it again: a production state saved to be
// rebuilt, or written as a scenario file (bench/scenario.Marshal, allot
// export) and replayed as a repro.
//
// # Ownership
//
// A Snapshot is read-only and may be shared freely. A Decision returned by
// Decide owns its memory. DecideInto reuses a Decision's memory for the
// next decision, which is how it allocates nothing: the next DecideInto on
// the same Decision rewrites its Message and trail details (views of its
// text buffer) and its Flavors, Placement, Borrowing, Victims and Trail
// slices; its other strings stay valid. Decision.Clone returns a copy that
// owns its memory, for a decision that must outlive the next one. A
// Request must not be changed while a decision made from it may still be
// committed.
//
// # The decision pipeline
//
// Checks run in this order, and each may end the decision: validate (a
// malformed request is Reject InvalidRequest, naming the field), the queue
// exists, named or through a local queue (UnknownQueue), authorize (the
// tenant by the queue's tenants and namespace selector, Unauthorized; the
// priority by the queue's priority classes and the class's value,
// PriorityNotAllowed),
// hold (QueueHeld), caps (per-user and non-preemptible caps: Reject when
// the request alone breaks one, else wait), flavor assignment against quota
// (the queue's flavors in order; quota, borrowing and lending as Kueue's
// cohort tree computes them, with hard caps and the time-of-day windows and
// SLA tier in force, package quota; whenCanBorrow: TryNextFlavor prefers a
// later flavor within nominal), gang placement on that flavor's free capacity (package
// gang), the soft cap (beyond it only idle capacity, not while a
// higher-priority workload of the cohort waits), then the admission: Fits,
// Borrowing (with the borrowing level) or OverSoftCap, the last two
// preemptible, as is anything on a spot flavor.
//
// Every check that ran is in Decision.Trail with its figures, the passed
// ones too (a request that waits for nodes shows the quota it would use);
// Reason is a stable code and Message a line with the numbers. A request that no
// flavor's quota (at its largest, every window and limit considered) and no
// domain of the empty cluster could ever hold is rejected (NeverFits,
// ExceedsHardCap); one that could fit later waits with the reason of the
// flavor that came closest: Cooldown, InsufficientCapacity (not enough
// free) or TopologyUnsatisfiable (enough free, wrong shape) where quota
// fits, else QuotaExhausted or HardCapReached.
//
// # Who owns which rule
//
// The root keeps the protocol: the pipeline (decide.go), the one flavor
// assignment every caller shares (assign.go: Decide's, with placement;
// the loop's order keys and backfill planning, by quota alone), every
// message and trail text (text.go), the snapshot (snapshot.go its
// representation and versions, records.go its records and indexes,
// access.go and inspect.go read access, describe.go its Builder) and what
// writes it (builder.go from a description, store.go, events.go and
// events_cluster.go one version after another). Each rule
// lives in the package that owns it, over concrete inputs: package quota
// the quota fit, caps, windows and SLA scaling; package gang placement;
// package preempt the victim search; package fairness shares, the order of
// a cycle's heads, the tournament and backfill's time rule; internal/view
// what an admitted workload holds and the what-if view both searches use.
// Package quantity owns Kubernetes' quantity rules and each resource's
// base unit, package labels Kubernetes' label selectors; gpuresource.go
// owns which resource is the GPU, entry.go who may submit where at which
// priority. Imports go
// downward only, and a test enforces it.
//
// When the request is not admissible as things stand and the queue's
// policy allows, the preemption search looks for victims (package preempt):
// Kueue's classical preemption, or its fair-sharing preemption when fair
// sharing is on; victims must free both quota and a placement. Flavors are
// assigned pod set by pod set: pod sets that fit keep their flavors and
// only the others wait for victims. Before the admission, backfill safety
// keeps EASY reservations for blocked higher-priority workloads. Schedule
// runs the scheduling loop over a store's pending workloads (ScheduleFunc
// hands each decision over as it is made), and Order gives the order it
// considers them: Kueue's cycles of one head per queue, or with fair
// sharing, in allot's default, weighted DRF's progressive filling (one
// admission at a time, the lowest share after admission over the weight
// next); Kueue-exact mode keeps Kueue's cycles there too.
//
// # Partial admission
//
// A pod set with a MinCount may be admitted with fewer pods than its
// Count, down to that minimum (Kueue's minCount). Decide decides the full
// counts first; when they are neither admitted nor preempted for, it
// searches the counts as Kueue's scheduler does, every pod set with a
// minimum shrinking together, and answers with the decision at the largest
// counts it admits: that many pods placed, each pod set's count in
// Decision.Flavors (Decision.CountOf), the counts tried and why the next
// larger is not admitted in the message and in a last trail check
// (StagePartial). Preemption at a reduced count follows the queue's own
// policy. Commit books the admitted counts and re-checks them against the
// request; the running pod set's Count is what it was admitted at.
package allot
