package topology

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/sortkey"
)

// Errors returned by New.
var (
	ErrMissingLabel  = errors.New("topology: node misses a topology label")
	ErrBadGroups     = errors.New("topology: bad gpu groups")
	ErrTooManyGPUs   = errors.New("topology: more than 64 GPUs on a node")
	ErrBadShareable  = errors.New("topology: shareable GPUs the node does not have")
	ErrBadMIG        = errors.New("topology: bad MIG partition")
	ErrDuplicateName = errors.New("topology: two nodes of one name")
)

// MaxNodeGPUs is the most GPUs one node may have (a node's GPUs are one uint64
// mask).
const MaxNodeGPUs = 64

// NodeSpec describes one node to New. (The 32-bit fields sit together,
// after the words, so that none is padded out: a hundred thousand specs
// are 17.6 MB, not 18.4.)
type NodeSpec struct {
	Name     string
	Labels   []string // one value per level, broad to narrow
	Capacity res.Vec
	// Groups are the sizes of the node's GPU islands; empty means one.
	Groups []int
	// MIG lists the MIG instances the node's GPUs are partitioned into,
	// GPU by GPU; a partitioned GPU is never booked whole nor shared, and
	// Capacity counts its instances under each profile's resource, not
	// among the GPUs.
	MIG []MIGSlice
	// Shareable are the GPUs (a node-local mask) that fractional pods may
	// share: several pods, each holding thousandths of one GPU.
	Shareable uint64
	Flavor    int32
	MaxPods   int32
	// vacant makes the spec a vacant slot of the narrowest domain its
	// flavor and labels name (Vacancy): it has no name and nothing else.
	vacant bool
}

// Vacancy is a vacant slot of the narrowest domain of flavor f that
// labels name, as New takes it: room for a node put in later (Fill). New
// and Edit keep a domain's vacant slots after its nodes, and none in a
// domain with no node.
func Vacancy(f int32, labels []string) NodeSpec {
	return NodeSpec{Flavor: f, Labels: labels, vacant: true}
}

// MIGSlice is Count MIG instances of the profile counted by resource
// Resource on GPU GPU of a node.
type MIGSlice struct {
	GPU      int32
	Resource int32
	Count    int32
}

// Node is a node of the built topology. It holds no pointer: its name,
// labels and domains sit in the topology's shared arrays (NodeName,
// NodeLabel, NodeDomains), so that the collector need not walk tens of
// thousands of nodes on every cycle. The words come first and the
// 32-bit fields together, so that no field is padded out (136 bytes).
type Node struct {
	Capacity res.Vec
	// islandStarts has bit i set where a GPU island starts (see
	// Islands).
	islandStarts uint64
	// Shareable are the GPUs fractional pods may share (a node-local
	// mask); shareBase is where the node's first one sits among a
	// state's per-GPU shares (see State.ShareRoom).
	Shareable uint64
	// Partitioned are the GPUs MIG splits into instances (a node-local
	// mask); mig bounds the node's MIGSlices in Topology.mig.
	Partitioned uint64
	Flavor      int32
	GPUs        int32
	// Islands counts the node's GPU islands (NVLink/NUMA groups): always
	// at least one. Islands are contiguous GPU ranges (islandStarts).
	Islands int32
	// MaxGroup is the size of the largest island.
	MaxGroup  int32
	MaxPods   int32
	shareBase int32
	mig       [2]int32
	name      [2]int32 // the name's bounds in Topology.names, or its narrowest domain's added names (addedName)
	// vacant marks a slot that holds no node (Vacate, Fill).
	vacant bool
}

// Domain is a set of nodes sharing a topology path prefix: a contiguous node
// range.
type Domain struct {
	// Path is the label values from the broadest level down, joined by "/".
	Path  string
	Level int32
	// First and End bound the domain's nodes: [First, End).
	First, End int32
	// ChildFirst and ChildEnd bound the domain's children one level down:
	// domain indices, or node indices at the narrowest level.
	ChildFirst, ChildEnd int32
	Parent               int32
}

// FlavorTree is one flavor's domains, level by level.
type FlavorTree struct {
	// First and End bound the flavor's nodes.
	First, End int32
	// Levels[l] bounds the domain indices of level l: [Levels[l][0],
	// Levels[l][1]). Level 0 is the root; len(Levels) == len(levels)+1.
	Levels [][2]int32
}

// Topology is the static shape of a cluster. It is immutable once built.
type Topology struct {
	Levels   []string
	Resource int // number of resources
	GPU      int // index of the gpu resource, -1 if none
	// nodes holds the nodes in their order (Node, NumNodes), copy on
	// write, so that a node described anew in place (Renode) copies its
	// page and the directories above it rather than every node.
	nodes    cow.Slice[Node]
	numNodes int
	Domains  []Domain
	Flavors  []FlavorTree
	// G is the largest GPU count of any node; per-domain counters have G
	// entries.
	G         int
	TotalGPUs int
	// ShareSlots counts the shareable GPUs of all nodes.
	ShareSlots int32
	// mig holds every node's MIG slices back to back (Node.mig).
	mig    []MIGSlice
	byName nameIndex
	// names holds every node's name back to back; domains holds each
	// node's domain at every level (Levels+1 per node); labels each node's
	// label value at every level, as an index into labelValues.
	names   string
	domains []int32
	// added holds, for each narrowest domain (by domain index), the names
	// of the nodes Fill put in there since the topology was built, back to
	// back; empty until the first Fill (see addedName). vacant counts the
	// vacant slots.
	added       cow.Slice[string]
	vacant      int
	labels      []int32
	labelValues []string
	// islands[n] counts the nodes before node n with more than one GPU
	// island (see Islands).
	islands []int32
	// fitIdx[f][(l-1)*G+g-1] lays out the fit index of flavor f, declared
	// level l and g GPUs in a state's idxWords words (see index.go).
	fitIdx   [][]levelIndex
	idxWords int
}

// Islands reports whether any node of domain d has more than one GPU
// island: there a node's pod count is not its free GPUs over the pod's.
func (t *Topology) Islands(d int32) bool {
	dom := &t.Domains[d]
	return t.islands[dom.End] > t.islands[dom.First]
}

// New sorts the nodes by flavor and path and builds the domain trees.
// flavors is the number of flavors; nodes name their flavor by index.
func New(levels []string, resources, gpu, flavors int, specs []NodeSpec) (*Topology, error) {
	t, _, err := NewNamed(levels, resources, gpu, flavors, specs)
	return t, err
}

// NewNamed is New also giving the topology's nodes by name in plain
// memory (Names), for a caller that looks many of them up as soon as it
// is built.
func NewNamed(levels []string, resources, gpu, flavors int, specs []NodeSpec) (*Topology, Names, error) {
	order, sum, err := specsOrder(specs, len(levels))
	if err != nil {
		return nil, Names{}, err
	}
	if sum.vacant {
		sorted := make([]NodeSpec, len(order))
		for i, o := range order {
			sorted[i] = specs[o]
		}
		specs, _ = keepRoom(sorted, -1)
		return build(levels, resources, gpu, flavors, specs, nil, -1, nil)
	}
	return build(levels, resources, gpu, flavors, specs, order, sum.nameBytes, sum.labels)
}

// compareSpecs is the nodes' order: by flavor, then label by label from
// the broadest level, then by name.
func compareSpecs(x, y *NodeSpec) int {
	return specOrder(x, y, func() int {
		for l := range x.Labels {
			if c := strings.Compare(x.Labels[l], y.Labels[l]); c != 0 {
				return c
			}
		}
		return 0
	})
}

// specOrder is compareSpecs with labels comparing x's labels with y's.
func specOrder(x, y *NodeSpec, labels func() int) int {
	if x.Flavor != y.Flavor {
		return int(x.Flavor) - int(y.Flavor)
	}
	if c := labels(); c != 0 {
		return c
	}
	if x.vacant != y.vacant {
		if x.vacant {
			return 1
		}
		return -1
	}
	return strings.Compare(x.Name, y.Name)
}

// specsSum is what specsOrder learns of the specs besides their order:
// whether any is a vacant slot, and how many bytes their names take.
type specsSum struct {
	vacant    bool
	nameBytes int
	// labels are the specs' labels by rank.
	labels *labelRanks
}

// labelRanks numbers the label values of specs at each level by their
// rank among the level's distinct values in string order: ranks[i*L+l]
// for spec i and level l, values[l] the level's values in that order. A
// label is looked up only where it differs from the spec's before, as it
// seldom does in a list of nodes rack by rack.
type labelRanks struct {
	L      int
	ranks  []int32
	values [][]string
	// ids and prev number the values as first seen, until rank.
	ids  []map[string]int32
	prev []int32
}

func newLabelRanks(specs, L int) *labelRanks {
	lr := &labelRanks{L: L, ranks: make([]int32, specs*L), values: make([][]string, L), ids: make([]map[string]int32, L), prev: make([]int32, L)}
	for l := range L {
		lr.ids[l], lr.prev[l] = make(map[string]int32), -1
	}
	return lr
}

// add numbers spec i's labels, one a level.
func (lr *labelRanks) add(i int, labels []string) {
	for l, v := range labels {
		if p := lr.prev[l]; p < 0 || lr.values[l][p] != v {
			id, ok := lr.ids[l][v]
			if !ok {
				id = int32(len(lr.values[l]))
				lr.ids[l][v] = id
				lr.values[l] = append(lr.values[l], v)
			}
			lr.prev[l] = id
		}
		lr.ranks[i*lr.L+l] = lr.prev[l]
	}
}

// rank turns the numbers add gave into ranks, once every spec is added.
func (lr *labelRanks) rank() {
	L := lr.L
	for l, vs := range lr.values {
		byValue := make([]int32, len(vs))
		for k := range byValue {
			byValue[k] = int32(k)
		}
		slices.SortFunc(byValue, func(a, b int32) int { return strings.Compare(vs[a], vs[b]) })
		rank := make([]int32, len(vs))
		sorted := make([]string, len(vs))
		for r, id := range byValue {
			rank[id], sorted[r] = int32(r), vs[id]
		}
		for k := l; k < len(lr.ranks); k += L {
			lr.ranks[k] = rank[lr.ranks[k]]
		}
		lr.values[l] = sorted
	}
	lr.ids, lr.prev = nil, nil
}

// specsOrder is the order of specs by compareSpecs, specs that compare
// equal in their order: specs[order[0]] is the least. It refuses a spec
// without L labels (ErrMissingLabel), the first in their order. The
// labels are compared by rank, the strings compared once for each
// distinct value rather than at every comparison of the sort, and a label
// looked up only where it differs from the spec's before, as it seldom
// does in a list of nodes rack by rack. Where a spec's flavor, label
// ranks and vacancy fit in one word, the sort compares those words, and
// then the words of the names' first bytes (sortkey.Prefix), so that it
// seldom reads a spec or a name; and it sorts the runs of specs of one
// word, then the specs of one word by name. The specs are read once.
func specsOrder(specs []NodeSpec, L int) ([]int, specsSum, error) {
	var sum specsSum
	lr := newLabelRanks(len(specs), L)
	type keyed struct {
		key, name uint64
		i         int32
	}
	// keys[i].key holds spec i's flavor and vacancy until its ranks are
	// known.
	keys := make([]keyed, len(specs))
	flavors, negative := int32(0), false
	for i := range specs {
		sp := &specs[i]
		if len(sp.Labels) != L {
			return nil, sum, fmt.Errorf("%w: node %q has %d of %d levels", ErrMissingLabel, sp.Name, len(sp.Labels), L)
		}
		lr.add(i, sp.Labels)
		flavors, negative = max(flavors, sp.Flavor), negative || sp.Flavor < 0
		sum.vacant = sum.vacant || sp.vacant
		sum.nameBytes += len(sp.Name)
		keys[i] = keyed{key: uint64(uint32(sp.Flavor))<<1 | b2u(sp.vacant), name: sortkey.Prefix(sp.Name), i: int32(i)}
	}
	lr.rank()
	sum.labels = lr
	ranks := lr.ranks
	width := make([]int, L)
	total := 1 + bits.Len32(uint32(flavors))
	for l, vs := range lr.values {
		width[l] = bits.Len32(uint32(max(len(vs)-1, 0)))
		total += width[l]
	}
	order := make([]int, len(specs))
	if negative || total > 64 {
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			return specOrder(&specs[a], &specs[b], func() int { return slices.Compare(ranks[a*L:(a+1)*L], ranks[b*L:(b+1)*L]) })
		})
		return order, sum, nil
	}
	runs := 0
	for i := range keys {
		k := keys[i].key >> 1
		for l, w := range width {
			k = k<<w | uint64(ranks[i*L+l])
		}
		keys[i].key = k<<1 | keys[i].key&1
		if i == 0 || keys[i].key != keys[i-1].key {
			runs++
		}
	}
	// Nodes come rack by rack as a rule: the runs of one key are sorted
	// by their keys, and only the specs of one key by their names.
	type run struct {
		key        uint64
		start, end int32
	}
	byKey := make([]run, 0, runs)
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j].key == keys[i].key {
			j++
		}
		byKey = append(byKey, run{keys[i].key, int32(i), int32(j)})
		i = j
	}
	slices.SortFunc(byKey, func(a, b run) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.start, b.start)
	})
	byName := func(a, b keyed) int {
		if a.name != b.name {
			return cmp.Compare(a.name, b.name)
		}
		if c := strings.Compare(specs[a.i].Name, specs[b.i].Name); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	}
	// A key of one run is sorted where it lies; the runs of a key given
	// apart are gathered in scratch first.
	var scratch []keyed
	at := 0
	for r := 0; r < len(byKey); {
		q := r + 1
		for q < len(byKey) && byKey[q].key == byKey[r].key {
			q++
		}
		group := keys[byKey[r].start:byKey[r].end]
		if q > r+1 {
			scratch = scratch[:0]
			for _, x := range byKey[r:q] {
				scratch = append(scratch, keys[x.start:x.end]...)
			}
			group = scratch
		}
		if !slices.IsSortedFunc(group, byName) {
			slices.SortFunc(group, byName)
		}
		for _, x := range group {
			order[at] = int(x.i)
			at++
		}
		r = q
	}
	return order, sum, nil
}

// b2u is 1 for true, 0 for false.
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// build builds the topology of nodes given in their order (compareSpecs),
// each with a label per level: specs[order[i]] is node i (nil order: the
// specs in their order). Their names take nameBytes bytes (-1: not
// counted yet), and lr gives their labels by rank (nil: not ranked yet).
// A node's label at a level is its value's rank among the level's values,
// past the values of the levels above: labelValues holds each level's
// distinct values in string order.
func build(levels []string, resources, gpu, flavors int, specs []NodeSpec, order []int, nameBytes int, lr *labelRanks) (*Topology, Names, error) {
	spec := func(i int) *NodeSpec {
		if order == nil {
			return &specs[i]
		}
		return &specs[order[i]]
	}
	t := &Topology{Levels: slices.Clone(levels), Resource: resources, GPU: gpu}
	t.nodes, t.numNodes = cow.Make[Node](len(specs)), len(specs)
	// Every node's name, labels and domains live in a few shared arrays
	// rather than in small objects of their own, and each distinct label
	// value is kept once: a large cluster is a few objects for the
	// collector, none of them a long array of pointers.
	// The names are written in the one pass over the nodes below, into
	// room made for all of them: each string taken of the builder so far
	// shares its memory.
	var all strings.Builder
	if nameBytes < 0 {
		nameBytes = 0
		for i := range specs {
			nameBytes += len(specs[i].Name)
		}
	}
	all.Grow(nameBytes)
	L := len(levels)
	if lr == nil {
		lr = newLabelRanks(len(specs), L)
		for i := range specs {
			lr.add(i, specs[i].Labels)
		}
		lr.rank()
	}
	base := make([]int32, L)
	for l, vs := range lr.values {
		base[l] = int32(len(t.labelValues))
		t.labelValues = append(t.labelValues, vs...)
	}
	t.labels = make([]int32, len(specs)*L)
	t.domains = make([]int32, len(specs)*(len(levels)+1))
	// The name index is filled in plain memory, each name read from the
	// names just laid out (Names), and made copy on write once full.
	slotCount := nameSlots(len(specs))
	byName := nameIndex{mask: uint32(slotCount - 1)}
	names := Names{slots: make([]int32, slotCount), mask: byName.mask, ends: make([]int32, len(specs))}
	for i := range names.slots {
		names.slots[i] = slotFree
	}
	at := int32(0)
	total := 0
	t.islands = make([]int32, len(specs)+1)
	// ranges[f] bounds the nodes of flavor f, which the order keeps
	// together; [n, n) for a flavor without nodes.
	ranges := make([][2]int32, flavors)
	for f := range ranges {
		ranges[f] = [2]int32{int32(len(specs)), int32(len(specs))}
	}
	for i := range specs {
		t.islands[i+1] = t.islands[i]
		sp := spec(i)
		src := i
		if order != nil {
			src = order[i]
		}
		for l := range L {
			t.labels[i*L+l] = base[l] + lr.ranks[src*L+l]
		}
		if f := sp.Flavor; f >= 0 && int(f) < flavors {
			if ranges[f][0] == int32(len(specs)) {
				ranges[f][0] = int32(i)
			}
			ranges[f][1] = int32(i + 1)
		}
		if sp.vacant {
			v := vacancy(sp.Flavor)
			v.name = [2]int32{at, at}
			names.ends[i] = at
			t.nodes.Set(i, v)
			t.vacant++
			continue
		}
		node, err := newNode(sp, resources, gpu)
		if err != nil {
			return nil, Names{}, err
		}
		gpus := node.GPUs
		migAt := int32(len(t.mig))
		t.mig = append(t.mig, sp.MIG...)
		node.shareBase = t.ShareSlots
		node.mig = [2]int32{migAt, int32(len(t.mig))}
		node.name = [2]int32{at, at + int32(len(sp.Name))}
		all.WriteString(sp.Name)
		names.names = all.String()
		t.nodes.Set(i, node)
		if node.Islands > 1 {
			t.islands[i+1]++
		}
		t.ShareSlots += int32(bits.OnesCount64(sp.Shareable))
		at += int32(len(sp.Name))
		names.ends[i] = at
		total += int(gpus)
		if !insertName(&byName, plainSlots(names.slots), sp.Name, int32(i), names.name) {
			return nil, Names{}, fmt.Errorf("%w: %q", ErrDuplicateName, sp.Name)
		}
		if int(gpus) > t.G {
			t.G = int(gpus)
		}
	}
	byName.slots = cow.From(names.slots)
	t.byName = byName
	t.names = all.String()
	names.names = t.names
	t.TotalGPUs = total
	t.buildDomains(ranges)
	t.buildIndex()
	return t, names, nil
}

// Node is node n, read-only.
func (t *Topology) Node(n int32) *Node { return t.nodes.Ptr(int(n)) }

// NodeRun is the nodes from n on in n's page of the topology's memory, up
// to end: a walk over consecutive nodes reads a page once, not a node at a
// time. Its length is that of State.Nodes(n, end), which pages the same way.
func (t *Topology) NodeRun(n, end int32) []Node { return t.nodes.Span(int(n), int(end-n)) }

// NumNodes is how many nodes the topology has.
func (t *Topology) NumNodes() int { return t.numNodes }

// newNode checks node sp's GPUs, islands, shareable GPUs and MIG slices
// and makes its Node, all but where its name, MIG slices and shares sit
// in the topology's arrays.
func newNode(sp *NodeSpec, resources, gpu int) (Node, error) {
	gpus := int64(0)
	if gpu >= 0 {
		gpus = sp.Capacity[gpu]
	}
	if gpus > MaxNodeGPUs {
		return Node{}, fmt.Errorf("%w: node %q has %d", ErrTooManyGPUs, sp.Name, gpus)
	}
	starts, islands, maxGroup, err := islandStarts(sp.Groups, int(gpus))
	if err != nil {
		return Node{}, fmt.Errorf("%w: node %q: %v", ErrBadGroups, sp.Name, err)
	}
	if extra := sp.Shareable &^ maskBits(int(gpus)); extra != 0 {
		return Node{}, fmt.Errorf("%w: node %q has %d GPUs, GPU %d is shareable", ErrBadShareable, sp.Name, gpus, bits.TrailingZeros64(extra))
	}
	partitioned, err := migMask(sp, int(gpus), resources, gpu)
	if err != nil {
		return Node{}, err
	}
	capacity := sp.Capacity
	if gpu >= 0 {
		capacity[gpu] -= int64(bits.OnesCount64(partitioned))
	}
	return Node{Flavor: sp.Flavor, Capacity: capacity, GPUs: int32(gpus),
		Islands: islands, islandStarts: starts, MaxGroup: maxGroup, MaxPods: sp.MaxPods,
		Shareable: sp.Shareable, Partitioned: partitioned}, nil
}

// islandStarts checks a node's island sizes and returns where each island
// starts (bit i for GPU i), how many there are and the largest.
func islandStarts(sizes []int, gpus int) (uint64, int32, int32, error) {
	if len(sizes) == 0 {
		return 1, 1, int32(gpus), nil
	}
	var starts uint64
	sum, maxG := 0, 0
	for _, s := range sizes {
		if s <= 0 {
			return 0, 0, 0, fmt.Errorf("group of %d GPUs", s)
		}
		if sum < MaxNodeGPUs {
			starts |= 1 << sum
		}
		sum += s
		maxG = max(maxG, s)
	}
	if sum != gpus {
		return 0, 0, 0, fmt.Errorf("groups sum to %d, the node has %d GPUs", sum, gpus)
	}
	return starts, int32(len(sizes)), int32(maxG), nil
}

// NodeName is node n's name.
func (t *Topology) NodeName(n int32) string {
	b := t.Node(n).name
	if b[0] < 0 {
		return t.added.At(int(t.NodeDomains(n)[len(t.Levels)]))[-b[0]-1 : b[1]]
	}
	return t.names[b[0]:b[1]]
}

// NodeLabel is node n's label value at level l (0 for the broadest).
func (t *Topology) NodeLabel(n int32, l int) string {
	return t.labelValues[t.labels[int(n)*len(t.Levels)+l]]
}

// NodeDomains is node n's domain index (into Domains) at each level of
// its flavor's tree, level 0 (the flavor root) first. Read-only.
func (t *Topology) NodeDomains(n int32) []int32 {
	k := len(t.Levels) + 1
	i := int(n) * k
	return t.domains[i : i+k : i+k]
}

// sameLabels reports whether nodes a and b have the same labels on the
// broadest l levels.
func (t *Topology) sameLabels(a, b int32, l int) bool {
	L := len(t.Levels)
	return slices.Equal(t.labels[int(a)*L:int(a)*L+l], t.labels[int(b)*L:int(b)*L+l])
}

// appendPath appends to b node n's broadest l label values joined with
// "/".
func (t *Topology) appendPath(b []byte, n int32, l int) []byte {
	for i := range l {
		if i > 0 {
			b = append(b, '/')
		}
		b = append(b, t.NodeLabel(n, i)...)
	}
	return b
}

// Groups appends the node's island masks, in GPU order, to dst.
func (n *Node) Groups(dst []uint64) []uint64 {
	for starts := n.islandStarts; starts != 0; {
		var gm uint64
		gm, starts = n.nextIsland(starts)
		dst = append(dst, gm)
	}
	return dst
}

func maskOf(from, n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return ((uint64(1) << n) - 1) << from
}

// buildDomains builds the flavors' domain trees, ranges[f] bounding the
// nodes of flavor f (empty ranges at 0 for a flavor without nodes).
func (t *Topology) buildDomains(ranges [][2]int32) {
	flavors := len(ranges)
	L := len(t.Levels)
	t.Flavors = make([]FlavorTree, flavors)
	// The domains' paths are written into one string, each domain's path
	// ending at pathEnd[d] (d counted from the first domain built here):
	// a string for all, not one a domain.
	built := len(t.Domains)
	var paths []byte
	var pathEnd []int
	for f := range t.Flavors {
		ft := &t.Flavors[f]
		first, end := ranges[f][0], ranges[f][1]
		ft.First, ft.End = first, end
		ft.Levels = make([][2]int32, L+1)
		// Level 0: the flavor's root.
		root := int32(len(t.Domains))
		t.Domains = append(t.Domains, Domain{Path: "", Level: 0, First: first, End: end, Parent: -1})
		pathEnd = append(pathEnd, len(paths))
		ft.Levels[0] = [2]int32{root, root + 1}
		for n := first; n < end; n++ {
			t.NodeDomains(n)[0] = root
		}
		for l := 1; l <= L; l++ {
			start := int32(len(t.Domains))
			for n := first; n < end; {
				m := n + 1
				for m < end && t.sameLabels(m, n, l) {
					m++
				}
				id := int32(len(t.Domains))
				t.Domains = append(t.Domains, Domain{Level: int32(l), First: n, End: m, Parent: t.NodeDomains(n)[l-1]})
				paths = t.appendPath(paths, n, l)
				pathEnd = append(pathEnd, len(paths))
				for k := n; k < m; k++ {
					t.NodeDomains(k)[l] = id
				}
				n = m
			}
			ft.Levels[l] = [2]int32{start, int32(len(t.Domains))}
		}
		// Children: the next level's domains, or nodes below the narrowest.
		for l := 0; l <= L; l++ {
			for d := ft.Levels[l][0]; d < ft.Levels[l][1]; d++ {
				dom := &t.Domains[d]
				if l == L {
					dom.ChildFirst, dom.ChildEnd = dom.First, dom.End
					continue
				}
				next := ft.Levels[l+1]
				dom.ChildFirst = t.domainAtOrAfter(next, dom.First)
				dom.ChildEnd = t.domainAtOrAfter(next, dom.End)
			}
		}
	}
	all := string(paths)
	for k, end := range pathEnd {
		start := 0
		if k > 0 {
			start = pathEnd[k-1]
		}
		t.Domains[built+k].Path = all[start:end]
	}
}

// domainAtOrAfter finds the first domain in rng whose first node is ≥ node.
func (t *Topology) domainAtOrAfter(rng [2]int32, node int32) int32 {
	lo, hi := rng[0], rng[1]
	for lo < hi {
		mid := (lo + hi) / 2
		if t.Domains[mid].First < node {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// DomainsWithin returns the index range of level-l domains of flavor f that
// lie inside the node range [first, end).
func (t *Topology) DomainsWithin(f int32, l int, first, end int32) (int32, int32) {
	rng := t.Flavors[f].Levels[l]
	return t.domainAtOrAfter(rng, first), t.domainAtOrAfter(rng, end)
}

// NodeIndex finds a node by name.
func (t *Topology) NodeIndex(name string) (int32, bool) { return t.byName.find(t, name) }

// nameIndex finds a node by name: an open-addressing table of node indices
// (-1 for a slot never used, -2 for one whose node was taken out) keyed by
// an FNV-1a hash of the name, probed linearly, at most three quarters
// used. Unlike a map of strings it holds no pointer, so the garbage
// collector never walks it; its slots are copy on write, so that a node
// taken out or put in place (Vacate, Fill) copies a page of them.
type nameIndex struct {
	slots cow.Slice[int32]
	mask  uint32
	// used counts the slots not -1: nodes and the -2 left by nodes gone.
	used int
}

const (
	slotFree = -1
	slotGone = -2
)

func newNameIndex(n int) nameIndex {
	size := nameSlots(n)
	x := nameIndex{slots: cow.Make[int32](size), mask: uint32(size - 1)}
	for i := 0; i < size; {
		span := x.slots.MutSpan(i, len(x.slots.Span(i, size-i)))
		for k := range span {
			span[k] = slotFree
		}
		i += len(span)
	}
	return x
}

// nameSlots is how many slots an index of n nodes has: a power of two at
// least twice n.
func nameSlots(n int) int {
	size := 8
	for size < 2*n {
		size *= 2
	}
	return size
}

func hashName(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// slotStore holds a nameIndex's slots: its copy-on-write slice, or plain
// memory while build fills an index of its own (plainSlots).
type slotStore interface {
	At(i int) int32
	Set(i int, v int32)
}

type plainSlots []int32

func (p plainSlots) At(i int) int32     { return p[i] }
func (p plainSlots) Set(i int, v int32) { p[i] = v }

// add indexes node i, and reports false, indexing nothing, when a node
// of the same name is indexed already.
func (x *nameIndex) add(t *Topology, i int32) bool {
	return insertName(x, &x.slots, t.NodeName(i), i, t.NodeName)
}

// insertName is add writing slots, with nameOf naming the nodes indexed.
func insertName[S slotStore](x *nameIndex, slots S, name string, i int32, nameOf func(int32) string) bool {
	reuse := -1
	for h := hashName(name) & x.mask; ; h = (h + 1) & x.mask {
		v := slots.At(int(h))
		if v == slotGone && reuse < 0 {
			reuse = int(h)
		}
		if v == slotFree {
			if reuse < 0 {
				reuse = int(h)
				x.used++
			}
			slots.Set(reuse, i)
			return true
		}
		if v >= 0 && nameOf(v) == name {
			return false
		}
	}
}

// slot is where the index holds node i, named name.
func (x *nameIndex) slot(name string, i int32) int {
	for h := hashName(name) & x.mask; ; h = (h + 1) & x.mask {
		if v := x.slots.At(int(h)); v == i || v == slotFree {
			return int(h)
		}
	}
}

// moveTo records that node name, indexed as node from, is node to now.
// The caller moves nodes so that no other node is indexed as from.
func (x *nameIndex) moveTo(name string, from, to int32) {
	if h := x.slot(name, from); x.slots.At(h) == from {
		x.slots.Set(h, to)
	}
}

// remove forgets node i, named name.
func (x *nameIndex) remove(name string, i int32) {
	if h := x.slot(name, i); x.slots.At(h) == i {
		x.slots.Set(h, slotGone)
	}
}

// full reports whether one more node would take the table past three
// quarters used: Fill then indexes the nodes anew (reindexed).
func (x *nameIndex) full() bool { return 4*(x.used+1) > 3*int(x.mask+1) }

// reindexed is a name index of t's nodes laid out anew, sized for them:
// the slots of the nodes taken out are free again.
func (t *Topology) reindexed() nameIndex {
	x := newNameIndex(t.Nodes())
	for n := range int32(t.numNodes) {
		if !t.Node(n).vacant {
			x.add(t, n)
		}
	}
	return x
}

func (x *nameIndex) find(t *Topology, name string) (int32, bool) {
	if x.mask == 0 {
		return 0, false
	}
	for h := hashName(name) & x.mask; ; h = (h + 1) & x.mask {
		i := x.slots.At(int(h))
		if i == slotFree {
			return 0, false
		}
		if i >= 0 && t.NodeName(i) == name {
			return i, true
		}
	}
}

// Names finds the nodes of a topology as NewNamed built it by name: its
// name index's slots and the ends of its nodes' names in plain memory, so
// that a look-up reads neither the copy-on-write slots nor the nodes. It
// knows nothing of the nodes an edit takes out or puts in later.
type Names struct {
	slots []int32
	mask  uint32
	names string
	// ends[i] is where node i's name ends in names.
	ends []int32
}

// name is node i's name.
func (x *Names) name(i int32) string {
	start := int32(0)
	if i > 0 {
		start = x.ends[i-1]
	}
	return x.names[start:x.ends[i]]
}

// Find is Topology.NodeIndex for the topology as built.
func (x *Names) Find(name string) (int32, bool) {
	for h := hashName(name) & x.mask; ; h = (h + 1) & x.mask {
		i := x.slots[h]
		if i == slotFree {
			return 0, false
		}
		if x.name(i) == name {
			return i, true
		}
	}
}

// LevelIndex returns the tree level of a level name: 1 for the broadest
// declared level, len(Levels) for the narrowest, len(Levels)+1 for "node";
// 0 and false for an unknown name.
func (t *Topology) LevelIndex(name string) (int, bool) {
	if name == "node" {
		return len(t.Levels) + 1, true
	}
	for i, l := range t.Levels {
		if l == name {
			return i + 1, true
		}
	}
	return 0, false
}

// LevelName is the inverse of LevelIndex; level 0 is "cluster".
func (t *Topology) LevelName(l int) string {
	switch {
	case l == 0:
		return "cluster"
	case l <= len(t.Levels):
		return t.Levels[l-1]
	}
	return "node"
}

// NodeLevel is the tree level of nodes.
func (t *Topology) NodeLevel() int { return len(t.Levels) + 1 }

// GPUFits is how many pods of g GPUs fit on node n when mask holds its free
// GPUs. A pod smaller than the node sits inside one GPU island when an island
// can hold it; a pod larger than every island takes free GPUs anywhere on
// the node.
func (n *Node) GPUFits(mask uint64, g int) int {
	if g <= 0 {
		return 0
	}
	if n.Islands == 1 || g > int(n.MaxGroup) {
		return bits.OnesCount64(mask) / g
	}
	c := 0
	for starts := n.islandStarts; starts != 0; {
		var gm uint64
		gm, starts = n.nextIsland(starts)
		c += bits.OnesCount64(mask&gm) / g
	}
	return c
}

// nextIsland returns the mask of the first island in starts (a suffix of
// islandStarts) and the starts after it.
func (n *Node) nextIsland(starts uint64) (uint64, uint64) {
	lo := bits.TrailingZeros64(starts)
	starts &= starts - 1
	hi := int(n.GPUs)
	if starts != 0 {
		hi = bits.TrailingZeros64(starts)
	}
	return maskOf(lo, hi-lo), starts
}

// TakeGPUs picks g free GPUs of mask for one pod: inside the island with the
// fewest free GPUs that still holds g (fragmentation-averse), lowest indices
// first; anywhere for pods larger than every island. It returns 0 when the
// pod does not fit.
func (n *Node) TakeGPUs(mask uint64, g int) uint64 {
	if g <= 0 || bits.OnesCount64(mask) < g {
		return 0
	}
	from := mask
	if n.Islands > 1 && g <= int(n.MaxGroup) {
		best, bestFree := uint64(0), 65
		for starts := n.islandStarts; starts != 0; {
			var gm uint64
			gm, starts = n.nextIsland(starts)
			if f := bits.OnesCount64(mask & gm); f >= g && f < bestFree {
				best, bestFree = gm, f
			}
		}
		if bestFree > 64 {
			return 0
		}
		from = mask & best
	}
	if bits.OnesCount64(from) == g {
		return from
	}
	var out uint64
	for range g {
		low := from & -from
		out |= low
		from &^= low
	}
	return out
}

// migMask checks a node's MIG slices (GPUs it has, neither shareable nor
// the GPU resource's own, instances counted at least once) and returns
// the GPUs they partition.
func migMask(sp *NodeSpec, gpus, resources, gpu int) (uint64, error) {
	var m uint64
	for _, sl := range sp.MIG {
		switch {
		case sl.GPU < 0 || int(sl.GPU) >= gpus:
			return 0, fmt.Errorf("%w: node %q has %d GPUs, GPU %d is partitioned", ErrBadMIG, sp.Name, gpus, sl.GPU)
		case sp.Shareable&(1<<sl.GPU) != 0:
			return 0, fmt.Errorf("%w: node %q: GPU %d is partitioned and shareable", ErrBadMIG, sp.Name, sl.GPU)
		case sl.Resource < 0 || int(sl.Resource) >= resources || int(sl.Resource) == gpu || sl.Count < 1:
			return 0, fmt.Errorf("%w: node %q: GPU %d: %d instances of resource %d", ErrBadMIG, sp.Name, sl.GPU, sl.Count, sl.Resource)
		}
		m |= 1 << sl.GPU
	}
	return m, nil
}

// MIGOf is node n's MIG slices, GPU by GPU, read-only.
func (t *Topology) MIGOf(n int32) []MIGSlice {
	b := t.Node(n).mig
	return t.mig[b[0]:b[1]:b[1]]
}
