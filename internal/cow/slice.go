// Package cow holds the copy-on-write structures a snapshot is made of: Slice,
// a fixed-length array in two levels of pages, and Tree, an ordered set in a
// B-tree. A new version shares everything with the old one and copies only
// what it writes (a page and the directory above it, a tree node and the
// path above it), so publishing the next snapshot costs a few small copies,
// never the whole cluster. Ownership is a number (Owner) rather than a
// pointer, so that pages of pointer-free elements hold no pointer at all
// and the garbage collector neither scans them nor guards their copies.
package cow

import (
	"slices"
	"sync/atomic"
)

const (
	pageBits = 3 // elements per page: 8
	dirBits  = 5 // pages per directory: 32
	pageSize = 1 << pageBits
	dirSize  = 1 << dirBits
	pageMask = pageSize - 1
	dirMask  = dirSize - 1
)

// Owner identifies the one Slice that may write a page or directory in
// place. Several Slices of one version may share an Owner (CloneAs). It is
// a number rather than a pointer so that a page of pointer-free elements
// holds no pointer at all: the collector neither scans it nor puts write
// barriers on its copies.
type Owner uint64

// owners hands out every Owner once, process-wide; zero is never handed out.
var owners atomic.Uint64

// NewOwner returns a fresh owner for CloneAs.
func NewOwner() Owner { return Owner(owners.Add(1)) }

type page[T any] struct {
	owner Owner
	v     [pageSize]T
}

type dir[T any] struct {
	owner Owner
	p     [dirSize]*page[T]
}

// Slice is a fixed-length array of T. The zero value is empty. A Slice is
// not safe for concurrent writes; a Slice that no longer changes may be read
// by any number of goroutines.
type Slice[T any] struct {
	dirs  []*dir[T]
	owner Owner
	n     int
	// sharedDirs is set while dirs itself is shared with another version:
	// the first write copies it. A version that writes nothing here costs
	// nothing.
	sharedDirs bool
}

// Make returns a Slice of n zero values.
func Make[T any](n int) Slice[T] {
	s := Slice[T]{owner: NewOwner(), n: n}
	pages := (n + pageSize - 1) >> pageBits
	// Pages and directories come in one allocation each: a snapshot of
	// ten thousand nodes is then a handful of objects for the collector
	// to mark, not thousands. A copied page is allocated on its own, and
	// the originals stay alive together while any of them is shared.
	ds := make([]dir[T], (pages+dirSize-1)>>dirBits)
	ps := make([]page[T], pages)
	s.dirs = make([]*dir[T], len(ds))
	for d := range ds {
		ds[d].owner = s.owner
		s.dirs[d] = &ds[d]
		for p := 0; p < dirSize && d*dirSize+p < pages; p++ {
			pg := &ps[d*dirSize+p]
			pg.owner = s.owner
			ds[d].p[p] = pg
		}
	}
	return s
}

// Len is the number of elements.
func (s *Slice[T]) Len() int { return s.n }

// At returns element i.
func (s *Slice[T]) At(i int) T {
	return s.dirs[i>>(pageBits+dirBits)].p[(i>>pageBits)&dirMask].v[i&pageMask]
}

// Ptr returns a read-only pointer to element i; callers must not write
// through it.
func (s *Slice[T]) Ptr(i int) *T {
	return &s.dirs[i>>(pageBits+dirBits)].p[(i>>pageBits)&dirMask].v[i&pageMask]
}

// Span returns, read-only, the elements from i to the end of i's page (at
// most n of them), so that a caller walking a range pays one page lookup per
// page instead of one per element.
func (s *Slice[T]) Span(i, n int) []T {
	p := s.dirs[i>>(pageBits+dirBits)].p[(i>>pageBits)&dirMask]
	j := i & pageMask
	return p.v[j:min(pageSize, j+n)]
}

// Clone returns a new version sharing every page. Afterwards neither version
// writes a shared page in place: each copies what it writes.
func (s *Slice[T]) Clone() Slice[T] { return s.CloneAs(NewOwner(), NewOwner()) }

// Fork returns a private version for a caller that will write it, without
// touching s: s itself must never be written again (it is a published,
// read-only version), so it needs no new owner.
func (s *Slice[T]) Fork() Slice[T] {
	return Slice[T]{dirs: s.dirs, owner: NewOwner(), n: s.n, sharedDirs: true}
}

// CloneAs is Clone with the owners given: child for the new version, parent
// for s from now on. Each must be new (from NewOwner) and used only by
// Slices of one version, so that versions never share an owner.
func (s *Slice[T]) CloneAs(child, parent Owner) Slice[T] {
	s.owner, s.sharedDirs = parent, true
	return Slice[T]{dirs: s.dirs, owner: child, n: s.n, sharedDirs: true}
}

// Mut returns a writable pointer to element i, copying its page (and the
// page's directory) first if they are shared.
func (s *Slice[T]) Mut(i int) *T { return &s.mutPage(i).v[i&pageMask] }

// MutSpan returns writable elements [i, i+n) when they share one page, and
// nil when they do not (the caller then writes them one by one).
func (s *Slice[T]) MutSpan(i, n int) []T {
	if n <= 0 || i>>pageBits != (i+n-1)>>pageBits {
		return nil
	}
	j := i & pageMask
	return s.mutPage(i).v[j : j+n]
}

func (s *Slice[T]) mutPage(i int) *page[T] {
	if s.sharedDirs {
		s.dirs, s.sharedDirs = slices.Clone(s.dirs), false
	}
	di := i >> (pageBits + dirBits)
	d := s.dirs[di]
	if d.owner != s.owner {
		cp := *d
		cp.owner = s.owner
		d = &cp
		s.dirs[di] = d
	}
	pi := (i >> pageBits) & dirMask
	p := d.p[pi]
	if p.owner != s.owner {
		cp := *p
		cp.owner = s.owner
		p = &cp
		d.p[pi] = p
	}
	return p
}

// Set writes element i.
func (s *Slice[T]) Set(i int, v T) { *s.Mut(i) = v }
