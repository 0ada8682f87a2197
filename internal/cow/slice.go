// Package cow holds a paged copy-on-write slice: a new version shares every
// page with the old one and copies only the pages it writes, so publishing
// the next snapshot costs a few pages, not the whole cluster.
package cow

const (
	pageShift = 5
	pageSize  = 1 << pageShift
	pageMask  = pageSize - 1
)

type page[T any] [pageSize]T

// Slice is a fixed-length array of T split into pages. The zero value is an
// empty slice. A Slice is not safe for concurrent writes; readers of a Slice
// that no longer changes need no lock.
type Slice[T any] struct {
	pages []*page[T]
	owned []uint64 // bit p set: this Slice may write page p in place
	n     int
}

// Make returns a Slice of n zero values, all pages owned.
func Make[T any](n int) Slice[T] {
	np := (n + pageSize - 1) >> pageShift
	s := Slice[T]{pages: make([]*page[T], np), owned: make([]uint64, (np+63)/64), n: n}
	for i := range s.pages {
		s.pages[i] = new(page[T])
	}
	for i := range s.owned {
		s.owned[i] = ^uint64(0)
	}
	return s
}

// Len is the number of elements.
func (s *Slice[T]) Len() int { return s.n }

// At returns element i.
func (s *Slice[T]) At(i int) T { return s.pages[i>>pageShift][i&pageMask] }

// Ptr returns a read-only pointer to element i; callers must not write
// through it.
func (s *Slice[T]) Ptr(i int) *T { return &s.pages[i>>pageShift][i&pageMask] }

// Clone returns a new version sharing every page; neither version writes a
// shared page afterwards (the clone copies on first write, and the original
// must no longer be written once cloned).
func (s *Slice[T]) Clone() Slice[T] {
	c := Slice[T]{pages: make([]*page[T], len(s.pages)), owned: make([]uint64, len(s.owned)), n: s.n}
	copy(c.pages, s.pages)
	for i := range s.owned {
		s.owned[i] = 0
	}
	return c
}

// Mut returns a writable pointer to element i, copying its page first if it
// is shared.
func (s *Slice[T]) Mut(i int) *T {
	p := i >> pageShift
	if s.owned[p>>6]&(1<<(p&63)) == 0 {
		cp := *s.pages[p]
		s.pages[p] = &cp
		s.owned[p>>6] |= 1 << (p & 63)
	}
	return &s.pages[p][i&pageMask]
}

// Set writes element i.
func (s *Slice[T]) Set(i int, v T) { *s.Mut(i) = v }
