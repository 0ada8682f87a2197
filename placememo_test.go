package allot

import (
	"testing"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
)

// A placement memory answers the same pod sets on the same state with
// the same finality, and nothing else: another state (a version that
// booked or freed GPUs), a final placement for one that was not, other
// pod sets.
func TestPlaceMemoAnswersTheSamePlacementOnly(t *testing.T) {
	b := Builder{Resources: []string{"gpu"}, Flavors: []Flavor{{Name: "f"}},
		Nodes:  []Node{{Name: "n0", Flavor: "f", Capacity: Resources{"gpu": 8}}},
		Queues: []Queue{{Name: "q", Quota: []FlavorQuota{{Flavor: "f", Resources: []ResourceQuota{{Name: "gpu", Nominal: 8}}}}}}}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	sets := []gang.PodSet{{Flavor: 0, Count: 2, GPUs: 8, Res: res.Vec{8}}}
	fail := gang.Failure{PodSet: 0, Fit: 1, Need: 2}
	var m placeMemo
	m.record(s.state, sets, true, fail, false)
	sets[0].Count = 3 // the caller's memory is reused: the memory keeps a copy
	asked := []gang.PodSet{{Flavor: 0, Count: 2, GPUs: 8, Res: res.Vec{8}}}
	if got, ok, known := m.lookup(s.state, asked, true); !known || ok || got != fail {
		t.Fatalf("the same placement: %v %v %v", got, ok, known)
	}
	for _, c := range []struct {
		name  string
		sets  []gang.PodSet
		final bool
		other bool
	}{
		{"not final", asked, false, false},
		{"another state", asked, true, true},
		{"another count", []gang.PodSet{{Flavor: 0, Count: 3, GPUs: 8, Res: res.Vec{8}}}, true, false},
		{"two pod sets", append(asked[:1:1], asked[0]), true, false},
	} {
		st := s.state
		if c.other {
			st = s.capacity
		}
		if _, _, known := m.lookup(st, c.sets, c.final); known {
			t.Errorf("%s: answered", c.name)
		}
	}
	// Recording on another state forgets the first.
	m.record(s.capacity, asked, false, gang.Failure{}, true)
	if _, _, known := m.lookup(s.state, asked, true); known {
		t.Fatal("an answer of the state before survived")
	}
	if _, ok, known := m.lookup(s.capacity, asked, false); !known || !ok {
		t.Fatal("the new state's answer is not kept")
	}
}
