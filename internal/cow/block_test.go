package cow

import "testing"

// TestBlockHandsOutEachSliceOnce: slices taken from one block never
// overlap, start zeroed and cannot grow into a neighbour; a nil block
// allocates each apart.
func TestBlockHandsOutEachSliceOnce(t *testing.T) {
	var b Block[int64]
	var got [][]int64
	for i := range 200 {
		n := 1 + i%7
		s := b.Take(n)
		if len(s) != n || cap(s) != n {
			t.Fatalf("take %d: len %d cap %d", n, len(s), cap(s))
		}
		for j := range s {
			if s[j] != 0 {
				t.Fatalf("take %d: element %d is %d, not zero", n, j, s[j])
			}
			s[j] = int64(i + 1)
		}
		got = append(got, s)
	}
	for i, s := range got {
		for j := range s {
			if s[j] != int64(i+1) {
				t.Fatalf("slice %d element %d is %d: another slice wrote it", i, j, s[j])
			}
		}
	}
	if s := append(got[0], 9); &s[0] == &got[0][0] {
		t.Fatal("append grew a slice into its neighbour")
	}
	var none *Block[int64]
	if a, c := none.Take(3), none.Take(3); &a[0] == &c[0] || len(a) != 3 {
		t.Fatal("a nil block shares its slices")
	}
	if c := b.Clone([]int64{1, 2, 3}); len(c) != 3 || c[2] != 3 {
		t.Fatalf("Clone gave %v", c)
	}
	if c := b.Clone(nil); c != nil {
		t.Fatalf("Clone of nothing gave %v", c)
	}
	for _, n := range []int{blockMin + 1, blockMax, blockMax + 1} {
		s, c := b.Take(n), b.Take(n)
		if len(s) != n || cap(s) != n || &s[0] == &c[0] {
			t.Fatalf("a take of %d gave len %d cap %d, shared %v", n, len(s), cap(s), &s[0] == &c[0])
		}
	}
}
