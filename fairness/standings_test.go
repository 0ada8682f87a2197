package fairness

import (
	"math/rand/v2"
	"testing"
)

// Standings agree with a scan over the keys set, through random changes.
func TestStandings(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	o := Order{FairSharing: true}
	for _, slots := range []int{1, 2, 5, 8, 13} {
		var st Standings
		st.Reset(o, slots)
		keys := make([]Key, slots)
		set := make([]bool, slots)
		for range 200 {
			s := rng.IntN(slots)
			if set[s] = rng.IntN(4) > 0; set[s] {
				keys[s] = Key{Queue: int32(s), QueueName: string(rune('a' + s)),
					Share: Share{Weighted: float64(rng.IntN(4)), Borrowing: rng.IntN(2) == 0},
					Turn:  Turn{Priority: int32(rng.IntN(3)), ID: "w"}}
				st.Set(s, &keys[s])
			} else {
				st.Set(s, nil)
			}
			want, any := -1, false
			for i := range slots {
				if set[i] && (!any || o.Compare(&keys[i], &keys[want]) < 0) {
					want, any = i, true
				}
			}
			got, ok := st.First()
			if ok != any || (ok && got != want) {
				t.Fatalf("%d slots: first %d (%v), want %d (%v)", slots, got, ok, want, any)
			}
		}
	}
	var empty Standings
	if _, ok := empty.First(); ok {
		t.Fatal("zero Standings have a first")
	}
}
