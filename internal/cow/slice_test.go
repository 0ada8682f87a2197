package cow

import "testing"

func TestCloneSharesUntilWrite(t *testing.T) {
	a := Make[int](1000)
	for i := 0; i < 1000; i++ {
		a.Set(i, i)
	}
	b := a.Clone()
	b.Set(5, -5)
	b.Set(999, -999)
	if a.At(5) != 5 || a.At(999) != 999 {
		t.Fatalf("writing the clone changed the original: %d %d", a.At(5), a.At(999))
	}
	if b.At(5) != -5 || b.At(999) != -999 || b.At(6) != 6 {
		t.Fatalf("clone lost a write: %d %d %d", b.At(5), b.At(999), b.At(6))
	}
	if a.pages[1] != b.pages[1] {
		t.Fatal("an unwritten page was copied")
	}
	c := b.Clone()
	c.Set(5, 55)
	if b.At(5) != -5 {
		t.Fatal("second-generation clone wrote through")
	}
}
