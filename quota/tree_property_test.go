package quota

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

// naiveTree is a deliberately direct reading of the reference's §1.2 and
// §1.3: recursion over the node specs, nothing precomputed, usage of
// cohorts derived from the queues' totals. The property test holds the
// ResourceTree to it.
type naiveTree struct {
	nodes    []NodeSpec
	children [][]int32
	frs      int
	totals   [][]int64 // per queue and fr: the sum of what is admitted
}

func newNaive(nodes []NodeSpec, frs int) *naiveTree {
	nt := &naiveTree{nodes: nodes, children: make([][]int32, len(nodes)), frs: frs, totals: make([][]int64, len(nodes))}
	for i, s := range nodes {
		if s.Parent >= 0 {
			nt.children[s.Parent] = append(nt.children[s.Parent], int32(i))
		}
		nt.totals[i] = make([]int64, frs)
	}
	return nt
}

func (nt *naiveTree) quota(n int32, fr int) ResourceQuota {
	if q := nt.nodes[n].Quotas; q != nil {
		return q[fr]
	}
	return ResourceQuota{}
}

func (nt *naiveTree) subtree(n int32, fr int) int64 {
	s := nt.quota(n, fr).Nominal
	for _, c := range nt.children[n] {
		s = AddAmount(s, SubAmount(nt.subtree(c, fr), nt.local(c, fr)))
	}
	return s
}

func (nt *naiveTree) local(n int32, fr int) int64 {
	if ll := nt.quota(n, fr).LendingLimit; ll != nil {
		return max(0, SubAmount(nt.subtree(n, fr), *ll))
	}
	return 0
}

func (nt *naiveTree) usage(n int32, fr int) int64 {
	if nt.nodes[n].Queue {
		return nt.totals[n][fr]
	}
	var s int64
	for _, c := range nt.children[n] {
		s = AddAmount(s, max(0, SubAmount(nt.usage(c, fr), nt.local(c, fr))))
	}
	return s
}

func (nt *naiveTree) localAvailable(n int32, fr int) int64 {
	return max(0, SubAmount(nt.local(n, fr), nt.usage(n, fr)))
}

func (nt *naiveTree) available(n int32, fr int) int64 {
	p := nt.nodes[n].Parent
	if p < 0 {
		return SubAmount(nt.subtree(n, fr), nt.usage(n, fr))
	}
	pa := nt.available(p, fr)
	if bl := nt.quota(n, fr).BorrowingLimit; bl != nil {
		stored := SubAmount(nt.subtree(n, fr), nt.local(n, fr))
		used := max(0, SubAmount(nt.usage(n, fr), nt.local(n, fr)))
		pa = min(pa, AddAmount(SubAmount(stored, used), *bl))
	}
	return AddAmount(nt.localAvailable(n, fr), pa)
}

func (nt *naiveTree) potential(n int32, fr int) int64 {
	p := nt.nodes[n].Parent
	if p < 0 {
		return nt.subtree(n, fr)
	}
	pa := AddAmount(nt.local(n, fr), nt.potential(p, fr))
	if bl := nt.quota(n, fr).BorrowingLimit; bl != nil {
		pa = min(pa, AddAmount(nt.subtree(n, fr), *bl))
	}
	return pa
}

func (nt *naiveTree) borrowingWith(n int32, fr int, v int64) bool {
	return nt.subtree(n, fr) < AddAmount(nt.usage(n, fr), v)
}

func (nt *naiveTree) height(n int32) int {
	h := min(len(nt.children[n]), 1)
	for _, c := range nt.children[n] {
		if !nt.nodes[c].Queue {
			h = max(h, nt.height(c)+1)
		}
	}
	return h
}

func (nt *naiveTree) level(q int32, fr int, v int64) (int, bool) {
	hasParent := nt.nodes[q].Parent >= 0
	if !nt.borrowingWith(q, fr, v) || !hasParent {
		return 0, hasParent
	}
	remaining := SubAmount(v, nt.localAvailable(q, fr))
	a := nt.nodes[q].Parent
	for {
		if !nt.borrowingWith(a, fr, remaining) {
			return nt.height(a), nt.nodes[a].Parent >= 0
		}
		remaining = SubAmount(remaining, nt.localAvailable(a, fr))
		if nt.nodes[a].Parent < 0 {
			return nt.height(a), false
		}
		a = nt.nodes[a].Parent
	}
}

// forestShape is the shape of a forest of cohorts and queues, without
// quotas: a cohort under an earlier one but for one in cohortRoot, a
// queue under a cohort but for one in queueRoot.
func forestShape(rng *rand.Rand, cohorts, queues, cohortRoot, queueRoot int) []NodeSpec {
	nodes := make([]NodeSpec, 0, cohorts+queues)
	for i := range cohorts {
		p := int32(-1)
		if i > 0 && rng.IntN(cohortRoot) != 0 {
			p = int32(rng.IntN(i))
		}
		nodes = append(nodes, NodeSpec{Name: fmt.Sprintf("c%d", i), Parent: p})
	}
	for i := range queues {
		p := int32(-1)
		if cohorts > 0 && rng.IntN(queueRoot) != 0 {
			p = int32(rng.IntN(cohorts))
		}
		nodes = append(nodes, NodeSpec{Name: fmt.Sprintf("q%d", i), Parent: p, Queue: true})
	}
	return nodes
}

// randomTree is a random forest of up to 5 cohorts and 10 queues, with the
// node order shuffled so that parents may come after their children.
func randomTree(rng *rand.Rand) (nodes []NodeSpec, flavors, resources int) {
	flavors, resources = 1+rng.IntN(2), 1+rng.IntN(3)
	cohorts, queues := rng.IntN(6), 1+rng.IntN(10)
	logical := forestShape(rng, cohorts, queues, 5, 8)
	for i := range logical {
		s := &logical[i]
		if rng.IntN(6) == 0 {
			continue // no quota at all
		}
		s.Quotas = make([]ResourceQuota, flavors*resources)
		for fr := range s.Quotas {
			q := &s.Quotas[fr]
			q.Nominal = rng.Int64N(11)
			if rng.IntN(40) == 0 {
				q.Nominal = Unlimited
			}
			if s.Parent >= 0 && rng.IntN(3) == 0 {
				q.BorrowingLimit = lim(rng.Int64N(9))
			}
			if s.Parent >= 0 && rng.IntN(3) == 0 {
				bound := int64(16)
				if s.Queue && q.Nominal != Unlimited {
					bound = q.Nominal + 1
				}
				q.LendingLimit = lim(rng.Int64N(bound))
			}
		}
	}
	// Shuffle the node order and renumber parents.
	perm := rng.Perm(len(logical))
	nodes = make([]NodeSpec, len(logical))
	for from, to := range perm {
		s := logical[from]
		if s.Parent >= 0 {
			s.Parent = int32(perm[s.Parent])
		}
		nodes[to] = s
	}
	return nodes, flavors, resources
}

type admitted struct {
	q      int32
	flavor int
	vec    res.Vec
}

// Long random sequences of admissions and removals keep the incrementally
// maintained usage equal to the from-scratch one, and every query equal to
// the naive reading of the formulas.
func TestResourceTreeProperties(t *testing.T) {
	trees, steps := 150, 400
	if testing.Short() {
		trees = 30
	}
	for seed := range uint64(trees) {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		nodes, flavors, resources := randomTree(rng)
		tr, err := NewResourceTree(flavors, resources, nodes)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		nt := newNaive(nodes, tr.FRs())
		var queues []int32
		for n := range nodes {
			if nodes[n].Queue {
				queues = append(queues, int32(n))
			}
		}
		u := tr.NewUsage()
		var live []admitted
		var snap Usage
		var snapFrozen [][]int64
		for step := range steps {
			if len(live) > 0 && rng.IntN(5) < 2 {
				// Remove something admitted, in full, in any order.
				i := rng.IntN(len(live))
				a := live[i]
				live[i] = live[len(live)-1]
				live = live[:len(live)-1]
				apply(tr, u, rng, a, -1)
				for r := range resources {
					nt.totals[a.q][tr.FR(a.flavor, r)] -= a.vec[r]
				}
			} else {
				a := admitted{q: queues[rng.IntN(len(queues))], flavor: rng.IntN(flavors)}
				for r := range resources {
					if rng.IntN(3) != 0 {
						a.vec[r] = rng.Int64N(9)
					}
				}
				live = append(live, a)
				apply(tr, u, rng, a, 1)
				for r := range resources {
					nt.totals[a.q][tr.FR(a.flavor, r)] += a.vec[r]
				}
			}
			if step == steps/3 {
				snap, snapFrozen = u.Clone(), deepCopy(u)
			}
			if err := checkAgainstNaive(tr, nt, u, rng); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
		}
		for n := range snap {
			if !slices.Equal(snap[n], snapFrozen[n]) {
				t.Fatalf("seed %d: snapshot row %d changed from %v to %v", seed, n, snapFrozen[n], snap[n])
			}
		}
		for _, a := range live {
			apply(tr, u, rng, a, -1)
		}
		for n, row := range u {
			if slices.ContainsFunc(row, func(v int64) bool { return v != 0 }) {
				t.Fatalf("seed %d: %s keeps usage %v after every removal", seed, tr.Name(int32(n)), row)
			}
		}
	}
}

// apply adds or removes a through AddVec or, as often, per flavor-resource.
func apply(tr *ResourceTree, u Usage, rng *rand.Rand, a admitted, sign int) {
	if rng.IntN(2) == 0 {
		tr.AddVec(u, a.q, a.flavor, a.vec, sign)
		return
	}
	for r := range tr.Resources() {
		if sign > 0 {
			tr.AddUsage(u, a.q, tr.FR(a.flavor, r), a.vec[r])
		} else {
			tr.RemoveUsage(u, a.q, tr.FR(a.flavor, r), a.vec[r])
		}
	}
}

func checkAgainstNaive(tr *ResourceTree, nt *naiveTree, u Usage, rng *rand.Rand) error {
	fresh := u.Clone()
	if err := tr.Recompute(fresh); err != nil {
		return err
	}
	for n := range int32(tr.Len()) {
		if !slices.Equal(fresh[n], u[n]) {
			return fmt.Errorf("%s: incremental usage %v, Recompute %v", tr.Name(n), u[n], fresh[n])
		}
		if h := nt.height(n); tr.Height(n) != h {
			return fmt.Errorf("%s: height %d, naive %d", tr.Name(n), tr.Height(n), h)
		}
		for fr := range tr.FRs() {
			if got, want := u.At(n, fr), nt.usage(n, fr); got != want {
				return fmt.Errorf("%s fr %d: usage %d, naive %d", tr.Name(n), fr, got, want)
			}
			if got, want := tr.SubtreeQuota(n, fr), nt.subtree(n, fr); got != want {
				return fmt.Errorf("%s fr %d: SubtreeQuota %d, naive %d", tr.Name(n), fr, got, want)
			}
			avail, pot := tr.Available(u, n, fr), tr.PotentialAvailable(n, fr)
			if want := nt.available(n, fr); avail != want {
				return fmt.Errorf("%s fr %d: Available %d, naive %d", tr.Name(n), fr, avail, want)
			}
			if want := nt.potential(n, fr); pot != want {
				return fmt.Errorf("%s fr %d: PotentialAvailable %d, naive %d", tr.Name(n), fr, pot, want)
			}
			if avail > pot {
				return fmt.Errorf("%s fr %d: Available %d above PotentialAvailable %d", tr.Name(n), fr, avail, pot)
			}
			if !tr.IsQueue(n) {
				continue
			}
			v := rng.Int64N(20)
			level, reclaim := tr.BorrowingLevel(u, n, fr, v)
			wl, wr := nt.level(n, fr, v)
			if level != wl || reclaim != wr {
				return fmt.Errorf("%s fr %d: BorrowingLevel(%d) = %d, %v; naive %d, %v", tr.Name(n), fr, v, level, reclaim, wl, wr)
			}
			if level > tr.Height(tr.Root(n)) {
				return fmt.Errorf("%s fr %d: level %d above the root's height %d", tr.Name(n), fr, level, tr.Height(tr.Root(n)))
			}
		}
	}
	return nil
}
