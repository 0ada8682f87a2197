package preempt

import (
	"slices"
	"testing"
)

func TestAllows(t *testing.T) {
	cases := []struct {
		p           Policy
		prio, cprio int32
		sub, csub   int64
		want        bool
	}{
		{LowerPriority, 5, 4, 0, 0, true},
		{LowerPriority, 5, 5, 0, 10, false},
		{LowerOrNewerEqualPriority, 5, 5, 0, 10, true},
		{LowerOrNewerEqualPriority, 5, 5, 10, 10, false},
		{LowerOrNewerEqualPriority, 5, 6, 0, 10, false},
		{Any, 0, 100, 0, 0, true},
		{Never, 100, 0, 0, 0, false},
	}
	for _, c := range cases {
		if got := c.p.Allows(c.prio, c.cprio, c.sub, c.csub); got != c.want {
			t.Errorf("%v %+v: %v", c.p, c, got)
		}
	}
	if p, ok := ParsePolicy("LowerPriority", LowerPriority, Any); !ok || p != LowerPriority {
		t.Fatal("parse")
	}
	if _, ok := ParsePolicy("Any", LowerPriority); ok {
		t.Fatal("Any is not allowed there")
	}
}

func TestOrder(t *testing.T) {
	names := []string{"own", "high", "fresh", "ckpt", "ckpt-newer", "ckpt-a"}
	// IDRank: the names' order: ckpt, ckpt-a, ckpt-newer, fresh, high, own.
	cs := []Candidate{
		{Index: 0, IDRank: 5, OwnQueue: true, Priority: 0, LostWork: 1, AdmittedAt: 5},
		{Index: 1, IDRank: 4, Priority: 3, LostWork: 0, AdmittedAt: 5},
		{Index: 2, IDRank: 3, Priority: 1, LostWork: 400, AdmittedAt: 900},
		{Index: 3, IDRank: 0, Priority: 1, LostWork: 40, AdmittedAt: 0},
		{Index: 4, IDRank: 2, Priority: 1, LostWork: 40, AdmittedAt: 10},
		{Index: 5, IDRank: 1, Priority: 1, LostWork: 40, AdmittedAt: 10},
	}
	slices.SortFunc(cs, func(a, b Candidate) int {
		if Less(&a, &b) {
			return -1
		}
		if Less(&b, &a) {
			return 1
		}
		return 0
	})
	var got []string
	for _, c := range cs {
		got = append(got, names[c.Index])
	}
	want := []string{"ckpt-a", "ckpt-newer", "ckpt", "fresh", "high", "own"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestLostWork(t *testing.T) {
	if got := LostWork(1000, 0, 990, true, 4); got != 40 {
		t.Fatalf("checkpointed: %d", got)
	}
	if got := LostWork(1000, 900, 0, false, 4); got != 400 {
		t.Fatalf("since admission: %d", got)
	}
	if got := LostWork(1000, 900, 990, false, 4); got != 400 {
		t.Fatalf("a preemptible workload's checkpoint does not count: %d", got)
	}
	if got := LostWork(1<<62, 0, 0, false, 1<<40); got != 1<<62 {
		t.Fatalf("saturates: %d", got)
	}
}
