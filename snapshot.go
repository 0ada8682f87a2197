// The snapshot's representation: its parts, which of them versions share,
// and how one version is made from another.

package allot

import (
	"slices"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

// Snapshot is an immutable picture of the cluster: resources, flavors,
// topology with its free capacity, queues and cohorts with their usage,
// admitted and pending workloads, fairness history and policy options. Build
// one with a Builder; get the next version from a Store. A Snapshot is never
// modified, so any number of goroutines may read it and Decide on it at once.
type Snapshot struct {
	version uint64
	now     int64

	*fixed
	// config is the queues' and cohorts' configuration: only SetQueue,
	// SetCohort, RemoveQueue, RemoveCohort and a time advance that opens
	// or closes a quota window change it, each on a copy (ownConfig), so
	// that versions share it.
	*config
	// ten is who may submit where: namespaces, local queues and priority
	// classes, shared by versions until an event changes it.
	ten   *tenancy
	state *topology.State

	// limitUsage is what the queues' limits (config.limits) bound; most
	// queues set none, and versions share it.
	*limitUsage
	// usage is the usage of every node of the cohort tree (config.rtree)
	// per flavor-resource, kept incrementally. Usage rows are never
	// written in place, so a fork copies only the row pointers.
	usage    quota.Usage
	runCount []int32

	// running holds the admitted workloads by ID, the latest few in the
	// tree's buffer: a commit then copies the buffer, not a path.
	running runningSet
	// pendingSet is shared between versions until one writes it
	// (own(rowPending)): a commit that admits no pending workload copies
	// none of its four trees.
	*pendingSet

	// evictions is append-only: a published snapshot sees its prefix.
	// A store keeps the last evictionCap of them (trimEvictions);
	// evictionsDropped counts the ones it let go.
	evictions        []Eviction
	evictionCap      int
	evictionsDropped int
	// inflight holds the two-phase preemptions under way: nil when there
	// are none, shared between versions until one writes it
	// (own(rowInflight)).
	inflight *inflight
	// staged is, on a store's master only, where the change being made
	// stages its audit records (note); forks have none.
	staged *[]AuditRecord
	// bf caches the backfill reservations, planned on first use.
	bf *backfillCache
	// debt is each queue's fairness debt: preemptions suffered, decayed
	// with the history's half-life; used is its historical usage (GPU, or
	// main resource, seconds), decayed the same way.
	debt []fairness.Debt
	used []fairness.Debt
	// shared marks the per-queue rows this snapshot shares with another
	// version; own clones them before a write.
	shared uint8
	// spares is, on a store's master only, where the small copies it makes
	// at nearly every version come from; nil elsewhere (newVersion).
	spares *spares
}

// spares holds what a store's master copies at nearly every commit,
// allocated ahead, many copies to an allocation (cow.Block): usage rows and
// the usage a version publishes, and the per-queue counts of running
// workloads. Only the master takes from them, so no two writers share a
// block.
type spares struct {
	rows     quota.Rows
	runCount cow.Block[int32]
	// capacity serves the capacity states a node event forks.
	capacity topology.Spares
}

// capacitySpares is where the capacity state a node event forks takes its
// copies from: nil (each allocated apart) but on a store's master.
func (s *Snapshot) capacitySpares() *topology.Spares {
	if s.spares == nil {
		return nil
	}
	return &s.spares.capacity
}

// usageRows is where s's new usage rows come from: nil (each allocated
// apart) but on a store's master.
func (s *Snapshot) usageRows() *quota.Rows {
	if s.spares == nil {
		return nil
	}
	return &s.spares.rows
}

// pendingSet holds the pending workloads and what is kept in step with
// them.
type pendingSet struct {
	pending cow.Tree[*Workload] // by ID
	// queued holds the pending workloads in priority order (higher
	// priority, then earlier submission, then ID), across queues.
	queued cow.Tree[*Workload]
	// byQueue holds them by queue name, then in each queue's order, so a
	// queue's head is one seek away.
	byQueue cow.Tree[*Workload]
	// shapes counts the pending pods by shape (gang.Demand without its
	// count, which holds the pods of that shape), kept in step with the
	// pending workloads so that Fragmentation does not scan them.
	shapes cow.Tree[gang.Demand]
}

// limitUsage holds, per queue, the per-user usage and the usage of
// never-preemptible work. It is written only after own(rowUsers|rowNever).
type limitUsage struct {
	users []quota.UserUsage
	never []res.Vec
}

// config is the configuration of queues and cohorts, shared by every
// version until an event changes it (Snapshot.config).
type config struct {
	// limits are each queue's caps, windows and tier at the snapshot's
	// time (a window opening or closing makes a new configuration).
	limits   []queueLimits
	quota    *quota.Tree
	queueIdx map[string]int32
	queues   []Queue // the configuration as given
	// cohortWeight is each cohort's fair-sharing weight, by cohort index.
	cohortWeight []float64
	// rtree is quota.Nodes, the cohort tree's quantities (Kueue's resource
	// nodes: queue q is node q, cohorts follow).
	rtree       *quota.ResourceTree
	cohorts     []Cohort
	history     History
	options     Options
	fairSharing FairSharing

	// admission is each queue's tenants, namespace selector and priority
	// classes (Snapshot.enter).
	admission []queueAdmission
	// resolved is each queue in quota's form, as buildQueues resolved it.
	resolved []resolvedQueue
}

// resolvedQueue is a queue in quota's form: the queue and its quotas as
// a node of the resource tree (resolveQueue).
type resolvedQueue struct {
	queue quota.Queue
	node  []quota.ResourceQuota
}

// ownConfig gives s a configuration of its own to change: versions share
// theirs.
func (s *Snapshot) ownConfig() {
	c := *s.config
	s.config = &c
}

// fixed is the resources, the flavors and the nodes: the node events
// (AddNode, RemoveNode, SetNode) and SetFlavor make a new one, leaving the
// old to the versions that point at it; the configuration events
// (AddFlavor, RemoveFlavor, SetLevels, SetResources, a SetFlavor that
// selects other nodes) make a whole new snapshot; the others share one.
// Resolving resource names (vector) and validating a request (validate)
// read only what it holds, so they are its methods: they hold for every
// version that points at it.
type fixed struct {
	resources []string
	gpu       int // index of the GPU resource, -1 if undeclared
	tokens    int // index of "tokens", -1 if undeclared
	// share is the index of the GPU share resource (thousandths of one
	// GPU, Builder.GPUShareResource), -1 if undeclared.
	share  int
	resIdx map[string]int
	// scaled has bit r set when resource r's quantities are written with
	// a unit (quantity.Scaled: cpu, memory), so messages need not ask.
	scaled uint16
	// ignored are the names nodes and pod sets may carry untracked.
	ignored []string
	// gpuNamed has bit r set when declared resource r, not the GPU
	// resource, names a GPU (gpuLike): a node may not list it.
	gpuNamed uint16

	flavors   []Flavor
	flavorIdx map[string]int32
	// nodeRes[f] has bit r set when some node of flavor f has resource r;
	// other resources are quota-only on that flavor.
	nodeRes view.NodeRes

	topo *topology.Topology
	// marks are the nodes' flavor labels and taints, as node sets.
	marks nodeMarks
	// capacity is the empty cluster, every node usable: what could ever fit.
	capacity *topology.State
}

// running is an admitted workload with its resolved placement: its booking,
// which the rules over admitted workloads read, and the rest of it as
// given. Items are shared between versions and never changed; a change
// makes a new item.
type running struct {
	view.Booking
	// w is the rest of the workload as admitted, each pod set's Flavor
	// set; workload puts it together with the booking, and rebuilds each
	// pod set's PerPod, Nodes and GPUIndices.
	w admittedRest
	// one holds, for a workload of one pod set or one pod, what Sets, Pods
	// and w.PodSets would otherwise allocate apart. Items are never
	// changed, so a copy may keep pointing here.
	one struct {
		ps  [1]PodSet
		set [1]view.Set
		pod [1]view.Pod
	}
}

// admittedRest is what an admitted workload keeps beside its booking, under
// Workload's names. What its pod sets charge to quota and book on nodes
// (view.Booking's Need and Book) follows from the booking, so that a
// running record stays within a 512-byte allocation: past it, a malloc
// header puts it in the next size class on every commit.
type admittedRest struct {
	Queue, Tenant, User string
	ExpectedRuntime     int64
	PodSets             []PodSet
	Class               PreemptionClass
	Borrowing           bool
	// more is what few workloads carry, nil when they carry none of it.
	more *admittedMore
}

// admittedMore is the local queue and priority class an admitted workload
// was submitted with: apart, so that a record without them stays within
// its size class.
type admittedMore struct{ LocalQueue, PriorityClass string }

// newRunning starts the record of workload w, admitted to queue q: its pod
// sets and pods are the caller's to fill in.
func newRunning(r *running, w *Workload, q int32) {
	*r = running{
		Booking: view.Booking{ID: w.ID, Queue: q, Priority: w.Priority, SubmittedAt: w.SubmittedAt, AdmittedAt: w.AdmittedAt,
			LastCheckpoint: w.Preemption.LastCheckpointAt, Checkpointable: w.Preemption.Class == Checkpointable},
		w: admittedRest{Queue: w.Queue, Tenant: w.Tenant, User: w.User, ExpectedRuntime: w.ExpectedRuntime,
			PodSets: w.PodSets, Class: w.Preemption.Class, Borrowing: w.Borrowing},
	}
	if w.LocalQueue != "" || w.PriorityClass != "" {
		r.w.more = &admittedMore{LocalQueue: w.LocalQueue, PriorityClass: w.PriorityClass}
	}
}

// admitted is the workload as admitted, sharing the record's pod sets;
// their PerPod, Nodes and GPUIndices are empty.
func (r *running) admitted() Workload {
	w := Workload{ID: r.ID, Queue: r.w.Queue, Tenant: r.w.Tenant, User: r.w.User, Priority: r.Priority,
		SubmittedAt: r.SubmittedAt, AdmittedAt: r.AdmittedAt, ExpectedRuntime: r.w.ExpectedRuntime,
		Preemption: PreemptionSpec{Class: r.w.Class, LastCheckpointAt: r.LastCheckpoint},
		PodSets:    r.w.PodSets, Borrowing: r.w.Borrowing}
	if m := r.w.more; m != nil {
		w.LocalQueue, w.PriorityClass = m.LocalQueue, m.PriorityClass
	}
	return w
}

// The parts of a snapshot that a fork shares with its parent
// (Snapshot.shared): the per-queue rows (running counts, per-user usage,
// non-preemptible usage, fairness debt and historical usage), the pending
// set and the preemptions in flight.
const (
	rowRunCount uint8 = 1 << iota
	rowUsers
	rowNever
	rowDebt
	rowUsed
	rowPending
	rowInflight
	allRows = rowRunCount | rowUsers | rowNever | rowDebt | rowUsed | rowPending | rowInflight
)

// own clones the shared rows among rows before the snapshot writes them,
// so that publishing a version copies none of them: a store's master pays
// for a row once per version, and only for a row it changes.
func (s *Snapshot) own(rows uint8) {
	todo := s.shared & rows
	if todo == 0 {
		return
	}
	if todo&rowRunCount != 0 {
		var b *cow.Block[int32]
		if s.spares != nil {
			b = &s.spares.runCount
		}
		s.runCount = b.Clone(s.runCount)
	}
	if todo&(rowUsers|rowNever) != 0 {
		lu := *s.limitUsage
		if todo&rowUsers != 0 {
			lu.users = slices.Clone(lu.users)
		}
		if todo&rowNever != 0 {
			lu.never = slices.Clone(lu.never)
		}
		s.limitUsage = &lu
	}
	if todo&rowDebt != 0 {
		s.debt = slices.Clone(s.debt)
	}
	if todo&rowUsed != 0 {
		s.used = slices.Clone(s.used)
	}
	if todo&rowInflight != 0 && s.inflight != nil {
		s.inflight = s.inflight.clone()
	}
	if todo&rowPending != 0 {
		// Fork gives the copy's trees owners of their own: nodes of the
		// shared set are then copied before a write, never written.
		p := &pendingSet{pending: s.pending.Fork(), queued: s.queued.Fork(), byQueue: s.byQueue.Fork(), shapes: s.shapes.Fork()}
		s.pendingSet = p
	}
	s.shared &^= todo
}

// private returns a writable copy of s that shares its structure without
// writing to s: s, published, is never written again.
func (s *Snapshot) private() *Snapshot {
	c, v := s.newVersion()
	s.state.ForkInto(&v.state)
	c.running = s.running.Fork()
	// Evictions are appended to: another copy of s must not append into
	// the same array.
	c.evictions = slices.Clip(s.evictions)
	return c
}

// trial is private for a trial of the master s that becomes the master
// (*s = *c) if it succeeds and is dropped otherwise: it takes its copies
// from s's spare blocks, which s does not write while the trial lives. A
// master that took the place of a copy without them would take fresh
// blocks at its next publish and drop each after a copy or two (a 100 KB
// list block at 10,240 nodes for every node taken out).
//
// The trial appends its evictions into s's array past s's length: s does
// not append while the trial lives, and a trial dropped leaves only
// entries past s's length, which s's next appends overwrite. (A private
// copy of a published snapshot cannot share the array so: another copy
// may append into the same places. A clipped array here would copy the
// whole log at every trial's first eviction, a store's log of up to twice
// its audit capacity, at every two-phase preemption.)
func (s *Snapshot) trial() *Snapshot {
	c := s.private()
	c.evictions = s.evictions
	c.state.UseSpares(s.state)
	c.running.UseSpare(&s.running.Buffered)
	c.spares, c.staged = s.spares, s.staged
	return c
}

// fork returns the next version of the master s: both share structure
// from now on, and writing s never changes what the version shows.
func (s *Snapshot) fork() *Snapshot {
	if s.spares == nil {
		s.spares = new(spares)
	}
	c, v := s.newVersion()
	child, parent := cow.NewOwner(), cow.NewOwner()
	s.state.CloneInto(&v.state, child, parent)
	c.running = s.running.CloneAs(child, parent)
	return c
}

// newVersion copies s's header into a new version and leaves its state
// and trees for the caller to fill in (fork, private).
func (s *Snapshot) newVersion() (*Snapshot, *version) {
	v := &version{Snapshot: *s}
	c := &v.Snapshot
	c.state = &v.state
	c.usage = s.usage.CloneFrom(s.usageRows())
	// The per-queue rows and the pending set are shared: whichever side
	// writes one copies it first (own). Only a store's master is ever
	// written.
	c.shared = allRows
	c.bf = &v.bf
	c.staged, c.spares = nil, nil
	return c, v
}

// version is one allocation for what each publish makes anew: the
// snapshot's header, its topology state and its empty backfill cache.
type version struct {
	Snapshot
	state topology.State
	bf    backfillCache
}
