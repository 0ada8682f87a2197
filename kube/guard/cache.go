package guard

import (
	"sync"

	"github.com/allot-sched/allot"
)

// cacheKey names a gang on one snapshot: a gang's answer holds while the
// cluster it was decided on does. The snapshot itself, not its version: a
// source may start a new store, whose versions count again.
// An entry keeps its snapshot from the collector until it leaves the
// cache; snapshots share all but what changed between them.
type cacheKey struct {
	gang string
	snap *allot.Snapshot
}

// cache is a bounded map of gangs' answers; past its size the oldest entry
// goes first.
type cache struct {
	mu    sync.Mutex
	m     map[cacheKey]answer
	order []cacheKey // a ring of the keys, oldest at next
	next  int
}

func newCache(size int) *cache {
	return &cache{m: make(map[cacheKey]answer, size), order: make([]cacheKey, 0, size)}
}

func (c *cache) get(k cacheKey) (answer, bool) {
	c.mu.Lock()
	a, ok := c.m[k]
	c.mu.Unlock()
	return a, ok
}

func (c *cache) put(k cacheKey, a answer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok {
		c.m[k] = a
		return
	}
	if len(c.order) < cap(c.order) {
		c.order = append(c.order, k)
	} else {
		delete(c.m, c.order[c.next])
		c.order[c.next] = k
		c.next = (c.next + 1) % len(c.order)
	}
	c.m[k] = a
}

func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
