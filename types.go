package allot

import "github.com/allot-sched/allot/labels"

// Resources maps resource names to quantities in base units: GPUs as whole
// devices, cpu in millicores, memory in bytes, tokens as tokens. Names must be
// among the snapshot's declared resources (or its ignored ones, where a
// pod set or a node names them). In JSON a quantity is a number in base
// units or a Kubernetes quantity string ("500m", "16Gi"); see
// UnmarshalJSON.
type Resources map[string]int64

// Workload is a unit of admission: one or more pod sets admitted all together
// or not at all. Running workloads also carry their placement (PodSet.Flavor,
// PodSet.Nodes, PodSet.GPUIndices) and AdmittedAt.
type Workload struct {
	ID       string `json:"id"`
	Queue    string `json:"queue"`
	Tenant   string `json:"tenant,omitempty"`
	User     string `json:"user,omitempty"`
	Priority int32  `json:"priority"`
	// SubmittedAt and AdmittedAt are seconds on the snapshot's clock.
	SubmittedAt int64 `json:"submittedAt"`
	AdmittedAt  int64 `json:"admittedAt,omitempty"`
	// ExpectedRuntime in seconds, zero when unknown; it feeds backfill.
	ExpectedRuntime int64          `json:"expectedRuntime,omitempty"`
	Preemption      PreemptionSpec `json:"preemption,omitzero"`
	PodSets         []PodSet       `json:"podSets"`
	// Borrowing records, for a running workload, that it was admitted on
	// borrowed quota.
	Borrowing bool `json:"borrowing,omitempty"`

	// LocalQueue names a local queue of the Tenant's namespace (the
	// tenant is the namespace a workload is submitted from: see
	// Namespace), through which the workload is submitted (Kueue's
	// queue-name); Queue may then be left empty: it is the queue the local
	// queue points at.
	LocalQueue string `json:"localQueue,omitempty"`
	// PriorityClass names the priority class the workload claims (Kueue's
	// WorkloadPriorityClass); Priority may not be above its value. See
	// PriorityClass.
	PriorityClass string `json:"priorityClass,omitempty"`
}

// Request is the workload a caller asks Decide about. It has the shape of a
// Workload without a placement.
type Request Workload

// PreemptionSpec says how much a workload loses when it is evicted.
type PreemptionSpec struct {
	Class PreemptionClass `json:"class,omitempty"`
	// LastCheckpointAt is the time of the last checkpoint of a
	// checkpointable workload (zero: none yet).
	LastCheckpointAt int64 `json:"lastCheckpointAt,omitempty"`
}

// PodSet is a group of identical pods inside a workload.
type PodSet struct {
	Name  string `json:"name"`
	Count int32  `json:"count"`
	// MinCount, when set, lets the pod set be admitted with fewer pods
	// than Count, down to MinCount (Kueue's minCount, Volcano's
	// minMember): Decide admits the largest count quota and placement
	// allow, searching down as Kueue's partial admission does. Zero
	// admits the pod set whole. A running pod set's Count is what it was
	// admitted at.
	MinCount int32     `json:"minCount,omitempty"`
	PerPod   Resources `json:"perPod"`
	// Flavors restricts the flavors this pod set may use; empty means any
	// flavor of its queue.
	Flavors []string `json:"flavors,omitempty"`
	// Tolerations are the pods' (Kubernetes' tolerations): a flavor's
	// nodeTaints and a node's taints that repel must be tolerated by them
	// or by the flavor's for the pods to land there.
	Tolerations []Toleration `json:"tolerations,omitempty"`
	// Tokens, for LLM inference, is charged to the "tokens" resource as
	// Prompt + MaxTokens per pod.
	Tokens   *Tokens         `json:"tokens,omitempty"`
	Topology TopologyRequest `json:"topology,omitzero"`

	// Flavor, Nodes and GPUIndices place a running pod set: Nodes holds one
	// node name per pod; GPUIndices, when present, one list of node-local GPU
	// indices per pod. Requests leave them empty.
	Flavor     string   `json:"flavor,omitempty"`
	Nodes      []string `json:"nodes,omitempty"`
	GPUIndices [][]int  `json:"gpuIndices,omitempty"`
}

// Tokens is the token budget of one inference pod.
type Tokens struct {
	Prompt    int64 `json:"prompt"`
	MaxTokens int64 `json:"maxTokens"`
}

// TopologyRequest constrains where the pods of one pod set may land.
type TopologyRequest struct {
	// Required names a level: all pods in one domain of it, or wait.
	Required string `json:"required,omitempty"`
	// Preferred names a level: try one domain of it, then of each broader
	// level, then split across the broadest.
	Preferred string `json:"preferred,omitempty"`
	// Policy is pack (the default), spread or balanced.
	Policy PlacementPolicy `json:"policy,omitempty"`
	// Slices, outermost first: every Size consecutive pods sit in one domain
	// of Level.
	Slices []Slice `json:"slices,omitempty"`
	// Group keeps the pod sets of one workload that share it in one domain of
	// the narrowest of their required levels.
	Group string `json:"group,omitempty"`
}

// Slice is one layer of a multi-layer slice constraint.
type Slice struct {
	Level string `json:"level"`
	Size  int32  `json:"size"`
}

// Flavor is a class of interchangeable nodes. A flavor with NodeLabels
// is served by the nodes that carry them all (Kueue's ResourceFlavor
// nodeLabels); one without by the nodes that name it (Node.Flavor).
type Flavor struct {
	Name string `json:"name"`
	// Spot makes whatever lands on the flavor preemptible.
	Spot bool `json:"spot,omitempty"`
	// NodeLabels select the flavor's nodes: a node naming no flavor serves
	// the one whose NodeLabels it carries, all of them (of several, the
	// one with the most, then the first declared: a node serves one
	// flavor). Matching no node is no error, as in Kueue.
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`
	// NodeTaints are the taints the flavor's nodes carry (Kueue's
	// nodeTaints): a pod set may use the flavor only if it tolerates
	// those that repel (NoSchedule, NoExecute), with its own tolerations
	// and the flavor's.
	NodeTaints []Taint `json:"nodeTaints,omitempty"`
	// Tolerations are added to the pods admitted on the flavor (Kueue's
	// spec.tolerations), toward its nodeTaints and its nodes' taints.
	Tolerations []Toleration `json:"tolerations,omitempty"`
}

// Node is one machine. Labels name its domain at every topology level.
type Node struct {
	Name string `json:"name"`
	// Flavor names the node's flavor; empty, the node serves the flavor
	// whose NodeLabels its Labels match. A snapshot describes a node
	// without it when its labels select its flavor, so that a change of
	// labels moves the node.
	Flavor string `json:"flavor,omitempty"`
	// Labels hold a label for every topology level; the snapshot keeps
	// those and the ones some flavor's NodeLabels name, no others.
	Labels map[string]string `json:"labels,omitempty"`
	// Taints keep off the node the pods that do not tolerate them (those
	// of effect NoSchedule or NoExecute).
	Taints   []Taint   `json:"taints,omitempty"`
	Capacity Resources `json:"capacity"`
	// GPUGroups splits the node's GPUs into islands (NVLink or NUMA); it sums
	// to the node's gpu capacity. Empty means one island.
	GPUGroups []int `json:"gpuGroups,omitempty"`
	// ShareableGPUs are the GPUs fractional pods may share (see
	// Builder.GPUShareResource); a whole-GPU pod takes one only while no
	// share of it is held. Empty: every GPU is booked whole.
	ShareableGPUs GPUSet `json:"shareableGpus,omitempty"`
	// MIG lists the node's GPUs that NVIDIA's Multi-Instance GPU splits
	// into instances, and the instances of each: 7 of
	// nvidia.com/mig-1g.10gb, or 3 of nvidia.com/mig-2g.20gb and 1 of
	// nvidia.com/mig-1g.10gb. Each profile is a declared resource, which a
	// pod asks for by count as Kubernetes' device plugin advertises it; the
	// node's capacity of it is its instances, counted here, not listed
	// under Capacity. A partitioned GPU is counted in the node's gpu
	// capacity but never booked whole nor shared.
	MIG []MIGPartition `json:"mig,omitempty"`
	// MaxPods limits the pods on the node; zero means no limit.
	MaxPods       int32 `json:"maxPods,omitempty"`
	CooldownUntil int64 `json:"cooldownUntil,omitempty"`
	Unschedulable bool  `json:"unschedulable,omitempty"`
	Down          bool  `json:"down,omitempty"`
}

// MIGPartition is how one GPU of a node is split: the number of
// instances of each MIG profile, by the profile's resource name.
type MIGPartition struct {
	GPU      int       `json:"gpuIndex"`
	Profiles Resources `json:"profiles"`
}

// Cohort groups queues (and other cohorts) that share quota.
type Cohort struct {
	Name   string `json:"name"`
	Parent string `json:"parent,omitempty"`
	// Quota a cohort holds of its own, per flavor.
	Quota []FlavorQuota `json:"quota,omitempty"`
	// FairSharing weighs the cohort's share against its siblings' when a
	// parent cohort is divided; none means weight 1.
	FairSharing *QueueFairSharing `json:"fairSharing,omitempty"`
}

// FlavorQuota is the quota of one flavor, per resource.
type FlavorQuota struct {
	Flavor    string          `json:"flavor"`
	Resources []ResourceQuota `json:"resources"`
}

// ResourceQuota is the quota of one resource of one flavor. Nil limits mean
// unlimited, as in Kueue.
type ResourceQuota struct {
	Name           string `json:"name"`
	Nominal        int64  `json:"nominal"`
	BorrowingLimit *int64 `json:"borrowingLimit,omitempty"`
	LendingLimit   *int64 `json:"lendingLimit,omitempty"`
	Hard           *int64 `json:"hard,omitempty"`
	Soft           *int64 `json:"soft,omitempty"`
}

// Queue is an admission queue (Kueue's ClusterQueue).
type Queue struct {
	Name   string        `json:"name"`
	Cohort string        `json:"cohort,omitempty"`
	Quota  []FlavorQuota `json:"quota,omitempty"`
	// FlavorOrder is the order in which flavors are tried; empty means the
	// snapshot's flavor order.
	FlavorOrder       []string          `json:"flavorOrder,omitempty"`
	FlavorFungibility FlavorFungibility `json:"flavorFungibility,omitzero"`
	Preemption        QueuePreemption   `json:"preemption,omitzero"`
	FairSharing       *QueueFairSharing `json:"fairSharing,omitempty"`
	// Tenants is the allow-list of tenants by name; empty admits any
	// tenant. With NamespaceSelector it is one rule, who may submit here:
	// see Namespace.
	Tenants []string `json:"tenants,omitempty"`
	// NamespaceSelector admits the tenants whose namespace's labels it
	// matches (Kueue's namespaceSelector); nil admits any. See Namespace.
	NamespaceSelector *labels.Selector `json:"namespaceSelector,omitempty"`
	// PriorityClasses are the priority classes requests to the queue may
	// claim; a request must then claim one of them. Empty allows any class
	// and none. See PriorityClass.
	PriorityClasses []string `json:"priorityClasses,omitempty"`
	// QueueingStrategy is BestEffortFIFO (the default: a workload that
	// cannot be admitted steps aside for the ones behind it) or StrictFIFO
	// (it holds back every workload behind it in the queue), as in Kueue.
	QueueingStrategy string `json:"queueingStrategy,omitempty"`
	// Hold admits nothing new; admitted work runs on.
	Hold              bool      `json:"hold,omitempty"`
	UserCap           Resources `json:"userCap,omitempty"`
	NonPreemptibleCap Resources `json:"nonPreemptibleCap,omitempty"`
	Windows           []Window  `json:"windows,omitempty"`
	SLATier           *SLATier  `json:"slaTier,omitempty"`
}

// The queueing strategies of Queue.QueueingStrategy.
const (
	StrictFIFO     = "StrictFIFO"
	BestEffortFIFO = "BestEffortFIFO"
)

// FlavorFungibility is Kueue's policy for moving to the next flavor.
type FlavorFungibility struct {
	WhenCanBorrow  string `json:"whenCanBorrow,omitempty"`
	WhenCanPreempt string `json:"whenCanPreempt,omitempty"`
}

// QueuePreemption is Kueue's ClusterQueue preemption policy.
type QueuePreemption struct {
	WithinQueue         string             `json:"withinQueue,omitempty"`
	ReclaimWithinCohort string             `json:"reclaimWithinCohort,omitempty"`
	BorrowWithinCohort  BorrowWithinCohort `json:"borrowWithinCohort,omitzero"`
}

// BorrowWithinCohort is Kueue's borrowWithinCohort policy.
type BorrowWithinCohort struct {
	Policy               string `json:"policy,omitempty"`
	MaxPriorityThreshold *int32 `json:"maxPriorityThreshold,omitempty"`
}

// QueueFairSharing holds a queue's or a cohort's fair-sharing weight.
type QueueFairSharing struct {
	Weight *float64 `json:"weight,omitempty"`
}

// Window scales a queue's quota between From and To (HH:MM, UTC).
type Window struct {
	From  string  `json:"from"`
	To    string  `json:"to"`
	Scale float64 `json:"scale"`
}

// SLATier scales a queue's quota always.
type SLATier struct {
	Availability float64 `json:"availability"`
	Scale        float64 `json:"scale"`
}

// History is the fairness history of the cluster, per queue, at the
// snapshot's time; both figures decay with HalfLife (seconds; zero: no
// decay) from then on.
type History struct {
	// Usage is each queue's historical usage, in seconds of the main
	// resource (gpu when declared, else the first): {"team-a": {"gpu":
	// 3600}}. The other resources are not counted.
	Usage map[string]Resources `json:"usage,omitempty"`
	// Preemptions is each queue's fairness debt: the preemptions it
	// suffered, a decayed count and so not always whole.
	Preemptions map[string]float64 `json:"preemptions,omitempty"`
	HalfLife    int64              `json:"halfLife,omitempty"`
}

// Options are policy switches.
type Options struct {
	// Backfill, true or (except in Kueue-exact mode) nil, keeps
	// reservations for blocked higher-priority workloads (EASY backfill):
	// a lower workload starts now only if it ends before the reservation
	// or does not touch the reserved GPUs.
	Backfill *bool `json:"backfill,omitempty"`
	// BackfillDepth is how many blocked workloads get a reservation; zero
	// means one (EASY backfill).
	BackfillDepth int `json:"backfillDepth,omitempty"`
	// BackfillHolds is which workloads a reservation holds back:
	// BackfillHoldsAll (the default, also "") every workload after the
	// blocked one in the pending order, as EASY backfill does;
	// BackfillHoldsLowerPriority only those of lower priority than it. A
	// blocked workload then keeps its room from the lower classes but does
	// not hold back the rest of its own priority, whose run times are no
	// surer than its own: on a trace of one class it keeps no reservation
	// that matters.
	BackfillHolds string `json:"backfillHolds,omitempty"`
	// OrderByDebt puts the heads of queues preempted often lately (their
	// fairness debt, decayed with the history's half-life) ahead in the
	// scheduling loop, after the fair-sharing or borrowing-level keys and
	// priority, before submission: it orders the heads of one priority.
	OrderByDebt bool `json:"orderByDebt,omitempty"`
	// OrderByUsage puts the heads of queues that used less lately (their
	// decayed historical GPU-seconds over their fair-sharing weight, as
	// Slurm's fair-share factor ranks accounts) ahead, after OrderByDebt.
	OrderByUsage bool `json:"orderByUsage,omitempty"`
	// QueueDepth bounds the work of one Schedule call when much waits: once
	// that many workloads have been found not admissible, the loop stops
	// (as Slurm's default_queue_depth bounds its main scheduler). Zero
	// considers every pending workload.
	QueueDepth int `json:"queueDepth,omitempty"`
	// TopologyAware, nil or true, places pods on nodes; false makes every
	// flavor quota-only.
	TopologyAware *bool `json:"topologyAware,omitempty"`
	// Semantics is whose answer Decide gives where allot's own additions
	// would change one Kueue gives: "allot" (the default, also "") or
	// "kueue" (Kueue-exact: victims within one priority go most recently
	// admitted first, as Kueue's order has it, with neither the least lost
	// work nor the queues' fairness debt ranking them; flavors are chosen
	// by quota alone, a flavor whose nodes cannot hold the request then
	// meaning victims there or waiting; Backfill is off unless set). The
	// README's Kueue comparison lists every difference.
	Semantics string `json:"semantics,omitempty"`
	// TwoPhasePreemption commits a Preempt decision in Kueue's two
	// phases: its victims start evicting (Kueue's Evicted condition), and
	// their pods keep their nodes booked until a Terminated event (or
	// Evict, or Finish) says each is gone, while the preemptor is admitted
	// in quota terms (Kueue's QuotaReserved: the victims' quota passes to
	// it at once) and holds the rest of its room; it starts where the
	// decision placed it when its last victim is gone (Snapshot.Held until
	// then). A change to the configuration of its queue or a victim's
	// (SetQueue, or SetCohort above them), its withdrawal or a node of its
	// placement going down releases the hold: the preemptor is pending
	// again (if it was) and decided anew, its victims evict all the same. A
	// preemption may evict a holding preemptor, which loses nothing. False
	// (the default) evicts the victims and admits the preemptor at once.
	TwoPhasePreemption bool `json:"twoPhasePreemption,omitempty"`
	// NodeRoom is how many vacant node slots Build leaves at the end of
	// each narrowest topology domain (a rack), and a node event that
	// reshapes the topology tops up in each domain it puts a node in:
	// room for the nodes AddNode, or a SetNode to another domain, puts
	// in place, in microseconds rather than the reshape's milliseconds
	// (see AddNode). A node RemoveNode takes out in place leaves its slot
	// whatever NodeRoom says, and the next reshape keeps at most NodeRoom
	// vacant slots a domain. Zero (the default) leaves none; at most 64.
	// A slot holds nothing and is never placed on, but costs what a node
	// costs in the snapshot's memory and in the scans of its domain.
	NodeRoom int `json:"nodeRoom,omitempty"`
}

// The values of Options.Semantics.
const (
	SemanticsAllot = "allot"
	SemanticsKueue = "kueue"
)

// The values of Options.BackfillHolds.
const (
	BackfillHoldsAll           = "All"
	BackfillHoldsLowerPriority = "LowerPriority"
)

// FairSharing turns Kueue's fair sharing on.
type FairSharing struct {
	Enabled              bool     `json:"enabled,omitempty"`
	PreemptionStrategies []string `json:"preemptionStrategies,omitempty"`
}
