package cow

import (
	"math/rand/v2"
	"testing"
)

type kv struct{ k, v int }

// TestUpdateRewritesInPlaceOfItems: Update replaces exactly the items fn
// picks, in the tree and the buffer, and the version cloned before it
// still sees the old values.
func TestUpdateRewritesInPlaceOfItems(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	for trial := range 30 {
		b := NewBuffered(func(a, b kv) bool { return a.k < b.k })
		want := map[int]int{}
		for range rng.IntN(600) {
			k := rng.IntN(1000)
			b.Set(kv{k, 0})
			want[k] = 0
		}
		old := b.Clone()
		m := rng.IntN(7) + 1
		calls := 0
		b.Update(func(x kv) (kv, bool) {
			calls++
			if x.k%m != 0 {
				return x, false
			}
			return kv{x.k, x.k + 1}, true
		})
		if calls != len(want) {
			t.Fatalf("trial %d: fn called %d times for %d items", trial, calls, len(want))
		}
		n := 0
		b.Scan(func(x kv) bool {
			n++
			if wantV := map[bool]int{true: x.k + 1, false: 0}[x.k%m == 0]; x.v != wantV {
				t.Fatalf("trial %d: item %d has %d, want %d", trial, x.k, x.v, wantV)
			}
			return true
		})
		old.Scan(func(x kv) bool {
			if x.v != 0 {
				t.Fatalf("trial %d: the earlier version sees item %d changed", trial, x.k)
			}
			return true
		})
		if n != len(want) || old.Len() != len(want) {
			t.Fatalf("trial %d: %d items after, %d in the old version, want %d", trial, n, old.Len(), len(want))
		}
		// The updated tree takes further writes.
		b.Set(kv{5000, 1})
		if x, ok := b.Get(kv{k: 5000}); !ok || x.v != 1 {
			t.Fatalf("trial %d: a write after Update is lost", trial)
		}
	}
}
