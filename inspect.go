// Read access to the cluster's description and status: nodes, flavors,
// queues and cohorts as a Builder takes them, and what each holds and may
// take now. Every accessor hands out copies, as access.go's do.

package allot

import (
	"maps"
	"slices"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
)

// Flavors are the flavors, in the order the snapshot declares them.
func (s *Snapshot) Flavors() []Flavor {
	out := slices.Clone(s.flavors)
	for i := range out {
		f := &out[i]
		f.NodeLabels, f.NodeTaints, f.Tolerations = maps.Clone(f.NodeLabels), slices.Clone(f.NodeTaints), slices.Clone(f.Tolerations)
	}
	return out
}

// Nodes describes every node as a Builder takes it, its condition
// included, in the topology's order: by flavor, then domain by domain
// from the broadest level, then by name. It costs a map or two per node:
// for one node, ask Node.
func (s *Snapshot) Nodes() []Node {
	out := make([]Node, 0, s.topo.Nodes())
	for n := range int32(s.topo.NumNodes()) {
		if !s.topo.Vacant(n) {
			out = append(out, s.node(n))
		}
	}
	return out
}

// Node describes a node as a Builder takes it: its flavor (none when its
// labels select it), a label per topology level and those flavors select
// by, its taints (sorted by key, value and effect), its capacity (the resources it has, GPUs as a count),
// GPU groups (nil for one), pod limit and condition (Unschedulable for
// cordoned, Down, CooldownUntil while the cooldown lasts). It is what
// SetNode takes to describe the node anew.
func (s *Snapshot) Node(name string) (Node, bool) {
	n, ok := s.topo.NodeIndex(name)
	if !ok {
		return Node{}, false
	}
	return s.node(n), true
}

// node describes node n.
func (s *Snapshot) node(n int32) Node {
	tn := s.topo.Node(n)
	ns := s.state.Node(n)
	mig, capacity := s.migOf(n, tn.Capacity)
	out := Node{Name: s.topo.NodeName(n), Capacity: s.resourceMap(capacity, nonZero(capacity)),
		GPUGroups: tn.GroupSizes(), ShareableGPUs: GPUSet(tn.Shareable), MIG: mig, MaxPods: tn.MaxPods, Unschedulable: ns.Cordoned, Down: ns.Down}
	if ns.CooldownUntil > s.now {
		out.CooldownUntil = ns.CooldownUntil
	}
	if len(s.topo.Levels) > 0 {
		out.Labels = make(map[string]string, len(s.topo.Levels))
		for l, level := range s.topo.Levels {
			out.Labels[level] = s.topo.NodeLabel(n, l)
		}
	}
	s.marks.describe(n, &out)
	// A flavor its labels select goes unnamed, so that a change of labels
	// moves the node; a node that named another flavor its labels match
	// names it still.
	if f, err := s.nodeFlavor(&out, ""); err != nil || f != tn.Flavor {
		out.Flavor = s.flavors[tn.Flavor].Name
	}
	return out
}

// nonZero marks the resources of v that are not zero.
func nonZero(v res.Vec) uint16 {
	var keys uint16
	for r, q := range v {
		if q != 0 {
			keys |= 1 << r
		}
	}
	return keys
}

// NodeStatus is a node's state now.
type NodeStatus struct {
	// Flavor is the flavor the node serves: the one it names, or the one
	// its labels select (Node leaves that one unnamed).
	Flavor string `json:"flavor"`
	// Free is what is left of every resource the nodes of its flavor
	// hold, GPUs as a count; FreeGPUs are which GPUs.
	Free     Resources `json:"free"`
	FreeGPUs GPUSet    `json:"freeGpus"`
	// SharedGPUs are the GPUs fractional pods share now, and
	// ShareHeld[i] the thousandths of SharedGPUs' i-th GPU (ascending)
	// they hold; a shared GPU is in neither FreeGPUs nor Free's count.
	SharedGPUs GPUSet  `json:"sharedGpus,omitempty"`
	ShareHeld  []int32 `json:"shareHeld,omitempty"`
	// Pods counts the running pods on the node.
	Pods int32 `json:"pods"`
	// Cordoned, Down and CooldownUntil (zero once it has passed) are its
	// condition; Usable says whether new pods may land on it now.
	Cordoned      bool  `json:"cordoned,omitempty"`
	Down          bool  `json:"down,omitempty"`
	CooldownUntil int64 `json:"cooldownUntil,omitempty"`
	Usable        bool  `json:"usable"`
}

// NodeStatus is a node's free capacity, pods and condition now; false for
// an unknown node.
func (s *Snapshot) NodeStatus(node string) (NodeStatus, bool) {
	n, ok := s.topo.NodeIndex(node)
	if !ok {
		return NodeStatus{}, false
	}
	ns := s.state.Node(n)
	out := NodeStatus{Flavor: s.flavors[s.topo.Node(n).Flavor].Name, Free: s.resourceMap(ns.Free, s.nodeRes[s.topo.Node(n).Flavor]), FreeGPUs: GPUSet(ns.FreeGPUs),
		Pods: ns.Pods, Cordoned: ns.Cordoned, Down: ns.Down, Usable: ns.Usable(s.now)}
	if ns.CooldownUntil > s.now {
		out.CooldownUntil = ns.CooldownUntil
	}
	if shared := s.state.SharedMask(n); shared != 0 {
		out.SharedGPUs = GPUSet(shared)
		for _, gi := range out.SharedGPUs.Indices() {
			out.ShareHeld = append(out.ShareHeld, s.state.ShareHeld(n, gi))
		}
	}
	return out, true
}

// Queues are the queues' configurations as given, in the order the
// snapshot holds them (the Builder's, then those SetQueue added).
func (s *Snapshot) Queues() []Queue { return cloneAll(s.queues, cloneQueue) }

// Cohorts are the cohorts' configurations as given, in the order the
// snapshot holds them.
func (s *Snapshot) Cohorts() []Cohort { return cloneAll(s.cohorts, cloneCohort) }

// Cohort returns a cohort's configuration.
func (s *Snapshot) Cohort(name string) (Cohort, bool) {
	i := slices.IndexFunc(s.cohorts, func(c Cohort) bool { return c.Name == name })
	if i < 0 {
		return Cohort{}, false
	}
	return cloneCohort(s.cohorts[i]), true
}

// QueueStatus is a queue's state now: what it holds and what it may take,
// its quota as windows and its SLA tier scale it at the snapshot's time.
type QueueStatus struct {
	Name   string `json:"name"`
	Cohort string `json:"cohort,omitempty"`
	// Running and Pending count its admitted and waiting workloads.
	Running int  `json:"running"`
	Pending int  `json:"pending"`
	Hold    bool `json:"hold,omitempty"`
	// Scale is what the time windows open now and the SLA tier multiply
	// the queue's nominal quota and caps by (1 for none); InForce names
	// them, as decisions' messages do ("window 20:00-08:00 ×1.5").
	Scale   float64 `json:"scale"`
	InForce string  `json:"inForce,omitempty"`
	// Quota is, flavor by flavor in the order the queue tries them, its
	// quota in force and its usage; then any flavor where it holds
	// something without quota.
	Quota []FlavorStatus `json:"quota,omitempty"`
	// Users is what each user's workloads hold, for a queue with a
	// per-user cap; NonPreemptible what its never-preemptible workloads
	// hold, for a queue with a cap on them.
	Users          map[string]Resources `json:"users,omitempty"`
	NonPreemptible Resources            `json:"nonPreemptible,omitempty"`
}

// CohortStatus is a cohort's state now.
type CohortStatus struct {
	Name   string `json:"name"`
	Parent string `json:"parent,omitempty"`
	// Queues and Cohorts are its children, in the snapshot's order.
	Queues  []string `json:"queues,omitempty"`
	Cohorts []string `json:"cohorts,omitempty"`
	// Quota is, flavor by flavor in the snapshot's order, the cohort's
	// own quota, its subtree's and its subtree's usage, wherever one of
	// them is not zero.
	Quota []FlavorStatus `json:"quota,omitempty"`
}

// FlavorStatus is a queue's or cohort's quota and usage on one flavor.
type FlavorStatus struct {
	Flavor    string           `json:"flavor"`
	Resources []ResourceStatus `json:"resources"`
}

// ResourceStatus is a queue's or cohort's quota and usage of one resource
// of one flavor, in force now, with Kueue's figures.
type ResourceStatus struct {
	Name string `json:"name"`
	// Nominal is its own nominal quota, scaled; BorrowingLimit and
	// LendingLimit are nil for none.
	Nominal        int64  `json:"nominal"`
	BorrowingLimit *int64 `json:"borrowingLimit,omitempty"`
	LendingLimit   *int64 `json:"lendingLimit,omitempty"`
	// Hard and Soft are a queue's caps, scaled; nil for none.
	Hard *int64 `json:"hard,omitempty"`
	Soft *int64 `json:"soft,omitempty"`
	// SubtreeQuota is its capacity: its nominal quota, for a cohort plus
	// what its children lend it.
	SubtreeQuota int64 `json:"subtreeQuota"`
	// Used is what its admitted workloads (a cohort's: those of its
	// subtree) charge.
	Used int64 `json:"used"`
	// Available is how much more it can take now, Kueue's available():
	// its unused quota and what its cohorts lend it, within its
	// borrowing limits. It is negative after over-admission.
	Available int64 `json:"available"`
	// Borrowing reports that it uses more than its SubtreeQuota.
	Borrowing bool `json:"borrowing,omitempty"`
}

// QueueStatus is a queue's usage and quota in force now; false for an
// unknown queue.
func (s *Snapshot) QueueStatus(name string) (QueueStatus, bool) {
	q, ok := s.queueIdx[name]
	if !ok {
		return QueueStatus{}, false
	}
	qc, l := &s.quota.Queues[q], &s.limits[q]
	out := QueueStatus{Name: name, Cohort: s.queues[q].Cohort, Running: int(s.runCount[q]), Pending: s.pendingIn(name),
		Hold: qc.Hold, Scale: l.scale, InForce: l.note}
	seen := make([]bool, len(s.flavors))
	for i := range qc.Flavors {
		fq := &qc.Flavors[i]
		seen[fq.Flavor] = true
		if fs, ok := s.flavorStatus(q, fq.Flavor, fq); ok {
			out.Quota = append(out.Quota, fs)
		}
	}
	for f := range s.flavors {
		if !seen[f] {
			if fs, ok := s.flavorStatus(q, int32(f), nil); ok {
				out.Quota = append(out.Quota, fs)
			}
		}
	}
	if l.userCap.Set() && len(s.users[q]) > 0 {
		out.Users = make(map[string]Resources, len(s.users[q]))
		for user, v := range s.users[q] {
			out.Users[user] = s.resourceMap(v, nonZero(v))
		}
	}
	if l.neverCap.Set() {
		out.NonPreemptible = s.resourceMap(s.never[q], nonZero(s.never[q]))
	}
	return out, true
}

// CohortStatus is a cohort's quota and its subtree's usage now; false for
// an unknown cohort.
func (s *Snapshot) CohortStatus(name string) (CohortStatus, bool) {
	c := slices.IndexFunc(s.cohorts, func(c Cohort) bool { return c.Name == name })
	if c < 0 {
		return CohortStatus{}, false
	}
	out := CohortStatus{Name: name, Parent: s.cohorts[c].Parent}
	for _, q := range s.queues {
		if q.Cohort == name {
			out.Queues = append(out.Queues, q.Name)
		}
	}
	for _, child := range s.cohorts {
		if child.Parent == name {
			out.Cohorts = append(out.Cohorts, child.Name)
		}
	}
	node := int32(len(s.queues) + c)
	for f := range s.flavors {
		if fs, ok := s.flavorStatus(node, int32(f), nil); ok {
			out.Quota = append(out.Quota, fs)
		}
	}
	return out, true
}

// flavorStatus is node n's (a queue's or cohort's) quota and usage on
// flavor f: every resource a queue's quota fq covers, and those where
// anything is not zero; false when that leaves none.
func (s *Snapshot) flavorStatus(n, f int32, fq *quota.FlavorQuota) (FlavorStatus, bool) {
	out := FlavorStatus{Flavor: s.flavors[f].Name}
	for r, name := range s.resources {
		fr := s.rtree.FR(int(f), r)
		rs := ResourceStatus{Name: name, Nominal: s.rtree.Nominal(n, fr), SubtreeQuota: s.rtree.SubtreeQuota(n, fr),
			Used: s.usage.At(n, fr), Available: s.rtree.Available(s.usage, n, fr), Borrowing: s.rtree.Borrowing(s.usage, n, fr)}
		if v, ok := s.rtree.BorrowingLimit(n, fr); ok {
			rs.BorrowingLimit = &v
		}
		if v, ok := s.rtree.LendingLimit(n, fr); ok {
			rs.LendingLimit = &v
		}
		covered := false
		if fq != nil {
			covered = fq.Covered&(1<<r) != 0
			if fq.HardMask&(1<<r) != 0 {
				v := fq.Hard[r]
				rs.Hard = &v
			}
			if fq.SoftMask&(1<<r) != 0 {
				v := fq.Soft[r]
				rs.Soft = &v
			}
		}
		if covered || rs.Nominal != 0 || rs.SubtreeQuota != 0 || rs.Used != 0 || rs.BorrowingLimit != nil || rs.LendingLimit != nil {
			out.Resources = append(out.Resources, rs)
		}
	}
	return out, len(out.Resources) > 0
}

// pendingIn counts the pending workloads of queue q.
func (s *Snapshot) pendingIn(q string) int {
	n := 0
	start := lineStart(q)
	s.byQueue.Ascend(&start, func(w *Workload) bool {
		if w.Queue != q {
			return false
		}
		n++
		return true
	})
	return n
}
