package quota

import (
	"errors"
	"testing"
)

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
