package cow

import "testing"

func TestCloneSharesUntilWrite(t *testing.T) {
	a := Make[int](5000)
	for i := 0; i < 5000; i++ {
		a.Set(i, i)
	}
	b := a.Clone()
	b.Set(5, -5)
	b.Set(4999, -4999)
	if a.At(5) != 5 || a.At(4999) != 4999 {
		t.Fatalf("writing the clone changed the original: %d %d", a.At(5), a.At(4999))
	}
	if b.At(5) != -5 || b.At(4999) != -4999 || b.At(6) != 6 {
		t.Fatalf("clone lost a write: %d %d %d", b.At(5), b.At(4999), b.At(6))
	}
	if a.mids[0].d[0].p[1] != b.mids[0].d[0].p[1] || a.mids[0].d[1] != b.mids[0].d[1] || a.mids[2] != b.mids[2] {
		t.Fatal("an unwritten page or directory was copied")
	}
	// The original, once cloned, copies too.
	a.Set(6, 66)
	if b.At(6) != 6 {
		t.Fatal("writing the original after a clone changed the clone")
	}
	c := b.Clone()
	c.Set(5, 55)
	if b.At(5) != -5 {
		t.Fatal("second-generation clone wrote through")
	}
}

func TestPropertyAgainstPlainSlices(t *testing.T) {
	// Versions made by random writes and clones must each equal a plain
	// copy made at the same moment.
	type version struct {
		s    Slice[int]
		want []int
	}
	n := 3000
	cur := version{Make[int](n), make([]int, n)}
	var old []version
	x := uint64(1)
	for step := 0; step < 20000; step++ {
		x = xorshift(x)
		i, v := int(x%uint64(n)), int(x>>40)
		switch x % 50 {
		case 0:
			// Keep the clone and go on writing the original, as a store's
			// master does (it writes from its spare copies)...
			old = append(old, version{cur.s.Clone(), append([]int(nil), cur.want...)})
		case 1:
			// ...or keep the original and go on writing the clone.
			old = append(old, version{cur.s.Clone(), append([]int(nil), cur.want...)})
			old[len(old)-1], cur = cur, old[len(old)-1]
		case 2:
			// A fork of a version that is never written again.
			old = append(old, cur)
			cur = version{cur.s.Fork(), append([]int(nil), cur.want...)}
		default:
			cur.s.Set(i, v)
			cur.want[i] = v
		}
	}
	for k, ver := range append(old, cur) {
		for i := 0; i < n; i++ {
			if ver.s.At(i) != ver.want[i] {
				t.Fatalf("version %d element %d: got %d, want %d", k, i, ver.s.At(i), ver.want[i])
			}
		}
	}
}

func BenchmarkCloneAndWrite(b *testing.B) {
	s := Make[[12]int64](10240)
	b.ReportAllocs()
	for b.Loop() {
		c := s.Clone()
		c.Mut(5000)[0]++
		s = c
	}
}

// xorshift is the tests' deterministic random step.
func xorshift(x uint64) uint64 {
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	return x
}

// TestCopySharesNothing: a copy holds the slice's elements, and writes to
// either leave the other as it was.
func TestCopySharesNothing(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 511, 512, 513, 5000} {
		s := Make[int](n)
		for i := range n {
			s.Set(i, i*3)
		}
		c := s.Copy(n)
		for i := range n {
			if c.At(i) != i*3 {
				t.Fatalf("n=%d: copy's element %d is %d", n, i, c.At(i))
			}
			c.Set(i, -1)
			if s.At(i) != i*3 {
				t.Fatalf("n=%d: writing the copy changed the slice's element %d", n, i)
			}
		}
		for i := range n {
			s.Set(i, 7)
			if c.At(i) != -1 {
				t.Fatalf("n=%d: writing the slice changed the copy's element %d", n, i)
			}
		}
	}
}

func TestFromCopiesEveryElement(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 513, 4097} {
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(i*7 + 1)
		}
		s := From(v)
		for i := range v {
			if got := s.At(i); got != v[i] {
				t.Fatalf("n=%d: element %d is %d, want %d", n, i, got, v[i])
			}
		}
		if n > 0 {
			v[0] = -1
			if s.At(0) == -1 {
				t.Fatalf("n=%d: From shares the caller's memory", n)
			}
			c := s.Clone()
			c.Set(n-1, -5)
			if s.At(n-1) == -5 {
				t.Fatalf("n=%d: a clone's write reached the original", n)
			}
		}
	}
}
