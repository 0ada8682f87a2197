package cow

import (
	"slices"
	"testing"
)

// checkTree verifies the B-tree's shape: every node but the root holds
// treeMin to treeMax items, items ascend, every leaf is at the same depth,
// and the count matches.
func checkTree(t *testing.T, tr *Tree[int]) []int {
	t.Helper()
	var out []int
	leafDepth := -1
	var walk func(n *tnode[int], depth int, root bool)
	walk = func(n *tnode[int], depth int, root bool) {
		if n.n > treeMax || (!root && n.n < treeMin) || (root && n.n == 0) {
			t.Fatalf("node of %d items (root %t)", n.n, root)
		}
		for i := 0; i <= n.n; i++ {
			if n.leaf() {
				if leafDepth < 0 {
					leafDepth = depth
				} else if leafDepth != depth {
					t.Fatalf("leaves at depths %d and %d", leafDepth, depth)
				}
			} else {
				if n.kids[i] == nil {
					t.Fatalf("internal node misses child %d", i)
				}
				walk(n.kids[i], depth+1, false)
			}
			if i < n.n {
				out = append(out, n.items[i])
			}
		}
		for i := n.n + 1; i <= treeMax; i++ {
			if n.kids[i] != nil {
				t.Fatalf("child %d beyond %d items", i, n.n)
			}
		}
	}
	if tr.root != nil {
		walk(tr.root, 0, true)
	}
	if !slices.IsSorted(out) || len(slices.Compact(slices.Clone(out))) != len(out) {
		t.Fatal("items out of order or repeated")
	}
	if len(out) != tr.Len() {
		t.Fatalf("Len %d, %d items", tr.Len(), len(out))
	}
	return out
}

func TestTreeAgainstSortedSlice(t *testing.T) {
	// Random inserts, replacements and deletes, with versions cloned along
	// the way: every version must hold exactly what a sorted slice taken
	// at the same moment holds, and keep the B-tree's shape.
	type version struct {
		tr   Tree[int]
		want []int
	}
	less := func(a, b int) bool { return a < b }
	cur := version{NewTree(less), nil}
	var old []version
	x := uint64(7)
	for step := 0; step < 60000; step++ {
		x = xorshift(x)
		// Keys from a range that grows and shrinks, so the tree grows,
		// empties and regrows.
		span := 1 + int(2000-int64(step%20000)/10)
		k := int(x % uint64(span))
		i, found := slices.BinarySearch(cur.want, k)
		switch op := x >> 60; {
		case op == 0 && step%7 == 0:
			old = append(old, version{cur.tr.Clone(), slices.Clone(cur.want)})
			if len(old) > 40 {
				old = old[1:]
			}
		case op < 9 || step%20000 < 9000:
			prev, replaced := cur.tr.Set(k)
			if replaced != found || (found && prev != k) {
				t.Fatalf("step %d: Set(%d) replaced %t, want %t", step, k, replaced, found)
			}
			if !found {
				cur.want = slices.Insert(cur.want, i, k)
			}
		default:
			got, ok := cur.tr.Delete(k)
			if ok != found || (ok && got != k) {
				t.Fatalf("step %d: Delete(%d) = %d, %t; want found %t", step, k, got, ok, found)
			}
			if found {
				cur.want = slices.Delete(cur.want, i, i+1)
			}
		}
		if g, ok := cur.tr.Get(k); ok != slices.Contains(cur.want, k) || (ok && g != k) {
			t.Fatalf("step %d: Get(%d) = %d, %t", step, k, g, ok)
		}
		if g, ok := cur.tr.Find(func(x int) int { return x - k }); ok != slices.Contains(cur.want, k) || (ok && g != k) {
			t.Fatalf("step %d: Find(%d) = %d, %t", step, k, g, ok)
		}
		if step%997 == 0 {
			if got := checkTree(t, &cur.tr); !slices.Equal(got, cur.want) {
				t.Fatalf("step %d: tree holds %v, want %v", step, got, cur.want)
			}
		}
	}
	for k, v := range append(old, cur) {
		if got := checkTree(t, &v.tr); !slices.Equal(got, v.want) {
			t.Fatalf("version %d changed: %d items, want %d", k, len(got), len(v.want))
		}
		// Ascend from every key and between keys.
		for _, p := range []int{-1, 0, 5, 333, 1999, 5000} {
			var got []int
			v.tr.Ascend(p, func(x int) bool { got = append(got, x); return true })
			i, _ := slices.BinarySearch(v.want, p)
			if !slices.Equal(got, v.want[i:]) {
				t.Fatalf("version %d: Ascend(%d) gave %d items, want %d", k, p, len(got), len(v.want)-i)
			}
		}
	}
}

func TestTreeStopsEarly(t *testing.T) {
	tr := NewTree(func(a, b int) bool { return a < b })
	for i := range 1000 {
		tr.Set(i)
	}
	var seen []int
	tr.Scan(func(x int) bool { seen = append(seen, x); return x < 500 })
	if len(seen) != 501 || seen[500] != 500 {
		t.Fatalf("Scan went on after false: %d items", len(seen))
	}
	seen = seen[:0]
	tr.Ascend(250, func(x int) bool { seen = append(seen, x); return x < 260 })
	if !slices.Equal(seen, []int{250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260}) {
		t.Fatalf("Ascend(250) gave %v", seen)
	}
}

func TestTreeWritesCopyOnlyTheirPath(t *testing.T) {
	a := NewTree(func(a, b int) bool { return a < b })
	for i := range 4000 {
		a.Set(i)
	}
	b := a.Clone()
	b.Set(4000)
	if a.root == b.root || a.root.kids[0] != b.root.kids[0] {
		t.Fatal("a write copied a node off its path, or none on it")
	}
	if _, ok := a.Get(4000); ok {
		t.Fatal("writing the clone changed the original")
	}
	r := b.root
	b.Delete(12345) // absent: nothing to copy
	if b.root != r {
		t.Fatal("deleting an absent item copied the root")
	}
}

func BenchmarkTreeCloneAndSet(b *testing.B) {
	tr := NewTree(func(a, b int) bool { return a < b })
	for i := range 4096 {
		tr.Set(2 * i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c := tr.Clone()
		c.Set(2*(i%4096) + 1)
		c.Delete(2*(i%4096) + 1)
		tr = c
		i++
	}
}

// FuzzTree runs a byte string as tree operations (two bytes each: an
// operation and a key) on a tree and its clones, checking every version
// against a plain sorted slice and the B-tree's shape at the end.
func FuzzTree(f *testing.F) {
	f.Add([]byte{0, 5, 0, 9, 1, 5, 2, 0, 0, 7})
	f.Add(make([]byte, 400))
	f.Fuzz(func(t *testing.T, ops []byte) {
		// The same operations on a tree and on a buffered tree.
		type version struct {
			tr   Tree[int]
			b    Buffered[int]
			want []int
		}
		less := func(a, b int) bool { return a < b }
		cur := version{NewTree(less), NewBuffered(less), nil}
		var old []version
		for i := 0; i+1 < len(ops); i += 2 {
			k := int(ops[i+1])
			j, found := slices.BinarySearch(cur.want, k)
			switch ops[i] % 5 {
			case 0, 1:
				if _, replaced := cur.tr.Set(k); replaced != found {
					t.Fatalf("Set(%d) replaced %t, held %t", k, replaced, found)
				}
				if _, replaced := cur.b.Set(k); replaced != found {
					t.Fatalf("buffered Set(%d) replaced %t, held %t", k, replaced, found)
				}
				if !found {
					cur.want = slices.Insert(cur.want, j, k)
				}
			case 2:
				if _, ok := cur.tr.Delete(k); ok != found {
					t.Fatalf("Delete(%d) = %t, held %t", k, ok, found)
				}
				if _, ok := cur.b.Delete(k); ok != found {
					t.Fatalf("buffered Delete(%d) = %t, held %t", k, ok, found)
				}
				if found {
					cur.want = slices.Delete(cur.want, j, j+1)
				}
			case 3:
				old = append(old, version{cur.tr.Clone(), cur.b.Clone(), slices.Clone(cur.want)})
			case 4:
				if !found {
					cur.tr.Set(k)
					cur.b.Insert(k)
					cur.want = slices.Insert(cur.want, j, k)
				}
			}
		}
		for _, v := range append(old, cur) {
			if got := checkTree(t, &v.tr); !slices.Equal(got, v.want) {
				t.Fatalf("tree holds %v, want %v", got, v.want)
			}
			checkBuffered(t, &v.b, v.want)
		}
	})
}

func TestTreeLoadKeepsShapeAndWrites(t *testing.T) {
	// A loaded tree of any size has the B-tree's shape and holds its
	// items; then every write and delete behaves as on a tree built one
	// insert at a time, and a clone taken after the load never changes.
	less := func(a, b int) bool { return a < b }
	sizes := []int{0, 1, 2, treeMin, treeMax, treeMax + 1, 2*treeMax + 1, 100, treeCap(2), treeCap(2) + 1, 3001, treeCap(3) + 1, 100_000}
	for _, n := range sizes {
		want := make([]int, n)
		for i := range want {
			want[i] = 2 * i
		}
		tr := NewTree(less)
		tr.Load(slices.Clone(want))
		if got := checkTree(t, &tr); !slices.Equal(got, want) {
			t.Fatalf("n=%d: loaded tree holds %d items, want %d", n, len(got), n)
		}
		frozen, frozenWant := tr.Clone(), slices.Clone(want)
		x := uint64(n + 3)
		for step := range 3 * min(n+50, 4000) {
			x = xorshift(x)
			k := int(x % uint64(2*n+10))
			i, found := slices.BinarySearch(want, k)
			if x>>62 == 0 {
				if _, ok := tr.Delete(k); ok != found {
					t.Fatalf("n=%d step %d: Delete(%d) found %t, want %t", n, step, k, ok, found)
				}
				if found {
					want = slices.Delete(want, i, i+1)
				}
				continue
			}
			if _, replaced := tr.Set(k); replaced != found {
				t.Fatalf("n=%d step %d: Set(%d) replaced %t, want %t", n, step, k, replaced, found)
			}
			if !found {
				want = slices.Insert(want, i, k)
			}
		}
		if got := checkTree(t, &tr); !slices.Equal(got, want) {
			t.Fatalf("n=%d: after writes the tree holds %d items, want %d", n, len(got), len(want))
		}
		if got := checkTree(t, &frozen); !slices.Equal(got, frozenWant) {
			t.Fatalf("n=%d: a clone of the loaded tree changed", n)
		}
	}
}

func TestTreeLoadRefusesATreeNotEmpty(t *testing.T) {
	tr := NewTree(func(a, b int) bool { return a < b })
	tr.Set(1)
	defer func() {
		if recover() == nil {
			t.Fatal("Load into a tree of one item did not panic")
		}
	}()
	tr.Load([]int{2, 3})
}
