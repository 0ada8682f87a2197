package view

import (
	"testing"

	"github.com/allot-sched/allot/internal/res"
)

// Resources of the tests: gpu, cpu and tokens.
const (
	rGPU = iota
	rCPU
	rTokens
)

func TestCharges(t *testing.T) {
	nodes := NodeRes{1<<rGPU | 1<<rCPU, 1 << rCPU} // flavor 1 holds no GPUs on nodes
	cases := []struct {
		name   string
		sets   []Set
		tokens int // the tokens resource's index
		need   []res.Vec
		total  res.Vec
		book   []res.Vec
	}{
		{
			name:   "one pod",
			sets:   []Set{{Flavor: 0, Count: 1, Per: res.Vec{rGPU: 2, rCPU: 1000}}},
			tokens: -1,
			need:   []res.Vec{{rGPU: 2, rCPU: 1000}},
			total:  res.Vec{rGPU: 2, rCPU: 1000},
			book:   []res.Vec{{rGPU: 2, rCPU: 1000}},
		},
		{
			name:   "pods scale, tokens charge quota only",
			sets:   []Set{{Flavor: 0, Count: 3, Per: res.Vec{rGPU: 1}, Tokens: 100}},
			tokens: rTokens,
			need:   []res.Vec{{rGPU: 3, rTokens: 300}},
			total:  res.Vec{rGPU: 3, rTokens: 300},
			book:   []res.Vec{{rGPU: 1}},
		},
		{
			name: "two pod sets, the second on a flavor whose nodes hold no GPUs",
			sets: []Set{
				{Flavor: 0, Count: 2, Per: res.Vec{rGPU: 4, rCPU: 500}},
				{Flavor: 1, Count: 1, Per: res.Vec{rGPU: 1, rCPU: 2000}},
			},
			tokens: rTokens,
			need:   []res.Vec{{rGPU: 8, rCPU: 1000}, {rGPU: 1, rCPU: 2000}},
			total:  res.Vec{rGPU: 9, rCPU: 3000},
			book:   []res.Vec{{rGPU: 4, rCPU: 500}, {rCPU: 2000}},
		},
		{
			name:   "saturates",
			sets:   []Set{{Flavor: 0, Count: 4, Per: res.Vec{rCPU: 1 << 62}}},
			tokens: -1,
			need:   []res.Vec{{rCPU: 1<<63 - 1}},
			total:  res.Vec{rCPU: 1<<63 - 1},
			book:   []res.Vec{{rCPU: 1 << 62}},
		},
	}
	for _, c := range cases {
		b := &Booking{Sets: c.sets}
		for i := range c.sets {
			if got := b.Need(i, c.tokens); got != c.need[i] {
				t.Errorf("%s: Need(%d) = %v, want %v", c.name, i, got, c.need[i])
			}
			if got := b.Book(i, nodes); got != c.book[i] {
				t.Errorf("%s: Book(%d) = %v, want %v", c.name, i, got, c.book[i])
			}
		}
		if got := b.Total(c.tokens); got != c.total {
			t.Errorf("%s: Total = %v, want %v", c.name, got, c.total)
		}
		for k := range res.Max {
			if got := b.Charged(k, c.tokens); got != c.total[k] {
				t.Errorf("%s: Charged(%d) = %d, want Total's %d", c.name, k, got, c.total[k])
			}
		}
	}
}

func TestSetOf(t *testing.T) {
	b := &Booking{Sets: []Set{{Count: 2}, {Count: 1}, {Count: 3}}}
	want := []int{0, 0, 1, 2, 2, 2}
	for pod, w := range want {
		if got := b.SetOf(pod); got != w {
			t.Errorf("SetOf(%d) = %d, want %d", pod, got, w)
		}
	}
}
