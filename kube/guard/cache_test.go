package guard

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
)

// The cache holds at most its size; the oldest entry leaves first.
func TestCacheBounded(t *testing.T) {
	s1, s2 := new(allot.Snapshot), new(allot.Snapshot)
	c := newCache(3)
	for i := range 5 {
		c.put(cacheKey{fmt.Sprint(i), s1}, answer{reason: fmt.Sprint(i)})
	}
	if c.len() != 3 {
		t.Fatalf("%d entries, want 3", c.len())
	}
	for i := range 5 {
		a, ok := c.get(cacheKey{fmt.Sprint(i), s1})
		if ok != (i >= 2) || ok && a.reason != fmt.Sprint(i) {
			t.Errorf("entry %d: %v %+v", i, ok, a)
		}
	}
	if _, ok := c.get(cacheKey{"4", s2}); ok {
		t.Error("another snapshot's entry found")
	}
	c.put(cacheKey{"4", s1}, answer{reason: "again"})
	if a, _ := c.get(cacheKey{"4", s1}); a.reason != "again" || c.len() != 3 {
		t.Errorf("overwriting: %+v, %d entries", a, c.len())
	}
}
