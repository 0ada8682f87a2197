package fairness

import "testing"

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
