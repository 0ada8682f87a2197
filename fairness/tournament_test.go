package fairness

import (
	"slices"
	"testing"

	"github.com/allot-sched/allot/quota"
)

func TestTournament(t *testing.T) {
	tr := twoLevels(t)
	head := func(q int32, name string, prio int32, charges []Charge) Head {
		return Head{Key: Key{Queue: q, QueueName: name, Turn: Turn{Priority: prio, ID: name + "-head"}}, Charges: charges}
	}
	ones := []float64{1, 1, 1, 1, 1, 1}
	for _, c := range []struct {
		name   string
		used   [3]int64 // gpu in use per queue
		heads  []Head
		weight []float64
		want   []string
	}{
		{
			// qb does not borrow, qa does: qb wins left, and left (not
			// borrowing) beats right (qc borrows). Then qa fills left to
			// its 8 gpu, not borrowing, and still beats right, though qa's
			// own share is above qc's.
			name:   "cohort borrowing decides",
			used:   [3]int64{4, 0, 0},
			heads:  []Head{head(0, "qa", 0, gpus(2)), head(1, "qb", 0, gpus(2)), head(2, "qc", 0, gpus(5))},
			weight: ones,
			want:   []string{"qb", "qa", "qc"},
		},
		{
			name:   "ties by priority",
			heads:  []Head{head(0, "qa", 1, gpus(1)), head(1, "qb", 5, gpus(1)), head(2, "qc", 3, gpus(1))},
			weight: ones,
			want:   []string{"qb", "qc", "qa"},
		},
		{
			name:   "weights at the queue level",
			used:   [3]int64{4, 4, 0},
			heads:  []Head{head(0, "qa", 0, gpus(2)), head(1, "qb", 0, gpus(2))},
			weight: []float64{1, 2, 1, 1, 1, 1},
			want:   []string{"qb", "qa"},
		},
		{
			name:   "weights swapped",
			used:   [3]int64{4, 4, 0},
			heads:  []Head{head(0, "qa", 0, gpus(2)), head(1, "qb", 0, gpus(2))},
			weight: []float64{2, 1, 1, 1, 1, 1},
			want:   []string{"qa", "qb"},
		},
		{
			// Left borrows with either head; right, of weight 0, borrows
			// infinitely much: both left heads go first.
			name:   "weights at the cohort level",
			used:   [3]int64{4, 4, 4},
			heads:  []Head{head(0, "qa", 0, gpus(1)), head(1, "qb", 0, gpus(1)), head(2, "qc", 9, gpus(1))},
			weight: []float64{1, 1, 1, 1, 0, 1},
			want:   []string{"qa", "qb", "qc"},
		},
	} {
		u := tr.NewUsage()
		var total int64
		for q, n := range c.used {
			Account(tr, u, int32(q), gpus(n))
			total += n
		}
		for _, h := range c.heads {
			total += h.Charges[0].Need[0]
		}
		if !Nested(tr, c.heads) {
			t.Fatalf("%s: queues below left and right are nested", c.name)
		}
		var got []string
		for _, i := range Tournament(tr, u, c.heads, c.weight, nil) {
			got = append(got, c.heads[i].Key.QueueName)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if got := u.At(5, tr.FR(0, 0)); got != total {
			t.Errorf("%s: root uses %d gpu after the tournament, want %d", c.name, got, total)
		}
	}
}

// Winner picks among the heads in play without changing the usage, and a
// Bracket serves round after round.
func TestBracketWinner(t *testing.T) {
	tr := twoLevels(t)
	head := func(q int32, name string, charges []Charge) Head {
		return Head{Key: Key{Queue: q, QueueName: name, Turn: Turn{ID: name + "-head"}}, Charges: charges}
	}
	heads := []Head{head(0, "qa", gpus(2)), head(1, "qb", gpus(2)), head(2, "qc", gpus(5))}
	ones := []float64{1, 1, 1, 1, 1, 1}
	u := tr.NewUsage()
	Account(tr, u, 0, gpus(4))
	var b Bracket
	for _, c := range []struct {
		left []int
		want int
	}{
		{[]int{0, 1, 2}, 1}, // qb does not borrow
		{[]int{0, 2}, 0},    // left does not borrow with qa's head, right does with qc's
		{[]int{2}, 2},
		{[]int{0, 1, 2}, 1},
	} {
		if got := b.Winner(tr, u, heads, c.left, ones); got != c.want {
			t.Errorf("heads %v in play: winner %d, want %d", c.left, got, c.want)
		}
	}
	if got := u.At(5, tr.FR(0, 0)); got != 4 {
		t.Errorf("root uses %d gpu after the rounds, want 4", got)
	}
}

func TestNested(t *testing.T) {
	flat, err := quota.NewResourceTree(1, 1, []quota.NodeSpec{
		{Name: "qa", Parent: 2, Queue: true}, {Name: "qb", Parent: -1, Queue: true}, {Name: "all", Parent: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if Nested(flat, []Head{{Key: Key{Queue: 0}}, {Key: Key{Queue: 1}}}) {
		t.Error("a queue under a root cohort is not nested")
	}
	if !Nested(twoLevels(t), []Head{{Key: Key{Queue: 2}}}) {
		t.Error("a queue under a child cohort is nested")
	}
}
