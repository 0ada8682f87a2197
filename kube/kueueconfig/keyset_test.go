package kueueconfig

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeySet: random adds and removes leave a keySet holding what a map
// holds.
func TestKeySet(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 11))
	for range 200 {
		var s keySet
		want := map[string]bool{}
		for range r.IntN(20) {
			k := fmt.Sprint("ns/p", r.IntN(4))
			if r.IntN(3) == 0 {
				s.remove(k)
				delete(want, k)
			} else {
				s.add(k)
				want[k] = true
			}
			if s.len() != len(want) {
				t.Fatalf("len %d, want %d (%v)", s.len(), len(want), want)
			}
			if got := s.sorted(); !slices.Equal(got, sortedKeys(want)) {
				t.Fatalf("sorted %v, want %v", got, sortedKeys(want))
			}
			if got := slices.Sorted(s.all()); !slices.Equal(got, sortedKeys(want)) {
				t.Fatalf("all %v, want %v", got, sortedKeys(want))
			}
			if len(want) == 1 && !want[s.only()] {
				t.Fatalf("only %q, want one of %v", s.only(), want)
			}
		}
	}
}
