package fuzz

import (
	"fmt"
	"math"
	"slices"

	gofuzz "github.com/google/gofuzz"

	"github.com/allot-sched/allot"
)

// genNow is the clock of generated snapshots.
const genNow = 100_000

// world is what FuzzDecide decides on: a snapshot description and requests
// to decide in order on a store, the admitted ones committed.
type world struct {
	B        allot.Builder
	Requests []allot.Request
	// Events[i] is applied to the store after Requests[i] (nil: none).
	Events []allot.Event
}

// namePools are the names a generated world draws from, so that requests
// mostly name things the snapshot has.
type namePools struct {
	levels    []string
	flavors   []string
	nodes     []string
	queues    []string
	cohorts   []string
	resources []string
	tenants   []string
	groups    []string
	ids       []string
	// count is the pod count of the pod set whose topology is generated.
	count int32
	// nodesOf lists each flavor's nodes.
	nodesOf map[string][]string
	// nodeGPUs is each node's GPU count.
	nodeGPUs map[string]int
	// running is set while a running workload is generated.
	running bool
	// hostile worlds mix in bad values; tame ones are valid but for
	// clashes (two running pods on the same GPU, quota overrun).
	hostile bool
}

// gen turns fuzzer bytes into a world through gofuzz, bounded by custom
// functions.
func gen(data []byte) world {
	p := &namePools{}
	f := gofuzz.NewFromGoFuzz(data).NilChance(0).Funcs(
		func(w *world, c gofuzz.Continue) {
			c.Fuzz(&w.B)
			// Requests are hostile or tame independently of the snapshot,
			// so that hostile requests meet snapshots that build.
			p.hostile = c.Intn(3) == 0
			w.Requests = make([]allot.Request, 1+c.Intn(4))
			for i := range w.Requests {
				c.Fuzz(&w.Requests[i])
				if c.Intn(8) != 0 && w.Requests[i].ID != "" {
					// Mostly distinct IDs, so that several admissions stack.
					w.Requests[i].ID = fmt.Sprintf("r%d", i)
				}
			}
			w.Events = make([]allot.Event, len(w.Requests))
			for i := range w.Events {
				w.Events[i] = p.event(c, i)
			}
		},
		func(b *allot.Builder, c gofuzz.Continue) { p.builder(b, c) },
		func(n *allot.Node, c gofuzz.Continue) { p.node(n, c) },
		func(q *allot.Queue, c gofuzz.Continue) { p.queue(q, c) },
		func(w *allot.Workload, c gofuzz.Continue) { p.workload(w, c) },
		func(r *allot.Request, c gofuzz.Continue) {
			var w allot.Workload
			p.running = false
			c.Fuzz(&w)
			*r = allot.Request(w)
		},
		func(ps *allot.PodSet, c gofuzz.Continue) { p.podSet(ps, c) },
		func(t *allot.TopologyRequest, c gofuzz.Continue) { p.topology(t, c) },
	)
	var w world
	f.Fuzz(&w)
	return w
}

// bad is true once in n draws in a hostile world, never in a tame one.
func (p *namePools) bad(c gofuzz.Continue, n int) bool {
	return p.hostile && c.Intn(n) == 0
}

// pick returns one of the pool's names; in a hostile world, now and then an
// unknown or empty one.
func (p *namePools) pick(c gofuzz.Continue, pool []string) string {
	if p.hostile {
		switch n := c.Intn(12); {
		case n == 0:
			return ""
		case n == 1:
			return "unknown"
		case n == 2 && len(pool) > 0:
			return pool[0] + " "
		}
	}
	if len(pool) == 0 {
		return "none"
	}
	return pool[c.Intn(len(pool))]
}

// quantity is a small quantity of a resource; in a hostile world, now and
// then a negative or huge one.
func (p *namePools) quantity(c gofuzz.Continue, small int64) int64 {
	n := 5
	if p.hostile {
		n = c.Intn(20)
	}
	switch n {
	case 0:
		return -1 - c.Int63n(5)
	case 1:
		return math.MaxInt64
	case 2:
		return 1 << 52
	case 3:
		return 1<<52 + 1
	case 4:
		return math.MinInt64
	}
	if small <= 0 {
		return 0
	}
	return c.Int63n(small + 1)
}

func (p *namePools) builder(b *allot.Builder, c gofuzz.Continue) {
	*b = allot.Builder{Now: genNow, Version: uint64(c.Intn(3))}
	p.hostile = c.Intn(3) == 0
	switch c.Intn(10) {
	case 0:
		b.Resources = []string{"gpu", "cpu", "memory", "tokens"}
	case 1:
		b.Resources = []string{"cpu"}
	case 2:
		b.Resources = []string{"gpu"}
	case 3:
		if !p.hostile {
			break
		}
		// Too many, duplicate or empty.
		b.Resources = [][]string{
			{"gpu", "cpu", "memory", "a", "b", "c", "d", "e", "f"},
			{"gpu", "gpu"},
			{"", "gpu"},
		}[c.Intn(3)]
	}
	p.resources = b.Resources
	if len(p.resources) == 0 {
		p.resources = allot.DefaultResources
	}
	switch c.Intn(12) {
	case 0:
	case 1:
		b.Levels = []string{"rack"}
		if p.hostile {
			b.Levels = []string{"node"}
		}
	case 2:
		b.Levels = []string{"block", "rack"}
		if p.hostile {
			b.Levels = []string{"rack", "rack"}
		}
	case 3:
		// Deep trees.
		for i := range 11 {
			b.Levels = append(b.Levels, fmt.Sprintf("l%d", i))
		}
	case 4, 5, 6:
		b.Levels = []string{"rack"}
	default:
		b.Levels = []string{"block", "rack"}
	}
	p.levels = b.Levels

	p.flavors = nil
	for i := range 1 + c.Intn(3) {
		f := allot.Flavor{Name: []string{"a100", "h100", "spot"}[i], Spot: i == 2}
		if p.bad(c, 30) {
			f.Name = p.pick(c, p.flavors)
		}
		b.Flavors = append(b.Flavors, f)
		p.flavors = append(p.flavors, f.Name)
	}

	n := c.Intn(7)
	p.nodes = make([]string, n)
	for i := range p.nodes {
		p.nodes[i] = fmt.Sprintf("n%d", i)
	}
	b.Nodes = make([]allot.Node, n)
	for i := range b.Nodes {
		c.Fuzz(&b.Nodes[i])
		b.Nodes[i].Name = p.nodes[i]
		if p.bad(c, 40) {
			b.Nodes[i].Name = p.pick(c, p.nodes)
		}
	}

	p.nodesOf = map[string][]string{}
	p.nodeGPUs = map[string]int{}
	for _, n := range b.Nodes {
		p.nodesOf[n.Flavor] = append(p.nodesOf[n.Flavor], n.Name)
		p.nodeGPUs[n.Name] = int(min(max(n.Capacity["gpu"], 0), 64))
	}

	p.cohorts = []string{"c0", "c1"}[:c.Intn(3)]
	for i := range p.cohorts {
		co := allot.Cohort{Name: p.cohorts[i]}
		if i == 1 && c.Intn(2) == 0 {
			co.Parent = "c0"
		}
		if p.bad(c, 3) {
			co.Parent = p.pick(c, p.cohorts) // maybe itself: a cycle
		}
		b.Cohorts = append(b.Cohorts, co)
	}

	p.queues = []string{"qa", "qb", "qc"}[:1+c.Intn(3)]
	p.tenants = []string{"t1", "t2"}
	b.Queues = make([]allot.Queue, len(p.queues))
	for i := range b.Queues {
		c.Fuzz(&b.Queues[i])
		b.Queues[i].Name = p.queues[i]
		if p.bad(c, 40) {
			b.Queues[i].Name = p.pick(c, p.queues)
		}
	}

	p.ids = nil
	for i := range c.Intn(5) {
		var w allot.Workload
		p.running = true
		c.Fuzz(&w)
		if w.ID != "" {
			w.ID = fmt.Sprintf("w%d", i)
		}
		p.ids = append(p.ids, w.ID)
		b.Running = append(b.Running, w)
	}
	for i := range c.Intn(3) {
		var w allot.Workload
		p.running = false
		c.Fuzz(&w)
		if w.ID != "" {
			w.ID = fmt.Sprintf("p%d", i)
		}
		b.Pending = append(b.Pending, w)
	}
	switch c.Intn(8) {
	case 0:
		f := false
		b.Options.TopologyAware = &f
	case 1:
		t := true
		b.Options.TopologyAware = &t
	}
}

func (p *namePools) node(n *allot.Node, c gofuzz.Continue) {
	*n = allot.Node{Flavor: p.flavors[c.Intn(len(p.flavors))]}
	if p.bad(c, 30) {
		n.Flavor = p.pick(c, p.flavors)
	}
	n.Labels = map[string]string{}
	for i, l := range p.levels {
		v := fmt.Sprintf("%c%d", 'a'+i, c.Intn(2))
		if p.bad(c, 40) {
			v = p.pick(c, nil)
		}
		if !p.bad(c, 60) {
			n.Labels[l] = v
		}
	}
	n.Capacity = allot.Resources{}
	gpus := int64(0)
	for _, r := range p.resources {
		switch r {
		case "gpu":
			gpus = []int64{8, 8, 4, 2, 1, 0, 3}[c.Intn(7)]
			if p.bad(c, 40) {
				gpus = []int64{64, 65, -1, math.MaxInt64}[c.Intn(4)]
			}
			n.Capacity[r] = gpus
		case "cpu":
			n.Capacity[r] = (4 + p.quantity(c, 60)) * 1000
		case "memory":
			n.Capacity[r] = (1 + p.quantity(c, 8)) << 30
		default:
			if c.Intn(2) == 0 {
				n.Capacity[r] = p.quantity(c, 1<<20)
			}
		}
	}
	if p.bad(c, 40) {
		n.Capacity["gpuu"] = 1
	}
	if gpus >= 2 && gpus <= 8 && c.Intn(3) == 0 {
		half := int(gpus) / 2
		n.GPUGroups = []int{half, int(gpus) - half}
		if p.bad(c, 10) {
			n.GPUGroups = [][]int{{int(gpus)}, {0, int(gpus)}, {-1, int(gpus) + 1}, {1}}[c.Intn(4)]
		}
	}
	if c.Intn(4) == 0 {
		n.MaxPods = int32(c.Intn(5))
		if p.bad(c, 4) {
			n.MaxPods = -1
		}
	}
	switch c.Intn(12) {
	case 0:
		n.Unschedulable = true
	case 1:
		n.Down = true
	case 2:
		n.CooldownUntil = genNow + 100
	case 3:
		n.CooldownUntil = genNow - 5
	}
}

func (p *namePools) queue(q *allot.Queue, c gofuzz.Continue) {
	*q = allot.Queue{}
	if c.Intn(2) == 0 && (len(p.cohorts) > 0 || p.hostile) {
		q.Cohort = p.pick(c, p.cohorts)
	}
	for _, f := range p.flavors {
		if c.Intn(4) == 0 {
			continue
		}
		fq := allot.FlavorQuota{Flavor: f}
		if p.bad(c, 40) {
			fq.Flavor = p.pick(c, p.flavors)
		}
		for _, r := range p.resources {
			if c.Intn(12) == 0 {
				continue
			}
			small := int64(32)
			switch r {
			case "cpu":
				small = 256_000
			case "memory":
				small = 1 << 40
			case "tokens":
				small = 1 << 20
			}
			rq := allot.ResourceQuota{Name: r, Nominal: p.quantity(c, small)}
			if c.Intn(3) != 0 && rq.Nominal >= 0 && rq.Nominal < small/2 {
				rq.Nominal += small / 2 // mostly room to admit
			}
			if p.bad(c, 50) {
				v := int64(1)
				rq.BorrowingLimit = &v // unsupported: Build refuses it
			}
			fq.Resources = append(fq.Resources, rq)
		}
		if p.bad(c, 40) {
			fq.Resources = append(fq.Resources, allot.ResourceQuota{Name: p.pick(c, p.resources), Nominal: 1})
		}
		q.Quota = append(q.Quota, fq)
	}
	if c.Intn(4) == 0 {
		for range 1 + c.Intn(2) {
			q.FlavorOrder = append(q.FlavorOrder, p.pick(c, p.flavors))
		}
	}
	if c.Intn(10) == 0 {
		q.Tenants = []string{p.pick(c, p.tenants)}
	}
	q.Hold = c.Intn(16) == 0
	if p.bad(c, 60) {
		q.Preemption.WithinQueue = "LowerPriority" // unsupported
	}
}

// workload fills a running workload (p.running) or a pending one or a
// request.
func (p *namePools) workload(w *allot.Workload, c gofuzz.Continue) {
	*w = allot.Workload{ID: "x", Queue: p.pick(c, p.queues), Priority: int32(c.Intn(5)) * 100}
	if p.bad(c, 30) {
		w.ID = ""
	}
	if p.bad(c, 30) && len(p.ids) > 0 {
		w.ID = p.ids[c.Intn(len(p.ids))] // a running workload's ID
	}
	switch c.Intn(4) {
	case 0, 1:
		w.Tenant = p.pick(c, p.tenants)
	case 2:
		w.User = "alice"
	}
	w.SubmittedAt = c.Int63n(genNow + 1)
	if p.bad(c, 40) {
		w.SubmittedAt = -1 - c.Int63n(3)
	}
	if p.running {
		w.AdmittedAt = c.Int63n(genNow + 1)
		if p.bad(c, 40) {
			w.AdmittedAt = genNow + 1
		}
	}
	if c.Intn(4) == 0 {
		w.ExpectedRuntime = c.Int63n(3600)
		if p.bad(c, 4) {
			w.ExpectedRuntime = -1
		}
	}
	if c.Intn(4) == 0 {
		w.Preemption.Class = allot.PreemptionClass(c.Intn(4))
		w.Preemption.LastCheckpointAt = c.Int63n(genNow)
		if p.bad(c, 4) {
			w.Preemption.Class, w.Preemption.LastCheckpointAt = allot.PreemptionClass(4+c.Intn(250)), -1
		}
	}
	n := 1 + c.Intn(3)
	if p.bad(c, 40) {
		n = []int{0, 9}[c.Intn(2)]
	}
	w.PodSets = make([]allot.PodSet, n)
	for i := range w.PodSets {
		c.Fuzz(&w.PodSets[i])
		w.PodSets[i].Name = fmt.Sprintf("ps%d", i)
		if p.bad(c, 30) {
			w.PodSets[i].Name = []string{"", "ps0"}[c.Intn(2)]
		}
	}
}

func (p *namePools) podSet(ps *allot.PodSet, c gofuzz.Continue) {
	*ps = allot.PodSet{Count: int32(1 + c.Intn(6))}
	switch {
	case p.bad(c, 15):
		ps.Count = []int32{0, -1, math.MinInt32, math.MaxInt32, 1<<20 + 1}[c.Intn(5)]
	case p.running:
		ps.Count = int32(1 + c.Intn(2))
	case c.Intn(30) == 0:
		ps.Count = int32(16 + c.Intn(200))
	}
	ps.PerPod = allot.Resources{}
	for _, r := range p.resources {
		if c.Intn(3) == 0 {
			continue
		}
		switch r {
		case "gpu":
			ps.PerPod[r] = p.quantity(c, 4)
			if p.running && ps.PerPod[r] > 2 {
				ps.PerPod[r] = 2
			}
		case "cpu":
			ps.PerPod[r] = p.quantity(c, 8) * 500
		case "memory":
			ps.PerPod[r] = p.quantity(c, 4) << 30
		default:
			ps.PerPod[r] = p.quantity(c, 1000)
		}
	}
	if p.bad(c, 40) {
		ps.PerPod[p.pick(c, nil)] = 1
	}
	if c.Intn(4) == 0 {
		for range 1 + c.Intn(2) {
			ps.Flavors = append(ps.Flavors, p.pick(c, p.flavors))
		}
	}
	if c.Intn(10) == 0 && (slices.Contains(p.resources, "tokens") || p.bad(c, 3)) {
		ps.Tokens = &allot.Tokens{Prompt: p.quantity(c, 512), MaxTokens: p.quantity(c, 1024)}
	}
	p.count = max(ps.Count, 1)
	c.Fuzz(&ps.Topology)
	if p.running {
		ps.Flavor = p.flavors[c.Intn(len(p.flavors))]
		if p.bad(c, 30) {
			ps.Flavor = p.pick(c, p.flavors)
		}
		if c.Intn(4) != 0 && len(p.nodes) > 0 {
			count := int(ps.Count)
			if count < 0 || count > 64 {
				count = 1
			}
			if p.bad(c, 30) {
				count++
			}
			pool := p.nodesOf[ps.Flavor]
			if p.bad(c, 10) {
				pool = p.nodes
			}
			if len(pool) == 0 {
				count = 0 // a quota-only flavor
			}
			for range count {
				ps.Nodes = append(ps.Nodes, p.pick(c, pool))
			}
			if c.Intn(3) == 0 {
				g := int(min(max(ps.PerPod["gpu"], 0), 8))
				for k := range count {
					// g distinct indices of the node, from a random start.
					gpus := p.nodeGPUs[ps.Nodes[k]]
					var idx []int
					if gpus > 0 {
						start := c.Intn(gpus)
						for j := range min(g, gpus) {
							idx = append(idx, (start+j)%gpus)
						}
					}
					if p.bad(c, 30) {
						idx = append(idx, []int{-1, 64, 7}[c.Intn(3)])
					}
					ps.GPUIndices = append(ps.GPUIndices, idx)
				}
			}
		}
	} else if p.bad(c, 60) {
		ps.Flavor = p.pick(c, p.flavors) // a request must carry no placement
	}
}

func (p *namePools) topology(t *allot.TopologyRequest, c gofuzz.Continue) {
	*t = allot.TopologyRequest{}
	levels := append(append([]string(nil), p.levels...), "node")
	switch c.Intn(6) {
	case 0, 1:
		t.Required = p.pick(c, levels)
	case 2:
		t.Preferred = p.pick(c, levels)
	case 3:
		if p.bad(c, 8) {
			t.Required, t.Preferred = p.pick(c, levels), p.pick(c, levels)
		}
	}
	t.Policy = allot.PlacementPolicy(c.Intn(4))
	if p.bad(c, 40) {
		t.Policy = allot.PlacementPolicy(4 + c.Intn(250))
	}
	if c.Intn(5) == 0 {
		if p.hostile {
			for range 1 + c.Intn(2) {
				t.Slices = append(t.Slices, allot.Slice{Level: p.pick(c, levels), Size: int32(1 + c.Intn(3))})
			}
			if p.bad(c, 5) {
				t.Slices[0].Size = []int32{0, -1, math.MaxInt32}[c.Intn(3)]
			}
		} else {
			// Valid layers: levels strictly narrower, at or below the main
			// level, sizes dividing each other and the count.
			from := 0
			if main := t.Required + t.Preferred; main != "" {
				from = slices.Index(levels, main)
			}
			size := p.count
			for l := from; l < len(levels) && len(t.Slices) < 2; l++ {
				if c.Intn(2) == 0 {
					continue
				}
				var divs []int32
				for d := int32(1); d <= size; d++ {
					if size%d == 0 {
						divs = append(divs, d)
					}
				}
				size = divs[c.Intn(len(divs))]
				t.Slices = append(t.Slices, allot.Slice{Level: levels[l], Size: size})
			}
		}
	}
	if c.Intn(5) == 0 {
		t.Group = []string{"g", "h", ""}[c.Intn(3)]
	}
}

// event is a store event after request i, or nil, naming mostly things
// that exist.
func (p *namePools) event(c gofuzz.Continue, i int) allot.Event {
	ids := append(append([]string(nil), p.ids...), fmt.Sprintf("r%d", c.Intn(i+1)))
	node := p.pick(c, p.nodes)
	switch c.Intn(14) {
	case 8:
		var w allot.Workload
		p.workload(&w, c)
		if w.ID == "x" {
			w.ID = fmt.Sprintf("s%d", c.Intn(8)) // a few IDs, so some repeat
		}
		return allot.Submit{Workload: w}
	case 9:
		return allot.Withdraw{ID: p.pick(c, ids)}
	case 0:
		return allot.Finish{ID: p.pick(c, ids)}
	case 1:
		return allot.Evict{ID: p.pick(c, ids)}
	case 2:
		return allot.Checkpoint{ID: p.pick(c, ids)}
	case 3:
		return allot.NodeDown{Node: node}
	case 4:
		return allot.NodeUp{Node: node}
	case 5:
		return allot.NodeCordon{Node: node, Cordoned: c.Intn(2) == 0}
	case 6:
		return allot.NodeCooldown{Node: node, Until: genNow + c.Int63n(200) - 50}
	case 7:
		secs := c.Int63n(300)
		if p.bad(c, 4) {
			secs = []int64{-1, math.MaxInt64}[c.Intn(2)]
		}
		return allot.AdvanceTime{Seconds: secs}
	}
	return nil
}
