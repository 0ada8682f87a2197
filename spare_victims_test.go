package allot

import (
	"slices"
	"testing"
)

// TestSpareVictims pins which victims of a stale Preempt decision a new
// decision spares: only when the new victims are some of the old ones (same
// admission), not all.
func TestSpareVictims(t *testing.T) {
	v := func(id string, at int64) Victim { return Victim{ID: id, AdmittedAt: at} }
	for _, c := range []struct {
		name     string
		was, now []Victim
		want     []string
	}{
		{name: "same", was: []Victim{v("a", 1), v("b", 1)}, now: []Victim{v("a", 1), v("b", 1)}},
		{name: "fewer", was: []Victim{v("a", 1), v("b", 1), v("c", 1)}, now: []Victim{v("b", 1)}, want: []string{"a", "c"}},
		{name: "none now", was: []Victim{v("a", 1)}, now: nil, want: []string{"a"}},
		{name: "more now", was: []Victim{v("a", 1)}, now: []Victim{v("a", 1), v("b", 1)}},
		{name: "another", was: []Victim{v("a", 1), v("b", 1)}, now: []Victim{v("c", 1)}},
		{name: "readmitted", was: []Victim{v("a", 1), v("b", 1)}, now: []Victim{v("a", 2)}},
	} {
		var got []string
		for _, s := range spareVictims(c.was, c.now) {
			got = append(got, s.ID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: spares %v, want %v", c.name, got, c.want)
		}
	}
	if got, want := victimList([]Victim{v("a", 1), v("b\"", 1)}), `"a", "b\""`; got != want {
		t.Errorf("victimList: %s, want %s", got, want)
	}
}
