package gang_test

// A property test of gang placement against a deliberately naive reference
// (in the manner of etcd-io/raft's quorum/quick_test.go): small random
// clusters, one pod set at a time, every assignment of pods to nodes
// enumerated.

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/topology"
)

// Resource numbering of every test cluster in this package.
const (
	resGPU = 0
	resCPU = 1
	nRes   = 2
)

// propNow is the clock of generated states; cooling nodes cool until later.
const propNow = 1000

// propCase is one generated cluster state and pod set.
type propCase struct {
	seed uint64
	st   *topology.State
	ps   gang.PodSet
	desc string
}

// genPropCase makes a random small cluster: 1..8 nodes on one or two levels,
// 1..8 GPUs a node, optional GPU groups and pod limits, some GPUs and cpu
// already booked, some nodes cordoned, down or cooling down; and one pod
// set of 1..6 pods.
func genPropCase(t *testing.T, seed uint64) propCase {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	levels := []string{"rack"}
	if rng.IntN(2) == 0 {
		levels = []string{"block", "rack"}
	}
	n := 1 + rng.IntN(8)
	var desc strings.Builder
	fmt.Fprintf(&desc, "levels %v\n", levels)
	specs := make([]topology.NodeSpec, n)
	for i := range specs {
		gpus := 1 + rng.IntN(8)
		var groups []int
		if gpus >= 2 && rng.IntN(3) == 0 {
			// Two or three islands summing to gpus.
			parts := 2 + rng.IntN(2)
			if parts > gpus {
				parts = gpus
			}
			groups = make([]int, parts)
			for k := range groups {
				groups[k] = 1
			}
			for left := gpus - parts; left > 0; left-- {
				groups[rng.IntN(parts)]++
			}
		}
		labels := []string{fmt.Sprintf("r%d", rng.IntN(3))}
		if len(levels) == 2 {
			// Rack names repeat across blocks: domains are told apart by
			// path, not by name.
			labels = []string{fmt.Sprintf("b%d", rng.IntN(2)), fmt.Sprintf("r%d", rng.IntN(2))}
		}
		var maxPods int32
		if rng.IntN(4) == 0 {
			maxPods = int32(1 + rng.IntN(4))
		}
		specs[i] = topology.NodeSpec{
			Name: fmt.Sprintf("n%d", i), Labels: labels,
			Capacity: res.Vec{resGPU: int64(gpus), resCPU: int64(1+rng.IntN(16)) * 1000},
			Groups:   groups, MaxPods: maxPods,
		}
	}
	topo, err := topology.New(levels, nRes, resGPU, 1, specs)
	if err != nil {
		t.Fatalf("seed %d: topology.New: %v", seed, err)
	}
	st := topology.NewState(topo, propNow)
	for i := range topo.NumNodes() {
		node := topo.Node(int32(i))
		for range rng.IntN(3) {
			ns := st.Node(int32(i))
			if node.MaxPods > 0 && ns.Pods >= node.MaxPods {
				break
			}
			free := st.FreeMask(int32(i))
			var mask uint64
			for k := rng.IntN(bits.OnesCount64(free) + 1); k > 0; k-- {
				// A random free GPU, anywhere: running pods need not respect
				// islands.
				idx := rng.IntN(bits.OnesCount64(free))
				m := free
				for range idx {
					m &= m - 1
				}
				low := m & -m
				mask |= low
				free &^= low
			}
			cpu := rng.Int64N(ns.Free[resCPU]/500+1) * 500
			st.Allocate(int32(i), mask, res.Vec{resGPU: int64(bits.OnesCount64(mask)), resCPU: cpu}, 1)
		}
	}
	st.Flush()
	for i := range topo.NumNodes() {
		switch rng.IntN(12) {
		case 0:
			st.SetCondition(int32(i), true, false, 0)
		case 1:
			st.SetCondition(int32(i), false, true, 0)
		case 2:
			st.SetCondition(int32(i), false, false, propNow+100)
		case 3:
			// A cooldown that has already ended.
			st.SetCondition(int32(i), false, false, propNow-5)
		}
	}
	st.Flush()
	for i := range topo.NumNodes() {
		node, ns := topo.Node(int32(i)), st.Node(int32(i))
		fmt.Fprintf(&desc, "  %s %v gpus=%d groups=%v free=%0*b cpu=%d pods=%d/%d cordoned=%v down=%v cooldown=%d\n",
			topo.NodeName(int32(i)), nodeLabels(topo, int32(i)), node.GPUs, node.Groups(nil), node.GPUs, st.FreeMask(int32(i)), ns.Free[resCPU],
			ns.Pods, node.MaxPods, ns.Cordoned, ns.Down, ns.CooldownUntil)
	}

	ps := gang.PodSet{Flavor: 0, Count: int64(1 + rng.IntN(6)), GPUs: rng.IntN(5), Mode: gang.Mode(1 + rng.IntN(3)), Policy: gang.Pack}
	switch rng.IntN(8) {
	case 0, 1, 2:
		ps.Policy = gang.Spread
	case 3:
		ps.Policy = gang.Balanced
	}
	var cpu int64
	if rng.IntN(2) == 0 {
		cpu = int64(1+rng.IntN(8)) * 500
	}
	ps.Res = res.Vec{resGPU: int64(ps.GPUs), resCPU: cpu}
	if ps.Mode != gang.Unconstrained {
		ps.Level = 1 + rng.IntN(topo.NodeLevel())
	}
	if rng.IntN(4) == 0 {
		// One or two layers of slices at or below the main level; the
		// count is a multiple of the outer size, at most 8.
		nl := topo.NodeLevel()
		lo := max(ps.Level, 1)
		inner := gang.SliceSpec{Level: lo + rng.IntN(nl-lo+1), Size: int64(1 + rng.IntN(3))}
		ps.Slices = []gang.SliceSpec{inner}
		if inner.Level < nl && rng.IntN(2) == 0 {
			outer := inner
			outer.Size *= int64(1 + rng.IntN(2))
			inner.Level += 1 + rng.IntN(nl-inner.Level)
			ps.Slices = []gang.SliceSpec{outer, inner}
		}
		k := ps.Slices[0].Size
		ps.Count = k * int64(1+rng.IntN(3))
		for ps.Count > 8 {
			ps.Count -= k
		}
	}
	ps.AvoidStranding = rng.IntN(2) == 0
	fmt.Fprintf(&desc, "pod set: count=%d gpus=%d cpu=%d mode=%d level=%d policy=%d slices=%v avoidStranding=%v", ps.Count, ps.GPUs, cpu, ps.Mode, ps.Level, ps.Policy, ps.Slices, ps.AvoidStranding)
	return propCase{seed: seed, st: st, ps: ps, desc: desc.String()}
}

// refPlacer is the naive reference: it knows only the per-node free state and
// enumerates.
type refPlacer struct {
	st *topology.State
	ps *gang.PodSet
	// max[n] is the most pods of ps node n holds on its own.
	max []int64
}

func newRefPlacer(st *topology.State, ps *gang.PodSet) *refPlacer {
	r := &refPlacer{st: st, ps: ps, max: make([]int64, st.T.NumNodes())}
	for n := range st.T.NumNodes() {
		r.max[n] = r.nodeMax(int32(n))
	}
	return r
}

// usable is the node condition rule, restated.
func (r *refPlacer) usable(n int32) bool {
	ns := r.st.Node(n)
	return !ns.Cordoned && !ns.Down && ns.CooldownUntil <= r.st.Now()
}

// islandOK is the GPU island rule: a pod no larger than the largest island
// sits inside one island; a larger pod takes GPUs anywhere on the node.
func islandOK(node *topology.Node, mask uint64, g int) bool {
	if g > int(node.MaxGroup) {
		return true
	}
	for _, gm := range node.Groups(nil) {
		if mask&^gm == 0 {
			return true
		}
	}
	return false
}

// gpusFit reports whether c pods of g GPUs each can be given disjoint GPU
// masks out of free, by trying every mask (in increasing order, the pods
// being alike).
func gpusFit(node *topology.Node, free uint64, c, g int, above uint64) bool {
	if c == 0 {
		return true
	}
	all := uint64(1)<<node.GPUs - 1
	for m := above + 1; m <= all; m++ {
		if bits.OnesCount64(m) != g || m&^free != 0 || !islandOK(node, m, g) {
			continue
		}
		if gpusFit(node, free&^m, c-1, g, m) {
			return true
		}
	}
	return false
}

// fits reports whether c pods of the pod set fit on node n on their own.
func (r *refPlacer) fits(n int32, c int64) bool {
	if c == 0 {
		return true
	}
	if !r.usable(n) {
		return false
	}
	node, ns, ps := r.st.T.Node(n), r.st.Node(n), r.ps
	if ps.Policy == gang.Spread && c > 1 {
		return false
	}
	if node.MaxPods > 0 && int64(ns.Pods)+c > int64(node.MaxPods) {
		return false
	}
	if c*ps.Res[resCPU] > ns.Free[resCPU] {
		return false
	}
	if ps.GPUs > 0 && !gpusFit(node, r.st.FreeMask(n), int(c), ps.GPUs, 0) {
		return false
	}
	return true
}

// nodeMax is the most pods node n holds. A pod that asks for nothing a node
// can run out of is limited by the pod set's count, as the placer counts it.
func (r *refPlacer) nodeMax(n int32) int64 {
	ps := r.ps
	if ps.GPUs == 0 && ps.Res[resCPU] == 0 && r.st.T.Node(n).MaxPods == 0 && ps.Policy != gang.Spread {
		if !r.usable(n) {
			return 0
		}
		return ps.Count
	}
	c := int64(0)
	for r.fits(n, c+1) {
		c++
	}
	return c
}

// leastFree is Kueue's least free capacity over the nodes, restated from
// per-node counts alone: the nodes ordered by the pods each holds, fewest
// first, ties by path (node index); the first that holds the whole pod set
// takes it all; when none does, each in that order takes all it holds until
// the pod set is placed. Under AvoidStranding the node that takes it all is
// the one with the fewest stranded GPUs (r.stranded) first. It returns the
// pods per node.
func (r *refPlacer) leastFree() []int64 {
	order := make([]int, len(r.max))
	for n := range order {
		order[n] = n
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(r.max[a] - r.max[b]) })
	counts := make([]int64, len(r.max))
	holder := -1
	for _, n := range order {
		if r.max[n] < r.ps.Count {
			continue
		}
		if holder < 0 || (r.ps.AvoidStranding && r.stranded(n) < r.stranded(holder)) {
			holder = n
		}
		if !r.ps.AvoidStranding {
			break
		}
	}
	if holder >= 0 {
		counts[holder] = r.ps.Count
		return counts
	}
	left := r.ps.Count
	for _, n := range order {
		take := min(r.max[n], left)
		counts[n] = take
		left -= take
	}
	return counts
}

// stranded is how many free GPUs of node n pods of the pod set could take
// by GPUs alone but not for want of something else: the GPUs of the pods
// the node's GPUs hold beyond those it holds.
func (r *refPlacer) stranded(n int) int64 {
	g := r.ps.GPUs
	if g == 0 || !r.usable(int32(n)) {
		return 0
	}
	node, free := r.st.T.Node(int32(n)), r.st.FreeMask(int32(n))
	byGPUs := int64(0)
	for gpusFit(node, free, int(byGPUs)+1, g, 0) {
		byGPUs++
	}
	return (byGPUs - r.max[n]) * int64(g)
}

// domainOf is node n's domain at tree level l, as its label path (the node's
// name at the node level).
func domainOf(t *topology.Topology, n int32, l int) string {
	if l >= t.NodeLevel() {
		return "node:" + t.NodeName(n)
	}
	return strings.Join(nodeLabels(t, n)[:l], "/")
}

// nodeLabels is node n's label value at every level, broad to narrow.
func nodeLabels(t *topology.Topology, n int32) []string {
	out := make([]string, len(t.Levels))
	for l := range out {
		out[l] = t.NodeLabel(n, l)
	}
	return out
}

// sliceSize is the size of the slice layer at tree level l, 1 for none.
func (r *refPlacer) sliceSize(l int) int64 {
	for _, sl := range r.ps.Slices {
		if sl.Level == l {
			return sl.Size
		}
	}
	return 1
}

// domainCounts is, per domain of level l (by path), how many pods its nodes
// hold in whole slices: every domain of a slice layer's level holds a
// multiple of the layer's size, its largest one within what its children
// hold.
func (r *refPlacer) domainCounts(l int) map[string]int64 {
	t := r.st.T
	nl := t.NodeLevel()
	cur := map[string]int64{}
	for n := range t.NumNodes() {
		cur[domainOf(t, int32(n), nl)] = r.max[n] - r.max[n]%r.sliceSize(nl)
	}
	for lvl := nl - 1; lvl >= l; lvl-- {
		next := map[string]int64{}
		seen := map[string]bool{}
		for n := range t.NumNodes() {
			child := domainOf(t, int32(n), lvl+1)
			if !seen[child] {
				seen[child] = true
				next[domainOf(t, int32(n), lvl)] += cur[child]
			}
		}
		for k, v := range next {
			next[k] = v - v%r.sliceSize(lvl)
		}
		cur = next
	}
	return cur
}

// valid reports whether a composition (pods per node) satisfies the pod set.
func (r *refPlacer) valid(counts []int64) bool {
	sum := int64(0)
	domain := ""
	for n, c := range counts {
		if c == 0 {
			continue
		}
		sum += c
		if !r.fits(int32(n), c) {
			return false
		}
		if r.ps.Mode == gang.Required {
			d := domainOf(r.st.T, int32(n), r.ps.Level)
			if domain != "" && d != domain {
				return false
			}
			domain = d
		}
	}
	// With slices, pods can be ordered so that every size consecutive pods
	// share a domain of the layer's level exactly when every such domain
	// holds a multiple of the size.
	for _, sl := range r.ps.Slices {
		per := map[string]int64{}
		for n, c := range counts {
			per[domainOf(r.st.T, int32(n), sl.Level)] += c
		}
		for _, c := range per {
			if c%sl.Size != 0 {
				return false
			}
		}
	}
	return sum == r.ps.Count
}

// solutions enumerates every composition of the pod set's count over the
// nodes and returns the valid ones, as keys.
func (r *refPlacer) solutions() map[string]bool {
	out := map[string]bool{}
	counts := make([]int64, r.st.T.NumNodes())
	var rec func(n int, left int64)
	rec = func(n int, left int64) {
		if n == len(counts)-1 {
			counts[n] = left
			if r.valid(counts) {
				out[fmt.Sprint(counts)] = true
			}
			return
		}
		for c := int64(0); c <= left; c++ {
			counts[n] = c
			rec(n+1, left-c)
		}
	}
	rec(0, r.ps.Count)
	return out
}

// checkAssignments checks an assignment list for the pod set against the
// state, independently of the placer: every rule the reference knows.
func checkAssignments(st *topology.State, ps *gang.PodSet, asg []gang.Assignment) error {
	t := st.T
	if int64(len(asg)) != ps.Count {
		return fmt.Errorf("%d assignments for %d pods", len(asg), ps.Count)
	}
	used := map[int32]uint64{}
	pods := map[int32]int64{}
	domain := ""
	for i, a := range asg {
		if a.Node < 0 || int(a.Node) >= t.NumNodes() {
			return fmt.Errorf("pod %d: node %d out of range", i, a.Node)
		}
		node, ns, name := t.Node(a.Node), st.Node(a.Node), t.NodeName(a.Node)
		if !ns.Usable(st.Now()) {
			return fmt.Errorf("pod %d on %s: node not usable", i, name)
		}
		if got := bits.OnesCount64(a.GPUs); got != ps.GPUs {
			return fmt.Errorf("pod %d on %s: %d GPUs, wants %d", i, name, got, ps.GPUs)
		}
		if a.GPUs&^st.FreeMask(a.Node) != 0 {
			return fmt.Errorf("pod %d on %s: GPUs %b not free (free %b)", i, name, a.GPUs, st.FreeMask(a.Node))
		}
		if a.GPUs&used[a.Node] != 0 {
			return fmt.Errorf("pod %d on %s: GPUs %b used twice", i, name, a.GPUs&used[a.Node])
		}
		if ps.GPUs > 0 && !islandOK(node, a.GPUs, ps.GPUs) {
			return fmt.Errorf("pod %d on %s: GPUs %b straddle islands %v", i, name, a.GPUs, node.Groups(nil))
		}
		used[a.Node] |= a.GPUs
		pods[a.Node]++
		if ps.Mode == gang.Required {
			d := domainOf(t, a.Node, ps.Level)
			if domain != "" && d != domain {
				return fmt.Errorf("pod %d on %s: domain %s, earlier pods in %s (required level %d)", i, name, d, domain, ps.Level)
			}
			domain = d
		}
	}
	for _, sl := range ps.Slices {
		for i := 0; i < len(asg); i += int(sl.Size) {
			d := domainOf(t, asg[i].Node, sl.Level)
			for _, a := range asg[i:min(i+int(sl.Size), len(asg))] {
				if got := domainOf(t, a.Node, sl.Level); got != d {
					return fmt.Errorf("slice split: pods %d..%d span %s and %s (slices of %d at level %d)", i, i+int(sl.Size)-1, d, got, sl.Size, sl.Level)
				}
			}
		}
	}
	for n, c := range pods {
		node, ns := t.Node(n), st.Node(n)
		if c*ps.Res[resCPU] > ns.Free[resCPU] {
			return fmt.Errorf("node %s: %d pods × %d cpu > %d free", t.NodeName(n), c, ps.Res[resCPU], ns.Free[resCPU])
		}
		if node.MaxPods > 0 && int64(ns.Pods)+c > int64(node.MaxPods) {
			return fmt.Errorf("node %s: %d+%d pods > max %d", t.NodeName(n), ns.Pods, c, node.MaxPods)
		}
		if ps.Policy == gang.Spread && c > 1 {
			return fmt.Errorf("node %s: %d pods of a spread pod set", t.NodeName(n), c)
		}
	}
	return nil
}

// composition is the pods per node of an assignment list.
func composition(nodes int, asg []gang.Assignment) []int64 {
	out := make([]int64, nodes)
	for _, a := range asg {
		if a.Node >= 0 && int(a.Node) < nodes {
			out[a.Node]++
		}
	}
	return out
}

func TestPlaceMatchesExhaustiveReference(t *testing.T) {
	checkAgainstReference(t)
	// Once more with the counter-guided search for one-pod nodes taken
	// on every scope, not only on large clusters.
	defer gang.SearchOnesEverywhere()()
	checkAgainstReference(t)
}

func checkAgainstReference(t *testing.T) {
	t.Helper()
	const cases = 4000
	var placed, refused, requiredFails, unconstrained int
	for seed := uint64(1); seed <= cases; seed++ {
		c := genPropCase(t, seed)
		st, ps := c.st, c.ps
		free := st.FreeGPUs()
		ref := newRefPlacer(st, &ps)
		sols := ref.solutions()

		var p gang.Placer
		p.Reset(st)
		// Counts of every domain, fast counters or not, are the sums of
		// what each node holds.
		for l := 0; l <= st.T.NodeLevel(); l++ {
			want := ref.domainCounts(l)
			var lo, hi int32 = 0, int32(st.T.NumNodes())
			if l < st.T.NodeLevel() {
				lo, hi = st.T.Flavors[0].Levels[l][0], st.T.Flavors[0].Levels[l][1]
			}
			for d := lo; d < hi; d++ {
				var key string
				if l == st.T.NodeLevel() {
					key = domainOf(st.T, d, l)
				} else {
					key = domainOf(st.T, st.T.Domains[d].First, l)
				}
				if got := p.Count(&ps, d, l); got != want[key] {
					t.Fatalf("seed %d: Count(level %d, domain %q) = %d, reference %d\n%s", seed, l, key, got, want[key], c.desc)
				}
			}
		}

		asg, fail, ok := p.Place([]gang.PodSet{ps}, nil)
		if st.FreeGPUs() != free {
			t.Fatalf("seed %d: Place changed the state's free GPUs", seed)
		}
		if ok {
			// (a) never an invalid placement.
			if err := checkAssignments(st, &ps, asg); err != nil {
				t.Fatalf("seed %d: invalid placement: %v\nassignments %v\n%s", seed, err, asg, c.desc)
			}
			key := fmt.Sprint(composition(st.T.NumNodes(), asg))
			if !sols[key] {
				t.Fatalf("seed %d: placement %s is not among the reference's %d solutions\n%s", seed, key, len(sols), c.desc)
			}
			if ps.Mode == gang.Unconstrained && len(ps.Slices) == 0 {
				unconstrained++
				if want := fmt.Sprint(ref.leastFree()); key != want {
					t.Fatalf("seed %d: unconstrained placement %s, least free capacity gives %s\n%s", seed, key, want, c.desc)
				}
			}
			// The same answer from counters rebuilt from scratch.
			rebuilt := st.Fork()
			rebuilt.Rebuild()
			var q gang.Placer
			q.Reset(rebuilt)
			again, _, ok2 := q.Place([]gang.PodSet{ps}, nil)
			if !ok2 || !slices.Equal(again, asg) {
				t.Fatalf("seed %d: on rebuilt counters: ok %v, %v; incremental %v\n%s", seed, ok2, again, asg, c.desc)
			}
			placed++
			continue
		}
		refused++
		if len(asg) != 0 {
			t.Fatalf("seed %d: failed placement returned %d assignments", seed, len(asg))
		}
		// (b) whenever the reference finds a placement, so does the placer.
		if len(sols) > 0 {
			var example string
			for k := range sols {
				if example == "" || k < example {
					example = k
				}
			}
			t.Fatalf("seed %d: placer failed (%+v), the reference places it, e.g. %s\n%s", seed, fail, example, c.desc)
		}
		// (c) a required failure reports the best domain of its level.
		if ps.Mode == gang.Required {
			requiredFails++
			best := int64(0)
			for _, v := range ref.domainCounts(ps.Level) {
				best = max(best, v)
			}
			if fail.Level != ps.Level || fail.Need != ps.Count || fail.Fit >= fail.Need || fail.Fit != best {
				t.Fatalf("seed %d: failure %+v; want level %d, need %d, fit %d (< need)\n%s", seed, fail, ps.Level, ps.Count, best, c.desc)
			}
		}
	}
	t.Logf("%d cases: %d placed (%d unconstrained), %d refused (%d with a required level)", cases, placed, unconstrained, refused, requiredFails)
	if placed < cases/4 || refused < cases/20 || requiredFails == 0 || unconstrained < cases/20 {
		t.Errorf("the generator is lopsided: %d placed, %d unconstrained, %d refused, %d required failures", placed, unconstrained, refused, requiredFails)
	}
}

// TestReferenceAgreesWithGPUFits pins the reference's island rule to
// topology.Node.GPUFits on every mask of a few node shapes, so that the two
// cannot drift apart silently.
func TestReferenceAgreesWithGPUFits(t *testing.T) {
	shapes := [][]int{nil, {4, 4}, {2, 2, 2, 2}, {3, 5}, {1, 2, 3}}
	for _, groups := range shapes {
		gpus := 8
		if groups != nil {
			gpus = 0
			for _, g := range groups {
				gpus += g
			}
		}
		topo, err := topology.New(nil, nRes, resGPU, 1, []topology.NodeSpec{{Name: "n", Capacity: res.Vec{resGPU: int64(gpus)}, Groups: groups}})
		if err != nil {
			t.Fatal(err)
		}
		node := topo.Node(0)
		for mask := uint64(0); mask < 1<<gpus; mask++ {
			for g := 1; g <= gpus; g++ {
				want := 0
				for gpusFit(node, mask, want+1, g, 0) {
					want++
				}
				if got := node.GPUFits(mask, g); got != want {
					t.Fatalf("groups %v, free %0*b, %d GPUs a pod: GPUFits %d, reference %d", groups, gpus, mask, g, got, want)
				}
				if m := node.TakeGPUs(mask, g); (m != 0) != (want > 0) || m&^mask != 0 || (m != 0 && (bits.OnesCount64(m) != g || !islandOK(node, m, g))) {
					t.Fatalf("groups %v, free %0*b, %d GPUs a pod: TakeGPUs %b", groups, gpus, mask, g, m)
				}
			}
		}
	}
}

// TestPlaceOverlayMatchesCommitted checks the placer's overlay: placing two
// pod sets at once gives the second the same placement as placing the first,
// booking it in the state, and placing the second on what is left.
func TestPlaceOverlayMatchesCommitted(t *testing.T) {
	checkOverlayMatchesCommitted(t)
	// Once more with the counter-guided search for one-pod nodes taken
	// on every scope.
	defer gang.SearchOnesEverywhere()()
	checkOverlayMatchesCommitted(t)
}

func checkOverlayMatchesCommitted(t *testing.T) {
	t.Helper()
	const cases = 3000
	both := 0
	for seed := uint64(1); seed <= cases; seed++ {
		c := genPropCase(t, seed)
		st, first := c.st, c.ps
		second := genPropCase(t, seed+1_000_000).ps
		if second.Mode != gang.Unconstrained && second.Level > st.T.NodeLevel() {
			second.Level = st.T.NodeLevel()
		}
		var p gang.Placer
		p.Reset(st)
		asg, _, ok := p.Place([]gang.PodSet{first, second}, nil)

		p.Reset(st)
		asg1, _, ok1 := p.Place([]gang.PodSet{first}, nil)
		if !ok1 {
			if ok {
				t.Fatalf("seed %d: both pod sets placed, the first alone not\n%s", seed, c.desc)
			}
			continue
		}
		next := st.Fork()
		for _, a := range asg1 {
			next.Allocate(a.Node, a.GPUs, first.Res, 1)
		}
		next.Flush()
		p.Reset(next)
		asg2, _, ok2 := p.Place([]gang.PodSet{second}, nil)
		if ok != ok2 {
			t.Fatalf("seed %d: together ok=%v, one after the other ok=%v\nsecond %+v\n%s", seed, ok, ok2, second, c.desc)
		}
		if !ok {
			continue
		}
		both++
		if !slices.Equal(asg[:len(asg1)], asg1) || !slices.Equal(asg[len(asg1):], asg2) {
			t.Fatalf("seed %d: together %v; one after the other %v then %v\nsecond %+v\n%s", seed, asg, asg1, asg2, second, c.desc)
		}
		if err := checkAssignments(next, &second, asg2); err != nil {
			t.Fatalf("seed %d: second pod set: %v\n%s", seed, err, c.desc)
		}
	}
	t.Logf("%d cases, %d with both pod sets placed", cases, both)
}
