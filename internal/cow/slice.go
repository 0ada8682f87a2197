// Package cow holds the copy-on-write structures a snapshot is made of: Slice,
// a fixed-length array in pages under a trie of small directories; Tree,
// an ordered set in a B-tree; and Buffered, a Tree behind a small sorted
// write buffer. A new version shares everything with the old one and
// copies only what it writes (a page and the directories above it, a tree
// node and the path above it, the buffer), so publishing the next snapshot
// costs a few small copies, never the whole cluster. Ownership is a number (Owner) rather than a
// pointer, so that pages of pointer-free elements hold no pointer at all
// and the garbage collector neither scans them nor guards their copies.
package cow

import (
	"sync/atomic"
	"unsafe"
)

const (
	pageBits = 3 // elements per page: 8
	dirBits  = 3 // pages per directory: 8
	midBits  = 3 // directories per middle directory: 8
	pageSize = 1 << pageBits
	dirSize  = 1 << dirBits
	midSize  = 1 << midBits
	pageMask = pageSize - 1
	dirMask  = dirSize - 1
	midMask  = midSize - 1
	// shifts from an element's index to its directory's and its middle
	// directory's
	dirShift = pageBits + dirBits
	midShift = dirShift + midBits
)

// Owner identifies the one Slice that may write a page or directory in
// place. Several Slices of one version may share an Owner (CloneAs). It is
// a number rather than a pointer so that a page of pointer-free elements
// holds no pointer at all: the collector neither scans it nor puts write
// barriers on its copies.
type Owner uint64

// owners hands out every Owner once, process-wide; zero is never handed out.
var owners atomic.Uint64

// sharedList is the bit of a Slice's owner that marks its list of middle
// directories shared; no Owner handed out reaches it.
const sharedList Owner = 1 << 63

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

type mid[T any] struct {
	owner Owner
	d     [midSize]*dir[T]
}

// Slice is a fixed-length array of T in a trie: a list of middle
// directories, each of eight directories, each of eight pages of eight
// elements. A write copies the page and the two directories above it, a
// few hundred bytes with the list, where two levels of wider directories
// copied twice as much. A Slice is not safe for concurrent writes; a Slice
// that no longer changes may be read by any number of goroutines. The zero
// value is empty.
type Slice[T any] struct {
	mids []*mid[T]
	// owner has sharedList set while mids itself is shared with another
	// version: the first write copies it. A version that writes nothing
	// here costs nothing.
	owner Owner
	// spare is where a writer that publishes again and again (the parent
	// of CloneAs: a store's master) takes its copies from; nil elsewhere.
	spare *spare[T]
}

// spare holds copies allocated ahead, many to an allocation, for a writer
// that copies pages, their directories and the list at nearly every
// version: at 102,400 nodes a commit copies some fifty pages of the fit
// index and thirty directories, which blocks of a kilobyte and of twelve
// directories made eight allocations and blocks of eight kilobytes and of
// 128 directories make one. The copies are handed out once each, so
// versions never share one; a block lives while any copy in it is in some
// version, so a page written once and never again keeps its block (eight
// kilobytes at most), and a list keeps the versions whose lists share its
// block.
type spare[T any] struct {
	pages []page[T]
	dirs  []dir[T]
	mids  []mid[T]
	lists []*mid[T]
	// blocks counts the blocks allocated so far of each kind (pages,
	// directories, middle directories, lists), up to grown (grow).
	blocks [4]uint8
}

// grown is how many blocks of a kind a spare allocates before its blocks
// are full size: the first is a sixteenth of it, each next one twice the
// one before. A writer that publishes once or twice (a store's first
// event, on a master whose spares are new) then pays for about what it
// takes, and one that publishes again and again for full blocks.
const grown = 4

// grow is the size of the next block of a kind, full at most, of which
// *blocks have been allocated.
func grow(full int, blocks *uint8) int {
	n := max(full>>(grown-*blocks), 1)
	if *blocks < grown {
		*blocks++
	}
	return n
}

const (
	spareBytes = 8192 // the size of a block of spare pages
	spareDirs  = 128  // directories (and middle directories) to a block
	spareLists = 32   // lists to a block
)

// page, dir, mid and list return a copy of from owned by o; a nil spare
// allocates each apart.
func (sp *spare[T]) page(from *page[T], o Owner) (p *page[T]) {
	if n := spareBytes / int(unsafe.Sizeof(*from)); sp != nil && n > 1 {
		p = take(&sp.pages, n, &sp.blocks[0])
	} else {
		p = new(page[T])
	}
	p.v, p.owner = from.v, o
	return p
}

func (sp *spare[T]) dir(from *dir[T], o Owner) (d *dir[T]) {
	if sp != nil {
		d = take(&sp.dirs, spareDirs, &sp.blocks[1])
	} else {
		d = new(dir[T])
	}
	d.p, d.owner = from.p, o
	return d
}

func (sp *spare[T]) mid(from *mid[T], o Owner) (m *mid[T]) {
	if sp != nil {
		m = take(&sp.mids, spareDirs, &sp.blocks[2])
	} else {
		m = new(mid[T])
	}
	m.d, m.owner = from.d, o
	return m
}

// take hands out the first element of *block, allocating a block first
// when none is left: of full elements, fewer for the first few (grow), or
// exactly full when blocks is nil.
func take[E any](block *[]E, full int, blocks *uint8) *E {
	if len(*block) == 0 {
		n := full
		if blocks != nil {
			n = grow(full, blocks)
		}
		*block = make([]E, n)
	}
	e := &(*block)[0]
	*block = (*block)[1:]
	return e
}

func (sp *spare[T]) list(from []*mid[T]) []*mid[T] {
	n := len(from)
	if sp == nil {
		return append(make([]*mid[T], 0, n), from...)
	}
	if len(sp.lists) < n {
		sp.lists = make([]*mid[T], n*grow(spareLists, &sp.blocks[3]))
	}
	l := sp.lists[:n:n]
	sp.lists = sp.lists[n:]
	copy(l, from)
	return l
}

// Make returns a Slice of n zero values.
func Make[T any](n int) Slice[T] {
	s := Slice[T]{owner: NewOwner()}
	np := (n + pageSize - 1) >> pageBits
	nd := (np + dirSize - 1) >> dirBits
	nm := (nd + midSize - 1) >> midBits
	// Each level comes in one allocation: a snapshot of ten thousand
	// nodes is then a handful of objects for the collector to mark, not
	// thousands. A copy is made apart, and the originals stay alive
	// together while any of them is shared.
	pages, dirs, mids := make([]page[T], np), make([]dir[T], nd), make([]mid[T], nm)
	s.mids = make([]*mid[T], nm)
	for i := range pages {
		pages[i].owner = s.owner
		dirs[i>>dirBits].p[i&dirMask] = &pages[i]
	}
	for i := range dirs {
		dirs[i].owner = s.owner
		mids[i>>midBits].d[i&midMask] = &dirs[i]
	}
	for i := range mids {
		mids[i].owner = s.owner
		s.mids[i] = &mids[i]
	}
	return s
}

// Empty reports whether s is the zero Slice, of no elements.
func (s *Slice[T]) Empty() bool { return len(s.mids) == 0 }

// From returns a Slice holding a copy of v, allocated as Make allocates:
// for a version filled in plain memory first, where writing it element by
// element through the trie would cost a look-up each.
func From[T any](v []T) Slice[T] {
	s := Make[T](len(v))
	for i := 0; i < len(v); i += pageSize {
		copy(s.pageOf(i).v[:], v[i:])
	}
	return s
}

// pageOf returns, read-only, the page holding element i.
func (s *Slice[T]) pageOf(i int) *page[T] {
	return s.mids[i>>midShift].d[(i>>dirShift)&midMask].p[(i>>pageBits)&dirMask]
}

// At returns element i.
func (s *Slice[T]) At(i int) T { return s.pageOf(i).v[i&pageMask] }

// Ptr returns a read-only pointer to element i; callers must not write
// through it.
func (s *Slice[T]) Ptr(i int) *T { return &s.pageOf(i).v[i&pageMask] }

// Span returns, read-only, the elements from i to the end of i's page (at
// most n of them), so that a caller walking a range pays one page lookup per
// page instead of one per element.
func (s *Slice[T]) Span(i, n int) []T {
	j := i & pageMask
	return s.pageOf(i).v[j:min(pageSize, j+n)]
}

// Clone returns a new version sharing every page. Afterwards neither version
// writes a shared page in place: each copies what it writes.
func (s *Slice[T]) Clone() Slice[T] { return s.CloneAs(NewOwner(), NewOwner()) }

// Fork returns a private version for a caller that will write it, without
// touching s: s itself must never be written again (it is a published,
// read-only version), so it needs no new owner. A fork has no spare
// blocks: most are a decision's or an event's trial copy, written a few
// times and dropped, which a block of eight kilobytes would cost more than
// the pages it saves; one that becomes a store's master takes spares at
// its first CloneAs.
func (s *Slice[T]) Fork() Slice[T] {
	return Slice[T]{mids: s.mids, owner: NewOwner() | sharedList}
}

// Spare gives s spare blocks, for a version that will be written and
// published again and again (a store's master) from its first write on;
// CloneAs gives them to its parent otherwise.
func (s *Slice[T]) Spare() {
	if s.spare == nil {
		s.spare = new(spare[T])
	}
}

// Spares holds spare blocks apart from any one Slice, for a writer that
// forks a read-only Slice afresh at every change and publishes the fork (a
// store's master and the capacity state it forks at every node event):
// each fork takes its copies from it (ForkSpared), many to an allocation,
// instead of allocating each apart. One fork writes with it at a time.
type Spares[T any] struct{ sp *spare[T] }

// ForkSpared is Fork with the fork's copies taken from h (nil: Fork).
// Call DropSpare on the fork once it is written, before it is published.
func (s *Slice[T]) ForkSpared(h *Spares[T]) Slice[T] {
	if h == nil {
		return s.Fork()
	}
	if h.sp == nil {
		h.sp = new(spare[T])
	}
	return Slice[T]{mids: s.mids, owner: NewOwner() | sharedList, spare: h.sp}
}

// DropSpare forgets s's spare blocks: a fork written with a Spares'
// blocks (ForkSpared) that is published, so that no other version takes
// copies from them.
func (s *Slice[T]) DropSpare() { s.spare = nil }

// UseSpare makes s, a fork of from that will replace it as the writer that
// publishes again and again or be dropped (a store's master and a trial
// copy of it), take its copies from from's spare blocks. from must not be
// written while s is.
func (s *Slice[T]) UseSpare(from *Slice[T]) { s.spare = from.spare }

// CloneAs is Clone with the owners given: child for the new version, parent
// for s from now on. Each must be new (from NewOwner) and used only by
// Slices of one version, so that versions never share an owner. s, the
// parent, is taken to be a writer that will clone again: it keeps spare
// copies from now on.
func (s *Slice[T]) CloneAs(child, parent Owner) Slice[T] {
	s.owner = parent | sharedList
	if s.spare == nil {
		s.spare = new(spare[T])
	}
	return Slice[T]{mids: s.mids, owner: child | sharedList}
}

// Mut returns a writable pointer to element i, copying its page (and the
// page's directories) first if they are shared.
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
	sp, o := s.spare, s.owner
	if o&sharedList != 0 {
		o &^= sharedList
		s.mids, s.owner = sp.list(s.mids), o
	}
	m := s.mids[i>>midShift]
	if m.owner != o {
		m = sp.mid(m, o)
		s.mids[i>>midShift] = m
	}
	di := (i >> dirShift) & midMask
	d := m.d[di]
	if d.owner != o {
		d = sp.dir(d, o)
		m.d[di] = d
	}
	pi := (i >> pageBits) & dirMask
	p := d.p[pi]
	if p.owner != o {
		p = sp.page(p, o)
		d.p[pi] = p
	}
	return p
}

// Set writes element i.
func (s *Slice[T]) Set(i int, v T) { *s.Mut(i) = v }

// Copy returns a new Slice of s's first n elements that shares nothing
// with s, its pages copied in bulk and allocated as Make allocates them:
// for a version that will be written all over, where copying each page
// at its first write would cost an allocation a page.
func (s *Slice[T]) Copy(n int) Slice[T] {
	c := Make[T](n)
	for i := 0; i < n; i += pageSize {
		c.mutPage(i).v = s.pageOf(i).v
	}
	return c
}
