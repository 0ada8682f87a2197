package quota

import (
	"errors"
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

func TestFits(t *testing.T) {
	fq := FlavorQuota{Flavor: 0, Covered: 0b011, Nominal: res.Vec{8, 64_000}}
	cases := []struct {
		name     string
		used     res.Vec
		need     res.Vec
		verdict  Verdict
		resource int
	}{
		{"fits", res.Vec{3, 0}, res.Vec{4, 1000}, Fit, -1},
		{"exactly full", res.Vec{4, 0}, res.Vec{4, 0}, Fit, -1},
		{"used up", res.Vec{6, 0}, res.Vec{4, 0}, NoFitNow, 0},
		{"second resource used up", res.Vec{0, 63_000}, res.Vec{1, 2000}, NoFitNow, 1},
		{"more than nominal alone", res.Vec{0, 0}, res.Vec{9, 0}, NoFitEver, 0},
		{"uncovered resource", res.Vec{}, res.Vec{1, 0, 1}, NoFitEver, 2},
		{"nothing asked", res.Vec{8, 64_000}, res.Vec{}, Fit, -1},
		{"overflowing usage", res.Vec{1<<62 + 1<<61, 0}, res.Vec{1 << 62, 0}, NoFitEver, 0},
	}
	for _, c := range cases {
		got := fq.Fits(c.used, c.need, 3)
		if got.Verdict != c.verdict || got.Resource != c.resource {
			t.Errorf("%s: got %+v, want verdict %d on resource %d", c.name, got, c.verdict, c.resource)
		}
	}
}

func TestNewTreeValidatesCohorts(t *testing.T) {
	queues := func() []Queue { return []Queue{{Name: "a"}, {Name: "b"}} }
	cases := []struct {
		name    string
		cohorts []CohortSpec
		of      []string
		want    error
	}{
		{"flat", nil, []string{"", ""}, nil},
		{"tree", []CohortSpec{{"root", ""}, {"ai", "root"}, {"ml", "root"}}, []string{"ai", "ml"}, nil},
		{"self cycle", []CohortSpec{{"x", "x"}}, []string{"", ""}, ErrCohortCycle},
		{"long cycle", []CohortSpec{{"x", "z"}, {"y", "x"}, {"z", "y"}}, []string{"", ""}, ErrCohortCycle},
		{"unknown parent", []CohortSpec{{"x", "nope"}}, []string{"", ""}, ErrUnknownCohort},
		{"queue in unknown cohort", []CohortSpec{{"x", ""}}, []string{"x", "y"}, ErrUnknownCohort},
	}
	for _, c := range cases {
		tr, err := NewTree(1, c.cohorts, queues(), c.of)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
			continue
		}
		if err == nil {
			for i, q := range tr.Queues {
				if (c.of[i] == "") != (q.Cohort < 0) {
					t.Errorf("%s: queue %s cohort %d", c.name, q.Name, q.Cohort)
				}
			}
		}
	}
}

func TestAuthorized(t *testing.T) {
	open := Queue{}
	closed := Queue{Tenants: []string{"team-a", "team-c"}}
	if !open.Authorized("anyone") || !closed.Authorized("team-c") || closed.Authorized("team-b") || closed.Authorized("") {
		t.Fatal("allow-list")
	}
}
