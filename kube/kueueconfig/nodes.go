// Nodes as allot's nodes: their flavor by the ResourceFlavors' nodeLabels,
// their domains by the Topology's levels, their capacity by what the
// kubelet reports allocatable.

package kueueconfig

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot"
)

// Levels returns the topology levels, broad to narrow, named by their node
// labels ("cloud.provider.com/topology-rack"), from the Topology the
// topology-aware flavors name. A last level of kubernetes.io/hostname is
// allot's implicit node level and is not listed (a request for it asks
// for "node"). allot has one topology a snapshot: flavors naming Topologies
// with different levels are not modelled.
func (c *Config) Levels() ([]string, error) {
	d := c.derived()
	return slices.Clone(d.levels), d.levelsErr
}

// flavorDerived is what every node's description reads of the
// ResourceFlavors and Topologies, worked out once for all nodes (and
// again after one of them changes): the flavors' names sorted, the node
// labels they select nodes by, sorted, the topology's levels, and all of
// that as one value (NodeRule).
type flavorDerived struct {
	names     []string
	keys      []string
	levels    []string
	levelsErr error
	rule      string
	read      string
}

// NodeRule is everything a node's description (Node) reads of the
// ResourceFlavors and Topologies, as one value: the topology's levels, the
// labels the flavors select nodes by, and each topology-aware flavor whose
// Topology exists, by name, with its nodeLabels. While it stays, every
// node is described as it was, whatever else of the flavors changed
// (their tolerations, taints, a flavor no node can serve added or gone).
func (c *Config) NodeRule() string { return c.derived().rule }

// FlavorsRead is what the queues' and the running gangs' descriptions
// read of the ResourceFlavors and Topologies, as one value: each flavor by
// name, whether it is topology-aware and its Topology exists (a queue
// listing it is held without), and its nodeLabels (a pod on a node no
// topology-aware flavor holds charges the first its queue lists that the
// node carries). While it stays, those descriptions stay.
func (c *Config) FlavorsRead() string { return c.derived().read }

// flavorsRead is FlavorsRead worked out from d's names.
func (c *Config) flavorsRead(d *flavorDerived) string {
	var b strings.Builder
	for _, name := range d.names {
		rf := c.flavors[name]
		_, found := c.topologies[string(ptr.Deref(rf.Spec.TopologyName, ""))]
		fmt.Fprintf(&b, "flavor %q tas %v topology %v", name, isTAS(rf), isTAS(rf) && found)
		for _, k := range sortedKeys(rf.Spec.NodeLabels) {
			fmt.Fprintf(&b, " %q=%q", k, rf.Spec.NodeLabels[k])
		}
		b.WriteString("; ")
	}
	return b.String()
}

// nodeRule is NodeRule worked out from d's names, keys and levels.
func (c *Config) nodeRule(d *flavorDerived) string {
	var b strings.Builder
	if d.levelsErr != nil {
		fmt.Fprintf(&b, "levels error %q", d.levelsErr)
	} else {
		fmt.Fprintf(&b, "levels %q", d.levels)
	}
	fmt.Fprintf(&b, " keys %q", d.keys)
	for _, name := range d.names {
		rf := c.flavors[name]
		if !isTAS(rf) {
			continue
		}
		if _, ok := c.topologies[string(*rf.Spec.TopologyName)]; !ok {
			continue
		}
		fmt.Fprintf(&b, " flavor %q", name)
		for _, k := range sortedKeys(rf.Spec.NodeLabels) {
			fmt.Fprintf(&b, " %q=%q", k, rf.Spec.NodeLabels[k])
		}
	}
	return b.String()
}

// derived returns the flavorDerived of the configuration as it is.
func (c *Config) derived() *flavorDerived {
	if c.flavorDerived != nil {
		return c.flavorDerived
	}
	d := &flavorDerived{names: sortedKeys(c.flavors)}
	keys := map[string]bool{}
	for _, rf := range c.flavors {
		for k := range rf.Spec.NodeLabels {
			keys[k] = true
		}
	}
	d.keys = sortedKeys(keys)
	d.levels, d.levelsErr = c.levels(d.names)
	d.rule, d.read = c.nodeRule(d), c.flavorsRead(d)
	c.flavorDerived = d
	return d
}

// levels is Levels' answer, worked out from the flavors (their names
// sorted).
func (c *Config) levels(names []string) ([]string, error) {
	var levels []string
	first := ""
	for _, name := range names {
		rf := c.flavors[name]
		if !isTAS(rf) {
			continue
		}
		t, ok := c.topologies[string(*rf.Spec.TopologyName)]
		if !ok {
			continue // the ClusterQueues using it are held
		}
		ls := topologyLevels(t)
		if first == "" {
			first, levels = name, ls
			continue
		}
		if !slices.Equal(ls, levels) {
			return nil, c.fieldErr(objectName("ResourceFlavor", "", name), ErrNotModelled, field.Forbidden(field.NewPath("spec", "topologyName"),
				fmt.Sprintf("not modelled: Topology %q has levels %v, ResourceFlavor %q's has %v; allot has one topology a snapshot", *rf.Spec.TopologyName, ls, first, levels)))
		}
	}
	for i, l := range levels {
		if l == "node" || l == "cluster" {
			return nil, fmt.Errorf("%w: topology level %d is the node label %q, a name allot reserves", ErrNotModelled, i, l)
		}
	}
	return levels, nil
}

// topologyLevels are a Topology's node labels without a last hostname level.
func topologyLevels(t *kueue.Topology) []string {
	var out []string
	for i, l := range t.Spec.Levels {
		if l.NodeLabel == corev1.LabelHostname && i == len(t.Spec.Levels)-1 {
			break
		}
		out = append(out, l.NodeLabel)
	}
	return out
}

// LevelName is the allot level of a node label a topology request names:
// the label itself, or "node" for kubernetes.io/hostname.
func LevelName(label string) string {
	if label == corev1.LabelHostname {
		return "node"
	}
	return label
}

// NodeFlavor returns the topology-aware ResourceFlavor a node belongs to:
// the one whose nodeLabels the node carries, all of them. allot gives a
// node one flavor where Kueue lets several share it: of several that
// match, the one with the most nodeLabels wins (the most specific), then
// the first by name, with a warning. "" when none matches: the node is of
// quota-only flavors, which Kueue does not place on.
func (c *Config) NodeFlavor(n *corev1.Node) (string, []Warning) {
	var stack [2]string // a node matches one flavor, mostly
	best, most := stack[:0], -1
	for _, name := range c.derived().names {
		rf := c.flavors[name]
		if !isTAS(rf) {
			continue
		}
		if _, ok := c.topologies[string(*rf.Spec.TopologyName)]; !ok {
			continue
		}
		if !matchesLabels(n.Labels, rf.Spec.NodeLabels) {
			continue
		}
		switch k := len(rf.Spec.NodeLabels); {
		case k > most:
			best, most = append(best[:0], name), k
		case k == most:
			best = append(best, name)
		}
	}
	switch len(best) {
	case 0:
		return "", nil
	case 1:
		return best[0], nil
	}
	return best[0], []Warning{{Object: objectName("Node", "", n.Name), Field: "metadata.labels",
		Message: fmt.Sprintf("matches ResourceFlavors %v (%d nodeLabels each): counted under %q; allot gives a node one flavor", slices.Clone(best), most, best[0])}}
}

func matchesLabels(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Node returns a node's description, and false for a node allot does not
// place on: one of no topology-aware flavor, or without a label of a
// topology level (Kueue's topology-aware scheduling does not see it
// either; a warning says so). Capacity is the node's allocatable (its
// capacity when it reports none); allocatable pods bound the pods it
// holds. Its labels are those of the topology levels and those
// ResourceFlavors select nodes by; its taints are its own (a pod set
// must tolerate those of effect NoSchedule or NoExecute, with its
// flavor's tolerations, to land on it). A node cordoned is
// unschedulable; one whose Ready condition is not True is down.
func (c *Config) Node(name string) (allot.Node, bool, []Warning, error) {
	n, ok := c.nodes[name]
	if !ok {
		return allot.Node{}, false, nil, fmt.Errorf("kueueconfig: no Node %q", name)
	}
	flavor, levels, ok, warns, err := c.placement(n)
	if !ok || err != nil {
		return allot.Node{}, false, warns, err
	}
	out := allot.Node{Name: name, Flavor: flavor, Labels: make(map[string]string, len(levels)), Unschedulable: n.Spec.Unschedulable}
	for _, l := range levels {
		out.Labels[l] = n.Labels[l]
	}
	// The labels ResourceFlavors select nodes by: allot keeps them, and
	// checks the node carries its flavor's.
	for _, k := range c.derived().keys {
		if v, ok := n.Labels[k]; ok {
			out.Labels[k] = v
		}
	}
	alloc := n.Status.Allocatable
	if len(alloc) == 0 {
		alloc = n.Status.Capacity
	}
	out.Capacity = make(allot.Resources, len(alloc))
	for r, q := range alloc {
		if r == corev1.ResourcePods {
			v := q.Value()
			if v > 1<<30 {
				v = 1 << 30
			}
			out.MaxPods = int32(v)
			if v == 0 {
				out.Unschedulable = true
			}
			continue
		}
		out.Capacity[string(r)] = BaseUnits(r, q)
	}
	// The node's taints keep off it the pods that do not tolerate them,
	// with the flavor's tolerations added to theirs.
	out.Taints = taints(n.Spec.Taints)
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status != corev1.ConditionTrue {
			out.Down = true
		}
	}
	return out, true, warns, nil
}

// placement is the flavor a node is placed on under and the topology's
// levels, false for a node allot does not place on (Node's rule: of no
// topology-aware flavor, or without a label of a level), with the
// warnings that say why.
func (c *Config) placement(n *corev1.Node) (flavor string, levels []string, ok bool, warns []Warning, err error) {
	flavor, warns = c.NodeFlavor(n)
	if flavor == "" {
		return "", nil, false, warns, nil
	}
	d := c.derived()
	if d.levelsErr != nil {
		return "", nil, false, nil, d.levelsErr
	}
	levels = d.levels // read-only
	for _, l := range levels {
		if v, ok := n.Labels[l]; !ok || v == "" {
			return "", nil, false, append(warns, Warning{Object: objectName("Node", "", n.Name), Field: "metadata.labels",
				Message: fmt.Sprintf("no %q label (a level of its flavor %q's topology): not placed on, as in Kueue", l, flavor)}), nil
		}
	}
	return flavor, levels, true, warns, nil
}

// taints are Kubernetes' taints as allot's (their time left out).
func taints(ts []corev1.Taint) []allot.Taint {
	var out []allot.Taint
	for _, t := range ts {
		out = append(out, allot.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	return out
}

// tolerations are Kubernetes' tolerations as allot's: tolerationSeconds
// bounds how long a pod stays on a node tainted NoExecute after the
// taint, which admission does not see.
func tolerations(ts []corev1.Toleration) []allot.Toleration {
	var out []allot.Toleration
	for _, t := range ts {
		out = append(out, allot.Toleration{Key: t.Key, Operator: string(t.Operator), Value: t.Value, Effect: string(t.Effect)})
	}
	return out
}
