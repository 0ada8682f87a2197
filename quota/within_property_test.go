package quota

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

// Where Fit said Fit and the queue's own usage row is what it was, Fit
// says Fit again exactly when WithinAvailable holds, whatever the other
// queues of the forest have admitted or released since: on random forests
// (borrowing and lending limits, Unlimited quotas), requests with and
// without hard caps and explicit zeros, and usage that grows and falls.
func TestWithinAvailableIsFitOnOthersUsage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 41))
	checked, flipped := 0, 0
	for world := range 400 {
		nodes, flavors, resources := randomTree(rng)
		tr, err := NewResourceTree(flavors, resources, nodes)
		if err != nil {
			t.Fatalf("world %d: %v", world, err)
		}
		var queues []int32
		for n := range nodes {
			if nodes[n].Queue {
				queues = append(queues, int32(n))
			}
		}
		charge := func(u Usage, sign int) {
			q, f := queues[rng.IntN(len(queues))], rng.IntN(flavors)
			var v res.Vec
			for r := range resources {
				v[r] = rng.Int64N(4)
			}
			for r := range resources {
				if sign < 0 && u[q][tr.FR(f, r)] < v[r] {
					return // release only what is used
				}
			}
			tr.AddVec(u, q, f, v, sign)
		}
		u := tr.NewUsage()
		for range rng.IntN(12) {
			charge(u, 1)
		}
		for range 20 {
			q, f := queues[rng.IntN(len(queues))], rng.IntN(flavors)
			fq := FlavorQuota{Flavor: int32(f), Covered: 1<<resources - 1}
			var earlier, need res.Vec
			var zeros uint16
			for r := range resources {
				fq.Nominal[r] = tr.Nominal(q, tr.FR(f, r))
				fq.Ever[r] = max(fq.Nominal[r], fq.Nominal[r]+rng.Int64N(3))
				if rng.IntN(3) == 0 {
					fq.Hard[r], fq.HardMask = rng.Int64N(12), fq.HardMask|1<<r
				}
				if rng.IntN(4) == 0 {
					earlier[r] = rng.Int64N(2)
				}
				if need[r] = rng.Int64N(4); need[r] == 0 && rng.IntN(2) == 0 {
					zeros |= 1 << r
				}
			}
			if tr.Fit(u, q, &fq, earlier, need, zeros).Verdict != Fit {
				continue
			}
			// Others admit and release; q's own row is put back as it was.
			later := u.Clone()
			own := slices.Clone(later[q])
			for range 1 + rng.IntN(6) {
				charge(later, []int{1, 1, -1}[rng.IntN(3)])
			}
			if !slices.Equal(later[q], own) {
				continue
			}
			checked++
			fits := tr.Fit(later, q, &fq, earlier, need, zeros).Verdict == Fit
			if fits != tr.WithinAvailable(later, q, &fq, earlier, need, zeros) {
				t.Fatalf("world %d: queue %d flavor %d, earlier %v need %v zeros %b: Fit says %v, WithinAvailable %v",
					world, q, f, earlier, need, zeros, fits, !fits)
			}
			if !fits {
				flipped++
			}
		}
	}
	if checked == 0 || flipped == 0 {
		t.Fatalf("%d requests checked, %d no longer fit: the property is vacuous", checked, flipped)
	}
}
