// Building the first snapshot from a description: Build validates every
// part of it and fills the snapshot in through the snapshot's own upkeep.

package allot

import (
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/sortkey"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

// DefaultResources are the resources of a snapshot that declares none
// (with its GPUResource in place of gpu).
var DefaultResources = []string{DefaultGPUResource, "cpu", "memory"}

// DefaultGPUResource is the GPU resource of a snapshot that names none.
const DefaultGPUResource = "gpu"

// Builder describes a snapshot. Fill its fields and call Build, which
// validates everything and refuses an invalid state with a *BuildError. The
// Builder is not retained: changing it after Build does not change the
// snapshot.
type Builder struct {
	// Now is the snapshot's time, in seconds: allot never reads a clock,
	// so the embedder says what time it is. Every other time of the
	// description (SubmittedAt, AdmittedAt, LastCheckpointAt,
	// CooldownUntil) counts in seconds on the same clock, and AdvanceTime
	// moves it. Any epoch will do, but time-of-day windows read Now
	// modulo 86,400 as the second of the UTC day, so a cluster with
	// windows gives Unix time (seconds since 1970-01-01 UTC).
	Now int64
	// Resources are the resource names; empty means DefaultResources,
	// with GPUResource in place of gpu.
	Resources []string
	// GPUResource names the accelerator among Resources: the resource
	// counted in whole devices that a node's GPU indices, placements'
	// GPUs, FreeGPUs, GPU islands, lost work in GPU-seconds and the
	// messages speak of. Empty means DefaultGPUResource ("gpu"); a
	// snapshot whose Resources lack it has no GPUs. Kubernetes names it by
	// vendor: nvidia.com/gpu, amd.com/gpu, gpu.intel.com/i915. One resource
	// is the GPU: Build refuses a node with capacity under another name
	// that looks like one — "gpu" or a name ending in "/gpu", a name whose
	// part after the "/" begins with "gpu." or "mig-" (nvidia.com/gpu.shared,
	// nvidia.com/mig-1g.5gb), or whose domain begins with "gpu."
	// (gpu.intel.com/xe) — unless IgnoredResources names it, so that GPUs
	// are never counted as an ordinary resource by mistake. A MIG profile
	// is declared among Resources and its instances listed under
	// Node.MIG, not as capacity. A cluster with
	// two kinds of accelerator is two snapshots, one for each kind's
	// nodes, or one that ignores the other kind.
	GPUResource string
	// GPUShareResource names among Resources the resource a pod asks for
	// part of one GPU by, in thousandths (the Alibaba trace's gpu_milli:
	// 250, 500 …, 1 to 999): such a pod asks for no whole GPU, and its
	// pods pack onto the nodes' shareable GPUs (Node.ShareableGPUs), each
	// on one GPU, never across two. Quota charges the resource as any
	// other; nodes do not list it, their shareable GPUs give it. Empty
	// means none: GPUs are booked whole.
	GPUShareResource string
	// IgnoredResources are names the snapshot does not track, which nodes'
	// capacity and pod sets' requests (of requests, running and pending
	// workloads) may carry all the same, as a cluster's objects carry
	// ephemeral-storage or pods: they are dropped where they are read.
	// Elsewhere (quotas, caps, history) they are unknown, as any name not
	// among Resources. A name may not be both declared and ignored. Empty
	// means none: a request naming an undeclared resource is then
	// InvalidRequest.
	IgnoredResources []string
	// Levels are the topology levels, broad to narrow; nodes are the
	// implicit last level.
	Levels []string
	// Flavors are the classes of interchangeable nodes, by unique name;
	// a queue tries them in this order unless its FlavorOrder says
	// otherwise. A flavor without nodes is quota-only: quota is charged,
	// nothing placed.
	Flavors []Flavor
	// Nodes are the machines, by unique name, each of a known flavor
	// (whose nodeLabels it carries) or of the flavor its labels select,
	// with a label for every level, valid taints, capacity only in
	// declared (or ignored) resources and at most 64 GPUs.
	Nodes []Node
	// Cohorts are the cohort tree's inner nodes: each names its parent
	// (or none, for a root), and the tree has no cycle.
	Cohorts []Cohort
	// Queues are the admission queues (Kueue's ClusterQueues), by unique
	// name, each in a known cohort or none, with quota on known flavors.
	Queues []Queue
	// Running are the admitted workloads with their placement: each pod
	// set's Flavor, its Nodes (one a pod), and GPUIndices when the pods
	// hold particular GPUs (else Build gives each pod the lowest free
	// ones). They must fit their nodes together; their quota is charged
	// as found, even beyond nominal.
	Running []Workload
	// Pending are the workloads that wait, without a placement: what
	// Schedule decides in turn, what backfill keeps reservations for and
	// what a soft cap gives way to.
	Pending []Workload
	// History is the fairness history at Now: each queue's historical
	// usage and fairness debt, and how fast they decay.
	History History
	// Options are the policy switches; the zero value is allot's
	// defaults.
	Options Options
	// FairSharing turns Kueue's fair sharing on (off by default), with
	// its preemption strategies.
	FairSharing FairSharing
	// Version is the first version's number.
	Version uint64

	// Namespaces are the tenants, with their labels, that queues'
	// namespace selectors judge (see Namespace).
	Namespaces []Namespace
	// LocalQueues are the namespaces' queues, each pointing at a queue of
	// Queues (see LocalQueue).
	LocalQueues []LocalQueue
	// PriorityClasses are the named priority levels requests claim and
	// queues allow (see PriorityClass).
	PriorityClasses []PriorityClass
}

// Build validates the description and returns the snapshot.
func (b *Builder) Build() (*Snapshot, error) {
	s := &Snapshot{fixed: new(fixed), version: b.Version, now: b.Now, config: &config{history: b.History, options: b.Options,
		fairSharing: b.FairSharing, cohorts: cloneAll(b.Cohorts, cloneCohort), queues: cloneAll(b.Queues, cloneQueue)}}
	if err := b.checkOptions(); err != nil {
		return nil, err
	}
	if err := buildResources(s, b.Resources, b.GPUResource, b.IgnoredResources); err != nil {
		return nil, err
	}
	if err := buildShare(s, b.GPUShareResource); err != nil {
		return nil, err
	}
	if err := buildFlavors(s, b.Flavors); err != nil {
		return nil, err
	}
	names, err := buildTopology(s, b.Levels, b.Nodes)
	if err != nil {
		return nil, err
	}
	if err := buildTenancy(s, b.Namespaces, b.PriorityClasses); err != nil {
		return nil, err
	}
	if err := buildQueues(s, b.Cohorts, b.Queues, -1); err != nil {
		return nil, err
	}
	if err := buildLocalQueues(s, b.LocalQueues); err != nil {
		return nil, err
	}
	s.initTrees()
	s.usage = s.rtree.NewUsage()
	s.runCount = make([]int32, len(s.queues))
	s.limitUsage = &limitUsage{users: make([]quota.UserUsage, len(s.queues)), never: make([]res.Vec, len(s.queues))}
	if err := buildHistory(s, b.History); err != nil {
		return nil, err
	}
	// The admitted workloads come in one allocation: the collector then
	// marks one object where it marked thousands, which more than halves
	// the time a collection of a large snapshot takes. A workload admitted
	// later is allocated on its own; the slab lives while any of its
	// records is still in some version.
	slab := make([]running, len(b.Running))
	paths := newIndexPaths("running", len(b.Running))
	// Each workload booked rewrites its queue's usage rows: while they
	// are booked the new rows come from blocks, as a store's master takes
	// them, not an allocation each. The snapshot built is no master.
	s.spares = new(spares)
	// Two workloads of one ID are found once all are booked, by the sort
	// that orders them for their set, not by a map of every ID: where a
	// workload is refused, the first duplicate before it is the error
	// given instead, as a check workload by workload would give it.
	for i := range b.Running {
		if err := bookAdmitted(s, &slab[i], b.Running[i], paths.at(i), nil, &names); err != nil {
			if dup := firstDuplicateID(b.Running[:i+1], paths); dup != nil {
				return nil, dup
			}
			return nil, err
		}
	}
	s.spares = nil
	s.state.CountAll()
	// The admitted workloads go into their set at once, sorted, each node
	// of its tree written once.
	order := sortByID(b.Running)
	byID := make([]*running, len(slab))
	for k, i := range order {
		byID[k] = &slab[i]
		if k > 0 && b.Running[order[k-1]].ID == b.Running[i].ID {
			return nil, firstDuplicateID(b.Running, paths)
		}
	}
	s.running.Load(byID)
	runningPaths := paths
	paths = newIndexPaths("pending", len(b.Pending))
	seen := make(map[string]string, len(b.Pending))
	for i := range b.Pending {
		id := b.Pending[i].ID
		if k, found := slices.BinarySearchFunc(order, id, func(j int32, id string) int { return strings.Compare(b.Running[j].ID, id) }); found {
			return nil, buildErr(ErrDuplicateID, paths.at(i)+".id", "workload %q is also %s", id, runningPaths.at(int(order[k])))
		}
		if err := s.addPending(b.Pending[i], paths.at(i), seen); err != nil {
			return nil, err
		}
	}
	s.state.Flush()
	s.running.Settle() // a built snapshot is read more than written
	s.bf = new(backfillCache)
	return s, nil
}

// firstDuplicateID is the error of the first workload of ws whose ID an
// earlier one has (paths giving their paths), nil when there is none.
func firstDuplicateID(ws []Workload, paths indexPaths) error {
	seen := make(map[string]string, len(ws))
	for i := range ws {
		if err := checkID(ws[i].ID, paths.at(i), seen); err != nil {
			return err
		}
	}
	return nil
}

// sortByID is the order of ws by ID (sortkey.Order): ws[order[0]] has
// the least.
func sortByID(ws []Workload) []int32 {
	return sortkey.Order(len(ws), func(i int) string { return ws[i].ID })
}

// indexPaths are the paths list[0], list[1] … of the entries of a list
// of the description, written into one string: the paths of a hundred
// thousand workloads are two allocations, not two hundred thousand.
type indexPaths struct {
	all  string
	ends []int32 // ends[i] is where path i ends in all
}

func newIndexPaths(list string, n int) indexPaths {
	if n == 0 {
		return indexPaths{}
	}
	x := indexPaths{ends: make([]int32, n)}
	b := make([]byte, 0, n*(len(list)+2+len(strconv.Itoa(n-1))))
	for i := range n {
		b = append(b, list...)
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ']')
		x.ends[i] = int32(len(b))
	}
	x.all = string(b)
	return x
}

// at is entry i's path.
func (x indexPaths) at(i int) string {
	start := int32(0)
	if i > 0 {
		start = x.ends[i-1]
	}
	return x.all[start:x.ends[i]]
}

// buildHistory validates the fairness history and starts each queue's
// fairness debt from it.
func buildHistory(s *Snapshot, h History) error {
	if h.HalfLife < 0 {
		return buildErr(ErrInvalid, "history.halfLife", "negative half-life %d", h.HalfLife)
	}
	s.debt = make([]fairness.Debt, len(s.queues))
	for _, name := range sortedKeys(h.Preemptions) {
		q, ok := s.queueIdx[name]
		if !ok {
			return buildErr(ErrUnknownQueue, "history.preemptions."+name, "no queue %q", name)
		}
		if n := h.Preemptions[name]; !(n >= 0) || math.IsInf(n, 0) {
			return buildErr(ErrInvalid, "history.preemptions."+name, "count %v is not a number at least 0", n)
		} else {
			s.debt[q] = fairness.Debt{Value: n, At: s.now}
		}
	}
	s.used = make([]fairness.Debt, len(s.queues))
	for _, name := range sortedKeys(h.Usage) {
		q, ok := s.queueIdx[name]
		if !ok {
			return buildErr(ErrUnknownQueue, "history.usage."+name, "no queue %q", name)
		}
		v, err := s.vector(h.Usage[name], "history.usage."+name)
		if err != nil {
			return err
		}
		s.used[q] = fairness.Debt{Value: float64(v[s.historyResource()]), At: s.now}
	}
	return nil
}

// validStrategies accepts Kueue's allowed lists of fair-sharing preemption
// strategies (empty means the default, both).
func validStrategies(s []string) bool {
	switch len(s) {
	case 0:
		return true
	case 1:
		return s[0] == lessThanOrEqualToFinalShare || s[0] == lessThanInitialShare
	case 2:
		return s[0] == lessThanOrEqualToFinalShare && s[1] == lessThanInitialShare
	}
	return false
}

// checkOptions validates the snapshot-wide policy options.
func (b *Builder) checkOptions() error {
	switch {
	case !validStrategies(b.FairSharing.PreemptionStrategies):
		return buildErr(ErrInvalid, "fairSharing.preemptionStrategies", "%v is not one of Kueue's lists: [LessThanOrEqualToFinalShare LessThanInitialShare], [LessThanOrEqualToFinalShare], [LessThanInitialShare]", b.FairSharing.PreemptionStrategies)
	case b.Options.BackfillDepth < 0:
		return buildErr(ErrInvalid, "options.backfillDepth", "negative depth %d", b.Options.BackfillDepth)
	case b.Options.BackfillHolds != "" && b.Options.BackfillHolds != BackfillHoldsAll && b.Options.BackfillHolds != BackfillHoldsLowerPriority:
		return buildErr(ErrInvalid, "options.backfillHolds", "%q is not %q or %q", b.Options.BackfillHolds, BackfillHoldsAll, BackfillHoldsLowerPriority)
	case b.Options.QueueDepth < 0:
		return buildErr(ErrInvalid, "options.queueDepth", "negative depth %d", b.Options.QueueDepth)
	case b.Options.NodeRoom < 0 || b.Options.NodeRoom > 64:
		return buildErr(ErrInvalid, "options.nodeRoom", "%d slots a domain, not 0 to 64", b.Options.NodeRoom)
	case b.Options.Semantics != "" && b.Options.Semantics != SemanticsAllot && b.Options.Semantics != SemanticsKueue:
		return buildErr(ErrInvalid, "options.semantics", "%q is not %q or %q", b.Options.Semantics, SemanticsAllot, SemanticsKueue)
	}
	return nil
}

// buildResources numbers the declared resources and resolves which of them
// is the GPU and which names are ignored.
func buildResources(s *Snapshot, names []string, gpu string, ignored []string) error {
	switch {
	case gpu == "":
		gpu = DefaultGPUResource
	case gpu == "tokens":
		return buildErr(ErrInvalid, "gpuResource", "tokens is the resource of token budgets")
	case len(names) > 0 && !slices.Contains(names, gpu):
		return buildErr(ErrUnknownResource, "gpuResource", "%q is not among the resources %v", gpu, names)
	}
	if len(names) == 0 {
		names = slices.Clone(DefaultResources)
		names[0] = gpu
	}
	if len(names) > res.Max {
		return buildErr(ErrInvalid, "resources", "%d resources, at most %d", len(names), res.Max)
	}
	s.resources = slices.Clone(names)
	s.scaled = scaledResources(names)
	s.resIdx = make(map[string]int, len(names))
	s.gpu, s.tokens = -1, -1
	for i, n := range names {
		if n == "" {
			return buildErr(ErrInvalid, fmt.Sprintf("resources[%d]", i), "empty name")
		}
		if _, dup := s.resIdx[n]; dup {
			return buildErr(ErrDuplicateID, fmt.Sprintf("resources[%d]", i), "resource %q twice", n)
		}
		s.resIdx[n] = i
		if n != gpu && gpuLike(n) {
			s.gpuNamed |= 1 << i
		}
		switch n {
		case gpu:
			s.gpu = i
		case "tokens":
			s.tokens = i
		}
	}
	for i, n := range ignored {
		p := fmt.Sprintf("ignoredResources[%d]", i)
		switch {
		case n == "":
			return buildErr(ErrInvalid, p, "empty name")
		case slices.Contains(ignored[:i], n):
			return buildErr(ErrDuplicateID, p, "resource %q twice", n)
		case slices.Contains(names, n):
			return buildErr(ErrInvalid, p, "resource %q is declared: a resource is tracked or ignored, not both", n)
		}
	}
	s.ignored = slices.Clone(ignored)
	return nil
}

func buildFlavors(s *Snapshot, fs []Flavor) error {
	s.flavors = slices.Clone(fs)
	s.flavorIdx = make(map[string]int32, len(fs))
	for i, f := range fs {
		if f.Name == "" {
			return buildErr(ErrInvalid, fmt.Sprintf("flavors[%d].name", i), "empty name")
		}
		if _, dup := s.flavorIdx[f.Name]; dup {
			return buildErr(ErrDuplicateID, fmt.Sprintf("flavors[%d]", i), "flavor %q twice", f.Name)
		}
		s.flavorIdx[f.Name] = int32(i)
		if err := checkFlavor(&fs[i], i); err != nil {
			return err
		}
		fl := &s.flavors[i]
		fl.NodeLabels, fl.NodeTaints, fl.Tolerations = maps.Clone(f.NodeLabels), slices.Clone(f.NodeTaints), slices.Clone(f.Tolerations)
	}
	return nil
}

// buildTopology validates the levels and nodes and makes the snapshot's
// topology and its first states; it returns the nodes by name as built,
// for the admitted workloads' pods to find theirs.
func buildTopology(s *Snapshot, levels []string, nodes []Node) (topology.Names, error) {
	for i, l := range levels {
		if l == "" || l == "node" || l == "cluster" {
			return topology.Names{}, buildErr(ErrInvalid, fmt.Sprintf("topology.levels[%d]", i), "level name %q is reserved or empty", l)
		}
		if slices.Index(levels[:i], l) >= 0 {
			return topology.Names{}, buildErr(ErrDuplicateID, fmt.Sprintf("topology.levels[%d]", i), "level %q twice", l)
		}
	}
	// Names are checked unique by the topology's own index, and a node's
	// labels sit in one array for all: no map or allocation a node. The
	// first error in the nodes' order is the one given, as a check node
	// by node would give it.
	specs := make([]topology.NodeSpec, len(nodes))
	labels := make([]string, len(nodes)*len(levels))
	// The same pass notes the nodes that may have marks (taints, or labels
	// a flavor may select by), and those in a condition, set once the
	// topology and the state are made.
	selecting := slices.ContainsFunc(s.flavors, func(f Flavor) bool { return len(f.NodeLabels) > 0 })
	var marked, conditioned []int
	for i := range nodes {
		n := &nodes[i]
		if n.Name == "" {
			if err := firstDuplicate(nodes[:i]); err != nil {
				return topology.Names{}, err
			}
			return topology.Names{}, checkNodeName(n.Name, nodePath(i), false)
		}
		l := labels[i*len(levels) : (i+1)*len(levels) : (i+1)*len(levels)]
		// nodeSpec checks without side effects, so the node's path is
		// written out only to check it again for the error: not a string
		// a node.
		spec, err := s.nodeSpec(n, "", levels, l)
		if err != nil {
			if dup := firstDuplicate(nodes[:i+1]); dup != nil {
				return topology.Names{}, dup
			}
			_, err = s.nodeSpec(n, nodePath(i), levels, l)
			return topology.Names{}, err
		}
		specs[i] = spec
		if len(n.Taints) > 0 || (selecting && len(n.Labels) > 0) {
			marked = append(marked, i)
		}
		if _, _, _, ok := nodeCondition(n, s.now); ok {
			conditioned = append(conditioned, i)
		}
	}
	t, names, err := topology.NewNamed(levels, len(s.resources), s.gpu, len(s.flavors), topology.WithRoom(specs, s.options.NodeRoom))
	if err != nil {
		if dup := firstDuplicate(nodes); dup != nil {
			return topology.Names{}, dup
		}
		return topology.Names{}, buildErr(ErrInvalid, "nodes", "%v", err)
	}
	s.topo = t
	keys := s.flavorKeys()
	for _, i := range marked {
		if len(nodes[i].Taints) > 0 || (len(keys) > 0 && len(nodes[i].Labels) > 0) {
			n, _ := names.Find(nodes[i].Name)
			s.marks.mark(n, &nodes[i], keys, t.NumNodes())
		}
	}
	s.marks.settle()
	s.nodeRes = nodeResOf(t, len(s.flavors))
	s.capacity = topology.NewCapacity(t)
	s.state = s.capacity.Copy(s.now) // NewState(t, s.now), its counters not worked out twice
	// The conditions and the admitted pods are booked on the nodes'
	// states alone, the counters above them worked out once all are in.
	s.state.DeferCounts()
	for _, i := range conditioned {
		n := &nodes[i]
		cordoned, down, until, _ := nodeCondition(n, s.now)
		idx, _ := names.Find(n.Name)
		s.state.SetCondition(idx, cordoned, down, until)
	}
	return names, nil
}

// nodePath is the path of the description's i-th node.
func nodePath(i int) string { return "nodes[" + strconv.Itoa(i) + "]" }

// firstDuplicate is the error of the first node of nodes whose name an
// earlier one has, nil when there is none.
func firstDuplicate(nodes []Node) error {
	seen := make(map[string]bool, len(nodes))
	for i := range nodes {
		if seen[nodes[i].Name] {
			return checkNodeName(nodes[i].Name, nodePath(i), true)
		}
		seen[nodes[i].Name] = true
	}
	return nil
}

// checkNodeName refuses a node's empty name, and one another node has
// (dup), at path p.
func checkNodeName(name, p string, dup bool) error {
	if name == "" {
		return buildErr(ErrInvalid, p+".name", "empty name")
	}
	if dup {
		return buildErr(ErrDuplicateID, p+".name", "node %q twice", name)
	}
	return nil
}

// nodeSpec validates node n, at path p of the description, against the
// snapshot's flavors, resources and the topology levels, and resolves it
// for topology.New, its label at each level written into labels (one
// entry a level); its name is checkNodeName's, its GPU groups
// topology.New's.
func (s *fixed) nodeSpec(n *Node, p string, levels, labels []string) (topology.NodeSpec, error) {
	f, err := s.nodeFlavor(n, p)
	if err != nil {
		return topology.NodeSpec{}, err
	}
	if err := checkTaints(n.Taints, p); err != nil {
		return topology.NodeSpec{}, err
	}
	for l, lvl := range levels {
		v, ok := n.Labels[lvl]
		if !ok || v == "" {
			return topology.NodeSpec{}, buildErr(ErrMissingLabel, p+".labels."+lvl, "node %q has no %q label", n.Name, lvl)
		}
		labels[l] = v
	}
	capacity, err := s.capacityVector(n, p)
	if err != nil {
		return topology.NodeSpec{}, err
	}
	if n.MaxPods < 0 {
		return topology.NodeSpec{}, buildErr(ErrInvalid, p+".maxPods", "negative")
	}
	gpus := int64(0)
	if s.gpu >= 0 {
		gpus = capacity[s.gpu]
	}
	shareable, err := s.shareableMask(n, gpus, p)
	if err != nil {
		return topology.NodeSpec{}, err
	}
	mig, err := s.migSlices(n, gpus, shareable, &capacity, p)
	if err != nil {
		return topology.NodeSpec{}, err
	}
	return topology.NodeSpec{Name: n.Name, Flavor: f, Labels: labels, Capacity: capacity, Groups: n.GPUGroups, MaxPods: n.MaxPods,
		Shareable: shareable, MIG: mig}, nil
}

// nodeResOf says, per flavor, which resources some node of the flavor
// has: the others are quota-only on that flavor.
func nodeResOf(t *topology.Topology, flavors int) view.NodeRes {
	nr := make(view.NodeRes, flavors)
	for i := range t.NumNodes() {
		n := t.Node(int32(i))
		for r := range t.Resource {
			if n.Capacity[r] > 0 {
				nr[n.Flavor] |= 1 << r
			}
		}
	}
	return nr
}

// nodeCondition is the condition a node's description gives it: cordoned
// (Unschedulable), down, cooling down until; ok is false for a node in
// none of them at time now.
func nodeCondition(n *Node, now int64) (cordoned, down bool, until int64, ok bool) {
	return n.Unschedulable, n.Down, n.CooldownUntil, n.Unschedulable || n.Down || n.CooldownUntil > now
}

// addRunning validates an admitted workload and books it as r.
func addRunning(s *Snapshot, r *running, w Workload, p string, seen map[string]string) error {
	if err := bookAdmitted(s, r, w, p, seen, nil); err != nil {
		return err
	}
	s.running.Insert(r)
	return nil
}

// bookAdmitted is addRunning but for the set of admitted workloads, which
// Build fills with all of them at once; it finds the pods' nodes through
// names, the topology's nodes as Build made it, when given.
func bookAdmitted(s *Snapshot, r *running, w Workload, p string, seen map[string]string, names *topology.Names) error {
	if err := checkID(w.ID, p, seen); err != nil {
		return err
	}
	if err := resolveLocal(s, &w, p); err != nil {
		return err
	}
	q, ok := s.queueIdx[w.Queue]
	if !ok {
		return buildErr(ErrUnknownQueue, p+".queue", "workload %q names queue %q", w.ID, w.Queue)
	}
	if w.AdmittedAt > s.now {
		return buildErr(ErrInvalid, p+".admittedAt", "%d is after now (%d)", w.AdmittedAt, s.now)
	}
	newRunning(r, &w, q)
	if len(w.PodSets) == 1 {
		r.one.ps[0] = w.PodSets[0]
		r.w.PodSets, r.Sets = r.one.ps[:], r.one.set[:0]
		if w.PodSets[0].Count == 1 {
			r.Pods = r.one.pod[:0]
		}
	} else {
		r.w.PodSets = slices.Clone(w.PodSets)
	}
	for i := range w.PodSets {
		ps := &r.w.PodSets[i]
		// The record keeps none of the caller's memory (its perPod,
		// nodes and GPU lists are read and dropped below).
		ps.Flavors, ps.Tokens = slices.Clone(ps.Flavors), clonePtr(ps.Tokens)
		ps.Topology.Slices = slices.Clone(ps.Topology.Slices)
		// The checks below are given paths relative to the pod set, written
		// out in full only for an error (under): no string a pod.
		pp := func() string { return p + ".podSets[" + strconv.Itoa(i) + "]" }
		if ps.Count < 1 || ps.Count > maxPodCount {
			return buildErr(ErrInvalid, pp()+".count", "%d out of range [1, %d]", ps.Count, maxPodCount)
		}
		if ps.MinCount < 0 || ps.MinCount > ps.Count {
			return buildErr(ErrInvalid, pp()+".minCount", "%d out of range [0, %d], the count it runs with", ps.MinCount, ps.Count)
		}
		f, ok := s.flavorIdx[ps.Flavor]
		if !ok {
			return buildErr(ErrUnknownFlavor, pp()+".flavor", "workload %q pod set %q names flavor %q", w.ID, ps.Name, ps.Flavor)
		}
		per, keys, err := s.podVector(ps.PerPod, ".perPod")
		if err != nil {
			return under(err, pp())
		}
		tokens, err := s.podTokens(per, ps.Tokens, "")
		if err != nil {
			return under(err, pp())
		}
		if err := checkCharge(s, per, tokens, ps.Count, ""); err != nil {
			return under(err, pp())
		}
		if err := s.checkShare(per, ""); err != nil {
			return under(err, pp())
		}
		share := s.shareOf(per)
		book := s.nodeRes.Mask(f, per)
		r.Sets = append(r.Sets, view.Set{Flavor: f, Count: ps.Count, Per: per, Keys: keys, Tokens: tokens})
		ps.PerPod = nil // kept as Per and Keys
		if len(ps.Nodes) == 0 {
			for range ps.Count {
				r.Pods = append(r.Pods, view.Pod{Node: -1})
			}
			continue
		}
		if len(ps.Nodes) != int(ps.Count) {
			return buildErr(ErrInvalid, pp()+".nodes", "%d nodes for %d pods", len(ps.Nodes), ps.Count)
		}
		if len(ps.GPUIndices) != 0 && len(ps.GPUIndices) != int(ps.Count) {
			return buildErr(ErrInvalid, pp()+".gpuIndices", "%d lists for %d pods", len(ps.GPUIndices), ps.Count)
		}
		for k, name := range ps.Nodes {
			var n int32
			if names != nil {
				n, ok = names.Find(name)
			} else {
				n, ok = s.topo.NodeIndex(name)
			}
			if !ok {
				return buildErr(ErrUnknownNode, podPath(pp(), ".nodes", k), "workload %q runs on unknown node %q", w.ID, name)
			}
			if err := s.podFlavor(n, f, ".nodes"); err != nil {
				return underPod(err, pp(), k)
			}
			var indices []int
			if len(ps.GPUIndices) > 0 {
				if indices = ps.GPUIndices[k]; indices == nil {
					indices = []int{}
				}
			}
			mask, err := bookRunningPod(s, n, indices, share, book, ".gpuIndices", ".nodes")
			if err != nil {
				return underPod(err, pp(), k)
			}
			r.Pods = append(r.Pods, view.Pod{Node: n, Share: share, GPUs: mask})
		}
	}
	for i := range r.w.PodSets {
		r.w.PodSets[i].Nodes, r.w.PodSets[i].GPUIndices = nil, nil
	}
	r.Pinned = s.neverPreempted(r)
	if err := checkUsage(s, r, p); err != nil {
		return err
	}
	s.bookRunning(r)
	return nil
}

// under is err, a *BuildError of a check given a path relative to prefix,
// with its path in full; any other error as it is.
func under(err error, prefix string) error {
	if be, ok := err.(*BuildError); ok {
		be.Path = prefix + be.Path
	}
	return err
}

// underPod is under for pod k of the pod set at path pp, the error of a
// check given the pod's lists of the pod set alone (".nodes",
// ".gpuIndices"): the pod's index follows the list's name.
func underPod(err error, pp string, k int) error {
	be, ok := err.(*BuildError)
	if !ok {
		return err
	}
	for _, list := range [...]string{".nodes", ".gpuIndices"} {
		if rest, found := strings.CutPrefix(be.Path, list); found {
			be.Path = podPath(pp, list, k) + rest
			return err
		}
	}
	be.Path = pp + be.Path
	return err
}

// podPath is the path of pod k's entry in list (".nodes", ".gpuIndices")
// of the pod set at path pp.
func podPath(pp, list string, k int) string { return pp + list + "[" + strconv.Itoa(k) + "]" }

// podFlavor refuses node n for a running pod of a pod set of flavor f,
// at path p, when the node is of another flavor.
func (s *fixed) podFlavor(n, f int32, p string) error {
	if nf := s.topo.Node(n).Flavor; nf != f {
		return buildErr(ErrInvalid, p, "node %q is of flavor %q, the pod set's is %q", s.topo.NodeName(n), s.flavors[nf].Name, s.flavors[f].Name)
	}
	return nil
}

// bookRunningPod books one running pod on node n, as Build books it and
// a reshape books it again: a fractional pod (share thousandths, see
// holdShare), or a pod of whole GPUs on the GPU indices names (at path ip)
// or, with indices nil, the node's lowest free ones, each refused at path
// np when the node cannot hold it. It returns the pod's GPUs.
func bookRunningPod(s *Snapshot, n int32, indices []int, share int32, book res.Vec, ip, np string) (uint64, error) {
	if share > 0 {
		return holdShare(s, n, indices, share, book, ip)
	}
	g := int64(0)
	if s.gpu >= 0 {
		g = book[s.gpu]
	}
	var mask uint64
	if indices != nil {
		var err error
		if mask, err = podGPUs(s, n, indices, g, ip); err != nil {
			return 0, err
		}
	} else {
		free := s.state.FreeMask(n)
		if int64(bits.OnesCount64(free)) < g {
			return 0, buildErr(ErrOverCapacity, np, "node %q has %d free GPUs, the pod needs %d", s.topo.NodeName(n), bits.OnesCount64(free), g)
		}
		for range g {
			low := free & -free
			mask |= low
			free &^= low
		}
	}
	return mask, holdPod(s, n, mask, book, np)
}

// gpuTaken refuses GPU gi of node n for a running pod, at path p: beyond
// the node's GPUs, or among taken (booked by another pod, or by this one
// already).
func gpuTaken(s *Snapshot, n int32, gi int, taken uint64, p string) error {
	node := s.topo.Node(n)
	if gi < 0 || gi >= int(node.GPUs) {
		return buildErr(ErrOverCapacity, p, "GPU %d on node %q with %d GPUs", gi, s.topo.NodeName(n), node.GPUs)
	}
	if taken&(1<<gi) != 0 {
		return buildErr(ErrOverCapacity, p, "GPU %d of node %q is booked twice", gi, s.topo.NodeName(n))
	}
	return nil
}

// podGPUs is the mask of the GPUs a running pod lists (indices, node n's),
// refusing, at path p, a GPU the node does not have or that is booked,
// and a list of other than the g GPUs the pod asks for.
func podGPUs(s *Snapshot, n int32, indices []int, g int64, p string) (uint64, error) {
	free := s.state.FreeMask(n)
	var mask uint64
	for _, gi := range indices {
		if err := gpuTaken(s, n, gi, mask|^free, p); err != nil {
			return 0, err
		}
		mask |= 1 << gi
	}
	if int64(bits.OnesCount64(mask)) != g {
		return 0, buildErr(ErrInvalid, p, "%d GPUs listed, the pod asks for %d", bits.OnesCount64(mask), g)
	}
	return mask, nil
}

// holdPod books one running pod on node n, at path p: its GPUs (mask, a
// node-local mask) and what it holds of the node's resources (book),
// refusing a pod the node cannot hold.
func holdPod(s *Snapshot, n int32, mask uint64, book res.Vec, p string) error {
	node, ns := s.topo.Node(n), s.state.Node(n)
	for m := mask; m != 0; m &= m - 1 {
		if err := gpuTaken(s, n, bits.TrailingZeros64(m), ^ns.FreeGPUs, p); err != nil {
			return err
		}
	}
	if !book.LessEq(ns.Free) {
		return buildErr(ErrOverCapacity, p, "node %q cannot hold the pod: free %s, pod %s", s.topo.NodeName(n), s.fmtVec(ns.Free), s.fmtVec(book))
	}
	if node.MaxPods > 0 && ns.Pods >= node.MaxPods {
		return buildErr(ErrOverCapacity, p, "node %q already holds its %d pods", s.topo.NodeName(n), node.MaxPods)
	}
	s.state.Allocate(n, mask, book, 1)
	return nil
}

// checkCharge refuses a running pod set of count pods, each charging per
// and a token budget of tokens, that charges more than quota.MaxQuantity of a
// resource, as a request's validation does.
func checkCharge(s *Snapshot, per res.Vec, tokens int64, count int32, p string) error {
	for r, name := range s.resources {
		if !quota.Bounded(0, per[r], count) {
			return buildErr(ErrInvalid, p+".perPod."+name, "%d pods × %d is more than %s", count, per[r], quota.MaxQuantityText)
		}
		if r == s.tokens && !quota.Bounded(0, per[r]+tokens, count) {
			return buildErr(ErrInvalid, p+".tokens", "%d pods × %d tokens is more than %s", count, per[r]+tokens, quota.MaxQuantityText)
		}
	}
	return nil
}

// checkUsage refuses a running workload r that charges more than
// quota.MaxQuantity of a resource over all its pod sets, or that would take
// its queue's usage of a flavor's resource past it, with the workloads
// before it.
func checkUsage(s *Snapshot, r *running, p string) error {
	var total res.Vec
	for i := range r.Sets {
		if k := quota.AddCharge(&total, r.Need(i, s.tokens)); k >= 0 {
			return buildErr(ErrInvalid, fmt.Sprintf("%s.podSets[%d].perPod.%s", p, i, s.resources[k]),
				"the pod sets charge more than %s of %s together", quota.MaxQuantityText, s.resources[k])
		}
	}
	for i := range r.Sets {
		f := r.Sets[i].Flavor
		used := s.usageOf(r.Queue, f)
		for j := range i {
			if r.Sets[j].Flavor == f {
				used = used.Add(r.Need(j, s.tokens))
			}
		}
		need := r.Need(i, s.tokens)
		for k, name := range s.resources {
			if !quota.Bounded(used[k], need[k], 1) {
				return buildErr(ErrInvalid, fmt.Sprintf("%s.podSets[%d].perPod.%s", p, i, name),
					"queue %q would hold %d %s of flavor %q, more than %s", r.w.Queue, used[k]+need[k], name, s.flavors[f].Name, quota.MaxQuantityText)
			}
		}
	}
	return nil
}
