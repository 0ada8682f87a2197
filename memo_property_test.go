package allot

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// A decision made into a reused Decision, whose workspace remembers the
// preemption searches and placements that failed on the snapshot and what
// the empty cluster gave, is the decision made into a new one, byte for
// byte: for every pending workload of random worlds, and for a twin of
// each (another ID, the same ask), which the memories answer, and
// for variants that differ in one thing the memories must tell apart. The
// memories must have answered something for the property to mean
// anything.
func TestLoopMemoriesAreFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 43))
	worlds := 1500
	if testing.Short() {
		worlds = 200
	}
	searches, placements, capacities := 0, 0, 0
	for world := range worlds {
		b := carryWorld(rng)
		// Running workloads of every priority: whether one may be a victim
		// turns on the request's.
		for i := range b.Running {
			b.Running[i].Priority = int32(rng.IntN(3))
		}
		for i, n := 0, len(b.Pending); i < n; i++ {
			// A twin asks the same; the variants differ in one thing a
			// memory must tell apart: priority, submission, a pod set's
			// count, or a second pod set (the first then not final).
			for v := range 3 {
				twin := b.Pending[i]
				twin.ID = fmt.Sprintf("%s-%d", twin.ID, v)
				twin.PodSets = append([]PodSet(nil), twin.PodSets...)
				switch v {
				case 1:
					twin.Priority = int32(rng.IntN(3))
					twin.SubmittedAt = int64(rng.IntN(50))
				case 2:
					if len(twin.PodSets) == 2 {
						twin.PodSets = twin.PodSets[:1]
					} else if rng.IntN(2) == 0 {
						twin.PodSets = append(twin.PodSets, PodSet{Name: "b", Count: 1, PerPod: Resources{"gpu": 1, "cpu": 1}})
					} else {
						twin.PodSets[0].Count = 1 + (twin.PodSets[0].Count)%3
					}
				}
				b.Pending = append(b.Pending, twin)
			}
		}
		rng.Shuffle(len(b.Pending), func(i, j int) { b.Pending[i], b.Pending[j] = b.Pending[j], b.Pending[i] })
		s, err := b.Build()
		if err != nil {
			t.Fatalf("world %d: %v", world, err)
		}
		var reused Decision
		for _, w := range b.Pending {
			r := Request(w)
			DecideInto(s, r, &reused)
			var fresh Decision
			DecideInto(s, r, &fresh)
			got, _ := json.Marshal(&reused)
			want, _ := json.Marshal(&fresh)
			if string(got) != string(want) {
				t.Fatalf("world %d, %s: with the loop's memories\n%s\nafresh\n%s", world, w.ID, got, want)
			}
		}
		searches += reused.work.failed.Len()
		placements += len(reused.work.failedOnState.kept)
		capacities += len(reused.work.placedOnCapacity.kept)
	}
	if searches == 0 || placements == 0 || capacities == 0 {
		t.Fatalf("remembered %d failed searches, %d failed placements, %d answers of the empty cluster: the property is vacuous",
			searches, placements, capacities)
	}
	t.Logf("remembered %d failed searches, %d failed placements, %d answers of the empty cluster", searches, placements, capacities)
}
