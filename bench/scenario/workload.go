package scenario

import (
	"github.com/allot-sched/allot"
)

// workloadKind says where a workload appears in a file, which decides the
// fields it may have and the ones it must have.
type workloadKind uint8

const (
	// running: admitted, with a placement.
	running workloadKind = 1 + iota
	// pending: waiting (the pending list, a submit step).
	pending
	// request: what a request or decide step asks about. Nothing is
	// required: a malformed request is Decide's to reject, and scenarios
	// test that it does.
	request
)

const placementOnly = "only running workloads have a placement"

// workload reads a workload; its times must not be later than now.
func (p *parser) workload(n node, kind workloadKind, now int64) allot.Workload {
	o := p.object(n, "id", "queue", "tenant", "user", "priority", "submittedAt", "admittedAt",
		"expectedRuntime", "preemption", "podSets", "borrowing", "localQueue", "priorityClass")
	if kind != running {
		p.forbid(o, placementOnly, "admittedAt", "borrowing")
	}
	id, queue, podSets := o.get("id"), o.get("queue"), o.get("podSets")
	name := p.str
	if kind != request {
		id, podSets = p.need(o, "id"), p.need(o, "podSets")
		if !o.has("localQueue") {
			queue = p.need(o, "queue") // else the local queue's
		}
		name = p.name
	}
	w := allot.Workload{
		ID:              name(id),
		Queue:           name(queue),
		Tenant:          p.str(o.get("tenant")),
		User:            p.str(o.get("user")),
		Priority:        p.int32(o.get("priority")),
		SubmittedAt:     p.instant(o.get("submittedAt"), now),
		AdmittedAt:      p.instant(o.get("admittedAt"), now),
		ExpectedRuntime: p.seconds(o.get("expectedRuntime")),
		Borrowing:       p.boolean(o.get("borrowing")),
		LocalQueue:      p.str(o.get("localQueue")),
		PriorityClass:   p.str(o.get("priorityClass")),
	}
	if o.has("preemption") {
		po := p.object(o.get("preemption"), "class", "lastCheckpointAt")
		p.text(po.get("class"), &w.Preemption.Class)
		w.Preemption.LastCheckpointAt = p.instant(po.get("lastCheckpointAt"), now)
	}
	for _, e := range p.array(podSets) {
		w.PodSets = append(w.PodSets, p.podSet(e, kind))
	}
	if kind != request && p.err == nil && len(w.PodSets) == 0 {
		p.failf(podSets, "a workload needs at least one pod set")
	}
	return w
}

func (p *parser) podSet(n node, kind workloadKind) allot.PodSet {
	o := p.object(n, "name", "count", "minCount", "perPod", "flavors", "tolerations", "tokens", "topology", "flavor", "nodes", "gpuIndices")
	name, count := o.get("name"), o.get("count")
	switch kind {
	case running:
		name, count = p.need(o, "name"), p.need(o, "count")
		p.name(p.need(o, "flavor"))
	case pending:
		name, count = p.need(o, "name"), p.need(o, "count")
		fallthrough
	default:
		p.forbid(o, placementOnly, "flavor", "nodes", "gpuIndices")
	}
	ps := allot.PodSet{
		Name:    p.str(name),
		Count:   p.int32(count),
		PerPod:  p.resourceMap(o.get("perPod")),
		Flavors: p.strs(o.get("flavors")),
		Flavor:  p.str(o.get("flavor")),
	}
	ps.Tolerations = p.tolerations(o.get("tolerations"))
	if o.has("minCount") {
		// Any value of a request is Decide's to judge, but 0, which the
		// library reads as no minimum, is a typo here.
		ps.MinCount = p.int32(o.get("minCount"))
		if p.err == nil && ps.MinCount == 0 {
			p.failf(o.field("minCount"), "0 is no minimum: leave minCount out to admit the pod set whole")
		}
	}
	if o.has("tokens") {
		to := p.object(o.get("tokens"), "prompt", "maxTokens")
		ps.Tokens = &allot.Tokens{Prompt: p.count(to.get("prompt")), MaxTokens: p.count(to.get("maxTokens"))}
	}
	if o.has("topology") {
		ps.Topology = p.topologyRequest(o.get("topology"))
	}
	if o.has("nodes") {
		ps.Nodes = p.strs(o.get("nodes"))
		if p.err == nil && len(ps.Nodes) != int(ps.Count) {
			p.failf(o.field("nodes"), "%d nodes for %d pods: want one node per pod", len(ps.Nodes), ps.Count)
		}
	}
	if o.has("gpuIndices") {
		if p.err == nil && !o.has("nodes") {
			p.failf(o.field("gpuIndices"), "gpuIndices needs nodes")
		}
		lists := p.array(o.get("gpuIndices"))
		if p.err == nil && len(lists) != int(ps.Count) {
			p.failf(o.field("gpuIndices"), "%d lists for %d pods: want one list per pod", len(lists), ps.Count)
		}
		ps.GPUIndices = make([][]int, len(lists))
		for i, l := range lists {
			ps.GPUIndices[i] = []int{}
			for _, g := range p.array(l) {
				ps.GPUIndices[i] = append(ps.GPUIndices[i], int(p.integer(g, 0, maxInt32)))
			}
		}
	}
	return ps
}

func (p *parser) topologyRequest(n node) allot.TopologyRequest {
	o := p.object(n, "required", "preferred", "policy", "slices", "group")
	t := allot.TopologyRequest{
		Required:  p.str(o.get("required")),
		Preferred: p.str(o.get("preferred")),
		Group:     p.str(o.get("group")),
	}
	p.text(o.get("policy"), &t.Policy)
	for _, e := range p.array(o.get("slices")) {
		so := p.object(e, "level", "size")
		t.Slices = append(t.Slices, allot.Slice{Level: p.str(so.get("level")), Size: p.int32(so.get("size"))})
	}
	return t
}
