package allot

import (
	"slices"
	"testing"
)

// TestVictimsDiffer pins how the victims of a Preempt decision compare with
// those Decide chooses now: which it spares, which it evicts besides, a
// victim admitted again since counting as another workload.
func TestVictimsDiffer(t *testing.T) {
	v := func(id string, at int64) Victim { return Victim{ID: id, AdmittedAt: at} }
	ids := func(vs []Victim) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.ID)
		}
		return out
	}
	for _, c := range []struct {
		name         string
		was, now     []Victim
		spare, extra []string
	}{
		{name: "same", was: []Victim{v("a", 1), v("b", 1)}, now: []Victim{v("a", 1), v("b", 1)}},
		{name: "fewer", was: []Victim{v("a", 1), v("b", 1), v("c", 1)}, now: []Victim{v("b", 1)}, spare: []string{"a", "c"}},
		{name: "none now", was: []Victim{v("a", 1)}, now: nil, spare: []string{"a"}},
		{name: "more now", was: []Victim{v("a", 1)}, now: []Victim{v("a", 1), v("b", 1)}, extra: []string{"b"}},
		{name: "another", was: []Victim{v("a", 1), v("b", 1)}, now: []Victim{v("c", 1)}, spare: []string{"a", "b"}, extra: []string{"c"}},
		{name: "readmitted", was: []Victim{v("a", 1), v("b", 1)}, now: []Victim{v("a", 2)}, spare: []string{"a", "b"}, extra: []string{"a"}},
	} {
		spare, extra := victimsDiffer(c.was, c.now)
		if !slices.Equal(ids(spare), c.spare) || !slices.Equal(ids(extra), c.extra) {
			t.Errorf("%s: spares %v and evicts %v besides, want %v and %v", c.name, ids(spare), ids(extra), c.spare, c.extra)
		}
	}
	if got, want := victimList([]Victim{v("a", 1), v("b\"", 1)}), `"a", "b\""`; got != want {
		t.Errorf("victimList: %s, want %s", got, want)
	}
}
