package cow

// Tree is an ordered set in a copy-on-write B-tree. Cloning it is free; a
// version writing an item copies the nodes on the item's path that it does
// not own yet, each one allocation with its items and children inline. The
// zero value is not usable: start from NewTree. A Tree is not safe for
// concurrent writes; a Tree that no longer changes may be read by any
// number of goroutines.
type Tree[T any] struct {
	root  *tnode[T]
	n     int
	owner Owner
	less  func(a, b T) bool
}

const (
	treeMax = 14                // items in a node at most: a node is 256 bytes
	treeMin = (treeMax - 1) / 2 // items in a node other than the root at least
)

type tnode[T any] struct {
	owner Owner
	n     int
	items [treeMax]T
	kids  [treeMax + 1]*tnode[T] // all nil in a leaf
}

func (n *tnode[T]) leaf() bool { return n.kids[0] == nil }

// NewTree returns an empty tree ordered by less.
func NewTree[T any](less func(a, b T) bool) Tree[T] {
	return Tree[T]{owner: NewOwner(), less: less}
}

// Len is the number of items.
func (t *Tree[T]) Len() int { return t.n }

// Clone returns a new version sharing every node. Afterwards neither
// version writes a shared node in place.
func (t *Tree[T]) Clone() Tree[T] { return t.CloneAs(NewOwner(), NewOwner()) }

// CloneAs is Clone with the owners given, as Slice.CloneAs: the trees and
// slices of one version may share them.
func (t *Tree[T]) CloneAs(child, parent Owner) Tree[T] {
	c := *t
	c.owner, t.owner = child, parent
	return c
}

// Fork is Clone for a published tree that is never written again: it gives
// only the new version a new owner, so t is not touched.
func (t *Tree[T]) Fork() Tree[T] {
	c := *t
	c.owner = NewOwner()
	return c
}

// find returns the first index in n whose item is not less than key, and
// whether that item equals key.
func (t *Tree[T]) find(n *tnode[T], key T) (int, bool) {
	return search(n.items[:n.n], key, t.less)
}

// search returns the first index in sorted items whose item is not less
// than key, and whether that item equals key.
func search[T any](items []T, key T, less func(a, b T) bool) (int, bool) {
	lo, hi := 0, len(items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if less(items[m], key) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(items) && !less(key, items[lo])
}

// seek returns the first index in items, ordered as cmp orders them
// against a key, whose item cmp does not place before the key.
func seek[T any](items []T, cmp func(T) int) int {
	lo, hi := 0, len(items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cmp(items[m]) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Get returns the item equal to key.
func (t *Tree[T]) Get(key T) (T, bool) {
	for n := t.root; n != nil; {
		i, found := t.find(n, key)
		if found {
			return n.items[i], true
		}
		n = n.kids[i]
	}
	var zero T
	return zero, false
}

// Find returns the item for which cmp returns 0, where cmp orders items
// against a key (negative: the item comes before it) as the tree's order
// does. It looks up by a key that is not an item, without making one.
func (t *Tree[T]) Find(cmp func(T) int) (T, bool) {
	for n := t.root; n != nil; {
		lo := seek(n.items[:n.n], cmp)
		if lo < n.n && cmp(n.items[lo]) == 0 {
			return n.items[lo], true
		}
		n = n.kids[lo]
	}
	var zero T
	return zero, false
}

// Scan calls fn on every item in order until fn returns false.
func (t *Tree[T]) Scan(fn func(T) bool) {
	if t.root != nil {
		scan(t.root, fn)
	}
}

func scan[T any](n *tnode[T], fn func(T) bool) bool {
	for i := 0; i < n.n; i++ {
		if n.kids[i] != nil && !scan(n.kids[i], fn) {
			return false
		}
		if !fn(n.items[i]) {
			return false
		}
	}
	return n.kids[n.n] == nil || scan(n.kids[n.n], fn)
}

// Ascend calls fn in order on every item not less than pivot until fn
// returns false.
func (t *Tree[T]) Ascend(pivot T, fn func(T) bool) {
	if t.root != nil {
		t.ascend(t.root, pivot, fn)
	}
}

func (t *Tree[T]) ascend(n *tnode[T], pivot T, fn func(T) bool) bool {
	i, found := t.find(n, pivot)
	if !found && n.kids[i] != nil && !t.ascend(n.kids[i], pivot, fn) {
		return false
	}
	for ; i < n.n; i++ {
		if !fn(n.items[i]) {
			return false
		}
		if n.kids[i+1] != nil && !scan(n.kids[i+1], fn) {
			return false
		}
	}
	return true
}

// Load fills an empty tree with items, which must be sorted by less and
// distinct, in one pass: each node is written once, as full as the
// B-tree's bounds let the items be spread evenly, where inserting them one
// by one would search each one's path, split nodes half empty and leave
// them so. Loading a tree that is not empty panics.
func (t *Tree[T]) Load(items []T) {
	if t.n != 0 {
		panic("cow: Load into a tree that is not empty")
	}
	if len(items) == 0 {
		return
	}
	h := 1
	for treeCap(h) < len(items) {
		h++
	}
	// Every node but the root holds treeMin items at least.
	var nodes []tnode[T]
	t.root, t.n = t.load(items, h, true, &nodes, min(loadBlock, 1+len(items)/treeMin)), len(items)
}

// loadBlock is how many nodes Load allocates at once at most: a tree of a hundred
// thousand items is some thirty allocations, not eight thousand. A node
// copied later is allocated apart; a block lives while any node of it is
// in some version.
const loadBlock = 256

// treeCap is the most items a tree of height h holds.
func treeCap(h int) int {
	c := treeMax
	for ; h > 1; h-- {
		c = treeMax + (treeMax+1)*c
	}
	return c
}

// load builds a subtree of height h holding items (at most treeCap(h), and
// for a node other than the root at least the fewest such a subtree may
// hold), its children as many as its items need and as equal in size as
// they can be.
func (t *Tree[T]) load(items []T, h int, root bool, nodes *[]tnode[T], block int) *tnode[T] {
	n := take(nodes, block, nil)
	n.owner = t.owner
	if h == 1 {
		n.n = copy(n.items[:], items)
		return n
	}
	c := treeCap(h - 1)
	kids := (len(items) + c + 1) / (c + 1) // ceil((len+1) / (c+1)): each child at most c
	if !root {
		kids = max(kids, treeMin+1)
	}
	kids = max(kids, 2)
	per, extra := (len(items)-(kids-1))/kids, (len(items)-(kids-1))%kids
	for k := range kids {
		size := per
		if k < extra {
			size++
		}
		n.kids[k] = t.load(items[:size], h-1, false, nodes, block)
		items = items[size:]
		if k < kids-1 {
			n.items[k] = items[0]
			items = items[1:]
		}
	}
	n.n = kids - 1
	return n
}

// mut returns *p writable by this version, copying it first if another
// version may see it. The node holding p must be writable already.
func (t *Tree[T]) mut(p **tnode[T]) *tnode[T] {
	n := *p
	if n.owner != t.owner {
		c := *n
		c.owner = t.owner
		n = &c
		*p = n
	}
	return n
}

// Set inserts v, or replaces the item equal to it and returns that item.
func (t *Tree[T]) Set(v T) (T, bool) {
	if t.root == nil {
		t.root = &tnode[T]{owner: t.owner, n: 1}
		t.root.items[0] = v
		t.n = 1
		var zero T
		return zero, false
	}
	if t.root.n == treeMax {
		// Split the full root under a new one: the tree grows by a level.
		old := t.root
		t.root = &tnode[T]{owner: t.owner}
		t.root.kids[0] = old
		t.split(t.root, 0)
	}
	n := t.mut(&t.root)
	for {
		i, found := t.find(n, v)
		if found {
			old := n.items[i]
			n.items[i] = v
			return old, true
		}
		if n.leaf() {
			copy(n.items[i+1:n.n+1], n.items[i:n.n])
			n.items[i] = v
			n.n++
			t.n++
			var zero T
			return zero, false
		}
		if n.kids[i].n == treeMax {
			t.split(n, i)
			if t.less(n.items[i], v) {
				i++
			} else if !t.less(v, n.items[i]) {
				old := n.items[i]
				n.items[i] = v
				return old, true
			}
		}
		n = t.mut(&n.kids[i])
	}
}

// split moves the upper half of p's full child i into a new sibling and its
// middle item up into p, which must be writable and not full.
func (t *Tree[T]) split(p *tnode[T], i int) {
	c := t.mut(&p.kids[i])
	const mid = treeMax / 2
	r := &tnode[T]{owner: t.owner, n: treeMax - mid - 1}
	copy(r.items[:], c.items[mid+1:])
	copy(r.kids[:], c.kids[mid+1:])
	up := c.items[mid]
	var zero T
	for j := mid; j < treeMax; j++ {
		c.items[j] = zero
	}
	clear(c.kids[mid+1:])
	c.n = mid
	copy(p.items[i+1:p.n+1], p.items[i:p.n])
	copy(p.kids[i+2:p.n+2], p.kids[i+1:p.n+1])
	p.items[i] = up
	p.kids[i+1] = r
	p.n++
}

// Delete removes the item equal to key and returns it.
func (t *Tree[T]) Delete(key T) (T, bool) {
	var zero T
	if t.root == nil {
		return zero, false
	}
	if _, ok := t.Get(key); !ok {
		return zero, false // nothing to remove: copy nothing
	}
	n := t.mut(&t.root)
	old := t.delete(n, key, false)
	t.n--
	if n.n == 0 {
		t.root = n.kids[0] // nil when the tree is now empty
	}
	return old, true
}

// delete removes key (or, with max, the largest item) from the subtree of
// n, which is writable and holds more than treeMin items unless it is the
// root. The item is known to be there.
func (t *Tree[T]) delete(n *tnode[T], key T, max bool) T {
	var i int
	var found bool
	if max {
		i, found = n.n, false
		if n.leaf() {
			i, found = n.n-1, true
		}
	} else {
		i, found = t.find(n, key)
	}
	var zero T
	if n.leaf() {
		old := n.items[i]
		copy(n.items[i:n.n-1], n.items[i+1:n.n])
		n.n--
		n.items[n.n] = zero
		return old
	}
	if found {
		// The item sits between two subtrees: replace it with its
		// predecessor when the left one can spare an item.
		if n.kids[i].n > treeMin {
			old := n.items[i]
			n.items[i] = t.delete(t.mut(&n.kids[i]), zero, true)
			return old
		}
		if n.kids[i+1].n > treeMin {
			// The item moves down to the end of the left subtree, which
			// can then lose it.
			t.rotateRight(n, i)
			return t.delete(n.kids[i], key, false)
		}
		t.merge(n, i)
		return t.delete(n.kids[i], key, false)
	}
	// Make sure the child to descend into can lose an item.
	if n.kids[i].n <= treeMin {
		switch {
		case i > 0 && n.kids[i-1].n > treeMin:
			t.rotateLeft(n, i-1)
		case i < n.n && n.kids[i+1].n > treeMin:
			t.rotateRight(n, i)
		case i < n.n:
			t.merge(n, i)
		default:
			t.merge(n, i-1)
			i--
		}
	}
	return t.delete(t.mut(&n.kids[i]), key, max)
}

// rotateLeft moves kid i's last item up into n and n's item i down to the
// front of kid i+1.
func (t *Tree[T]) rotateLeft(n *tnode[T], i int) {
	l, r := t.mut(&n.kids[i]), t.mut(&n.kids[i+1])
	copy(r.items[1:r.n+1], r.items[:r.n])
	copy(r.kids[1:r.n+2], r.kids[:r.n+1])
	r.items[0] = n.items[i]
	r.kids[0] = l.kids[l.n]
	r.n++
	n.items[i] = l.items[l.n-1]
	var zero T
	l.items[l.n-1] = zero
	l.kids[l.n] = nil
	l.n--
}

// rotateRight moves kid i+1's first item up into n and n's item i down to
// the end of kid i.
func (t *Tree[T]) rotateRight(n *tnode[T], i int) {
	l, r := t.mut(&n.kids[i]), t.mut(&n.kids[i+1])
	l.items[l.n] = n.items[i]
	l.kids[l.n+1] = r.kids[0]
	l.n++
	n.items[i] = r.items[0]
	copy(r.items[:r.n-1], r.items[1:r.n])
	copy(r.kids[:r.n], r.kids[1:r.n+1])
	var zero T
	r.items[r.n-1] = zero
	r.kids[r.n] = nil
	r.n--
}

// merge joins kid i, n's item i and kid i+1 into kid i.
func (t *Tree[T]) merge(n *tnode[T], i int) {
	l, r := t.mut(&n.kids[i]), n.kids[i+1]
	l.items[l.n] = n.items[i]
	copy(l.items[l.n+1:], r.items[:r.n])
	copy(l.kids[l.n+1:], r.kids[:r.n+1])
	l.n += r.n + 1
	copy(n.items[i:n.n-1], n.items[i+1:n.n])
	copy(n.kids[i+1:n.n], n.kids[i+2:n.n+1])
	n.n--
	var zero T
	n.items[n.n] = zero
	n.kids[n.n+1] = nil
}

// Update calls fn on every item and puts the item fn returns in its place
// where fn says so (ok): the new item must keep the old one's place in the
// order. The nodes of changed items are copied as Set copies them, each
// once, so rewriting many items costs one walk rather than a search each.
// The order in which fn sees the items is unspecified.
func (t *Tree[T]) Update(fn func(T) (T, bool)) {
	if t.root != nil {
		t.root = t.update(t.root, fn)
	}
}

// update is Update below n: it returns n, or the copy of n this version
// owns when something below changed.
func (t *Tree[T]) update(n *tnode[T], fn func(T) (T, bool)) *tnode[T] {
	w := n
	own := func() {
		if w.owner != t.owner {
			c := *n
			c.owner = t.owner
			w = &c
		}
	}
	for i := 0; i <= n.n; i++ {
		if k := n.kids[i]; k != nil {
			if nk := t.update(k, fn); nk != k {
				own()
				w.kids[i] = nk
			}
		}
		if i < n.n {
			if v, ok := fn(n.items[i]); ok {
				own()
				w.items[i] = v
			}
		}
	}
	return w
}
