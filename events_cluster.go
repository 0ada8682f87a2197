// The events that change the cluster's shape: nodes added, removed and
// described anew, queues and cohorts removed. Each leaves the snapshot a
// Builder would build from the same description, validated by the same
// code, and changes nothing when it refuses.

package allot

import (
	"fmt"
	"maps"
	"math/bits"
	"slices"

	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/topology"
)

// EvictedNodeRemoved is the reason of the evictions RemoveNode records.
const EvictedNodeRemoved = "NodeRemoved"

// AddNode adds a node to the cluster, validated as Build validates its
// nodes (a *BuildError whose path starts with "node"): a new name, a known
// flavor or labels that select one, valid taints, a label for every
// topology level, declared resources, at most 64 GPUs in groups that sum
// to them. Its conditions (Unschedulable, Down,
// CooldownUntil) are its first. A node that gives its flavor a resource no
// node of the flavor had makes that resource booked on the flavor's nodes,
// not quota-only any more: the event is refused, as Build refuses the same
// description, when a running pod of the flavor asks for more of it than
// its node has.
//
// Cost: nodes are numbered in topology order, by flavor, domain and
// name. A node whose rack (its narrowest domain) exists and has a vacant
// slot — one a node RemoveNode took out left, or room Options.NodeRoom
// keeps — is put in place: in the vacant slot where its name sorts, or
// else the rack's nodes between its place and the nearest vacant slot
// move one slot. That copies the pages of nodes, node states and name
// index it writes and moves only its domains' counters, O(levels × GPUs
// per node + rack); the running workloads with a pod on a node that
// moved get a new record, in one walk of the tree, O(running), which
// only a move costs. Anywhere else (a new rack, no vacant slot, a node of
// several GPU islands, shareable GPUs or MIG slices, a resource new to
// its flavor, more GPUs than any node had) the topology is made anew by
// merging the node in, O(nodes × levels): the node states are copied to
// their new places and the per-domain counters carried over, only the
// new node's domains worked out again, O(nodes + domains × GPUs per
// node), and every running workload with a pod on a node that moved gets
// a new record. On the fragmented benchmark cluster of 10,240 nodes and
// 4,100 running workloads (BenchmarkNodeChurn): in place, 50 to 150 µs
// (the rack's nodes moving: the walk); merged in, 11 to 15 ms and 9 MB.
type AddNode struct{ Node Node }

func (e AddNode) apply(s *Snapshot) error {
	_, dup := s.topo.NodeIndex(e.Node.Name)
	if err := checkNodeName(e.Node.Name, "node", dup); err != nil {
		return err
	}
	spec, err := s.nodeSpec(&e.Node, "node", s.topo.Levels, make([]string, len(s.topo.Levels)))
	if err != nil {
		return err
	}
	if s.fill(&spec, &e.Node) {
		return nil
	}
	return s.reshape(nil, []topology.NodeSpec{spec}, []*Node{&e.Node})
}

// RemoveNode takes a node out of the cluster. The workloads with a pod on
// it lose that pod, so each of them is evicted, all of its pods: back
// among the pending without a placement, as Evict leaves them, and
// recorded in the store's evictions with reason EvictedNodeRemoved and
// the work it lost. An unknown node is ErrUnknownNode.
//
// A two-phase preemption's hold on the node is released (its preemptor
// pending again), as NodeDown releases it.
//
// Cost: the node's slot is left vacant, no other node moving, and only
// its domains' counters change, as AddNode's in-place path costs without
// the walk: about 20 µs at 10,240 nodes (BenchmarkNodeChurn); a node
// that runs pods costs the walk that finds its workloads, O(running),
// and their evictions. The last node of its rack, a node of a rack with
// nodes of several GPU islands, with shareable GPUs or MIG slices, the
// last node of the largest GPU count or the last with a resource among
// its flavor's nodes, and a node taken out while two-phase holds are in
// flight cost a merge, as AddNode's.
type RemoveNode struct{ Node string }

func (e RemoveNode) apply(s *Snapshot) error {
	n, ok := s.topo.NodeIndex(e.Node)
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownNode, e.Node)
	}
	// The evictions and the new shape are made on a private copy: the
	// master changes only once both are done. The copy stages its audit
	// records where the master does, or the evictions, and every record
	// after them, would go unlogged.
	c := s.trial()
	var lost []*running
	if s.state.Node(n).Pods > 0 { // an idle node costs no walk of the workloads
		c.running.Scan(func(r *running) bool {
			if slices.ContainsFunc(r.Pods, func(p view.Pod) bool { return p.Node == n }) {
				lost = append(lost, r)
			}
			return true
		})
	}
	for _, r := range lost {
		c.evict(r, Eviction{ID: r.ID, Queue: r.w.Queue, Reason: EvictedNodeRemoved, LostGPUSeconds: c.cost().Lost(&r.Booking), At: c.now})
	}
	if !c.vacate(n) {
		if err := c.reshape([]int32{n}, nil, nil); err != nil {
			return err
		}
	}
	*s = *c
	return nil
}

// SetNode describes a node anew: Node.Name names it, and its flavor,
// labels (which may move it to the flavor they select), taints, capacity,
// GPU groups, pod limit and conditions become Node's, validated as
// AddNode validates a node. Read a node's description with
// Snapshot.Node, change what changes and set it. The workloads running on
// it stay where they are, on the same GPUs: when the node as described
// could not hold them (less capacity, fewer GPUs or pods, another flavor)
// the event is refused with the *BuildError Build gives for the same
// description, naming the pod: evict those workloads first (Evict). An
// unknown node is ErrUnknownNode.
//
// A two-phase preemption's hold on the node is released, the node being
// booked afresh.
//
// Cost: a node that keeps its place in the topology's order (the same
// labels at every level and the same flavor) and changes nothing the other
// nodes' figures are laid out by (its shareable GPUs, MIG slices, whether
// it has one GPU island or several, the cluster's largest GPU count, the
// resources its flavor's nodes hold) is described anew in place: its
// pods stay booked as they are, its page of nodes and states is copied
// and its domains' counters moved, O(levels × GPUs per node), about 10
// µs on 10,240 or 102,400 nodes (BenchmarkNodeChurn's set rows): new
// capacity, GPUs gone bad, a taint, a pod limit, a condition. A node
// that runs no pod and changes what that does not cover (another rack,
// flavor or layout) is taken out and put in again as RemoveNode and
// AddNode do it in place, when both can. Any other change, or one while
// two-phase holds are in flight, costs as AddNode's merge.
type SetNode struct{ Node Node }

func (e SetNode) apply(s *Snapshot) error {
	n, ok := s.topo.NodeIndex(e.Node.Name)
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownNode, e.Node.Name)
	}
	spec, err := s.nodeSpec(&e.Node, "node", s.topo.Levels, make([]string, len(s.topo.Levels)))
	if err != nil {
		return err
	}
	if s.renode(n, &spec, &e.Node) || s.move(n, &spec, &e.Node) {
		return nil
	}
	return s.reshape([]int32{n}, []topology.NodeSpec{spec}, []*Node{&e.Node})
}

// holdsRoom reports whether two-phase preemptions hold room on nodes:
// a node event then settles them, which only the reshape does.
func (s *Snapshot) holdsRoom() bool { return s.inflight != nil && len(s.inflight.holds) > 0 }

// vacate is RemoveNode in place (topology.Topology.Vacate) for node n,
// which holds no pod any more: its slot is left vacant, no other node
// moving. It reports false, s
// unchanged, where RemoveNode must reshape: what Vacate does not cover,
// the last of a resource among its flavor's nodes, two-phase holds in
// flight.
func (s *Snapshot) vacate(n int32) bool {
	if s.holdsRoom() {
		return false
	}
	node := s.topo.Node(n)
	f, had := node.Flavor, resourcesOf(node)
	t, sh, ok := s.topo.Vacate(n, s.capacitySpares())
	if !ok || !s.nodeResStays(t, f, 0, had, -1) {
		return false
	}
	return s.shift(t, sh, topology.NodeState{}, nil)
}

// fill is AddNode in place (topology.Topology.Fill): the node spec and d
// describe takes a vacant slot of its narrowest domain, where its name
// sorts or with the nodes between moving one slot, the side that moves
// fewer nodes running pods. It reports false, s
// unchanged, where AddNode must reshape: no vacant slot in the domain,
// what Fill does not cover, a resource its flavor's nodes lacked, two-phase
// holds in flight.
func (s *Snapshot) fill(spec *topology.NodeSpec, d *Node) bool {
	if s.holdsRoom() {
		return false
	}
	t, sh, ok := s.topo.Fill(spec, func(n int32) bool { return s.state.Node(n).Pods > 0 }, s.capacitySpares())
	if !ok || !s.nodeResStays(t, spec.Flavor, resourcesOf(t.Node(sh.At)), 0, -1) {
		return false
	}
	node := t.Node(sh.At)
	ns := node.Empty()
	if cordoned, down, until, ok := nodeCondition(d, s.now); ok {
		ns.Cordoned, ns.Down, ns.CooldownUntil = cordoned, down, until
	}
	return s.shift(t, sh, ns, d)
}

// move is SetNode for a node that holds no pod and moves to another
// narrowest domain (or changes what Renode does not cover): vacate, then
// fill, on a private copy that a refusal throws away.
func (s *Snapshot) move(n int32, spec *topology.NodeSpec, d *Node) bool {
	if s.state.Node(n).Pods != 0 || s.holdsRoom() {
		return false
	}
	c := s.trial()
	if !c.vacate(n) || !c.fill(spec, d) {
		return false
	}
	*s = *c
	return true
}

// shift moves s onto t, a topology Vacate or Fill made from s's as sh
// says: the node states, the capacity state's and the node marks move
// with their nodes, the node put in starting as ns and marked from its
// description d, and the running workloads with a pod on a node that
// moved get a new record, in one walk of the tree when there is one.
func (s *Snapshot) shift(t *topology.Topology, sh topology.Shift, ns topology.NodeState, d *Node) bool {
	capacity, ok := s.capacity.Shifted(t, sh, s.capacitySpares())
	if !ok {
		return false
	}
	moves := false // a running pod sits on a node that moves
	for n := sh.First; n < sh.End && !moves; n++ {
		moves = s.state.Node(n).Pods > 0
	}
	// The state is the event's own, as renode's: its check writes
	// nothing when it refuses.
	if !s.state.Shift(t, sh, ns) {
		return false
	}
	fx := *s.fixed
	fx.topo, fx.capacity = t, capacity
	fx.marks = s.marks.shifted(sh, d, s.flavorKeys(), t.NumNodes())
	s.fixed = &fx
	if moves {
		s.running.Update(func(r *running) (*running, bool) {
			for _, p := range r.Pods {
				if p.Node >= sh.First && p.Node < sh.End {
					return r.withPods(sh.Moved), true
				}
			}
			return r, false
		})
	}
	return true
}

// renode is SetNode for a node that keeps its place in the topology's
// order and whose change reaches no other node's figures
// (topology.Topology.Renode): new capacity, GPU count or islands, pod
// limit, taints, labels no level reads, conditions. What its pods hold is
// carried over from its state rather than booked again, and only its
// domains' counters change: a page of nodes and of node states copied,
// O(levels × G) worked out, and only what changes (a taint alone copies
// no node, a condition alone no mark). It reports false, s unchanged,
// where SetNode must reshape: the node moves or changes what the topology
// is laid out by, gains or loses the last of a resource among its
// flavor's nodes (which changes what pods book there), its pods would not
// fit it as described (the reshape's booking names the pod), or
// two-phase holds are in flight.
func (s *Snapshot) renode(n int32, spec *topology.NodeSpec, d *Node) bool {
	if s.holdsRoom() {
		return false
	}
	t, ok := s.topo.Renode(n, spec, s.capacitySpares())
	if !ok || !s.sameNodeRes(t, n) {
		return false
	}
	old, node := s.topo.Node(n), t.Node(n)
	was := s.state.Node(n)
	used := old.AllGPUs() &^ was.FreeGPUs
	if used&^node.AllGPUs() != 0 || (node.MaxPods > 0 && was.Pods > node.MaxPods) {
		return false
	}
	ns := topology.NodeState{Free: node.Capacity.Sub(old.Capacity.Sub(was.Free)), FreeGPUs: node.AllGPUs() &^ used, Pods: was.Pods}
	for _, v := range ns.Free {
		if v < 0 {
			return false
		}
	}
	if cordoned, down, until, ok := nodeCondition(d, s.now); ok {
		ns.Cordoned, ns.Down, ns.CooldownUntil = cordoned, down, until
	}
	capacity := s.capacity
	if t != s.topo {
		if capacity, ok = s.capacity.Renoded(t, n, node.Empty(), s.capacitySpares()); !ok {
			return false
		}
	}
	// The state is the event's own: written in place, once nothing can
	// refuse the event any more but the state's own check, which writes
	// nothing when it refuses.
	if (t != s.topo || ns != *was) && !s.state.Renode(t, n, ns) {
		return false
	}
	marks, remarked := s.marks.remark(n, d, s.flavorKeys(), t.NumNodes())
	if t != s.topo || remarked {
		fx := *s.fixed
		fx.topo, fx.capacity, fx.marks = t, capacity, marks
		s.fixed = &fx
	}
	return true
}

// sameNodeRes reports whether node n of t, described anew, leaves its
// flavor's booked resources (nodeRes) as they are: it brings none its
// flavor's nodes lacked, and each it no longer has another node of the
// flavor still has.
func (s *Snapshot) sameNodeRes(t *topology.Topology, n int32) bool {
	node := t.Node(n)
	return s.nodeResStays(t, node.Flavor, resourcesOf(node), resourcesOf(s.topo.Node(n)), n)
}

// nodeResStays reports whether a node of flavor f that had the resources
// had (bits, as resourcesOf) and has has now, node n of t (-1 for one
// taken out), leaves the flavor's booked resources as they are.
func (s *Snapshot) nodeResStays(t *topology.Topology, f int32, has, had uint64, n int32) bool {
	if has&^uint64(s.nodeRes[f]) != 0 {
		return false
	}
	for lost := had &^ has; lost != 0; lost &= lost - 1 {
		r := bits.TrailingZeros64(lost)
		if !t.Another(n, func(m *topology.Node) bool { return m.Flavor == f && m.Capacity[r] > 0 }) {
			return false
		}
	}
	return true
}

// SetFlavor describes a flavor anew: Flavor.Name names it, and its Spot,
// NodeLabels, NodeTaints and Tolerations become Flavor's, validated as
// Build validates a flavor (a *BuildError whose path starts with
// "flavor"). An unknown flavor is ErrUnknownFlavor.
//
// The pod sets that may use the flavor, their tolerations judged against
// its taints anew, are counted again among the pending; the admitted
// workloads on a flavor made spot become preemptible, and stop counting
// against their queues' non-preemptible caps (and the reverse), a victim
// still evicting staying nobody's victim.
//
// NodeLabels that change choose the flavor's nodes anew: the nodes that
// name no flavor are selected again as Build selects them, and one that
// would move to another flavor, or names this one and lacks a label it
// now selects by, is refused with Build's *BuildError (naming the pod, for
// a node whose running pods could not stay). A snapshot keeps only the
// node labels its flavors and levels name, so a flavor that comes to
// select by another label needs its nodes' labels for it: Nodes are nodes
// described anew with the flavor, as SetNode takes them (each a known
// node, ErrUnknownNode, named once), and make the event take the same
// path.
//
// Cost: O(flavors + pending), and O(running) when Spot changes; with
// other NodeLabels, or Nodes, as AddFlavor's (the snapshot described and
// built anew), and refused while two-phase preemptions are in flight
// (ErrInFlight).
type SetFlavor struct {
	Flavor Flavor
	Nodes  []Node
}

func (e SetFlavor) apply(s *Snapshot) error {
	f, ok := s.flavorIdx[e.Flavor.Name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownFlavor, e.Flavor.Name)
	}
	if err := checkFlavorAt(&e.Flavor, "flavor"); err != nil {
		return err
	}
	was := &s.flavors[f]
	if !maps.Equal(e.Flavor.NodeLabels, was.NodeLabels) || len(e.Nodes) > 0 {
		return s.redescribe(func(b *Builder) error {
			b.Flavors[f] = e.Flavor
			return describeNodes(b, e.Nodes)
		}, nil)
	}
	spot := was.Spot != e.Flavor.Spot
	fx := *s.fixed
	fx.flavors = slices.Clone(s.flavors)
	fl := e.Flavor
	fl.NodeLabels, fl.NodeTaints, fl.Tolerations = maps.Clone(was.NodeLabels), slices.Clone(fl.NodeTaints), slices.Clone(fl.Tolerations)
	fx.flavors[f] = fl
	s.fixed = &fx
	if spot {
		s.running.Update(func(r *running) (*running, bool) {
			if !slices.ContainsFunc(r.Sets, func(set view.Set) bool { return set.Flavor == f }) {
				return r, false
			}
			if _, evicting := s.evictingByID(r.ID); evicting {
				return r, false
			}
			pinned := s.neverPreempted(r)
			if pinned == r.Pinned {
				return r, false
			}
			c := r.copied()
			c.Pinned = pinned
			return c, true
		})
		s.recountLimits()
	}
	s.recountShapes()
	return nil
}

// reshape takes the nodes remove lists out of the topology and puts in
// the nodes of add, described by descs (one for one; a node both taken
// out and put in is described anew). The nodes that stay keep their
// state, those put in start as described, and what running pods hold is
// booked again on every node where it may have changed: a node described
// anew, and every node of a flavor whose nodes now hold other resources
// (what a pod books on a node follows from them, view.Booking.Book).
// Running pods on a node taken out must have been evicted. On an error s
// is unchanged: while two-phase preemptions hold room, which the reshape
// settles before it books the pods again, it runs first on a private copy
// that a refusal throws away.
func (s *Snapshot) reshape(remove []int32, add []topology.NodeSpec, descs []*Node) error {
	if s.holdsRoom() {
		if err := s.private().reshapeOnce(remove, add, descs); err != nil {
			return err
		}
	}
	return s.reshapeOnce(remove, add, descs)
}

// reshapeOnce is reshape without the private run: on an error while
// holds settle, s may be left changed.
func (s *Snapshot) reshapeOnce(remove []int32, add []topology.NodeSpec, descs []*Node) error {
	old := s.topo
	t, moved, err := old.Edit(remove, append(slices.Clip(add), old.RoomFor(add, s.options.NodeRoom)...), s.options.NodeRoom)
	if err != nil {
		return buildErr(ErrInvalid, "node", "%v", err)
	}
	nodeRes := nodeResOf(t, len(s.flavors))
	changed := make([]bool, len(s.flavors))
	anyChanged := false
	for f := range changed {
		changed[f] = nodeRes[f] != s.nodeRes[f]
		anyChanged = anyChanged || changed[f]
	}
	// A node described anew keeps its pods: they move with it.
	desc := make(map[int32]*Node, len(descs))
	for _, d := range descs {
		m, _ := t.NodeIndex(d.Name)
		desc[m] = d
		if o, ok := old.NodeIndex(d.Name); ok {
			moved[o] = m
		}
	}
	// from[m] is the node of the old topology that node m was; keep[m]
	// says whether m carries its state over, or starts afresh.
	from := make([]int32, t.NumNodes())
	keep := make([]bool, t.NumNodes())
	for m := range from {
		from[m] = -1
	}
	for o, m := range moved {
		if m >= 0 {
			from[m] = int32(o)
			keep[m] = desc[m] == nil && !changed[t.Node(m).Flavor]
		}
	}
	s.settleHolds(moved, keep)
	s.state.Flush() // Reshape carries the aggregates over
	state := s.state.Reshape(t, moved, func(m int32) (topology.NodeState, bool) {
		if keep[m] {
			return topology.NodeState{}, false
		}
		ns := t.Node(m).Empty()
		if t.Vacant(m) {
			return ns, true
		}
		if d, ok := desc[m]; ok {
			if cordoned, down, until, ok := nodeCondition(d, s.now); ok {
				ns.Cordoned, ns.Down, ns.CooldownUntil = cordoned, down, until
			}
		} else {
			was := s.state.Node(from[m])
			ns.Cordoned, ns.Down, ns.CooldownUntil = was.Cordoned, was.Down, was.CooldownUntil
		}
		return ns, true
	})
	fx := *s.fixed
	fx.topo, fx.nodeRes = t, nodeRes
	fx.marks = s.marks.reshape(t.NumNodes(), moved, desc, s.flavorKeys())
	fx.capacity = s.capacity.ReshapeCapacity(t, moved, func(m int32) bool { return from[m] < 0 || desc[m] != nil })
	next := *s
	next.fixed, next.state = &fx, state
	// Running pods on a node that starts afresh are booked again, as
	// Build books them; then every running pod moves with its node.
	rebook, identity := false, len(moved) == t.NumNodes()
	for m := range t.NumNodes() {
		if o := from[m]; !keep[m] && o >= 0 && s.state.Node(o).Pods > 0 {
			rebook = true
		}
	}
	for o, m := range moved {
		identity = identity && m == int32(o)
	}
	if rebook {
		if err := rebookPods(&next, moved, keep); err != nil {
			return err
		}
	}
	s.fixed, s.state = next.fixed, next.state
	if !identity {
		s.running.Update(func(r *running) (*running, bool) {
			for _, p := range r.Pods {
				if p.Node >= 0 && moved[p.Node] != p.Node {
					return r.withPods(func(n int32) int32 { return moved[n] }), true
				}
			}
			return r, false
		})
	}
	if anyChanged {
		s.recountShapes() // pending pods ask the nodes for other resources now
	}
	return nil
}

// RemoveQueue removes a queue. As Kueue keeps a ClusterQueue being deleted
// until its admitted workloads are gone, a queue that still runs
// workloads is not removed: the event is refused with an *InUseError
// (errors.Is ErrInUse) listing them; hold the queue (SetQueue with Hold)
// and let them finish, or evict and withdraw them. Its pending workloads,
// which no queue would admit any more, are withdrawn with it; so are its
// fairness debt and historical usage. A queue a local queue points at is
// not removed either (ErrInUse, naming the local queue), as Build would
// refuse the local queue: remove it first. An unknown queue is
// ErrUnknownQueue.
//
// Cost: the queues' configuration is resolved anew, O(queues + cohorts ×
// flavors × resources), and the admitted workloads are visited, those of
// the queues after it getting a new record (a queue is known by its
// index): O(running).
type RemoveQueue struct{ Queue string }

func (e RemoveQueue) apply(s *Snapshot) error {
	q, ok := s.queueIdx[e.Queue]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownQueue, e.Queue)
	}
	if err := s.pointedAt(e.Queue); err != nil {
		return err
	}
	if s.runCount[q] > 0 {
		in := &InUseError{Queue: e.Queue}
		s.running.Scan(func(r *running) bool {
			if r.Queue == q {
				in.Running = append(in.Running, r.ID)
			}
			return true
		})
		return in
	}
	queues := slices.Delete(slices.Clone(s.queues), int(q), int(q)+1)
	next := *s
	next.ownConfig()
	if err := buildQueues(&next, s.cohorts, queues, -1); err != nil {
		return err
	}
	next.queues = queues
	var withdrawn []string
	start := lineStart(e.Queue)
	s.byQueue.Ascend(&start, func(w *Workload) bool {
		if w.Queue != e.Queue {
			return false
		}
		withdrawn = append(withdrawn, w.ID)
		return true
	})
	for _, id := range withdrawn {
		s.dequeue(id) // by the old configuration, which counted its shapes
	}
	// Every queue after q moves down one index: its usage, its rows and
	// its workloads' records.
	u := next.rtree.NewUsage()
	for o := range s.queues {
		if o == int(q) {
			continue
		}
		for f := range s.flavors {
			if v := s.usageOf(int32(o), int32(f)); !v.IsZero() {
				next.rtree.AddVec(u, renumber(int32(o), q), f, v, 1)
			}
		}
	}
	s.running.Update(func(r *running) (*running, bool) {
		if r.Queue < q {
			return r, false
		}
		c := r.copied()
		c.Queue--
		return c, true
	})
	s.own(rowRunCount | rowDebt | rowUsed)
	s.runCount = slices.Delete(s.runCount, int(q), int(q)+1)
	s.debt = slices.Delete(s.debt, int(q), int(q)+1)
	s.used = slices.Delete(s.used, int(q), int(q)+1)
	s.config, s.usage = next.config, u
	s.recountLimits()
	return nil
}

// renumber is queue o's index once queue q is removed.
func renumber(o, q int32) int32 {
	if o > q {
		return o - 1
	}
	return o
}

// RemoveCohort removes a cohort. A cohort that a queue names as its cohort,
// or a cohort as its parent, is not removed: the event is refused with an
// *InUseError (errors.Is ErrInUse) listing them, since they would name a
// cohort that does not exist; move them first (SetQueue, SetCohort). An
// unknown cohort is ErrUnknownCohort.
//
// Cost: the queues' configuration is resolved anew and the cohorts' usage
// follows from the queues', O(queues + cohorts × flavors × resources).
type RemoveCohort struct{ Cohort string }

func (e RemoveCohort) apply(s *Snapshot) error {
	c := slices.IndexFunc(s.cohorts, func(c Cohort) bool { return c.Name == e.Cohort })
	if c < 0 {
		return fmt.Errorf("%w: %q", ErrUnknownCohort, e.Cohort)
	}
	in := &InUseError{Cohort: e.Cohort}
	for _, q := range s.queues {
		if q.Cohort == e.Cohort {
			in.Queues = append(in.Queues, q.Name)
		}
	}
	for _, child := range s.cohorts {
		if child.Parent == e.Cohort {
			in.Cohorts = append(in.Cohorts, child.Name)
		}
	}
	if len(in.Queues)+len(in.Cohorts) > 0 {
		slices.Sort(in.Queues)
		slices.Sort(in.Cohorts)
		return in
	}
	old := s.config
	s.ownConfig()
	s.cohorts = slices.Delete(slices.Clone(s.cohorts), c, c+1)
	if err := requota(s, s.queues, -1); err != nil {
		s.config = old
		return err
	}
	return nil
}

// rebookPods books again, on s's state, every running pod whose node
// moves (moved, old index to new) to a node that starts afresh (keep[m]
// false), as Build books a pod whose GPU indices are given.
func rebookPods(s *Snapshot, moved []int32, keep []bool) error {
	var err error
	s.running.Scan(func(r *running) bool {
		k := 0
		for i := range r.Sets {
			book := r.Book(i, s.nodeRes)
			share := s.shareOf(r.Sets[i].Per)
			for p := range r.Sets[i].Count {
				pa := r.Pods[k]
				k++
				if pa.Node < 0 || keep[moved[pa.Node]] {
					continue
				}
				m := moved[pa.Node]
				path := fmt.Sprintf("running[%q].podSets[%d]", r.ID, i)
				np := fmt.Sprintf("%s.nodes[%d]", path, p)
				if err = s.podFlavor(m, r.Sets[i].Flavor, np); err != nil {
					return false
				}
				if _, err = bookRunningPod(s, m, GPUSet(pa.GPUs).Indices(), share, book, fmt.Sprintf("%s.gpuIndices[%d]", path, p), np); err != nil {
					return false
				}
			}
		}
		return true
	})
	return err
}

// settleHolds brings two-phase preemption's holds through a reshape:
// a hold whose preemptor or victims hold pods on a node taken out or
// booked afresh (moved[o] < 0, or !keep[moved[o]]) is released, as a node
// going down releases it (its victims evict all the same, booking their own
// pods, which the reshape books again); the others' bookings follow their
// nodes to their new indices.
func (s *Snapshot) settleHolds(moved []int32, keep []bool) {
	if s.inflight == nil || len(s.inflight.holds) == 0 {
		return
	}
	gone := func(o int32) bool { return moved[o] < 0 || !keep[moved[o]] }
	s.releaseHolds(func(pre *running, h *hold) (string, bool) {
		for _, p := range pre.Pods {
			if p.Node >= 0 && gone(p.Node) {
				return fmt.Sprintf("node %q changed", s.topo.NodeName(p.Node)), true
			}
		}
		for _, e := range h.excess {
			if gone(e.node) {
				return fmt.Sprintf("node %q changed", s.topo.NodeName(e.node)), true
			}
		}
		return "", false
	})
	if s.inflight == nil {
		return
	}
	p := s.preempting()
	for j := range p.holds {
		h := &p.holds[j]
		h.excess = slices.Clone(h.excess)
		for k := range h.excess {
			h.excess[k].node = moved[h.excess[k].node]
		}
	}
}

// copied is a copy of r to change. Where r points at its own room for
// one pod set or one pod, the copy points at its own, so that it keeps
// nothing of r alive.
func (r *running) copied() *running {
	c := new(running)
	*c = *r
	if len(r.Sets) == 1 && &r.Sets[0] == &r.one.set[0] {
		c.Sets = c.one.set[:1]
	}
	if len(r.w.PodSets) == 1 && &r.w.PodSets[0] == &r.one.ps[0] {
		c.w.PodSets = c.one.ps[:1]
	}
	if len(r.Pods) == 1 && &r.Pods[0] == &r.one.pod[0] {
		c.Pods = c.one.pod[:1]
	}
	return c
}

// withPods is a copy of r with its pods on the nodes moved gives their
// nodes (old index to new).
func (r *running) withPods(moved func(n int32) int32) *running {
	c := r.copied()
	if len(c.Pods) != 1 || &c.Pods[0] != &c.one.pod[0] {
		c.Pods = slices.Clone(r.Pods) // r's are shared: never written
	}
	for k := range c.Pods {
		if n := c.Pods[k].Node; n >= 0 {
			c.Pods[k].Node = moved(n)
		}
	}
	return c
}

// resourcesOf has bit r set for each resource node has some of.
func resourcesOf(node *topology.Node) uint64 {
	var has uint64
	for r, v := range node.Capacity {
		if v > 0 {
			has |= 1 << r
		}
	}
	return has
}
