package topology

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

// live lists t's node slots that hold a node, in order.
func live(t *Topology) []int32 {
	var out []int32
	for n := range int32(t.NumNodes()) {
		if !t.Vacant(n) {
			out = append(out, n)
		}
	}
	return out
}

// sameLive fails unless topology a, which may have vacant slots, holds
// the nodes of b, built by New without any, in b's order, with the same
// domains, and state sa of a has the counters sb of b has.
func sameLive(t *testing.T, label string, a, b *Topology, sa, sb *State) {
	t.Helper()
	idx := live(a)
	if len(idx) != b.NumNodes() || a.Nodes() != b.Nodes() || a.TotalGPUs != b.TotalGPUs || a.G != b.G || len(a.Domains) != len(b.Domains) {
		t.Fatalf("%s: %d nodes (%d), %d GPUs, G %d, %d domains; want %d, %d, %d, %d", label, len(idx), a.Nodes(), a.TotalGPUs, a.G, len(a.Domains), b.NumNodes(), b.TotalGPUs, b.G, len(b.Domains))
	}
	for i, n := range idx {
		x, y := *a.Node(n), *b.Node(int32(i))
		x.name, x.shareBase, y.shareBase, x.mig = y.name, 0, 0, y.mig
		if x != y || a.NodeName(n) != b.NodeName(int32(i)) || !slices.Equal(a.NodeDomains(n), b.NodeDomains(int32(i))) {
			t.Fatalf("%s: slot %d is %s %+v, want %s %+v", label, n, a.NodeName(n), x, b.NodeName(int32(i)), y)
		}
		if m, ok := a.NodeIndex(b.NodeName(int32(i))); !ok || m != n {
			t.Fatalf("%s: NodeIndex(%s) = %d %v, want %d", label, b.NodeName(int32(i)), m, ok, n)
		}
		if sa != nil && *sa.Node(n) != *sb.Node(int32(i)) {
			t.Fatalf("%s: node %s: %+v, want %+v", label, a.NodeName(n), *sa.Node(n), *sb.Node(int32(i)))
		}
	}
	for d := range a.Domains {
		x, y := a.Domains[d], b.Domains[d]
		if x.Path != y.Path || x.Level != y.Level || x.Parent != y.Parent || a.Islands(int32(d)) != b.Islands(int32(d)) {
			t.Fatalf("%s: domain %d is %+v, want %+v", label, d, x, y)
		}
	}
	for n := range int32(a.NumNodes()) {
		if a.Vacant(n) && sa != nil && (sa.Node(n).Usable(sa.Now()) || sa.Node(n).Pods != 0) {
			t.Fatalf("%s: vacant slot %d is usable: %+v", label, n, *sa.Node(n))
		}
	}
	if sa == nil {
		return
	}
	cooling := make([]int32, 0, len(sa.Cooling()))
	for _, n := range sa.Cooling() {
		cooling = append(cooling, int32(slices.Index(idx, n)))
	}
	if sa.FreeGPUs() != sb.FreeGPUs() || !slices.Equal(cooling, sb.Cooling()) {
		t.Fatalf("%s: free GPUs %d, cooling %v; want %d, %v", label, sa.FreeGPUs(), cooling, sb.FreeGPUs(), sb.Cooling())
	}
	sameDomainCounters(t, label, sa, sb)
}

// TestVacateFillEqualsNew takes nodes out in place and puts new ones in
// the slots left, at random, on topologies whose racks are indexed, and
// compares the topology, its state and its capacity state with New's,
// Restate's and NewCapacity's from the same nodes: a naive rebuild after
// every change. What the in-place path declines must be what it says it
// does not cover.
func TestVacateFillEqualsNew(t *testing.T) {
	defer func(m int32) { indexMinDomains = m }(indexMinDomains)
	indexMinDomains = 2
	levels := []string{"block", "rack"}
	var vacated, filled, declined, fillDeclined, vacDeclined, pods, idxDeclined int
	var by [3]int // fills that moved nodes up, none, down
	merged := 0
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 31))
		// Half the seeds put nodes in with spare blocks, as a store's
		// master does, each step's topology dropping them.
		var spares *Spares
		if seed%2 == 0 {
			spares = &Spares{}
		}
		var specs []NodeSpec
		next := 0
		spec := func() NodeSpec {
			sp := randomSpec(rng, fmt.Sprintf("n%03d", rng.IntN(1000)))
			sp.Flavor = int32(rng.IntN(2))
			sp.Labels[0], sp.Labels[1] = fmt.Sprintf("b%d", rng.IntN(2)), fmt.Sprintf("r%d", rng.IntN(3))
			if rng.IntN(8) != 0 {
				sp.Groups = nil // most racks have no node of several islands
			}
			next++
			return sp
		}
		for len(specs) < 12+rng.IntN(50) {
			sp := spec()
			if !slices.ContainsFunc(specs, func(x NodeSpec) bool { return x.Name == sp.Name }) {
				specs = append(specs, sp)
			}
		}
		now := int64(50)
		top, s, capacity := busyTopology(t, rng, levels, specs, now, 3, true)
		byName := func(s *State, name string) NodeState {
			n, _ := s.T.NodeIndex(name)
			return *s.Node(n)
		}
		var left []NodeSpec // the nodes taken out, latest last
		for step := range 60 {
			label := fmt.Sprintf("seed %d step %d", seed, step)
			var nt *Topology
			var sh Shift
			var ok bool
			var ns NodeState
			next := slices.Clone(specs)
			if rng.IntN(8) == 0 {
				// A merge keeps each domain's vacant slots, up to room,
				// and puts in room for the node's domain.
				sp := spec()
				if _, dup := top.NodeIndex(sp.Name); dup {
					continue
				}
				room := rng.IntN(3)
				add := append([]NodeSpec{sp}, top.RoomFor([]NodeSpec{sp}, room)...)
				mt, moved, err := top.Edit(nil, add, room)
				if err != nil {
					t.Fatal(err)
				}
				next = append(next, sp)
				want, err := New(levels, 2, 0, 3, next)
				if err != nil {
					t.Fatal(err)
				}
				for d := range mt.Domains {
					if v, _ := mt.holes(int32(d)); int(mt.Domains[d].Level) == len(levels) && int(v) > room {
						t.Fatalf("%s: merge with room %d: domain %q keeps %d vacant slots", label, room, mt.Domains[d].Path, v)
					}
				}
				fresh := func(m int32) (NodeState, bool) { return mt.Node(m).Empty(), mt.Vacant(m) || mt.NodeName(m) == sp.Name }
				got := s.Reshape(mt, moved, fresh)
				gotCap := capacity.ReshapeCapacity(mt, moved, func(m int32) bool { _, f := fresh(m); return f })
				wantState := Restate(want, now, func(m int32) NodeState {
					if name := want.NodeName(m); name != sp.Name {
						return byName(s, name)
					}
					return want.Node(m).Empty()
				})
				sameLive(t, label+" merge", mt, want, got, wantState)
				sameLive(t, label+" merge capacity", mt, want, gotCap, NewCapacity(want))
				merged++
				top, s, capacity, specs = mt, got, gotCap, next
				continue
			}
			if rng.IntN(2) == 0 {
				idx := live(top)
				n := idx[rng.IntN(len(idx))]
				name := top.NodeName(n)
				nt, sh, ok = top.Vacate(n, spares)
				if !ok {
					declined++
					vacDeclined++
					leaf := top.NodeDomains(n)[len(levels)]
					node := top.Node(n)
					if _, nodes := top.holes(leaf); nodes > 1 && !top.Islands(leaf) && node.Islands == 1 && int(node.GPUs) < top.G {
						t.Fatalf("%s: Vacate declined %s, which it covers", label, name)
					}
					continue
				}
				if s.Node(n).Pods > 0 {
					if sh2 := sh; s.Fork().Shift(nt, sh2, NodeState{}) {
						t.Fatalf("%s: Shift took out %s, which holds pods", label, name)
					}
					pods++
					continue // a store evicts them first
				}
				next = slices.DeleteFunc(next, func(x NodeSpec) bool { return x.Name == name })
				left = append(left, top.spec(n, make([]string, len(levels))))
			} else {
				sp := spec()
				if _, dup := top.NodeIndex(sp.Name); dup {
					continue
				}
				// Most land in a rack a node left, some in another rack
				// that exists, some in one that does not.
				if k := len(left); k > 0 && rng.IntN(3) != 0 {
					sp.Flavor, sp.Labels = left[k-1].Flavor, slices.Clone(left[k-1].Labels)
					left = left[:k-1]
				} else if idx := live(top); rng.IntN(5) != 0 {
					from := top.spec(idx[rng.IntN(len(idx))], make([]string, len(levels)))
					sp.Flavor, sp.Labels = from.Flavor, from.Labels
				}
				nt, sh, ok = top.Fill(&sp, func(n int32) bool { return s.Node(n).Pods > 0 }, spares)
				if !ok {
					declined++
					fillDeclined++
					continue
				}
				ns = NodeState{Free: nt.Node(sh.At).Capacity, FreeGPUs: nt.Node(sh.At).AllGPUs(), Cordoned: rng.IntN(4) == 0, CooldownUntil: now + int64(rng.IntN(40)) - 20}
				next = append(next, sp)
			}
			want, err := New(levels, 2, 0, 3, next)
			if err != nil {
				t.Fatal(err)
			}
			sameLive(t, label+" topology", nt, want, nil, nil)
			// The capacity state holds the most: where it takes the node,
			// the state does too.
			gotCap, okCap := capacity.Shifted(nt, sh, nil)
			got := s.Fork()
			if okGot := got.Shift(nt, sh, ns); okCap && !okGot {
				t.Fatalf("%s: the state took the node %v, the capacity state %v", label, okGot, okCap)
			}
			if !okCap {
				declined++ // the node outgrew the index laid out for it
				idxDeclined++
				continue
			}
			got.Flush()
			wantState := Restate(want, now, func(m int32) NodeState {
				if name := want.NodeName(m); sh.Fill && name == nt.NodeName(sh.At) {
					return ns
				} else {
					return byName(s, name)
				}
			})
			sameLive(t, label, nt, want, got, wantState)
			sameLive(t, label+" capacity", nt, want, gotCap, NewCapacity(want))
			checkIndex(t, got, rng, step)
			checkIndex(t, gotCap, rng, step)
			if sh.Fill {
				filled++
				by[sh.By+1]++
			} else {
				vacated++
			}
			// The shifted state takes writes as any.
			for _, n := range live(nt) {
				if node := nt.Node(n); rng.IntN(6) == 0 && node.GPUs > 0 {
					if mask := node.TakeGPUs(got.FreeMask(n), 1); mask != 0 && bits.OnesCount64(mask) == 1 {
						got.Allocate(n, mask, res.Vec{1, 0}, 1)
					}
				}
			}
			got.Flush()
			top, s, capacity, specs = nt, got, gotCap, next
		}
	}
	t.Logf("%d vacated, %d filled (moving nodes up, none, down: %v), %d merged, %d declined (fill %d, vacate %d, index %d), %d with pods", vacated, filled, by, merged, declined, fillDeclined, vacDeclined, idxDeclined, pods)
	if vacated < 200 || filled < 150 || fillDeclined < 50 || vacDeclined < 50 || idxDeclined < 20 || min(by[0], by[1], by[2]) < 20 || merged < 100 {
		t.Fatalf("%d vacated, %d filled, %d declined: the changes do not cover every path", vacated, filled, declined)
	}
}

// TestAddedNamesStayBounded takes nodes out of one rack and puts others in
// their place thousands of times, each under a new name: every node keeps
// its name and is found by it, the rack's added names stay within twice
// what its nodes' names take (and a few bytes), where they once grew with
// every node ever put in, and no Fill refuses for a name table full of
// the slots of nodes gone, which once cost a merge every few nodes.
func TestAddedNamesStayBounded(t *testing.T) {
	var specs []NodeSpec
	for i := range 6 {
		specs = append(specs, NodeSpec{Name: fmt.Sprintf("n%d", i), Labels: []string{"b0", "r0"}, Capacity: res.Vec{8, 64}})
	}
	top, err := New([]string{"block", "rack"}, 2, 0, 1, WithRoom(specs, 2))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	spares := &Spares{}
	names := []string{"n0", "n1", "n2", "n3", "n4", "n5"}
	compacted, merged := 0, 0
	for step := range 3000 {
		k := rng.IntN(len(names))
		n, ok := top.NodeIndex(names[k])
		if !ok {
			t.Fatalf("step %d: %s not found", step, names[k])
		}
		vt, _, ok := top.Vacate(n, spares)
		if !ok {
			t.Fatalf("step %d: Vacate(%s) refused", step, names[k])
		}
		names[k] = fmt.Sprintf("node-%d-%s", step, strings.Repeat("x", rng.IntN(12)))
		sp := NodeSpec{Name: names[k], Labels: []string{"b0", "r0"}, Capacity: res.Vec{8, 64}}
		before := 0
		if !vt.added.Empty() {
			before = len(vt.added.At(int(vt.NodeDomains(0)[2])))
		}
		ft, _, ok := vt.Fill(&sp, nil, spares)
		if !ok {
			// The name table is due to be laid out anew: the store
			// merges, as here.
			if ft, _, err = vt.Edit(nil, append([]NodeSpec{sp}, vt.RoomFor([]NodeSpec{sp}, 2)...), 2); err != nil {
				t.Fatalf("step %d: Edit: %v", step, err)
			}
			merged++
			before = 0
		}
		top = ft
		want := slices.Clone(names)
		slices.Sort(want)
		var got []string
		taken := 0
		for i := range top.NumNodes() {
			if name := top.NodeName(int32(i)); name != "" {
				got = append(got, name)
				taken += len(name)
				if j, ok := top.NodeIndex(name); !ok || j != int32(i) {
					t.Fatalf("step %d: NodeIndex(%s) = %d, %v; it is node %d", step, name, j, ok, i)
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("step %d: names %v, want %v", step, got, want)
		}
		held := 0
		if !top.added.Empty() {
			held = len(top.added.At(int(top.NodeDomains(0)[2])))
		}
		if held > 2*taken+64+len(names[k]) {
			t.Fatalf("step %d: the rack's added names hold %d bytes for %d bytes of names", step, held, taken)
		} else if held < before {
			compacted++
		}
	}
	t.Logf("3,000 nodes put in: the added names rewritten %d times, %d merges", compacted, merged)
	if merged > 0 {
		t.Errorf("%d merges: Fill lays out a full name table anew itself", merged)
	}
	if compacted < 10 {
		t.Errorf("the added names were rewritten %d times in 3,000 steps", compacted)
	}
}
