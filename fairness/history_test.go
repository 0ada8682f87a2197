package fairness

import (
	"math"
	"testing"
)

func TestDecay(t *testing.T) {
	if got := Decay(8, 86400, 86400); got != 4 {
		t.Fatalf("one half-life: %v", got)
	}
	if got := Decay(8, 2*86400, 86400); got != 2 {
		t.Fatalf("two half-lives: %v", got)
	}
	if got := Decay(8, 100, 0); got != 8 {
		t.Fatalf("no half-life: %v", got)
	}
	d := Debt{}.Add(0, 100, 3)
	d = d.Add(100, 100, 1) // 3 halved, plus 1
	if got := d.Now(100, 100); got != 2.5 {
		t.Fatalf("debt %v", got)
	}
	if got := d.Now(200, 100); got != 1.25 {
		t.Fatalf("decayed debt %v", got)
	}
}

// TestSlurmClassicExample is the worked example of Slurm's classic
// fair-share documentation (root: A 40, D 60; A: B 30, C 10; D: E 25,
// F 35; user 1 in B, users 2 and 3 in C with one share each, user 4 in E,
// user 5 in F; actual usage 0.2, 0.25, 0, 0.25, 0): the documented
// factors 0.408479, 0.022097, 0.125, 0.5 and 0.749154.
func TestSlurmClassicExample(t *testing.T) {
	tree := []Account{
		{Name: "A", Parent: -1, Shares: 40}, {Name: "D", Parent: -1, Shares: 60}, // 0, 1
		{Name: "B", Parent: 0, Shares: 30}, {Name: "C", Parent: 0, Shares: 10}, // 2, 3
		{Name: "E", Parent: 1, Shares: 25}, {Name: "F", Parent: 1, Shares: 35}, // 4, 5
		{Name: "user1", Parent: 2, Shares: 1, Usage: 0.2},
		{Name: "user2", Parent: 3, Shares: 1, Usage: 0.25},
		{Name: "user3", Parent: 3, Shares: 1},
		{Name: "user4", Parent: 4, Shares: 1, Usage: 0.25},
		{Name: "user5", Parent: 5, Shares: 1},
	}
	f := ClassicFairShare(tree)
	want := []float64{0.408479, 0.022097, 0.125, 0.5, 0.749154}
	for i, w := range want {
		if got := f[6+i]; math.Abs(got-w) > 5e-7 {
			t.Errorf("%s: F = %.6f, want %.6f", tree[6+i].Name, got, w)
		}
	}
	// FS2: S = 0.25 with a damping factor.
	for _, c := range []struct{ u, d, want float64 }{{0, 1, 1}, {0.25, 1, 0.5}, {0.5, 1, 0.25}, {0.1, 1, 0.757858}, {0.5, 2, 0.5}} {
		if got := FairShareFactor(c.u, 0.25, c.d); math.Abs(got-c.want) > 5e-7 {
			t.Errorf("U=%v d=%v: %v, want %v", c.u, c.d, got, c.want)
		}
	}
}
