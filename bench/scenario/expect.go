package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/allot-sched/allot"
)

// victimReasonValues are Kueue's words for why a victim was chosen.
var victimReasonValues = []string{"InClusterQueue", "InCohortReclamation", "InCohortReclaimWhileBorrowing", "InCohortFairSharing"}

// Expect is what a decision must show. It compares only what it names: a
// zero Verdict or Reason, a nil pointer, slice or map, and an empty
// MessageContains are not checked. Maps are keyed by pod set name.
type Expect struct {
	Verdict allot.Verdict
	Reason  allot.Reason
	// Victims is the exact set of victim IDs.
	Victims []string
	// VictimReasons maps a victim ID to why it was chosen, in Kueue's words.
	VictimReasons map[string]string
	// Flavors maps a pod set to its flavor.
	Flavors   map[string]string
	Borrowing *bool
	// BorrowingLevel is the decision's borrowing level (Kueue's: how far
	// up the cohort tree the quota comes from, 0 within nominal).
	BorrowingLevel *int
	Preemptible    *bool
	// SameDomain maps a pod set to a level all its pods share a domain of.
	SameDomain map[string]string
	// Domains maps a pod set to a level to the exact set of domains its
	// pods use there.
	Domains map[string]map[string][]string
	// Nodes maps a pod set to the exact number of its pods on each node.
	Nodes map[string]map[string]int
	// GPUs maps a pod set to where each of its pods sits, in pod order:
	// its node and GPU indices, "n0:2,3" (a fractional pod's one GPU,
	// "n0:1"; a pod without GPUs, "n0:").
	GPUs map[string][]string
	// Counts maps a pod set to the pods the decision admits of it (its
	// count, or less under partial admission).
	Counts          map[string]int32
	MessageContains string
}

// State is what the store's snapshot must show after some steps; like
// Expect it compares only what it names.
type State struct {
	// Usage maps queue -> flavor -> resource to the quantity in use.
	Usage map[string]map[string]allot.Resources
	// Running and Pending are exact sets of workload IDs.
	Running []string
	Pending []string
	// RunningCount maps a queue to its number of running workloads.
	RunningCount map[string]int
	FreeGPUs     *int64
}

func (p *parser) expect(n node, req allot.Request) *Expect {
	o := p.object(n, "verdict", "reason", "victims", "victimReasons", "flavors", "borrowing", "borrowingLevel", "preemptible",
		"sameDomain", "domains", "nodes", "gpus", "counts", "messageContains")
	e := &Expect{
		Victims:         p.strs(o.get("victims")),
		Borrowing:       p.optBool(o.get("borrowing")),
		Preemptible:     p.optBool(o.get("preemptible")),
		BorrowingLevel:  p.optCount(o.get("borrowingLevel")),
		MessageContains: p.str(o.get("messageContains")),
	}
	p.text(o.get("verdict"), &e.Verdict)
	p.text(o.get("reason"), &e.Reason)
	if e.Verdict != 0 && e.Reason != 0 && e.Reason.Verdict() != e.Verdict && p.err == nil {
		p.failf(o.field("reason"), "reason %v goes with verdict %v, not %v", e.Reason, e.Reason.Verdict(), e.Verdict)
	}
	if o.has("victimReasons") {
		e.VictimReasons = map[string]string{}
		for _, v := range p.entries(o.get("victimReasons")) {
			e.VictimReasons[v.key] = p.oneOf(v.node, victimReasonValues...)
		}
	}
	if o.has("flavors") {
		e.Flavors = map[string]string{}
		for _, v := range p.podSetEntries(o.get("flavors"), req) {
			e.Flavors[v.key] = p.str(v.node)
			if p.err == nil && !slices.Contains(p.flavors, e.Flavors[v.key]) {
				p.failf(v.node, "unknown flavor %q%s", e.Flavors[v.key], didYouMean(e.Flavors[v.key], p.flavors))
			}
		}
	}
	if o.has("sameDomain") {
		e.SameDomain = map[string]string{}
		for _, v := range p.podSetEntries(o.get("sameDomain"), req) {
			e.SameDomain[v.key] = p.level(v.node)
		}
	}
	if o.has("domains") {
		e.Domains = map[string]map[string][]string{}
		for _, v := range p.podSetEntries(o.get("domains"), req) {
			e.Domains[v.key] = map[string][]string{}
			for _, l := range p.entries(v.node) {
				if p.err == nil && l.key != "node" && !slices.Contains(p.levels, l.key) {
					p.failf(l.node, "unknown level %q%s", l.key, didYouMean(l.key, append(slices.Clip(p.levels), "node")))
				}
				names := p.strs(l.node)
				for i, name := range names {
					if p.err == nil && !p.domains[l.key][name] {
						p.failf(l.node.index(i), "no node has %s %q", l.key, name)
					}
				}
				e.Domains[v.key][l.key] = names
			}
		}
	}
	if o.has("nodes") {
		e.Nodes = map[string]map[string]int{}
		for _, v := range p.podSetEntries(o.get("nodes"), req) {
			e.Nodes[v.key] = map[string]int{}
			for _, nd := range p.entries(v.node) {
				if p.err == nil && !p.domains["node"][nd.key] {
					p.failf(nd.node, "unknown node %q%s", nd.key, didYouMean(nd.key, p.nodes))
				}
				e.Nodes[v.key][nd.key] = int(p.integer(nd.node, 0, maxInt32))
			}
		}
	}
	if o.has("gpus") {
		e.GPUs = map[string][]string{}
		for _, v := range p.podSetEntries(o.get("gpus"), req) {
			e.GPUs[v.key] = p.strs(v.node)
		}
	}
	if o.has("counts") {
		e.Counts = map[string]int32{}
		for _, v := range p.podSetEntries(o.get("counts"), req) {
			e.Counts[v.key] = int32(p.integer(v.node, 1, maxInt32))
		}
	}
	return e
}

// podSetEntries reads an object keyed by the request's pod set names.
func (p *parser) podSetEntries(n node, req allot.Request) []entry {
	entries := p.entries(n)
	for _, e := range entries {
		if p.err == nil && !slices.ContainsFunc(req.PodSets, func(ps allot.PodSet) bool { return ps.Name == e.key }) {
			p.failf(e.node, "the request has no pod set %q", e.key)
		}
	}
	return entries
}

// level reads a topology level name; "node" is the implicit last level.
func (p *parser) level(n node) string {
	s := p.str(n)
	if p.err == nil && s != "node" && !slices.Contains(p.levels, s) {
		p.failf(n, "unknown level %q%s", s, didYouMean(s, append(slices.Clip(p.levels), "node")))
	}
	return s
}

func (p *parser) state(n node) *State {
	o := p.object(n, "usage", "running", "pending", "runningCount", "freeGpus")
	st := &State{
		Running: p.strs(o.get("running")),
		Pending: p.strs(o.get("pending")),
	}
	if o.has("usage") {
		st.Usage = map[string]map[string]allot.Resources{}
		for _, q := range p.queueEntries(o.get("usage")) {
			st.Usage[q.key] = map[string]allot.Resources{}
			for _, f := range p.entries(q.node) {
				if p.err == nil && !slices.Contains(p.flavors, f.key) {
					p.failf(f.node, "unknown flavor %q%s", f.key, didYouMean(f.key, p.flavors))
				}
				st.Usage[q.key][f.key] = p.resourceMap(f.node)
			}
		}
	}
	if o.has("runningCount") {
		st.RunningCount = map[string]int{}
		for _, q := range p.queueEntries(o.get("runningCount")) {
			st.RunningCount[q.key] = int(p.integer(q.node, 0, maxInt32))
		}
	}
	if f := o.get("freeGpus"); !f.absent {
		v := p.count(f)
		st.FreeGPUs = &v
	}
	return st
}

// queueEntries reads an object keyed by queue names.
func (p *parser) queueEntries(n node) []entry {
	entries := p.entries(n)
	for _, e := range entries {
		if p.err == nil && !slices.Contains(p.queues, e.key) {
			p.failf(e.node, "unknown queue %q%s", e.key, didYouMean(e.key, p.queues))
		}
	}
	return entries
}

// Mismatches compares a decision made on snapshot s with the expectation
// and returns one line per difference, in a fixed order; none when the
// decision shows everything expected.
func (e *Expect) Mismatches(s *allot.Snapshot, d *allot.Decision) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	verdictWrong := e.Verdict != 0 && d.Verdict != e.Verdict
	reasonWrong := e.Reason != 0 && d.Reason != e.Reason
	switch {
	case verdictWrong && reasonWrong:
		add("verdict: want %v %v, got %v %v (message: %s)", e.Verdict, e.Reason, d.Verdict, d.Reason, d.Message)
	case verdictWrong:
		add("verdict: want %v, got %v %v (message: %s)", e.Verdict, d.Verdict, d.Reason, d.Message)
	case reasonWrong:
		add("reason: want %v, got %v (message: %s)", e.Reason, d.Reason, d.Message)
	}
	if e.Victims != nil {
		got := make([]string, len(d.Victims))
		for i, v := range d.Victims {
			got[i] = v.ID
		}
		if !sameSet(e.Victims, got) {
			add("victims: want %s, got %s", formatSet(e.Victims), formatSet(got))
		}
	}
	for _, id := range sortedMapKeys(e.VictimReasons) {
		i := slices.IndexFunc(d.Victims, func(v allot.Victim) bool { return v.ID == id })
		switch {
		case i < 0:
			add("victimReasons: %s: want %s, but it is not a victim", id, e.VictimReasons[id])
		case d.Victims[i].Reason != e.VictimReasons[id]:
			add("victimReasons: %s: want %s, got %s", id, e.VictimReasons[id], d.Victims[i].Reason)
		}
	}
	for _, ps := range sortedMapKeys(e.Flavors) {
		got, ok := d.FlavorOf(ps)
		if !ok {
			got = "none"
		}
		if got != e.Flavors[ps] {
			add("flavors: %s: want %s, got %s", ps, e.Flavors[ps], got)
		}
	}
	if e.Borrowing != nil && d.IsBorrowing() != *e.Borrowing {
		add("borrowing: want %t, got %t", *e.Borrowing, d.IsBorrowing())
	}
	if e.BorrowingLevel != nil && d.BorrowingLevel != *e.BorrowingLevel {
		add("borrowingLevel: want %d, got %d", *e.BorrowingLevel, d.BorrowingLevel)
	}
	if e.Preemptible != nil && d.Preemptible != *e.Preemptible {
		add("preemptible: want %t, got %t", *e.Preemptible, d.Preemptible)
	}
	for _, ps := range sortedMapKeys(e.SameDomain) {
		level := e.SameDomain[ps]
		got, err := podDomains(s, d, ps, level)
		switch {
		case err != nil:
			add("sameDomain: %s: %v", ps, err)
		case len(got) != 1:
			add("sameDomain: %s: want one %s, got %s", ps, level, formatSet(got))
		}
	}
	for _, ps := range sortedMapKeys(e.Domains) {
		for _, level := range sortedMapKeys(e.Domains[ps]) {
			want := e.Domains[ps][level]
			got, err := podDomains(s, d, ps, level)
			switch {
			case err != nil:
				add("domains: %s: %v", ps, err)
			case !sameSet(want, got):
				add("domains: %s: %s: want %s, got %s", ps, level, formatSet(want), formatSet(got))
			}
		}
	}
	for _, ps := range sortedMapKeys(e.Nodes) {
		got := map[string]int{}
		for _, pp := range d.Placement {
			if pp.PodSet == ps {
				got[pp.Node]++
			}
		}
		if !sameCounts(e.Nodes[ps], got) {
			add("nodes: %s: want %s, got %s", ps, formatCounts(e.Nodes[ps]), formatCounts(got))
		}
	}
	for _, ps := range sortedMapKeys(e.GPUs) {
		var got []string
		for _, pp := range d.Placement {
			if pp.PodSet == ps {
				got = append(got, podGPUs(pp))
			}
		}
		if !slices.Equal(e.GPUs[ps], got) {
			add("gpus: %s: want %v, got %v", ps, e.GPUs[ps], got)
		}
	}
	for _, ps := range sortedMapKeys(e.Counts) {
		switch got, ok := d.CountOf(ps); {
		case !ok:
			add("counts: %s: want %d, got none (verdict %v, reason %v)", ps, e.Counts[ps], d.Verdict, d.Reason)
		case got != e.Counts[ps]:
			add("counts: %s: want %d, got %d", ps, e.Counts[ps], got)
		}
	}
	if e.MessageContains != "" && !strings.Contains(d.Message, e.MessageContains) {
		add("message: want it to contain %q, got %q", e.MessageContains, d.Message)
	}
	return out
}

// podDomains returns the distinct domains of a level that the pods of one
// pod set are placed in, sorted.
func podDomains(s *allot.Snapshot, d *allot.Decision, podSet, level string) ([]string, error) {
	seen := map[string]bool{}
	for _, pp := range d.Placement {
		if pp.PodSet != podSet {
			continue
		}
		domain, ok := s.NodeLabel(pp.Node, level)
		if !ok {
			return nil, fmt.Errorf("node %s has no %s", pp.Node, level)
		}
		seen[domain] = true
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("no pods placed (verdict %v, reason %v)", d.Verdict, d.Reason)
	}
	return sortedMapKeys(seen), nil
}

// Mismatches compares snapshot s with the expected state and returns one
// line per difference, in a fixed order; none when it matches.
func (st *State) Mismatches(s *allot.Snapshot) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	for _, q := range sortedMapKeys(st.Usage) {
		for _, f := range sortedMapKeys(st.Usage[q]) {
			for _, r := range sortedMapKeys(st.Usage[q][f]) {
				if want, got := st.Usage[q][f][r], s.Usage(q, f, r); got != want {
					add("usage: %s: %s: %s: want %d, got %d", q, f, r, want, got)
				}
			}
		}
	}
	if st.Running != nil && !sameSet(st.Running, s.RunningIDs()) {
		add("running: want %s, got %s", formatSet(st.Running), formatSet(s.RunningIDs()))
	}
	if st.Pending != nil && !sameSet(st.Pending, s.PendingIDs()) {
		add("pending: want %s, got %s", formatSet(st.Pending), formatSet(s.PendingIDs()))
	}
	for _, q := range sortedMapKeys(st.RunningCount) {
		if want, got := st.RunningCount[q], s.RunningCount(q); got != want {
			add("runningCount: %s: want %d, got %d", q, want, got)
		}
	}
	if st.FreeGPUs != nil && s.FreeGPUs() != *st.FreeGPUs {
		add("freeGpus: want %d, got %d", *st.FreeGPUs, s.FreeGPUs())
	}
	return out
}

func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sameSet reports whether a and b hold the same strings, ignoring order and
// repetition.
func sameSet(a, b []string) bool {
	return slices.Equal(sortedSet(a), sortedSet(b))
}

func sortedSet(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}

func formatSet(ss []string) string {
	return "[" + strings.Join(sortedSet(ss), ", ") + "]"
}

// sameCounts compares pod counts per node; a zero count equals no entry.
func sameCounts(want, got map[string]int) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	for k, v := range got {
		if want[k] != v {
			return false
		}
	}
	return true
}

func formatCounts(m map[string]int) string {
	var parts []string
	for _, k := range sortedMapKeys(m) {
		if m[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// podGPUs is where one placed pod sits as the expect field gpus writes
// it: "node:i,j".
func podGPUs(pp allot.PodPlacement) string {
	var b strings.Builder
	b.WriteString(pp.Node)
	b.WriteByte(':')
	for k, i := range pp.GPUs.Indices() {
		if k > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}
