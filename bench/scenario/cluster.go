package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/allot-sched/allot"
)

// maxNodeSetCount bounds a generated node set, so that a typo in count
// does not exhaust memory; maxNodes bounds a scenario's nodes, explicit and
// generated together, so that many node sets do not either. A million
// nodes take about 1.7 GB to load; the largest clusters the benchmarks
// build have 12,500.
const (
	maxNodeSetCount = 1 << 20
	maxNodes        = 1 << 20
)

// Kueue's values for the queue policy fields.
var (
	whenCanBorrowValues  = []string{"Borrow", "TryNextFlavor"}
	whenCanPreemptValues = []string{"Preempt", "TryNextFlavor"}
	withinQueueValues    = []string{"Never", "LowerPriority", "LowerOrNewerEqualPriority"}
	reclaimValues        = []string{"Never", "LowerPriority", "Any"}
	borrowWithinValues   = []string{"Never", "LowerPriority"}
	fairStrategyValues   = []string{"LessThanOrEqualToFinalShare", "LessThanInitialShare"}
)

func (p *parser) topology(n node) []string {
	o := p.object(n, "levels")
	p.levels = p.uniqueNames(o.get("levels"), "level")
	if p.err == nil && slices.Contains(p.levels, "node") {
		p.failf(o.field("levels"), `"node" is implicitly the last level; do not list it`)
	}
	return p.levels
}

func (p *parser) flavorList(n node) []allot.Flavor {
	var out []allot.Flavor
	for _, e := range p.array(n) {
		o := p.object(e, "name", "spot", "nodeLabels", "nodeTaints", "tolerations")
		f := allot.Flavor{Name: p.name(p.need(o, "name")), Spot: p.boolean(o.get("spot")),
			NodeLabels: p.labels(o.get("nodeLabels")), NodeTaints: p.taints(o.get("nodeTaints")), Tolerations: p.tolerations(o.get("tolerations"))}
		if p.err == nil && slices.Contains(p.flavors, f.Name) {
			p.failf(o.field("name"), "duplicate flavor %q", f.Name)
		}
		p.flavors = append(p.flavors, f.Name)
		out = append(out, f)
	}
	return out
}

// nodeFields are the fields a node and a node set share.
var nodeFields = []string{"flavor", "labels", "taints", "capacity", "gpuGroups", "shareableGpus", "mig", "maxPods", "cooldownUntil", "unschedulable", "down"}

// nodeList reads the explicit nodes, then generates the node sets. The
// sets' counts are added up first: when the nodes would be more than
// maxNodes, the first set that passes the limit is the error and no set
// is generated.
func (p *parser) nodeList(nodes, sets node) []allot.Node {
	explicit := p.array(nodes)
	if len(explicit) > maxNodes {
		p.failf(nodes, "%d nodes, more than the limit of %d", len(explicit), maxNodes)
		explicit = nil
	}
	var out []allot.Node
	var origins []node // where each node comes from, for errors
	for _, e := range explicit {
		o := p.object(e, append([]string{"name"}, nodeFields...)...)
		nd := p.nodeSpec(o)
		nd.Name = p.name(p.need(o, "name"))
		nd.Labels = p.labels(o.get("labels"))
		out = append(out, nd)
		origins = append(origins, o.field("name"))
	}
	type nodeSet struct {
		origin    node
		spec      allot.Node
		count     int64
		prefix    string
		templates map[string]labelTemplate
	}
	var gen []nodeSet
	total := int64(len(explicit))
	for _, e := range p.array(sets) {
		o := p.object(e, append([]string{"count", "prefix"}, nodeFields...)...)
		set := nodeSet{origin: e, spec: p.nodeSpec(o), count: p.integer(p.need(o, "count"), 0, maxNodeSetCount)}
		if total += set.count; total > maxNodes {
			p.failf(o.field("count"), "%d nodes: total nodes would be %d, more than the limit of %d", set.count, total, maxNodes)
			gen = nil
			break
		}
		set.prefix = p.str(o.get("prefix"))
		set.templates = p.labelTemplates(o.get("labels"))
		gen = append(gen, set)
	}
	p.src.explicit = len(out)
	for _, set := range gen {
		p.src.sets = append(p.src.sets, nodeSetSource{first: len(out), path: set.origin.path})
		e, spec, prefix, templates := set.origin, set.spec, set.prefix, set.templates
		for i := range int(set.count) {
			nd := spec
			nd.Name = prefix + strconv.Itoa(i)
			nd.Capacity = maps.Clone(spec.Capacity)
			nd.GPUGroups = slices.Clone(spec.GPUGroups)
			nd.Labels = make(map[string]string, len(templates))
			for level, t := range templates {
				nd.Labels[level] = t.expand(i)
			}
			out = append(out, nd)
			origins = append(origins, e)
		}
	}
	p.domains = map[string]map[string]bool{"node": {}}
	for i, nd := range out {
		if p.err == nil && p.domains["node"][nd.Name] {
			p.failf(origins[i], "duplicate node %q", nd.Name)
		}
		p.domains["node"][nd.Name] = true
		p.nodes = append(p.nodes, nd.Name)
		for level, value := range nd.Labels {
			if p.domains[level] == nil {
				p.domains[level] = map[string]bool{}
			}
			p.domains[level][value] = true
		}
	}
	return out
}

// nodeSpec reads the fields a node and a node set share, labels aside.
func (p *parser) nodeSpec(o object) allot.Node {
	nd := allot.Node{
		Taints:        p.taints(o.get("taints")),
		Capacity:      p.resourceMap(o.get("capacity")),
		MaxPods:       int32(p.integer(o.get("maxPods"), 0, maxInt32)),
		CooldownUntil: p.seconds(o.get("cooldownUntil")),
		Unschedulable: p.boolean(o.get("unschedulable")),
		Down:          p.boolean(o.get("down")),
	}
	if o.has("flavor") {
		nd.Flavor = p.name(o.get("flavor")) // else the flavor its labels select
	}
	for _, g := range p.array(o.get("gpuGroups")) {
		nd.GPUGroups = append(nd.GPUGroups, int(p.integer(g, 1, maxInt32)))
	}
	for _, g := range p.array(o.get("shareableGpus")) {
		i := int(p.integer(g, 0, 63))
		if p.err == nil && nd.ShareableGPUs.Has(i) {
			p.failf(g, "GPU %d twice", i)
		}
		nd.ShareableGPUs |= allot.GPUSetOf(i)
	}
	for _, m := range p.array(o.get("mig")) {
		mo := p.object(m, "gpuIndex", "profiles")
		nd.MIG = append(nd.MIG, allot.MIGPartition{GPU: int(p.integer(p.need(mo, "gpuIndex"), 0, 63)), Profiles: p.resourceMap(p.need(mo, "profiles"))})
	}
	return nd
}

func (p *parser) labels(n node) map[string]string {
	entries := p.entries(n)
	if entries == nil {
		return nil
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		out[e.key] = p.str(e.node)
	}
	return out
}

// labelTemplate is a node set label value with {i} and {i/k} holes.
type labelTemplate struct {
	literals []string // one more than divisors
	divisors []int    // 1 for {i}
}

func (t labelTemplate) expand(i int) string {
	var b strings.Builder
	for j, lit := range t.literals {
		b.WriteString(lit)
		if j < len(t.divisors) {
			b.WriteString(strconv.Itoa(i / t.divisors[j]))
		}
	}
	return b.String()
}

func (p *parser) labelTemplates(n node) map[string]labelTemplate {
	out := map[string]labelTemplate{}
	for _, e := range p.entries(n) {
		t, err := parseLabelTemplate(p.str(e.node))
		if err != nil {
			p.failf(e.node, "%v", err)
		}
		out[e.key] = t
	}
	return out
}

func parseLabelTemplate(s string) (labelTemplate, error) {
	var t labelTemplate
	rest := s
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return t, fmt.Errorf("label template %q: unmatched }", s)
			}
			t.literals = append(t.literals, rest)
			return t, nil
		}
		closing := strings.IndexByte(rest[open:], '}')
		if closing < 0 {
			return t, fmt.Errorf("label template %q: unmatched {", s)
		}
		hole := rest[open+1 : open+closing]
		div := 1
		if hole != "i" {
			k, ok := strings.CutPrefix(hole, "i/")
			n, err := strconv.Atoi(k)
			if !ok || err != nil || n < 1 || !allDigits(k) {
				return t, fmt.Errorf("label template %q: {%s} is neither {i} nor {i/k} with k a positive whole number", s, hole)
			}
			div = n
		}
		if strings.IndexByte(rest[:open], '}') >= 0 {
			return t, fmt.Errorf("label template %q: unmatched }", s)
		}
		t.literals = append(t.literals, rest[:open])
		t.divisors = append(t.divisors, div)
		rest = rest[open+closing+1:]
	}
}

func (p *parser) cohorts(n node) []allot.Cohort {
	var out []allot.Cohort
	for _, e := range p.array(n) {
		o := p.object(e, "name", "parent", "quota", "fairSharing")
		out = append(out, allot.Cohort{
			Name:        p.name(p.need(o, "name")),
			Parent:      p.str(o.get("parent")),
			Quota:       p.quota(o.get("quota"), fmt.Sprintf("cohorts[%d]", len(out))),
			FairSharing: p.weight(o.get("fairSharing")),
		})
	}
	return out
}

// weight reads a queue's or cohort's fairSharing block; absent is nil.
func (p *parser) weight(n node) *allot.QueueFairSharing {
	if n.absent {
		return nil
	}
	fs := p.object(n, "weight")
	out := &allot.QueueFairSharing{}
	if w := fs.get("weight"); !w.absent {
		v := p.nonNegFloat(w)
		out.Weight = &v
	}
	return out
}

func (p *parser) queueList(n node) []allot.Queue {
	var out []allot.Queue
	for _, e := range p.array(n) {
		o := p.object(e, "name", "cohort", "quota", "flavorOrder", "flavorFungibility", "preemption",
			"fairSharing", "tenants", "hold", "userCap", "nonPreemptibleCap", "windows", "slaTier", "queueingStrategy",
			"namespaceSelector", "priorityClasses")
		q := allot.Queue{
			Name:              p.name(p.need(o, "name")),
			Cohort:            p.str(o.get("cohort")),
			Quota:             p.quota(o.get("quota"), fmt.Sprintf("queues[%d]", len(out))),
			FlavorOrder:       p.strs(o.get("flavorOrder")),
			Tenants:           p.strs(o.get("tenants")),
			Hold:              p.boolean(o.get("hold")),
			QueueingStrategy:  p.str(o.get("queueingStrategy")),
			UserCap:           p.resourceMap(o.get("userCap")),
			NonPreemptibleCap: p.resourceMap(o.get("nonPreemptibleCap")),
			NamespaceSelector: p.selector(o.get("namespaceSelector")),
			PriorityClasses:   p.queueClasses(o.get("priorityClasses")),
		}
		if p.err == nil && slices.Contains(p.queues, q.Name) {
			p.failf(o.field("name"), "duplicate queue %q", q.Name)
		}
		p.queues = append(p.queues, q.Name)

		ff := p.object(o.get("flavorFungibility"), "whenCanBorrow", "whenCanPreempt")
		q.FlavorFungibility = allot.FlavorFungibility{
			WhenCanBorrow:  p.oneOf(ff.get("whenCanBorrow"), whenCanBorrowValues...),
			WhenCanPreempt: p.oneOf(ff.get("whenCanPreempt"), whenCanPreemptValues...),
		}

		pre := p.object(o.get("preemption"), "withinQueue", "reclaimWithinCohort", "borrowWithinCohort")
		bwc := p.object(pre.get("borrowWithinCohort"), "policy", "maxPriorityThreshold")
		q.Preemption = allot.QueuePreemption{
			WithinQueue:         p.oneOf(pre.get("withinQueue"), withinQueueValues...),
			ReclaimWithinCohort: p.oneOf(pre.get("reclaimWithinCohort"), reclaimValues...),
			BorrowWithinCohort: allot.BorrowWithinCohort{
				Policy: p.oneOf(bwc.get("policy"), borrowWithinValues...),
			},
		}
		if t := bwc.get("maxPriorityThreshold"); !t.absent {
			v := p.int32(t)
			q.Preemption.BorrowWithinCohort.MaxPriorityThreshold = &v
		}

		q.FairSharing = p.weight(o.get("fairSharing"))

		for _, w := range p.array(o.get("windows")) {
			wo := p.object(w, "from", "to", "scale")
			q.Windows = append(q.Windows, allot.Window{
				From:  p.clockTime(p.need(wo, "from")),
				To:    p.clockTime(p.need(wo, "to")),
				Scale: p.nonNegFloat(p.need(wo, "scale")),
			})
		}

		if o.has("slaTier") {
			so := p.object(o.get("slaTier"), "availability", "scale")
			q.SLATier = &allot.SLATier{
				Availability: p.nonNegFloat(p.need(so, "availability")),
				Scale:        p.nonNegFloat(p.need(so, "scale")),
			}
			if a := q.SLATier.Availability; p.err == nil && a > 1 {
				p.failf(so.field("availability"), "availability %v is more than 1", a)
			}
		}
		out = append(out, q)
	}
	return out
}

// clockTime reads a time of day, HH:MM in UTC (24:00 ends a day).
func (p *parser) clockTime(n node) string {
	s := p.str(n)
	if n.absent || p.err != nil {
		return s
	}
	h, m, ok := strings.Cut(s, ":")
	hh, errH := strconv.Atoi(h)
	mm, errM := strconv.Atoi(m)
	if !ok || len(h) != 2 || len(m) != 2 || !allDigits(h) || !allDigits(m) || errH != nil || errM != nil ||
		hh > 24 || mm > 59 || hh == 24 && mm != 0 {
		p.failf(n, "%q is not a time of day HH:MM", s)
	}
	return s
}

// quota reads flavor -> resource -> limits. Flavors come out in the order
// of the file's flavors list, resources in the order of its resources list;
// where each came from is recorded under owner, the Builder path of the
// queue or cohort.
func (p *parser) quota(n node, owner string) []allot.FlavorQuota {
	byFlavor := map[string]node{}
	for _, e := range p.entries(n) {
		if !slices.Contains(p.flavors, e.key) {
			p.failf(e.node, "unknown flavor %q%s", e.key, didYouMean(e.key, p.flavors))
		}
		byFlavor[e.key] = e.node
	}
	var out []allot.FlavorQuota
	for _, flavor := range p.flavors {
		fn, ok := byFlavor[flavor]
		if !ok {
			continue
		}
		byResource := map[string]node{}
		for _, e := range p.entries(fn) {
			if !slices.Contains(p.resources, e.key) {
				p.failf(e.node, "unknown resource %q%s", e.key, didYouMean(e.key, p.resources))
			}
			byResource[e.key] = e.node
		}
		fq := allot.FlavorQuota{Flavor: flavor, Resources: []allot.ResourceQuota{}}
		fp := fmt.Sprintf("%s.quota[%d]", owner, len(out))
		p.src.add(fp, fn)
		p.src.add(fp+".flavor", fn)
		for _, r := range p.resources {
			rn, ok := byResource[r]
			if !ok {
				continue
			}
			rp := fmt.Sprintf("%s.resources[%d]", fp, len(fq.Resources))
			p.src.add(rp, rn)
			p.src.add(rp+".name", rn)
			o := p.object(rn, "nominal", "borrowingLimit", "lendingLimit", "hard", "soft")
			fq.Resources = append(fq.Resources, allot.ResourceQuota{
				Name:           r,
				Nominal:        p.quantity(o.get("nominal"), r),
				BorrowingLimit: p.optQuantity(o.get("borrowingLimit"), r),
				LendingLimit:   p.optQuantity(o.get("lendingLimit"), r),
				Hard:           p.optQuantity(o.get("hard"), r),
				Soft:           p.optQuantity(o.get("soft"), r),
			})
		}
		out = append(out, fq)
	}
	return out
}

// resourceMap reads resource -> quantity; resources must be declared or
// ignored (where an ignored one may stand is allot.Builder.Build's to say).
func (p *parser) resourceMap(n node) allot.Resources {
	entries := p.entries(n)
	if entries == nil {
		return nil
	}
	out := make(allot.Resources, len(entries))
	for _, e := range entries {
		if !slices.Contains(p.resources, e.key) && !slices.Contains(p.ignored, e.key) {
			p.failf(e.node, "unknown resource %q%s", e.key, didYouMean(e.key, append(slices.Clip(p.resources), p.ignored...)))
		}
		out[e.key] = p.quantity(e.node, e.key)
	}
	return out
}

func (p *parser) history(n node) allot.History {
	o := p.object(n, "usage", "preemptions", "halfLife")
	h := allot.History{HalfLife: p.seconds(o.get("halfLife"))}
	if o.has("usage") {
		h.Usage = map[string]allot.Resources{}
		for _, e := range p.entries(o.get("usage")) {
			h.Usage[e.key] = p.resourceMap(e.node)
		}
	}
	if o.has("preemptions") {
		h.Preemptions = map[string]float64{}
		for _, e := range p.entries(o.get("preemptions")) {
			h.Preemptions[e.key] = p.nonNegFloat(e.node)
		}
	}
	return h
}

func (p *parser) options(n node) allot.Options {
	o := p.object(n, "backfill", "backfillDepth", "backfillHolds", "orderByDebt", "orderByUsage", "queueDepth", "topologyAware", "semantics")
	opts := allot.Options{
		Backfill:      p.optBool(o.get("backfill")),
		BackfillDepth: int(p.integer(o.get("backfillDepth"), 0, maxInt32)),
		OrderByDebt:   p.boolean(o.get("orderByDebt")),
		OrderByUsage:  p.boolean(o.get("orderByUsage")),
		QueueDepth:    int(p.integer(o.get("queueDepth"), 0, maxInt32)),
		TopologyAware: p.optBool(o.get("topologyAware")),
	}
	if o.has("semantics") {
		opts.Semantics = p.oneOf(o.get("semantics"), allot.SemanticsAllot, allot.SemanticsKueue)
	}
	if o.has("backfillHolds") {
		opts.BackfillHolds = p.oneOf(o.get("backfillHolds"), allot.BackfillHoldsAll, allot.BackfillHoldsLowerPriority)
	}
	return opts
}

func (p *parser) fairSharing(n node) allot.FairSharing {
	o := p.object(n, "enabled", "preemptionStrategies")
	fs := allot.FairSharing{Enabled: p.boolean(o.get("enabled"))}
	for _, s := range p.array(o.get("preemptionStrategies")) {
		fs.PreemptionStrategies = append(fs.PreemptionStrategies, p.oneOf(s, fairStrategyValues...))
	}
	return fs
}
