package allot_test

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-sched/allot"
)

// The property: whatever sequence of events a store applies, the churn
// events among the others, its snapshot is the one a Builder builds from
// the description the events leave. The reference is deliberately naive:
// a Builder value that each event edits as a person would edit the
// description (append the node, delete the queue, move the workloads of a
// removed node to the pending list), built from scratch after every step.
// An event the store refuses must be one whose edited description Build
// refuses, or one the event's own rule refuses (an unknown name, a queue
// that still runs workloads), and the store must not change; an event it
// applies must leave a description Build accepts, and the two snapshots
// must read alike (stateOf: every node, queue and cohort with its status,
// every workload, the admission order and the probes' decisions). Every
// few steps the scheduling loop runs on both, and their outcomes must
// agree too; every step, the snapshot's own Builder must build it again.

// churnModel is the naive reference: the description, edited event by
// event.
type churnModel struct {
	b allot.Builder
}

// deepCopy copies a description through JSON, so that editing the copy
// leaves the original as it was.
func deepCopy(t testing.TB, b allot.Builder) allot.Builder {
	t.Helper()
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var c allot.Builder
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// errSemantic marks an event the model refuses by the event's own rule.
var errSemantic = errors.New("refused by the event's rule")

// edit returns the description after ev, or errSemantic.
func (m *churnModel) edit(t testing.TB, ev allot.Event) (allot.Builder, error) {
	b := deepCopy(t, m.b)
	nodeAt := func(name string) int {
		return slices.IndexFunc(b.Nodes, func(n allot.Node) bool { return n.Name == name })
	}
	runAt := func(id string) int {
		return slices.IndexFunc(b.Running, func(w allot.Workload) bool { return w.ID == id })
	}
	pendAt := func(id string) int {
		return slices.IndexFunc(b.Pending, func(w allot.Workload) bool { return w.ID == id })
	}
	queueAt := func(name string) int {
		return slices.IndexFunc(b.Queues, func(q allot.Queue) bool { return q.Name == name })
	}
	cohortAt := func(name string) int {
		return slices.IndexFunc(b.Cohorts, func(c allot.Cohort) bool { return c.Name == name })
	}
	evict := func(i int) {
		b.Pending = append(b.Pending, evicted(b.Running[i]))
		b.Running = slices.Delete(b.Running, i, i+1)
	}
	switch e := ev.(type) {
	case allot.AddNode:
		b.Nodes = append(b.Nodes, e.Node)
	case allot.RemoveNode:
		i := nodeAt(e.Node)
		if i < 0 {
			return b, errSemantic
		}
		b.Nodes = slices.Delete(b.Nodes, i, i+1)
		for k := len(b.Running) - 1; k >= 0; k-- {
			for _, ps := range b.Running[k].PodSets {
				if slices.Contains(ps.Nodes, e.Node) {
					evict(k)
					break
				}
			}
		}
	case allot.SetNode:
		i := nodeAt(e.Node.Name)
		if i < 0 {
			return b, errSemantic
		}
		b.Nodes[i] = e.Node
	case allot.RemoveQueue:
		i := queueAt(e.Queue)
		if i < 0 || slices.ContainsFunc(b.Running, func(w allot.Workload) bool { return w.Queue == e.Queue }) {
			return b, errSemantic
		}
		b.Queues = slices.Delete(b.Queues, i, i+1)
		b.Pending = slices.DeleteFunc(b.Pending, func(w allot.Workload) bool { return w.Queue == e.Queue })
		delete(b.History.Usage, e.Queue)
		delete(b.History.Preemptions, e.Queue)
	case allot.RemoveCohort:
		i := cohortAt(e.Cohort)
		if i < 0 || slices.ContainsFunc(b.Queues, func(q allot.Queue) bool { return q.Cohort == e.Cohort }) ||
			slices.ContainsFunc(b.Cohorts, func(c allot.Cohort) bool { return c.Parent == e.Cohort }) {
			return b, errSemantic
		}
		b.Cohorts = slices.Delete(b.Cohorts, i, i+1)
	case allot.SetQueue:
		if i := queueAt(e.Queue.Name); i >= 0 {
			b.Queues[i] = e.Queue
		} else {
			b.Queues = append(b.Queues, e.Queue)
		}
	case allot.SetFlavor:
		i := slices.IndexFunc(b.Flavors, func(f allot.Flavor) bool { return f.Name == e.Flavor.Name })
		if i < 0 {
			return b, errSemantic
		}
		if !maps.Equal(b.Flavors[i].NodeLabels, e.Flavor.NodeLabels) || len(e.Nodes) > 0 {
			b = m.described(t)
			if err := describedAnew(&b, e.Nodes); err != nil {
				return b, err
			}
		}
		b.Flavors[i] = e.Flavor
	case allot.AddFlavor:
		at := len(b.Flavors)
		if e.Before != "" {
			if at = slices.IndexFunc(b.Flavors, func(f allot.Flavor) bool { return f.Name == e.Before }); at < 0 {
				return b, errSemantic
			}
		}
		b = m.described(t)
		b.Flavors = slices.Insert(b.Flavors, at, e.Flavor)
		if err := describedAnew(&b, e.Nodes); err != nil {
			return b, err
		}
	case allot.RemoveFlavor:
		i := slices.IndexFunc(b.Flavors, func(f allot.Flavor) bool { return f.Name == e.Flavor })
		if i < 0 || m.flavorUsed(t, e.Flavor) {
			return b, errSemantic
		}
		b = m.described(t)
		b.Flavors = slices.Delete(b.Flavors, i, i+1)
	case allot.SetLevels:
		b = m.described(t)
		b.Levels = e.Levels
		if err := describedAnew(&b, e.Nodes); err != nil {
			return b, err
		}
		if _, err := b.Build(); err == nil && m.asksOtherLevels(e.Levels) {
			return b, errSemantic
		}
	case allot.SetResources:
		b = m.described(t)
		was := historyResource(b)
		b.Resources, b.GPUResource, b.GPUShareResource, b.IgnoredResources = e.Resources, e.GPUResource, e.GPUShareResource, e.IgnoredResources
		if historyResource(b) != was {
			b.History.Usage = nil // it counted another resource
		}
	case allot.SetCohort:
		if i := cohortAt(e.Cohort.Name); i >= 0 {
			b.Cohorts[i] = e.Cohort
		} else {
			b.Cohorts = append(b.Cohorts, e.Cohort)
		}
	case allot.Submit:
		if runAt(e.Workload.ID) >= 0 || pendAt(e.Workload.ID) >= 0 {
			return b, errSemantic
		}
		b.Pending = append(b.Pending, e.Workload)
	case allot.Withdraw:
		i := pendAt(e.ID)
		if i < 0 {
			return b, errSemantic
		}
		b.Pending = slices.Delete(b.Pending, i, i+1)
	case allot.Finish:
		i := runAt(e.ID)
		if i < 0 {
			return b, errSemantic
		}
		b.Running = slices.Delete(b.Running, i, i+1)
	case allot.Evict:
		i := runAt(e.ID)
		if i < 0 {
			return b, errSemantic
		}
		evict(i)
	case allot.Checkpoint:
		i := runAt(e.ID)
		if i < 0 {
			return b, errSemantic
		}
		b.Running[i].Preemption.LastCheckpointAt = b.Now
	case allot.NodeDown, allot.NodeUp, allot.NodeCordon, allot.NodeCooldown:
		var name string
		switch e := e.(type) {
		case allot.NodeDown:
			name = e.Node
		case allot.NodeUp:
			name = e.Node
		case allot.NodeCordon:
			name = e.Node
		case allot.NodeCooldown:
			name = e.Node
		}
		i := nodeAt(name)
		if i < 0 {
			return b, errSemantic
		}
		switch e := e.(type) {
		case allot.NodeDown:
			b.Nodes[i].Down = true
		case allot.NodeUp:
			b.Nodes[i].Down = false
		case allot.NodeCordon:
			b.Nodes[i].Unschedulable = e.Cordoned
		case allot.NodeCooldown:
			b.Nodes[i].CooldownUntil = e.Until
		}
	case allot.AdvanceTime:
		if e.Seconds < 0 {
			return b, errSemantic
		}
		// What each queue held over the interval joins its history (the
		// half-life is zero: nothing decays).
		for _, w := range b.Running {
			for _, ps := range w.PodSets {
				if g := int64(ps.Count) * ps.PerPod["gpu"] * e.Seconds; g != 0 {
					if b.History.Usage == nil {
						b.History.Usage = map[string]allot.Resources{}
					}
					if b.History.Usage[w.Queue] == nil {
						b.History.Usage[w.Queue] = allot.Resources{}
					}
					b.History.Usage[w.Queue]["gpu"] += g
				}
			}
		}
		b.Now += e.Seconds
	default:
		t.Fatalf("the model does not know %T", ev)
	}
	return b, nil
}

// described is the description as the reference's snapshot describes
// itself (Snapshot.Builder): the configuration events edit that one, since
// a snapshot keeps only the node labels its levels and flavors name and
// leaves a node's flavor unnamed where its labels select it.
func (m *churnModel) described(t testing.TB) allot.Builder {
	return buildAt(t, m.b, 0).Builder()
}

// flavorUsed reports whether a queue's quota or flavor order, a cohort's
// quota, a node or a running pod set uses the flavor.
func (m *churnModel) flavorUsed(t testing.TB, name string) bool {
	names := func(fqs []allot.FlavorQuota) bool {
		return slices.ContainsFunc(fqs, func(fq allot.FlavorQuota) bool { return fq.Flavor == name })
	}
	for _, q := range m.b.Queues {
		if names(q.Quota) || slices.Contains(q.FlavorOrder, name) {
			return true
		}
	}
	for _, c := range m.b.Cohorts {
		if names(c.Quota) {
			return true
		}
	}
	ref := buildAt(t, m.b, 0)
	for _, n := range ref.Nodes() {
		if st, _ := ref.NodeStatus(n.Name); st.Flavor == name {
			return true
		}
	}
	uses := func(w allot.Workload) bool {
		return slices.ContainsFunc(w.PodSets, func(ps allot.PodSet) bool { return ps.Flavor == name || slices.Contains(ps.Flavors, name) })
	}
	return slices.ContainsFunc(m.b.Running, uses) || slices.ContainsFunc(m.b.Pending, uses)
}

// asksOtherLevels reports whether a running pod set asks for a level not
// among levels.
func (m *churnModel) asksOtherLevels(levels []string) bool {
	unknown := func(l string) bool { return l != "" && !slices.Contains(levels, l) }
	return slices.ContainsFunc(m.b.Running, func(w allot.Workload) bool {
		return slices.ContainsFunc(w.PodSets, func(ps allot.PodSet) bool {
			return unknown(ps.Topology.Required) || unknown(ps.Topology.Preferred) ||
				slices.ContainsFunc(ps.Topology.Slices, func(sl allot.Slice) bool { return unknown(sl.Level) })
		})
	})
}

// describedAnew replaces b's nodes that nodes name, each known and named
// once, or refuses by the event's rule.
func describedAnew(b *allot.Builder, nodes []allot.Node) error {
	for i, n := range nodes {
		j := slices.IndexFunc(b.Nodes, func(o allot.Node) bool { return o.Name == n.Name })
		if j < 0 || slices.ContainsFunc(nodes[:i], func(o allot.Node) bool { return o.Name == n.Name }) {
			return errSemantic
		}
		b.Nodes[j] = n
	}
	return nil
}

// historyResource is the resource b's historical usage counts: the GPU,
// else the first resource.
func historyResource(b allot.Builder) string {
	gpu := cmp.Or(b.GPUResource, allot.DefaultGPUResource)
	if len(b.Resources) == 0 || slices.Contains(b.Resources, gpu) {
		return gpu
	}
	return b.Resources[0]
}

// commit edits the description as committing d, a decision on request r,
// does: the victims evicted (each a preemption its queue suffered), r
// admitted where d places it.
func (m *churnModel) commit(t testing.TB, r allot.Request, d allot.Decision) {
	b := deepCopy(t, m.b)
	for _, v := range d.Victims {
		i := slices.IndexFunc(b.Running, func(w allot.Workload) bool { return w.ID == v.ID })
		b.Pending = append(b.Pending, evicted(b.Running[i]))
		b.Running = slices.Delete(b.Running, i, i+1)
		if b.History.Preemptions == nil {
			b.History.Preemptions = map[string]float64{}
		}
		b.History.Preemptions[v.Queue]++
	}
	b.Pending = slices.DeleteFunc(b.Pending, func(w allot.Workload) bool { return w.ID == r.ID })
	w := deepCopy(t, allot.Builder{Running: []allot.Workload{allot.Workload(r)}}).Running[0]
	w.AdmittedAt = b.Now
	for i := range w.PodSets {
		ps := &w.PodSets[i]
		ps.Flavor = d.Flavors[i].Flavor
		for _, p := range d.Placement {
			if p.PodSet == ps.Name {
				ps.Nodes = append(ps.Nodes, p.Node)
				ps.GPUIndices = append(ps.GPUIndices, p.GPUs.Indices())
			}
		}
	}
	b.Running = append(b.Running, w)
	m.b = b
}

// churnGen draws the events of one sequence.
type churnGen struct {
	t    testing.TB
	rng  *rand.Rand
	m    *churnModel
	next int
	// queues and cohorts are every configuration seen, removed or not,
	// for SetQueue and SetCohort to bring back.
	queues  []allot.Queue
	cohorts []allot.Cohort
	// left are the nodes RemoveNode named, latest last: AddNode puts a
	// node in where one of them was, as a replacement comes, now and then.
	left []allot.Node
}

func (g *churnGen) pick(names []string) string {
	if len(names) == 0 || g.rng.IntN(10) == 0 {
		return "unknown"
	}
	return names[g.rng.IntN(len(names))]
}

func (g *churnGen) fresh(prefix string) string {
	g.next++
	return fmt.Sprintf("%s%d", prefix, g.next)
}

func (g *churnGen) nodeNames() []string {
	var out []string
	for _, n := range g.m.b.Nodes {
		out = append(out, n.Name)
	}
	return out
}

func (g *churnGen) ids(ws []allot.Workload) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.ID)
	}
	return out
}

// node is a node to add: valid mostly, now and then one Build refuses.
func (g *churnGen) node() allot.Node {
	r := g.rng
	gpus := []int64{0, 2, 4, 8, 8, 16}[r.IntN(6)]
	n := allot.Node{Name: g.fresh("x"), Flavor: []string{"h100", "h100", "a100", "spot"}[r.IntN(4)],
		Labels:   map[string]string{"block": fmt.Sprintf("b%d", r.IntN(3)), "rack": fmt.Sprintf("r%d", r.IntN(6))},
		Capacity: allot.Resources{"gpu": gpus, "cpu": int64(8_000 * (1 + r.IntN(8)))}}
	if gpus == 8 && r.IntN(3) == 0 {
		n.GPUGroups = []int{4, 4}
	}
	if r.IntN(4) == 0 {
		n.Capacity["rdma"] = int64(r.IntN(4))
	}
	if r.IntN(5) == 0 {
		n.MaxPods = int32(1 + r.IntN(4))
	}
	g.conditions(&n)
	switch r.IntN(14) {
	case 0:
		n.Name = g.pick(g.nodeNames())
	case 1:
		n.Flavor = "b200"
	case 2:
		delete(n.Labels, "rack")
	case 3:
		n.Capacity["gpu"] = 65
	case 4:
		n.GPUGroups = []int{3}
	}
	return n
}

func (g *churnGen) conditions(n *allot.Node) {
	r := g.rng
	if r.IntN(6) == 0 {
		n.Unschedulable = !n.Unschedulable
	}
	if r.IntN(8) == 0 {
		n.Down = !n.Down
	}
	if r.IntN(8) == 0 {
		n.CooldownUntil = g.m.b.Now + int64(r.IntN(3000)) - 1000
	}
}

// setNode describes an existing node anew, changing one or two things.
func (g *churnGen) setNode() allot.Node {
	r := g.rng
	if len(g.m.b.Nodes) == 0 {
		return g.node()
	}
	n := deepCopy(g.t, allot.Builder{Nodes: []allot.Node{g.m.b.Nodes[r.IntN(len(g.m.b.Nodes))]}}).Nodes[0]
	for range 1 + r.IntN(2) {
		switch r.IntN(9) {
		case 0: // more or fewer GPUs
			gpus := []int64{0, 4, 8, 16}[r.IntN(4)]
			n.Capacity["gpu"] = gpus
			n.GPUGroups = nil
		case 1:
			n.Capacity["cpu"] = int64(4_000 * r.IntN(20))
		case 2:
			n.Labels = map[string]string{"block": fmt.Sprintf("b%d", r.IntN(3)), "rack": fmt.Sprintf("r%d", r.IntN(6))}
		case 3:
			n.Flavor = []string{"h100", "a100", "spot"}[r.IntN(3)]
		case 4:
			n.Capacity["rdma"] = int64(r.IntN(3))
		case 5:
			n.MaxPods = int32(r.IntN(4))
		case 6: // a taint put on or taken off
			if len(n.Taints) > 0 {
				n.Taints = nil
			} else {
				n.Taints = []allot.Taint{{Key: "maintenance", Effect: []string{allot.TaintNoSchedule, allot.TaintPreferNoSchedule}[r.IntN(2)]}}
			}
		case 7: // GPU islands
			if n.Capacity["gpu"] == 8 {
				n.GPUGroups = [][]int{nil, {4, 4}, {2, 6}}[r.IntN(3)]
			}
		default:
			g.conditions(&n)
		}
	}
	return n
}

// setFlavor is a flavor of the description a little changed: spot or
// not, a taint its nodes carry, a toleration of it; now and then its
// node labels, which the event refuses, or a flavor no one declared.
func (g *churnGen) setFlavor() allot.Flavor {
	r := g.rng
	if r.IntN(12) == 0 {
		return allot.Flavor{Name: "nope"}
	}
	fl := deepCopy(g.t, allot.Builder{Flavors: []allot.Flavor{g.m.b.Flavors[r.IntN(len(g.m.b.Flavors))]}}).Flavors[0]
	switch r.IntN(5) {
	case 0, 1:
		fl.Spot = !fl.Spot
	case 2:
		if len(fl.NodeTaints) > 0 {
			fl.NodeTaints = nil
		} else {
			fl.NodeTaints = []allot.Taint{{Key: "dedicated", Value: "gpu", Effect: allot.TaintNoSchedule}}
		}
	case 3:
		if len(fl.Tolerations) > 0 {
			fl.Tolerations = nil
		} else {
			fl.Tolerations = []allot.Toleration{{Key: "dedicated", Operator: "Exists"}}
		}
	default:
		if r.IntN(3) == 0 {
			fl.NodeLabels = map[string]string{"pool": "gpu"}
		}
	}
	return fl
}

// relabel is a SetFlavor that selects the flavor's nodes by a label the
// snapshot did not keep, now and then without the nodes' labels for it,
// which Build refuses, or by a kept one (a rack), which moves the nodes
// that name no flavor.
func (g *churnGen) relabel() allot.SetFlavor {
	r := g.rng
	fl := g.setFlavor()
	ev := allot.SetFlavor{Flavor: fl}
	if r.IntN(3) == 0 {
		fl.NodeLabels = map[string]string{"rack": fmt.Sprintf("r%d", r.IntN(6))}
		ev.Flavor = fl
		return ev
	}
	fl.NodeLabels = map[string]string{"pool": fl.Name}
	ev.Flavor = fl
	if r.IntN(4) == 0 {
		return ev
	}
	ref := buildAt(g.t, g.m.b, 0)
	for _, n := range ref.Nodes() {
		if st, _ := ref.NodeStatus(n.Name); st.Flavor == fl.Name {
			n.Labels["pool"] = fl.Name
			ev.Nodes = append(ev.Nodes, n)
		}
	}
	return ev
}

// addFlavor is a flavor to add: quota-only mostly, or selecting by pool
// with a node or two moved to it, or by a kept label (a rack, and the
// pool the relabelled flavors select by), which moves the nodes that
// name no flavor; now and then a known name or before an unknown flavor.
func (g *churnGen) addFlavor() allot.AddFlavor {
	r := g.rng
	ev := allot.AddFlavor{Flavor: allot.Flavor{Name: g.fresh("f")}}
	switch r.IntN(8) {
	case 0:
		ev.Flavor.Name = g.m.b.Flavors[r.IntN(len(g.m.b.Flavors))].Name
	case 1:
		ev.Before = "nope"
	case 2, 3:
		ev.Flavor.NodeLabels = map[string]string{"pool": ev.Flavor.Name}
		nodes := buildAt(g.t, g.m.b, 0).Nodes()
		for range r.IntN(3) {
			if len(nodes) == 0 {
				break
			}
			n := nodes[r.IntN(len(nodes))]
			if !slices.ContainsFunc(ev.Nodes, func(o allot.Node) bool { return o.Name == n.Name }) {
				n.Flavor, n.Labels["pool"] = ev.Flavor.Name, ev.Flavor.Name
				ev.Nodes = append(ev.Nodes, n)
			}
		}
	case 4:
		ev.Flavor.NodeLabels = map[string]string{"rack": fmt.Sprintf("r%d", r.IntN(6)), "pool": g.m.b.Flavors[r.IntN(len(g.m.b.Flavors))].Name}
	}
	if r.IntN(3) == 0 {
		ev.Before = g.m.b.Flavors[r.IntN(len(g.m.b.Flavors))].Name
	}
	return ev
}

// removeFlavor names a flavor to remove: mostly one added, which may be
// unused, now and then one in use or unknown; while none was added, it
// adds one half the time.
func (g *churnGen) removeFlavor() allot.Event {
	r := g.rng
	var added, all []string
	for _, f := range g.m.b.Flavors {
		all = append(all, f.Name)
		if f.Name[0] == 'f' {
			added = append(added, f.Name)
		}
	}
	switch {
	case len(added) > 0 && r.IntN(8) > 0:
		return allot.RemoveFlavor{Flavor: added[r.IntN(len(added))]}
	case len(added) == 0 && r.IntN(2) == 0:
		// None to take away yet: one added, to take away later.
		return allot.AddFlavor{Flavor: allot.Flavor{Name: g.fresh("f")}}
	}
	return allot.RemoveFlavor{Flavor: g.pick(all)}
}

// setLevels is the levels anew: one fewer, or a zone above the blocks,
// or the blocks back, with the nodes' labels for a level they lack, now
// and then without them.
func (g *churnGen) setLevels() allot.SetLevels {
	r := g.rng
	ev := allot.SetLevels{Levels: [][]string{{"block", "rack"}, {"rack"}, {"zone", "block", "rack"}, {"zone", "rack"}, {}}[r.IntN(5)]}
	if r.IntN(5) == 0 {
		return ev
	}
	for _, n := range buildAt(g.t, g.m.b, 0).Nodes() {
		missing := false
		for _, l := range ev.Levels {
			if _, ok := n.Labels[l]; !ok {
				n.Labels[l] = fmt.Sprintf("%s%d", l[:1], r.IntN(2))
				missing = true
			}
		}
		if missing {
			ev.Nodes = append(ev.Nodes, n)
		}
	}
	return ev
}

// setResources declares the resources anew: memory added or gone, rdma
// gone (which the quotas name) or both declared and ignored.
func (g *churnGen) setResources() allot.SetResources {
	r := g.rng
	switch r.IntN(6) {
	case 0, 1:
		return allot.SetResources{Resources: []string{"gpu", "cpu", "rdma", "memory"}}
	case 2, 3:
		return allot.SetResources{Resources: []string{"gpu", "cpu", "rdma"}}
	case 4:
		return allot.SetResources{Resources: []string{"gpu", "cpu"}, IgnoredResources: []string{"rdma"}}
	}
	return allot.SetResources{Resources: []string{"gpu", "cpu", "rdma"}, IgnoredResources: []string{"rdma"}}
}

// request is a request to decide: a pending workload, or a new one.
func (g *churnGen) request() allot.Request {
	r := g.rng
	if len(g.m.b.Pending) > 0 && r.IntN(3) == 0 {
		return allot.Request(deepCopy(g.t, allot.Builder{Pending: []allot.Workload{g.m.b.Pending[r.IntN(len(g.m.b.Pending))]}}).Pending[0])
	}
	var queues []string
	for _, q := range g.m.b.Queues {
		queues = append(queues, q.Name)
	}
	gpus := []int64{1, 2, 4, 8}[r.IntN(4)]
	ps := allot.PodSet{Name: "p", Count: int32(1 + r.IntN(4)), PerPod: allot.Resources{"gpu": gpus, "cpu": 2_000}}
	switch r.IntN(5) {
	case 0:
		ps.Topology.Required = "rack"
	case 1:
		ps.Topology.Preferred = "block"
	case 2:
		ps.Flavors = []string{"a100"}
		ps.PerPod["rdma"] = int64(r.IntN(2))
	}
	w := allot.Request{ID: g.fresh("w"), Queue: g.pick(queues), User: []string{"ana", "bo"}[r.IntN(2)],
		Priority: int32(r.IntN(10)), SubmittedAt: g.m.b.Now, ExpectedRuntime: int64(r.IntN(3)) * 1800, PodSets: []allot.PodSet{ps}}
	if r.IntN(4) == 0 {
		w.Preemption.Class = allot.Checkpointable
	}
	return w
}

// event draws the next event.
func (g *churnGen) event() allot.Event {
	r := g.rng
	b := &g.m.b
	switch x := r.IntN(116); {
	case x >= 100:
		switch x {
		case 100, 101, 102:
			return g.addFlavor()
		case 103, 104, 105, 106, 107:
			return g.removeFlavor()
		case 108, 109:
			return g.relabel()
		case 110, 111, 112:
			return g.setLevels()
		}
		return g.setResources()
	case x < 9:
		n := g.node()
		if k := len(g.left); k > 0 && r.IntN(2) == 0 {
			was := g.left[k-1]
			g.left = g.left[:k-1]
			n.Flavor, n.Labels = was.Flavor, was.Labels
		} else if len(b.Nodes) > 0 && r.IntN(3) == 0 {
			// Into a rack that has nodes, where room may wait.
			was := b.Nodes[r.IntN(len(b.Nodes))]
			n.Flavor, n.Labels = was.Flavor, maps.Clone(was.Labels)
		}
		return allot.AddNode{Node: n}
	case x < 16:
		name := g.pick(g.nodeNames())
		if i := slices.IndexFunc(b.Nodes, func(n allot.Node) bool { return n.Name == name }); i >= 0 {
			g.left = append(g.left, deepCopy(g.t, allot.Builder{Nodes: []allot.Node{b.Nodes[i]}}).Nodes[0])
		}
		return allot.RemoveNode{Node: name}
	case x < 27:
		return allot.SetNode{Node: g.setNode()}
	case x < 31:
		// Mostly a queue that runs nothing, which can go.
		var names, idle []string
		for _, q := range g.queues {
			names = append(names, q.Name)
			if !slices.ContainsFunc(b.Running, func(w allot.Workload) bool { return w.Queue == q.Name }) && slices.ContainsFunc(b.Queues, func(o allot.Queue) bool { return o.Name == q.Name }) {
				idle = append(idle, q.Name)
			}
		}
		if len(idle) > 0 && r.IntN(3) > 0 {
			return allot.RemoveQueue{Queue: idle[r.IntN(len(idle))]}
		}
		return allot.RemoveQueue{Queue: g.pick(names)}
	case x < 35:
		q := deepCopy(g.t, allot.Builder{Queues: []allot.Queue{g.queues[r.IntN(len(g.queues))]}}).Queues[0]
		if r.IntN(3) == 0 && len(q.Quota) > 0 {
			q.Quota[0].Resources[0].Nominal = int64(r.IntN(40))
		}
		if r.IntN(4) == 0 {
			q.Cohort = g.pick([]string{"ai", "spare", "root"})
		}
		return allot.SetQueue{Queue: q}
	case x < 38:
		// Mostly a cohort nothing names, which can go.
		var names, free []string
		for _, c := range g.cohorts {
			names = append(names, c.Name)
			if slices.ContainsFunc(b.Cohorts, func(o allot.Cohort) bool { return o.Name == c.Name }) &&
				!slices.ContainsFunc(b.Queues, func(q allot.Queue) bool { return q.Cohort == c.Name }) &&
				!slices.ContainsFunc(b.Cohorts, func(o allot.Cohort) bool { return o.Parent == c.Name }) {
				free = append(free, c.Name)
			}
		}
		if len(free) > 0 && r.IntN(3) > 0 {
			return allot.RemoveCohort{Cohort: free[r.IntN(len(free))]}
		}
		return allot.RemoveCohort{Cohort: g.pick(names)}
	case x < 41:
		c := deepCopy(g.t, allot.Builder{Cohorts: []allot.Cohort{g.cohorts[r.IntN(len(g.cohorts))]}}).Cohorts[0]
		if c.Name != "root" && r.IntN(2) == 0 {
			c.Parent = g.pick([]string{"root", "ai", "spare", "extra", ""})
		}
		return allot.SetCohort{Cohort: c}
	case x < 48:
		w := allot.Workload(g.request())
		if r.IntN(8) == 0 {
			w.ID = g.pick(append(g.ids(b.Running), g.ids(b.Pending)...))
		}
		return allot.Submit{Workload: w}
	case x < 52:
		return allot.Withdraw{ID: g.pick(g.ids(b.Pending))}
	case x < 59:
		return allot.Finish{ID: g.pick(g.ids(b.Running))}
	case x < 63:
		return allot.Evict{ID: g.pick(g.ids(b.Running))}
	case x < 66:
		return allot.Checkpoint{ID: g.pick(g.ids(b.Running))}
	case x < 69:
		return allot.NodeDown{Node: g.pick(g.nodeNames())}
	case x < 72:
		return allot.NodeUp{Node: g.pick(g.nodeNames())}
	case x < 75:
		return allot.NodeCordon{Node: g.pick(g.nodeNames()), Cordoned: r.IntN(2) == 0}
	case x < 78:
		return allot.NodeCooldown{Node: g.pick(g.nodeNames()), Until: b.Now + int64(r.IntN(2000))}
	case x < 84:
		return allot.AdvanceTime{Seconds: int64(r.IntN(4)) * 1500}
	case x < 89:
		return allot.SetFlavor{Flavor: g.setFlavor()}
	}
	return nil // a decision, committed when it admits
}

// TestChurnPropertyEqualsRebuild runs random event sequences on a store
// and on the naive reference and compares them after every step.
func TestChurnPropertyEqualsRebuild(t *testing.T) {
	seeds, steps := 24, 70
	if testing.Short() {
		seeds = 6
	}
	probes := churnProbes()
	var applied, refusedByBuild, refusedByRule, commits int
	// perEvent counts, for each churn event, how often it was applied and
	// refused.
	perEvent := map[string][2]int{}
	// inPlace counts the node events that left or filled a vacant slot.
	inPlace := map[string]int{}
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 2026))
		// The reference starts from the description in the form the
		// snapshot's Builder gives: every running pod's GPUs listed, as
		// a store knows them.
		start := churnBuilder()
		if seed%2 == 1 {
			start.Options.NodeRoom = int(1 + seed%3) // room for nodes put in place
		}
		m := &churnModel{b: buildAt(t, start, 0).Builder()}
		g := &churnGen{t: t, rng: rng, m: m, queues: churnBuilder().Queues, cohorts: append(churnBuilder().Cohorts, allot.Cohort{Name: "extra", Parent: "spare"})}
		g.queues = append(g.queues, allot.Queue{Name: "extra", Cohort: "spare", Quota: []allot.FlavorQuota{{Flavor: "h100",
			Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}, Preemption: allot.QueuePreemption{ReclaimWithinCohort: "Any"}})
		st := allot.NewStore(buildAt(t, m.b, 0))
		for step := range steps {
			label := fmt.Sprintf("seed %d step %d", seed, step)
			ev := g.event()
			if ev == nil {
				r := g.request()
				cur := st.Load()
				d := allot.Decide(cur, r)
				label += fmt.Sprintf(" (decide %q: %v)", r.ID, d.Verdict)
				if d.Verdict == allot.VerdictAdmit || d.Verdict == allot.VerdictPreempt {
					if _, err := st.Commit(d); err != nil {
						t.Fatalf("%s: commit on the version decided on: %v", label, err)
					}
					m.commit(t, r, d)
					commits++
				}
			} else {
				label += fmt.Sprintf(" (%T %+v)", ev, ev)
				want, ruleErr := m.edit(t, ev)
				var buildErr error
				if ruleErr == nil {
					_, buildErr = want.Build()
				}
				before := st.Load()
				_, err := st.Apply(ev)
				if err == nil && allot.SameShape(before, st.Load()) {
					inPlace[fmt.Sprintf("%T", ev)]++
				}
				switch {
				case err != nil && ruleErr == nil && buildErr == nil:
					t.Fatalf("%s: the store refuses (%v) what builds", label, err)
				case err == nil && (ruleErr != nil || buildErr != nil):
					t.Fatalf("%s: the store applies what the reference refuses (%v, %v)", label, ruleErr, buildErr)
				case err != nil:
					if st.Load() != before {
						t.Fatalf("%s: refused (%v) but published", label, err)
					}
					if ruleErr != nil {
						refusedByRule++
					} else {
						refusedByBuild++
						if !errors.Is(err, errors.Unwrap(buildErr)) {
							t.Fatalf("%s: the store refuses with %v, Build with %v", label, err, buildErr)
						}
					}
				default:
					m.b = want
					applied++
				}
				name := fmt.Sprintf("%T", ev)
				c := perEvent[name]
				if err == nil {
					c[0]++
				} else {
					c[1]++
				}
				perEvent[name] = c
			}
			got := st.Load()
			ref := buildAt(t, m.b, got.Version())
			have := stateOf(t, got, probes)
			if want := stateOf(t, ref, probes); have != want {
				t.Fatalf("%s: the store and the reference differ (left: store, right: reference):\n%s", label, firstDiff(have, want))
			}
			// Its own description builds it again.
			back := got.Builder()
			again, err := back.Build()
			if err != nil {
				t.Fatalf("%s: the snapshot's Builder does not build: %v", label, err)
			}
			if rebuilt := stateOf(t, again, probes); have != rebuilt {
				t.Fatalf("%s: the snapshot and the build of its Builder differ (left: snapshot):\n%s", label, firstDiff(have, rebuilt))
			}
			if step%10 == 9 {
				sameSchedule(t, label, got, ref)
			}
		}
	}
	t.Logf("%d events applied, %d refused as Build refuses, %d by their own rule; %d commits", applied, refusedByBuild, refusedByRule, commits)
	if applied < seeds*steps/3 || refusedByBuild < seeds || refusedByRule < seeds || commits < seeds*2 {
		t.Fatalf("the sequences do not cover the events: %d applied, %d refused as Build refuses, %d by rule, %d commits", applied, refusedByBuild, refusedByRule, commits)
	}
	t.Logf("in place: %v", inPlace)
	if inPlace["allot.AddNode"] < seeds/2 || inPlace["allot.RemoveNode"] < seeds {
		t.Errorf("in place: %v: the sequences do not take nodes out and put them in in place", inPlace)
	}
	for _, ev := range []string{"AddNode", "RemoveNode", "SetNode", "SetFlavor", "RemoveQueue", "RemoveCohort", "AddFlavor", "RemoveFlavor", "SetLevels", "SetResources"} {
		c := perEvent["allot."+ev]
		t.Logf("%s: %d applied, %d refused", ev, c[0], c[1])
		if c[0] < seeds/2 || c[1] == 0 {
			t.Errorf("%s: %d applied, %d refused: the sequences do not cover it", ev, c[0], c[1])
		}
	}
}

// sameSchedule runs the scheduling loop on a store of each snapshot and
// compares its decisions and the snapshots it leaves.
func sameSchedule(t *testing.T, label string, a, b *allot.Snapshot) {
	t.Helper()
	sa, sb := allot.NewStore(a), allot.NewStore(b)
	da, db := allot.Schedule(sa), allot.Schedule(sb)
	if !jsonEqual(t, da, db) {
		x, _ := json.MarshalIndent(da, "", " ")
		y, _ := json.MarshalIndent(db, "", " ")
		t.Fatalf("%s: the scheduling loops decide differently:\n%s", label, firstDiff(string(x), string(y)))
	}
	sameState(t, label+" (after the loop)", sa.Load(), sb.Load(), churnProbes())
}
