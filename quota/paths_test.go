package quota

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomForest describes n nodes: cohorts, each under an earlier cohort or
// a root, and queues under cohorts; shaped as a chain, a caterpillar (a
// chain with a queue at every cohort) or at random.
func randomForest(rng *rand.Rand, n int) []NodeSpec {
	nodes := make([]NodeSpec, n)
	var cohorts []int32
	shape := rng.IntN(3)
	for i := range nodes {
		nodes[i] = NodeSpec{Name: fmt.Sprintf("n%d", i), Parent: -1}
		switch {
		case shape == 0 && i < n-1, shape == 1 && i%2 == 0, shape == 2 && (len(cohorts) == 0 || rng.IntN(3) > 0):
			if len(cohorts) > 0 && rng.IntN(8) > 0 {
				p := cohorts[len(cohorts)-1]
				if shape == 2 {
					p = cohorts[rng.IntN(len(cohorts))]
				}
				nodes[i].Parent = p
			}
			cohorts = append(cohorts, int32(i))
		default:
			nodes[i].Queue = true
			if len(cohorts) > 0 {
				nodes[i].Parent = cohorts[len(cohorts)-1]
				if shape == 2 {
					nodes[i].Parent = cohorts[rng.IntN(len(cohorts))]
				}
			}
		}
	}
	// Shuffled, so that parents need not come before their children.
	perm := rng.Perm(n)
	out := make([]NodeSpec, n)
	for i, s := range nodes {
		if s.Parent >= 0 {
			s.Parent = int32(perm[s.Parent])
		}
		out[perm[i]] = s
	}
	return out
}

// TestPathsMatchWalk compares every node's Path and Root with a walk up its
// parents (the naive reference), on random forests, chains and
// caterpillars whose paths share storage.
func TestPathsMatchWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for c := range 300 {
		nodes := randomForest(rng, 1+rng.IntN(200))
		tree, err := NewResourceTree(1, 1, nodes)
		if err != nil {
			t.Fatal(err)
		}
		for i := range nodes {
			var want []int32
			for m := int32(i); m >= 0; m = nodes[m].Parent {
				want = append(want, m)
			}
			if got := tree.Path(int32(i)); !slices.Equal(got, want) {
				t.Fatalf("forest %d node %d: path %v, walk %v", c, i, got, want)
			}
			if got := tree.Root(int32(i)); got != want[len(want)-1] {
				t.Fatalf("forest %d node %d: root %d, walk %d", c, i, got, want[len(want)-1])
			}
		}
	}
}

// TestCycleNamesFirstNode closes a chain into a loop and expects the cycle
// error to name the first node whose walk up meets it.
func TestCycleNamesFirstNode(t *testing.T) {
	nodes := []NodeSpec{{Name: "q", Parent: 1, Queue: true}, {Name: "a", Parent: 2}, {Name: "b", Parent: 3}, {Name: "c", Parent: 1}}
	_, err := NewResourceTree(1, 1, nodes)
	if !errors.Is(err, ErrCohortCycle) || err.Error() != `quota: cycle in the cohort tree: through node "q"` {
		t.Fatalf("got %v", err)
	}
	_, err = Parents([]CohortSpec{{Name: "a", Parent: "b"}, {Name: "b", Parent: "c"}, {Name: "c", Parent: "b"}}, nil, nil)
	if !errors.Is(err, ErrCohortCycle) || err.Error() != `quota: cycle in the cohort tree: through cohort "a"` {
		t.Fatalf("got %v", err)
	}
}
