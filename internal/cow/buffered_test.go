package cow

import (
	"fmt"
	"slices"
	"testing"
)

// checkBuffered verifies a buffered tree: the tree keeps its shape, the
// buffer is sorted, short and disjoint from the tree, and Scan, Len and
// Ascend see exactly want.
func checkBuffered(t *testing.T, b *Buffered[int], want []int) {
	t.Helper()
	inTree := checkTree(t, &b.Tree)
	if len(b.buf) > bufMax || !slices.IsSorted(b.buf) || len(slices.Compact(slices.Clone(b.buf))) != len(b.buf) {
		t.Fatalf("buffer %v", b.buf)
	}
	for _, x := range b.buf {
		if _, found := slices.BinarySearch(inTree, x); found {
			t.Fatalf("%d both in the buffer and in the tree", x)
		}
	}
	var got []int
	b.Scan(func(x int) bool { got = append(got, x); return true })
	if !slices.Equal(got, want) || b.Len() != len(want) {
		t.Fatalf("Scan gives %d items (Len %d), want %d", len(got), b.Len(), len(want))
	}
	for _, p := range []int{-1, 0, 5, 333, 1999, 5000} {
		got = got[:0]
		b.Ascend(p, func(x int) bool { got = append(got, x); return true })
		i, _ := slices.BinarySearch(want, p)
		if !slices.Equal(got, want[i:]) {
			t.Fatalf("Ascend(%d) gave %d items, want %d", p, len(got), len(want)-i)
		}
	}
	// Stopping early stops both the buffer's items and the tree's.
	// Deep stops end inside a subtree the scan walks without comparisons,
	// or among the buffer's items after the tree's.
	stops := []int{len(want) / 3, len(want) / 2, len(want) - 1}
	for stop := 0; stop < min(len(want), 40); stop++ {
		stops = append(stops, stop)
	}
	for _, stop := range stops {
		if stop < 0 || stop >= len(want) {
			continue
		}
		n, last := 0, 0
		b.Scan(func(x int) bool { n++; last = x; return n <= stop })
		if n != stop+1 || last != want[stop] {
			t.Fatalf("Scan stopping after %d items called fn %d times, last on %d (want %d)", stop+1, n, last, want[stop])
		}
	}
}

func TestBufferedAgainstSortedSlice(t *testing.T) {
	// As TestTreeAgainstSortedSlice, on the buffered tree: random inserts,
	// replacements and deletes, runs of ascending keys (which flush to
	// one path), and versions kept along the way.
	type version struct {
		b    Buffered[int]
		want []int
	}
	cur := version{NewBuffered(func(a, b int) bool { return a < b }), nil}
	var old []version
	x := uint64(11)
	next := 3000
	for step := 0; step < 60000; step++ {
		x = xorshift(x)
		span := 1 + int(2000-int64(step%20000)/10)
		k := int(x % uint64(span))
		if step%3 == 0 {
			k, next = next, next+1 // ascending, as IDs often come
			if next > 4000 {
				next = 3000
			}
		}
		i, found := slices.BinarySearch(cur.want, k)
		switch op := x >> 60; {
		case op == 0 && step%7 == 0:
			if step%2 == 0 {
				old = append(old, version{cur.b.Clone(), slices.Clone(cur.want)})
			} else {
				old = append(old, cur)
				cur = version{cur.b.Fork(), slices.Clone(cur.want)}
			}
			if len(old) > 40 {
				old = old[1:]
			}
		case !found && step%2 == 0:
			cur.b.Insert(k)
			cur.want = slices.Insert(cur.want, i, k)
		case step%101 == 0:
			cur.b.Settle()
			if len(cur.b.buf) != 0 {
				t.Fatalf("step %d: %d items left in the buffer", step, len(cur.b.buf))
			}
		case op < 9 || step%20000 < 9000:
			prev, replaced := cur.b.Set(k)
			if replaced != found || (found && prev != k) {
				t.Fatalf("step %d: Set(%d) replaced %t, want %t", step, k, replaced, found)
			}
			if !found {
				cur.want = slices.Insert(cur.want, i, k)
			}
		default:
			got, ok := cur.b.Delete(k)
			if ok != found || (ok && got != k) {
				t.Fatalf("step %d: Delete(%d) = %d, %t; want found %t", step, k, got, ok, found)
			}
			if found {
				cur.want = slices.Delete(cur.want, i, i+1)
			}
		}
		in := slices.Contains(cur.want, k)
		if g, ok := cur.b.Get(k); ok != in || (ok && g != k) {
			t.Fatalf("step %d: Get(%d) = %d, %t", step, k, g, ok)
		}
		if g, ok := cur.b.Find(func(x int) int { return x - k }); ok != in || (ok && g != k) {
			t.Fatalf("step %d: Find(%d) = %d, %t", step, k, g, ok)
		}
		if step%997 == 0 {
			checkBuffered(t, &cur.b, cur.want)
		}
	}
	for _, v := range append(old, cur) {
		checkBuffered(t, &v.b, v.want)
	}
}

func TestBufferedInsertCopiesNoPath(t *testing.T) {
	// A version that inserts one key copies no tree node; over as many
	// versions as fill the buffer, ascending keys cost one path and the
	// leaves they split off, where the plain tree copies a path for each.
	less := func(a, b int) bool { return a < b }
	b, plain := NewBuffered(less), NewTree(less)
	for k := range 5000 {
		b.Set(k * 2)
		plain.Set(k * 2)
	}
	nodes := func(root *tnode[int], into map[*tnode[int]]bool) {
		var walk func(n *tnode[int])
		walk = func(n *tnode[int]) {
			into[n] = true
			for _, kid := range n.kids[:n.n+1] {
				if kid != nil {
					walk(kid)
				}
			}
		}
		walk(root)
	}
	base := map[*tnode[int]]bool{}
	nodes(b.root, base)
	nodes(plain.root, base)
	newB, newPlain := map[*tnode[int]]bool{}, map[*tnode[int]]bool{}
	for k := 10000; k <= 10000+bufMax; k++ {
		next := b.Clone()
		next.Set(k)
		if len(next.buf) != 0 && next.root != b.root {
			t.Fatal("an insert into the buffer copied the tree's root")
		}
		b = next
		nodes(b.root, newB)
		nextPlain := plain.Clone()
		nextPlain.Set(k)
		plain = nextPlain
		nodes(plain.root, newPlain)
	}
	copied, copiedPlain := 0, 0
	for n := range newB {
		if !base[n] {
			copied++
		}
	}
	for n := range newPlain {
		if !base[n] {
			copiedPlain++
		}
	}
	depth := 0
	for n := b.root; n != nil; n = n.kids[0] {
		depth++
	}
	t.Logf("%d versions: %d nodes copied, %d by the plain tree, %d deep", bufMax+1, copied, copiedPlain, depth)
	if copied > depth+(bufMax+1)/treeMin+1 || copied*4 > copiedPlain {
		t.Fatalf("%d versions copied %d nodes of a tree %d deep; the plain tree copied %d", bufMax+1, copied, depth, copiedPlain)
	}
}

// BenchmarkBufferedInsert times what a store's commit does to the admitted
// workloads: a new version, one insert. Keys come in ascending order
// (ascending=true, as generated IDs do) or spread over the set.
func BenchmarkBufferedInsert(b *testing.B) {
	for _, ascending := range []bool{true, false} {
		b.Run(fmt.Sprintf("ascending=%t", ascending), func(b *testing.B) {
			less := func(a, b int) bool { return a < b }
			base := NewBuffered(less)
			for i := range 4096 {
				base.Set(4 * i)
			}
			base.Settle()
			cur, x, next := base.Clone(), uint64(1), 1<<20
			b.ReportAllocs()
			for b.Loop() {
				k := next
				if ascending {
					next++
				} else {
					x = xorshift(x)
					k = int(x%(1<<30))*4 + 1 // never a base key
				}
				if cur.Len() >= 4096+4096 {
					cur = base.Clone() // start over: the set stays the same size
				}
				c := cur.Clone()
				if _, found := c.Get(k); !found {
					c.Insert(k)
				}
				cur = c
			}
			// Every step inserts: the set is always larger than it started.
			if _, found := cur.Get(next - 1); cur.Len() <= base.Len() || ascending && !found {
				b.Fatalf("%d items after the inserts, %d before", cur.Len(), base.Len())
			}
		})
	}
}
