package cow

// Buffered is a Tree with a small write buffer in front: an item inserted
// goes into a sorted buffer of at most bufMax items, and only a full buffer
// is written into the tree, all at once. A version that inserts one item
// then copies the buffer (a hundred bytes) instead of the item's path in
// the tree (four nodes of 256 bytes at ten thousand items), and a flush
// copies each path once for all the items on it, which is nearly nothing
// when keys come in ascending order, as IDs often do. Lookups and scans
// see the buffer and the tree as one ordered set.
//
// Every item is in the buffer or in the tree, never both. A buffer is
// never written in place: each write makes a new one, so versions share
// buffers freely.
type Buffered[T any] struct {
	Tree[T]
	buf []T // sorted, disjoint from the tree
	// spare is where a writer that publishes again and again (the parent
	// of CloneAs: a store's master) takes its new buffers from; nil
	// elsewhere.
	spare *Block[T]
}

// bufMax is the most items the buffer holds: a commit copies half of it
// on average, and a flush spreads the tree's path copies over this many
// inserts.
const bufMax = 16

// NewBuffered returns an empty buffered tree ordered by less.
func NewBuffered[T any](less func(a, b T) bool) Buffered[T] {
	return Buffered[T]{Tree: NewTree(less)}
}

// Len is the number of items.
func (b *Buffered[T]) Len() int { return b.Tree.Len() + len(b.buf) }

// Clone returns a new version sharing every node and the buffer.
func (b *Buffered[T]) Clone() Buffered[T] { return b.CloneAs(NewOwner(), NewOwner()) }

// CloneAs is Tree.CloneAs for the buffered tree.
func (b *Buffered[T]) CloneAs(child, parent Owner) Buffered[T] {
	if b.spare == nil {
		b.spare = new(Block[T])
	}
	return Buffered[T]{Tree: b.Tree.CloneAs(child, parent), buf: b.buf}
}

// UseSpare is Slice.UseSpare for the buffered tree's write buffers.
func (b *Buffered[T]) UseSpare(from *Buffered[T]) { b.spare = from.spare }

// Fork is Tree.Fork for the buffered tree.
func (b *Buffered[T]) Fork() Buffered[T] {
	return Buffered[T]{Tree: b.Tree.Fork(), buf: b.buf}
}

// search returns the index in the buffer of the first item not less than
// key, and whether that item equals key.
func (b *Buffered[T]) search(key T) (int, bool) { return search(b.buf, key, b.less) }

// Get returns the item equal to key.
func (b *Buffered[T]) Get(key T) (T, bool) {
	if i, found := b.search(key); found {
		return b.buf[i], true
	}
	return b.Tree.Get(key)
}

// Find is Tree.Find over the buffer and the tree.
func (b *Buffered[T]) Find(cmp func(T) int) (T, bool) {
	if lo := seek(b.buf, cmp); lo < len(b.buf) && cmp(b.buf[lo]) == 0 {
		return b.buf[lo], true
	}
	return b.Tree.Find(cmp)
}

// Set inserts v, or replaces the item equal to it and returns that item.
// A full buffer goes into the tree first (a flush): the buffer's items
// and v.
func (b *Buffered[T]) Set(v T) (T, bool) {
	i, found := b.search(v)
	if found {
		old := b.buf[i]
		nb := b.spare.Clone(b.buf)
		nb[i] = v
		b.buf = nb
		return old, true
	}
	if old, ok := b.Tree.Get(v); ok {
		b.Tree.Set(v)
		return old, true
	}
	b.insertAt(i, v)
	var zero T
	return zero, false
}

// Insert adds v, which the caller knows is not in the set (it looked it up,
// or just removed it): unlike Set it does not look for v in the tree.
// Inserting an item already in the set corrupts it.
func (b *Buffered[T]) Insert(v T) {
	i, _ := b.search(v)
	b.insertAt(i, v)
}

// insertAt inserts v at index i of the buffer, or flushes a full buffer
// and v into the tree.
func (b *Buffered[T]) insertAt(i int, v T) {
	if len(b.buf) == bufMax {
		b.Settle()
		b.Tree.Set(v)
		return
	}
	nb := b.spare.Take(len(b.buf) + 1)
	copy(nb, b.buf[:i])
	nb[i] = v
	copy(nb[i+1:], b.buf[i:])
	b.buf = nb
}

// Settle writes the buffer's items into the tree, for a set that will be
// read far more than written: lookups then search the tree alone.
func (b *Buffered[T]) Settle() {
	for _, x := range b.buf {
		b.Tree.Set(x)
	}
	b.buf = nil
}

// Load fills an empty set with items, sorted by less and distinct, all
// into the tree (Tree.Load).
func (b *Buffered[T]) Load(items []T) {
	if len(b.buf) != 0 {
		panic("cow: Load into a set that is not empty")
	}
	b.Tree.Load(items)
}

// Delete removes the item equal to key and returns it.
func (b *Buffered[T]) Delete(key T) (T, bool) {
	i, found := b.search(key)
	if !found {
		return b.Tree.Delete(key)
	}
	old := b.buf[i]
	if len(b.buf) == 1 {
		b.buf = nil
		return old, true
	}
	nb := b.spare.Take(len(b.buf) - 1)
	copy(nb, b.buf[:i])
	copy(nb[i:], b.buf[i+1:])
	b.buf = nb
	return old, true
}

// Scan calls fn on every item in order until fn returns false.
func (b *Buffered[T]) Scan(fn func(T) bool) {
	if b.Tree.root == nil {
		for _, x := range b.buf {
			if !fn(x) {
				return
			}
		}
		return
	}
	buf, more := mergeScan(b.Tree.root, b.buf, b.less, fn)
	for _, x := range buf {
		if !more || !fn(x) {
			return
		}
	}
}

// mergeScan visits subtree n in order with the buffered items buf that
// come before its last item interleaved, and returns the buffered items
// left and whether fn let the scan go on. It compares the next buffered
// item with a separator before each subtree and with a leaf's last item,
// so a subtree or leaf wholly before it is scanned without comparisons: a
// scan costs a few comparisons per buffered item, not one per item of the
// tree (string keys make those dear). buf is passed and returned rather
// than pointed to, which would move the caller's copy to the heap.
func mergeScan[T any](n *tnode[T], buf []T, less func(a, b T) bool, fn func(T) bool) ([]T, bool) {
	if len(buf) == 0 || n.leaf() && less(n.items[n.n-1], buf[0]) {
		return buf, scan(n, fn)
	}
	for i := 0; i < n.n; i++ {
		x := n.items[i]
		if len(buf) == 0 || less(x, buf[0]) {
			// x and its left subtree come before every buffered item left.
			if n.kids[i] != nil && !scan(n.kids[i], fn) {
				return buf, false
			}
		} else {
			if n.kids[i] != nil {
				var more bool
				if buf, more = mergeScan(n.kids[i], buf, less, fn); !more {
					return buf, false
				}
			}
			for len(buf) > 0 && less(buf[0], x) {
				if !fn(buf[0]) {
					return buf, false
				}
				buf = buf[1:]
			}
		}
		if !fn(x) {
			return buf, false
		}
	}
	if n.kids[n.n] == nil {
		return buf, true
	}
	return mergeScan(n.kids[n.n], buf, less, fn)
}

// Ascend calls fn in order on every item not less than pivot until fn
// returns false.
func (b *Buffered[T]) Ascend(pivot T, fn func(T) bool) {
	i, _ := b.search(pivot)
	b.merge(b.buf[i:], func(f func(T) bool) { b.Tree.Ascend(pivot, f) }, fn)
}

// merge calls fn in order on the buffer's items buf and the tree's, which
// walk visits in order, until fn returns false.
func (b *Buffered[T]) merge(buf []T, walk func(func(T) bool), fn func(T) bool) {
	more := true
	walk(func(x T) bool {
		for len(buf) > 0 && b.less(buf[0], x) {
			if more = fn(buf[0]); !more {
				return false
			}
			buf = buf[1:]
		}
		more = fn(x)
		return more
	})
	for _, x := range buf {
		if !more || !fn(x) {
			return
		}
	}
}

// Update is Tree.Update over the buffer and the tree; a changed buffer is
// a new one, as every write makes.
func (b *Buffered[T]) Update(fn func(T) (T, bool)) {
	b.Tree.Update(fn)
	var nb []T
	for i, x := range b.buf {
		if v, ok := fn(x); ok {
			if nb == nil {
				nb = b.spare.Clone(b.buf)
			}
			nb[i] = v
		}
	}
	if nb != nil {
		b.buf = nb
	}
}
