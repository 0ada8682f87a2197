package sim

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/trace"
)

// cluster describes the nodes and queues of a run: the configuration's
// (Options.Config) under the policy's overlay, or one queue per team of
// the trace, the cluster's GPUs (and CPU and memory, when the run books
// them) split evenly among them as nominal quota.
func (r *run) cluster(tr *trace.Trace) (*allot.Builder, error) {
	b := &allot.Builder{Resources: []string{"gpu"}, Levels: []string{"block", "rack"}, Flavors: []allot.Flavor{{Name: "gpu"}}}
	r.gpuName = allot.DefaultGPUResource
	cfg := r.o.Config
	if cfg != nil {
		c := &cfg.Cluster
		b.Resources, b.GPUResource, b.IgnoredResources, b.Flavors = c.Resources, c.GPUResource, c.IgnoredResources, c.Flavors
		if c.GPUResource != "" {
			r.gpuName = c.GPUResource
		}
		if len(b.Resources) == 0 {
			b.Resources = slices.Clone(allot.DefaultResources)
			b.Resources[0] = r.gpuName
		}
	}
	var err error
	if cfg != nil && len(cfg.Cluster.Nodes) > 0 {
		err = r.configNodes(b, &cfg.Cluster)
	} else {
		err = r.generatedNodes(b)
	}
	if err != nil {
		return nil, err
	}
	if r.p.Topology != "" && slices.Contains(b.Levels, r.p.Topology) {
		r.level = r.p.Topology
	}
	var teams []string
	for _, j := range tr.Jobs {
		teams = append(teams, j.Queue)
	}
	slices.Sort(teams)
	teams = slices.Compact(teams)
	if cfg != nil {
		r.queueOf = cfg.Assign(teams)
		r.configQueues(b, &cfg.Cluster)
		return b, nil
	}
	r.splitQueues(b, teams)
	return b, nil
}

// generatedNodes describes the trace's own node list (Options.Nodes), or
// else the uniform Shape, as nodes of the first flavor with block and
// rack labels.
func (r *run) generatedNodes(b *allot.Builder) error {
	b.Levels = []string{"block", "rack"}
	caps := make([]room, 0)
	if len(r.o.Nodes) > 0 {
		count := 0
		for _, n := range r.o.Nodes {
			if n.GPUs > 0 {
				count++
				r.cpu = r.cpu || n.CPUMilli > 0
				r.mem = r.mem || n.MemoryMiB > 0
			}
		}
		if count > MaxNodes {
			return fmt.Errorf("the node list has %d nodes with GPUs, more than the limit of %d", count, MaxNodes)
		}
		if r.o.Config != nil {
			// A configuration books what its resources name.
			r.cpu = r.cpu && slices.Contains(b.Resources, "cpu")
			r.mem = r.mem && slices.Contains(b.Resources, "memory")
		}
		for _, n := range r.o.Nodes {
			if n.GPUs <= 0 {
				continue
			}
			c, err := r.nodeRoom(n)
			if err != nil {
				return err
			}
			caps = append(caps, c)
		}
	} else {
		if err := r.o.Shape.check(); err != nil {
			return err
		}
		for range r.o.Shape.Nodes {
			caps = append(caps, room{gpus: int32(r.o.Shape.GPUsPerNode)})
		}
	}
	if len(caps) == 0 {
		return fmt.Errorf("the cluster has no GPUs")
	}
	if r.o.Config == nil {
		if r.cpu {
			b.Resources = append(b.Resources, "cpu")
		}
		if r.mem {
			b.Resources = append(b.Resources, "memory")
		}
		if r.o.ShareGPUs && (b.Options.TopologyAware == nil || *b.Options.TopologyAware) {
			b.Resources = append(b.Resources, ShareResource)
			b.GPUShareResource = ShareResource
			r.share = true
		}
	}
	perRack, racks := max(r.o.Shape.NodesPerRack, 1), max(r.o.Shape.RacksPerBlock, 1)
	if len(r.o.Nodes) > 0 {
		perRack, racks = 16, 8
	}
	// The nodes made carry what the flavor selects its nodes by: its
	// labels, and the taints its nodes carry.
	flavor := b.Flavors[0]
	for i, c := range caps {
		rack := i / perRack
		labels := map[string]string{"block": "b" + strconv.Itoa(rack/racks), "rack": "r" + strconv.Itoa(rack)}
		maps.Copy(labels, flavor.NodeLabels)
		b.Nodes = append(b.Nodes, allot.Node{
			Name: "n" + strconv.Itoa(i), Flavor: flavor.Name, Labels: labels,
			Taints: slices.Clone(flavor.NodeTaints), Capacity: r.capacity(c),
		})
		if r.share {
			b.Nodes[i].ShareableGPUs = allot.GPUSet(1<<c.gpus - 1)
		}
	}
	return r.takeNodes(b, caps, nil)
}

// configNodes takes the configuration's nodes and topology levels.
func (r *run) configNodes(b *allot.Builder, c *allot.Builder) error {
	if len(c.Nodes) > MaxNodes {
		return fmt.Errorf("the configuration has %d nodes, more than the limit of %d", len(c.Nodes), MaxNodes)
	}
	b.Levels, b.Nodes = c.Levels, c.Nodes
	bookCPU, bookMem := slices.Contains(b.Resources, "cpu"), slices.Contains(b.Resources, "memory")
	caps := make([]room, len(c.Nodes))
	down := make([]bool, len(c.Nodes))
	for i, nd := range c.Nodes {
		gpus := nd.Capacity[r.gpuName]
		if gpus < 0 || gpus > MaxGPUsPerNode {
			return fmt.Errorf("node %q: %d GPUs: want 0 to %d", nd.Name, gpus, MaxGPUsPerNode)
		}
		caps[i] = room{gpus: int32(gpus)}
		if bookCPU && nd.Capacity["cpu"] > 0 {
			r.cpu, caps[i].cpu = true, nd.Capacity["cpu"]
		}
		if bookMem && nd.Capacity["memory"] > 0 {
			r.mem, caps[i].mem = true, nd.Capacity["memory"]
		}
		down[i] = nd.Down || nd.Unschedulable
	}
	return r.takeNodes(b, caps, down)
}

// takeNodes keeps the nodes' names, flavors and room in the run's own
// tables, which its binding and its fragmentation measure read.
func (r *run) takeNodes(b *allot.Builder, caps []room, down []bool) error {
	r.nodes, r.free = caps, slices.Clone(caps)
	r.down = make([]bool, len(caps))
	r.unusable = down
	for _, f := range b.Flavors {
		r.flavors = append(r.flavors, f.Name)
	}
	r.names = make([]string, len(caps))
	r.nodeFlavor = make([]int32, len(caps))
	var total room
	for i, c := range caps {
		r.names[i] = b.Nodes[i].Name
		r.nodeFlavor[i] = int32(max(slices.Index(r.flavors, b.Nodes[i].Flavor), 0))
		if down != nil && down[i] {
			r.down[i] = true
			continue
		}
		r.gpus += int64(c.gpus)
		r.widest = max(r.widest, c.gpus)
		if c.cpu > maxAmount-total.cpu || c.mem > maxAmount-total.mem {
			return fmt.Errorf("the cluster's CPU or memory is beyond %d, the largest quota allot takes", maxAmount)
		}
		total = total.plus(room{cpu: c.cpu, mem: c.mem})
	}
	if r.gpus == 0 {
		return fmt.Errorf("the cluster has no GPUs")
	}
	r.total = total
	return nil
}

// capacity is a node's room in allot's terms.
func (r *run) capacity(c room) allot.Resources {
	out := allot.Resources{r.gpuName: int64(c.gpus)}
	if r.cpu {
		out["cpu"] = c.cpu
	}
	if r.mem {
		out["memory"] = c.mem
	}
	return out
}

// splitQueues makes one queue per team of the trace, the GPUs (and CPU
// and memory) split evenly among them as nominal quota, under the
// policy's switches.
func (r *run) splitQueues(b *allot.Builder, queues []string) {
	if len(queues) == 0 {
		queues = []string{"default"}
	}
	if r.p.Borrowing {
		b.Cohorts = []allot.Cohort{{Name: "all"}}
	}
	// split is queue i's share of a total: equal parts, the remainder one
	// each to the first queues.
	split := func(total int64, i int) int64 {
		k := int64(len(queues))
		if int64(i) < total%k {
			return total/k + 1
		}
		return total / k
	}
	for i, q := range queues {
		quota := []allot.ResourceQuota{{Name: "gpu", Nominal: split(r.gpus, i)}}
		if r.share {
			quota = append(quota, allot.ResourceQuota{Name: ShareResource, Nominal: split(1000*r.gpus, i)})
		}
		if r.cpu {
			quota = append(quota, allot.ResourceQuota{Name: "cpu", Nominal: split(r.total.cpu, i)})
		}
		if r.mem {
			quota = append(quota, allot.ResourceQuota{Name: "memory", Nominal: split(r.total.mem, i)})
		}
		aq := allot.Queue{Name: q, Quota: []allot.FlavorQuota{{Flavor: "gpu", Resources: quota}}}
		if r.p.Borrowing {
			aq.Cohort = "all"
		}
		r.overlay(&aq)
		b.Queues = append(b.Queues, aq)
	}
	backfill, topo := r.p.Backfill, r.p.TopologyAware
	b.Options = allot.Options{Backfill: &backfill, TopologyAware: &topo, QueueDepth: r.o.QueueDepth}
	r.overlayOptions(&b.Options)
	b.FairSharing.Enabled = r.p.FairSharing
	r.overlayHistory(&b.History)
}

// overlayHistory sets the policy's half-life of the history, if it has
// one.
func (r *run) overlayHistory(h *allot.History) {
	if r.p.HalfLife > 0 {
		h.HalfLife = r.p.HalfLife
	}
}

// overlayOptions sets the policy's backfill depth and what a reservation
// holds back, the loop order keys and semantics.
func (r *run) overlayOptions(o *allot.Options) {
	if r.p.Semantics != "" {
		o.Semantics = r.p.Semantics
	}
	if r.p.BackfillDepth > 0 {
		o.BackfillDepth = r.p.BackfillDepth
	}
	if r.p.BackfillHolds != "" {
		o.BackfillHolds = r.p.BackfillHolds
	}
	o.OrderByDebt = o.OrderByDebt || r.p.OrderByDebt
	o.OrderByUsage = o.OrderByUsage || r.p.OrderByUsage
}

// overlay sets a queue's strategy and preemption by the policy's
// switches: StrictFIFO when Strict; no preemption without Preemption, and
// with it the queue's own settings or, when it has none, preemption of
// lower priorities within the queue and reclaiming lent quota from any
// borrower.
func (r *run) overlay(q *allot.Queue) {
	if r.p.Strict {
		q.QueueingStrategy = allot.StrictFIFO
	}
	switch {
	case !r.p.Preemption:
		q.Preemption = allot.QueuePreemption{}
	case q.Preemption == allot.QueuePreemption{}:
		q.Preemption.WithinQueue = "LowerPriority"
		if q.Cohort != "" {
			q.Preemption.ReclaimWithinCohort = cmp.Or(r.p.Reclaim, "Any")
		}
	}
}

// rigid is a copy of a queue's quotas without borrowing and lending
// limits, which only a queue in a cohort may have.
func rigid(quotas []allot.FlavorQuota) []allot.FlavorQuota {
	out := make([]allot.FlavorQuota, len(quotas))
	for i, fq := range quotas {
		out[i] = allot.FlavorQuota{Flavor: fq.Flavor, Resources: slices.Clone(fq.Resources)}
		for k := range out[i].Resources {
			out[i].Resources[k].BorrowingLimit, out[i].Resources[k].LendingLimit = nil, nil
		}
	}
	return out
}

// configQueues takes the configuration's cohorts and queues, options and
// fair sharing, under the policy's overlay (none for an AsConfigured
// policy): without Borrowing every queue leaves its cohort and its quota
// is rigid at nominal; Strict and Preemption as overlay sets them; the
// policy's Backfill, TopologyAware and FairSharing replace the options'.
// A queue depth the configuration leaves at zero is Options.QueueDepth.
func (r *run) configQueues(b *allot.Builder, c *allot.Builder) {
	b.Cohorts, b.Options, b.FairSharing = c.Cohorts, c.Options, c.FairSharing
	b.History.HalfLife = c.History.HalfLife
	// Who may submit where: the queues' selectors judge the namespaces'
	// labels, and requests go through the local queues.
	b.Namespaces, b.LocalQueues, b.PriorityClasses = c.Namespaces, c.LocalQueues, c.PriorityClasses
	if b.Options.QueueDepth == 0 {
		b.Options.QueueDepth = r.o.QueueDepth
	}
	b.Queues = make([]allot.Queue, len(c.Queues))
	for i, q := range c.Queues {
		if !r.p.AsConfigured {
			if !r.p.Borrowing {
				q.Cohort, q.Quota = "", rigid(q.Quota)
			}
			r.overlay(&q)
		}
		b.Queues[i] = q
	}
	if r.p.AsConfigured {
		return
	}
	backfill, topo := r.p.Backfill, r.p.TopologyAware
	b.Options.Backfill, b.Options.TopologyAware = &backfill, &topo
	r.overlayOptions(&b.Options)
	b.FairSharing.Enabled = r.p.FairSharing
	r.overlayHistory(&b.History)
}
