package quota

import (
	"errors"
	"slices"
	"testing"
)

func TestParents(t *testing.T) {
	queues := []Queue{{Name: "a"}, {Name: "b"}}
	cases := []struct {
		name    string
		cohorts []CohortSpec
		of      []string
		want    []int32
		err     error
		msg     string
	}{
		{name: "flat", of: []string{"", ""}, want: []int32{-1, -1}},
		{name: "tree", cohorts: []CohortSpec{{"root", ""}, {"ai", "root"}, {"ml", "root"}}, of: []string{"ai", "ml"},
			want: []int32{3, 4, -1, 2, 2}},
		{name: "self cycle", cohorts: []CohortSpec{{"x", "x"}}, of: []string{"", ""}, err: ErrCohortCycle,
			msg: `quota: cycle in the cohort tree: through cohort "x"`},
		{name: "long cycle", cohorts: []CohortSpec{{"x", "z"}, {"y", "x"}, {"z", "y"}}, of: []string{"", ""}, err: ErrCohortCycle},
		{name: "unknown parent", cohorts: []CohortSpec{{"x", "nope"}}, of: []string{"", ""}, err: ErrUnknownCohort,
			msg: `quota: unknown cohort: cohort "x" names parent "nope"`},
		{name: "queue in unknown cohort", cohorts: []CohortSpec{{"x", ""}}, of: []string{"x", "y"}, err: ErrUnknownCohort,
			msg: `quota: unknown cohort: queue "b" names cohort "y"`},
	}
	for _, c := range cases {
		got, err := Parents(c.cohorts, queues, c.of)
		switch {
		case !errors.Is(err, c.err):
			t.Errorf("%s: got %v, want %v", c.name, err, c.err)
		case c.msg != "" && err.Error() != c.msg:
			t.Errorf("%s: message %q, want %q", c.name, err, c.msg)
		case err == nil && !slices.Equal(got, c.want):
			t.Errorf("%s: parents %v, want %v", c.name, got, c.want)
		}
	}
}

// TestNewTree checks that the queues' cohorts and the cohorts' names are
// read from the resource tree they sit beside.
func TestNewTree(t *testing.T) {
	cohorts := []CohortSpec{{"root", ""}, {"ai", "root"}}
	queues := []Queue{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	parents, err := Parents(cohorts, queues, []string{"ai", "", "root"})
	if err != nil {
		t.Fatal(err)
	}
	nodes := []NodeSpec{{Name: "a", Queue: true}, {Name: "b", Queue: true}, {Name: "c", Queue: true}, {Name: "root"}, {Name: "ai"}}
	for i := range nodes {
		nodes[i].Parent = parents[i]
	}
	tr := NewTree(queues, mustTree(t, 1, 1, nodes))
	if got := []int32{tr.Queues[0].Cohort, tr.Queues[1].Cohort, tr.Queues[2].Cohort}; !slices.Equal(got, []int32{1, -1, 0}) {
		t.Errorf("cohorts %v", got)
	}
	if tr.CohortName(0) != "root" || tr.CohortName(1) != "ai" {
		t.Errorf("names %q %q", tr.CohortName(0), tr.CohortName(1))
	}
}
