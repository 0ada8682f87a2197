// Flavors selected by node labels and taints, as Kueue's ResourceFlavor
// selects its nodes: which flavor a node serves, which flavors a pod set
// tolerates, and which nodes of a flavor it must stay off. The node sets
// behind them are bitsets over the topology's node indexes, built once per
// snapshot and carried over by the node events.

package allot

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/topology"
)

// Taint is a node taint (Kubernetes' core/v1 Taint without its time).
// Effect is NoSchedule, PreferNoSchedule or NoExecute; only NoSchedule
// and NoExecute keep a pod off a node that it does not tolerate.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// Toleration lets a pod land on nodes with a matching taint, with
// Kubernetes' semantics: Operator Equal (the default, also "") matches a
// taint of Key with Value, Exists one of Key with any value, and an empty
// Key with Exists every taint; an empty Effect matches every effect.
type Toleration struct {
	Key      string `json:"key,omitempty"`
	Operator string `json:"operator,omitempty"`
	Value    string `json:"value,omitempty"`
	Effect   string `json:"effect,omitempty"`
}

// The taint effects and toleration operators.
const (
	TaintNoSchedule       = "NoSchedule"
	TaintPreferNoSchedule = "PreferNoSchedule"
	TaintNoExecute        = "NoExecute"

	TolerationEqual  = "Equal"
	TolerationExists = "Exists"
)

// Tolerates reports whether the toleration matches taint t.
func (tl *Toleration) Tolerates(t *Taint) bool {
	if tl.Effect != "" && tl.Effect != t.Effect {
		return false
	}
	if tl.Key == "" {
		return tl.Operator == TolerationExists
	}
	if tl.Key != t.Key {
		return false
	}
	return tl.Operator == TolerationExists || tl.Value == t.Value
}

// repels reports whether taint t keeps off the pods that do not tolerate
// it: PreferNoSchedule only asks the scheduler to avoid the node.
func (t *Taint) repels() bool { return t.Effect == TaintNoSchedule || t.Effect == TaintNoExecute }

// tolerated reports whether taint t is tolerated by one of the pod set's
// tolerations or the flavor's (Kueue adds the flavor's to the pods
// admitted on it).
func tolerated(t *Taint, pod, flavor []Toleration) bool {
	for i := range pod {
		if pod[i].Tolerates(t) {
			return true
		}
	}
	for i := range flavor {
		if flavor[i].Tolerates(t) {
			return true
		}
	}
	return false
}

// tolerates reports whether pod set ps may use flavor f for its taints:
// every taint of the flavor's nodeTaints that repels is tolerated, as
// Kueue's flavor assigner asks. The flavor's own nodes may carry others;
// placement keeps the pod set off those (untolerated).
func (s *fixed) tolerates(ps *PodSet, f int32) bool { return s.untoleratedTaint(ps, f) == nil }

// untoleratedTaint is the first of flavor f's nodeTaints that repels and
// that pod set ps does not tolerate, nil when there is none.
func (s *fixed) untoleratedTaint(ps *PodSet, f int32) *Taint {
	fl := &s.flavors[f]
	for i := range fl.NodeTaints {
		t := &fl.NodeTaints[i]
		if t.repels() && !tolerated(t, ps.Tolerations, fl.Tolerations) {
			return t
		}
	}
	return nil
}

// serves reports whether pod set ps may use flavor f: it names the flavor
// or none, and it tolerates the flavor's nodeTaints.
func (s *fixed) serves(ps *PodSet, f int32) bool {
	return ps.allows(s.flavors[f].Name) && s.tolerates(ps, f)
}

// allows reports whether pod set ps may use the flavor named name: any
// flavor of its queue when it names none.
func (ps *PodSet) allows(name string) bool {
	return len(ps.Flavors) == 0 || slices.Contains(ps.Flavors, name)
}

// untolerated is the set of nodes of flavor f that carry a taint that
// repels and that pod set ps does not tolerate (nor the flavor for it):
// placement must not use them. Nil, without allocating, when there is
// none: the nodes of a cluster without such taints cost nothing.
func (s *fixed) untolerated(ps *PodSet, f int32) nodeSet {
	var out nodeSet
	fl := &s.flavors[f]
	tree := &s.topo.Flavors[f]
	for i := range s.marks.taints {
		mt := &s.marks.taints[i]
		if !mt.repels() || tolerated(&mt.Taint, ps.Tolerations, fl.Tolerations) || !mt.nodes.anyIn(tree.First, tree.End) {
			continue
		}
		if out == nil {
			out = make(nodeSet, len(mt.nodes))
		}
		out.or(mt.nodes)
	}
	return out
}

// nodeSet is a set of nodes: bit n%64 of word n/64 for node n.
type nodeSet []uint64

func newNodeSet(nodes int) nodeSet { return make(nodeSet, (nodes+63)/64) }

func (b nodeSet) add(n int32)      { b[n>>6] |= 1 << (n & 63) }
func (b nodeSet) has(n int32) bool { return int(n>>6) < len(b) && b[n>>6]&(1<<(n&63)) != 0 }
func (b nodeSet) or(c nodeSet) {
	for i := range c {
		b[i] |= c[i]
	}
}
func (b nodeSet) empty() bool             { return !b.anyIn(0, int32(len(b)*64)) }
func (b nodeSet) anyIn(lo, hi int32) bool { return gang.AnyIn(b, lo, hi) }

// nodeMarks holds what of a node's description is neither its topology
// labels nor its capacity: the labels some flavor's nodeLabels name, and
// the taints. Each label value and each distinct taint has its set of
// nodes, over the topology's node indexes. Sets are never changed once
// built: a node event makes new ones.
type nodeMarks struct {
	// labels[k][v] is the nodes with label k=v, for the keys of
	// flavorKeys.
	labels map[string]map[string]nodeSet
	// taints are the distinct taints, by key, value and effect.
	taints []markedTaint
}

type markedTaint struct {
	Taint
	nodes nodeSet
}

// flavorKeys are the label keys some flavor's nodeLabels name and that
// are not topology levels (those the topology keeps), sorted.
func (s *fixed) flavorKeys() []string {
	var keys []string
	for i := range s.flavors {
		for k := range s.flavors[i].NodeLabels {
			if !slices.Contains(keys, k) && !slices.Contains(s.topo.Levels, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// mark records node n's flavor labels and taints in m, a set of nodes
// nodes wide.
func (m *nodeMarks) mark(n int32, nd *Node, keys []string, nodes int) {
	for _, k := range keys {
		if v, ok := nd.Labels[k]; ok {
			set, _ := m.labelSet(k, v, nodes)
			set.add(n)
		}
	}
	for _, t := range nd.Taints {
		set, _ := m.taintSet(t, nodes)
		set.add(n)
	}
}

// labelSet is the set of the nodes labelled k=v, made empty (nodes
// wide, fresh) if no node is.
func (m *nodeMarks) labelSet(k, v string, nodes int) (set nodeSet, fresh bool) {
	if m.labels == nil {
		m.labels = make(map[string]map[string]nodeSet)
	}
	vs := m.labels[k]
	if vs == nil {
		vs = make(map[string]nodeSet)
		m.labels[k] = vs
	}
	if vs[v] == nil {
		vs[v], fresh = newNodeSet(nodes), true
	}
	return vs[v], fresh
}

// taintSet is the set of the nodes with taint t, made empty (nodes wide,
// fresh) if no node has it.
func (m *nodeMarks) taintSet(t Taint, nodes int) (set *nodeSet, fresh bool) {
	i := slices.IndexFunc(m.taints, func(mt markedTaint) bool { return mt.Taint == t })
	if i < 0 {
		i, fresh = len(m.taints), true
		m.taints = append(m.taints, markedTaint{Taint: t, nodes: newNodeSet(nodes)})
	}
	return &m.taints[i].nodes, fresh
}

// reshape carries the marks over to a topology of nodes nodes, old node o
// now moved[o] (-1: gone); the nodes of fresh (new indexes) are marked
// anew from their descriptions, their old marks dropped. O(nodes) per set.
func (m *nodeMarks) reshape(nodes int, moved []int32, fresh map[int32]*Node, keys []string) nodeMarks {
	move := func(old nodeSet) nodeSet {
		out := newNodeSet(nodes)
		for w, word := range old {
			for word != 0 {
				o := w*64 + bits.TrailingZeros64(word)
				word &= word - 1
				if n := moved[o]; n >= 0 && fresh[n] == nil {
					out.add(n)
				}
			}
		}
		return out
	}
	out := m.mapped(func(set nodeSet, _, _ string, _ *Taint) nodeSet { return move(set) })
	ns := make([]int32, 0, len(fresh))
	for n := range fresh {
		ns = append(ns, n)
	}
	for _, n := range ns {
		out.mark(n, fresh[n], keys, nodes)
	}
	out.settle()
	return out
}

// shifted is m with its sets' nodes moved as sh moves them
// (topology.Topology.Vacate, Fill), node sh.At marked from its
// description nd when Fill put it in (nd nil for Vacate). Only the sets
// with a node in the shift's span are copied, O(nodes) each.
func (m *nodeMarks) shifted(sh topology.Shift, nd *Node, keys []string, nodes int) nodeMarks {
	lo, hi := sh.Span()
	out := m.mapped(func(set nodeSet, _, _ string, _ *Taint) nodeSet {
		if !set.anyIn(lo, hi) {
			return set
		}
		c := slices.Clone(set)
		for n := lo; n < hi; n++ {
			c[n>>6] &^= 1 << (n & 63)
		}
		for n := lo; n < hi; n++ {
			if to := sh.Moved(n); to >= 0 && set.has(n) {
				c.add(to)
			}
		}
		return c
	})
	if nd != nil {
		out, _ = out.remark(sh.At, nd, keys, nodes)
	}
	out.settle()
	return out
}

// mapped is m with each of its sets replaced by what fn makes of it: fn
// is told the set's label k=v, or its taint t (nil for a label).
func (m *nodeMarks) mapped(fn func(set nodeSet, k, v string, t *Taint) nodeSet) nodeMarks {
	var out nodeMarks
	if m.labels != nil {
		out.labels = make(map[string]map[string]nodeSet, len(m.labels))
		for k, vs := range m.labels {
			nv := make(map[string]nodeSet, len(vs))
			for v, set := range vs {
				nv[v] = fn(set, k, v, nil)
			}
			out.labels[k] = nv
		}
	}
	for _, mt := range m.taints {
		out.taints = append(out.taints, markedTaint{Taint: mt.Taint, nodes: fn(mt.nodes, "", "", &mt.Taint)})
	}
	return out
}

// remark is m with node n marked anew from its description nd: node n
// leaves the sets of the labels and taints nd no longer has and joins
// those of the ones it has. Only the sets that change are copied, each
// O(nodes); when none does, m itself is returned and changed is false.
func (m *nodeMarks) remark(n int32, nd *Node, keys []string, nodes int) (marks nodeMarks, changed bool) {
	if m.marksOf(n, nd, keys) {
		return *m, false
	}
	flip := func(set nodeSet, on bool) nodeSet {
		if set.has(n) == on {
			return set
		}
		c := slices.Clone(set)
		c[n>>6] ^= 1 << (n & 63)
		return c
	}
	carries := func(k, v string) bool {
		got, ok := nd.Labels[k]
		return ok && got == v && slices.Contains(keys, k)
	}
	out := m.mapped(func(set nodeSet, k, v string, t *Taint) nodeSet {
		if t != nil {
			return flip(set, slices.Contains(nd.Taints, *t))
		}
		return flip(set, carries(k, v))
	})
	// A set made here is this version's own: n joins it in place.
	for _, k := range keys {
		if v, ok := nd.Labels[k]; ok {
			if set, fresh := out.labelSet(k, v, nodes); fresh {
				set.add(n)
			} else {
				out.labels[k][v] = flip(set, true)
			}
		}
	}
	for _, t := range nd.Taints {
		if set, fresh := out.taintSet(t, nodes); fresh {
			set.add(n)
		} else {
			*set = flip(*set, true)
		}
	}
	out.settle()
	return out, true
}

// marksOf reports whether node n's marks in m are already what its
// description nd gives it: each label of keys it has, and each taint,
// in a set that holds n, and no other set holding n.
func (m *nodeMarks) marksOf(n int32, nd *Node, keys []string) bool {
	held := 0
	for k, vs := range m.labels {
		for v, set := range vs {
			if set.has(n) {
				if got, ok := nd.Labels[k]; !ok || got != v || !slices.Contains(keys, k) {
					return false
				}
				held++
			}
		}
	}
	for _, k := range keys {
		if _, ok := nd.Labels[k]; ok {
			held--
		}
	}
	if held != 0 {
		return false
	}
	for _, t := range nd.Taints {
		if !slices.ContainsFunc(m.taints, func(mt markedTaint) bool { return mt.Taint == t && mt.nodes.has(n) }) {
			return false
		}
	}
	for _, mt := range m.taints {
		if mt.nodes.has(n) && !slices.Contains(nd.Taints, mt.Taint) {
			return false
		}
	}
	return true
}

// settle drops the label values and taints no node has any more and sorts
// the taints, so that the marks are what Build makes of the same nodes
// and a node's taints are described in one order.
func (m *nodeMarks) settle() {
	for k, vs := range m.labels {
		for v, set := range vs {
			if set.empty() {
				delete(vs, v)
			}
		}
		if len(vs) == 0 {
			delete(m.labels, k)
		}
	}
	m.taints = slices.DeleteFunc(m.taints, func(mt markedTaint) bool { return mt.nodes.empty() })
	slices.SortFunc(m.taints, func(a, b markedTaint) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), strings.Compare(a.Value, b.Value), strings.Compare(a.Effect, b.Effect))
	})
}

// describe adds node n's flavor labels and taints to its description.
func (m *nodeMarks) describe(n int32, out *Node) {
	for k, vs := range m.labels {
		for v, set := range vs {
			if set.has(n) {
				if out.Labels == nil {
					out.Labels = make(map[string]string)
				}
				out.Labels[k] = v
			}
		}
	}
	for i := range m.taints {
		if m.taints[i].nodes.has(n) {
			out.Taints = append(out.Taints, m.taints[i].Taint)
		}
	}
}

// nodeFlavor resolves the flavor of node n, at path p of the description:
// the flavor it names, whose nodeLabels it must then carry; or, naming
// none, the flavor whose nodeLabels it carries, all of them (of several,
// the one with the most nodeLabels, the most specific, then the first
// declared). allot gives a node one flavor where Kueue lets flavors with
// overlapping nodeLabels share it.
func (s *fixed) nodeFlavor(n *Node, p string) (int32, error) {
	if n.Flavor != "" {
		f, ok := s.flavorIdx[n.Flavor]
		if !ok {
			return 0, buildErr(ErrUnknownFlavor, p+".flavor", "node %q names flavor %q", n.Name, n.Flavor)
		}
		if k, ok := missingLabel(n.Labels, s.flavors[f].NodeLabels); !ok {
			return 0, buildErr(ErrInvalid, p+".labels."+k, "node %q names flavor %q but lacks its node label %s=%s", n.Name, n.Flavor, k, s.flavors[f].NodeLabels[k])
		}
		return f, nil
	}
	best, most := int32(-1), 0
	for f := range s.flavors {
		sel := s.flavors[f].NodeLabels
		if len(sel) > most {
			if _, ok := missingLabel(n.Labels, sel); ok {
				best, most = int32(f), len(sel)
			}
		}
	}
	switch {
	case best < 0 && !s.selecting():
		return 0, buildErr(ErrUnknownFlavor, p+".flavor", "node %q names flavor %q", n.Name, n.Flavor)
	case best < 0:
		return 0, buildErr(ErrUnknownFlavor, p+".flavor", "node %q names no flavor and matches no flavor's nodeLabels", n.Name)
	}
	return best, nil
}

// selecting reports whether some flavor selects its nodes by labels.
func (s *fixed) selecting() bool {
	return slices.ContainsFunc(s.flavors, func(f Flavor) bool { return len(f.NodeLabels) > 0 })
}

// missingLabel returns a key of want (the first, sorted) that have lacks or
// holds another value of, and false; true when have carries all of want.
func missingLabel(have, want map[string]string) (string, bool) {
	if len(want) == 0 {
		return "", true
	}
	for _, k := range sortedKeys(want) {
		if v, ok := have[k]; !ok || v != want[k] {
			return k, false
		}
	}
	return "", true
}

// validateTaint checks a taint at path p; "" when it is valid.
func validateTaint(t *Taint) (msg, field string) {
	if t.Key == "" {
		return "must not be empty", "key"
	}
	switch t.Effect {
	case TaintNoSchedule, TaintPreferNoSchedule, TaintNoExecute:
		return "", ""
	}
	return fmt.Sprintf("unknown effect %q (NoSchedule, PreferNoSchedule or NoExecute)", t.Effect), "effect"
}

// validateToleration checks a toleration; "" when it is valid.
func validateToleration(tl *Toleration) (msg, field string) {
	switch tl.Operator {
	case "", TolerationEqual:
		if tl.Key == "" {
			return "an empty key needs operator Exists", "key"
		}
	case TolerationExists:
		if tl.Value != "" {
			return "operator Exists takes no value", "value"
		}
	default:
		return fmt.Sprintf("unknown operator %q (Equal or Exists)", tl.Operator), "operator"
	}
	switch tl.Effect {
	case "", TaintNoSchedule, TaintPreferNoSchedule, TaintNoExecute:
		return "", ""
	}
	return fmt.Sprintf("unknown effect %q (NoSchedule, PreferNoSchedule or NoExecute)", tl.Effect), "effect"
}

// validateTolerations checks a list of tolerations at path p ("tolerations"
// under it); "" when all are valid.
func validateTolerations(ts []Toleration, p string) (msg, field string) {
	for i := range ts {
		if m, f := validateToleration(&ts[i]); m != "" {
			return m, p + "[" + strconv.Itoa(i) + "]." + f
		}
	}
	return "", ""
}

// checkFlavor validates flavor i's node selection for buildFlavors.
func checkFlavor(fl *Flavor, i int) error {
	return checkFlavorAt(fl, "flavors["+strconv.Itoa(i)+"]")
}

// checkFlavorAt is checkFlavor at path p.
func checkFlavorAt(fl *Flavor, p string) error {
	for _, k := range sortedKeys(fl.NodeLabels) {
		if k == "" || strings.TrimSpace(k) != k {
			return buildErr(ErrInvalid, p+".nodeLabels", "label key %q", k)
		}
	}
	for j := range fl.NodeTaints {
		if m, f := validateTaint(&fl.NodeTaints[j]); m != "" {
			return buildErr(ErrInvalid, p+".nodeTaints["+strconv.Itoa(j)+"]."+f, "%s", m)
		}
	}
	if m, f := validateTolerations(fl.Tolerations, p+".tolerations"); m != "" {
		return buildErr(ErrInvalid, f, "%s", m)
	}
	return nil
}

// checkTaints validates a node's taints at path p.
func checkTaints(ts []Taint, p string) error {
	for j := range ts {
		if m, f := validateTaint(&ts[j]); m != "" {
			return buildErr(ErrInvalid, p+".taints["+strconv.Itoa(j)+"]."+f, "%s", m)
		}
		if slices.Contains(ts[:j], ts[j]) {
			return buildErr(ErrDuplicateID, p+".taints["+strconv.Itoa(j)+"]", "taint %s=%s:%s twice", ts[j].Key, ts[j].Value, ts[j].Effect)
		}
	}
	return nil
}
