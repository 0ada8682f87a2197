package preempt

// ordered yields candidates in Less order, sorting lazily: a heap of
// pointer-free keys pops only as many as the search looks at, so a queue
// of ten thousand workloads is not sorted to find the few victims it
// needs.
type ordered struct {
	heap []Candidate
	done []int32 // popped, in order: indices into the search's candidates
}

func (o *ordered) len() int { return len(o.heap) + len(o.done) }

func (o *ordered) less(i, j int) bool { return Less(&o.heap[i], &o.heap[j]) }

func (o *ordered) down(i int) {
	n := len(o.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && o.less(r, l) {
			m = r
		}
		if !o.less(m, i) {
			return
		}
		o.heap[i], o.heap[m] = o.heap[m], o.heap[i]
		i = m
	}
}

func (o *ordered) init() {
	for i := len(o.heap)/2 - 1; i >= 0; i-- {
		o.down(i)
	}
}

// at returns the index of the i-th candidate in order, popping the heap as
// needed.
func (o *ordered) at(i int) int32 {
	for len(o.done) <= i {
		n := len(o.heap) - 1
		o.heap[0], o.heap[n] = o.heap[n], o.heap[0]
		o.done = append(o.done, o.heap[n].Index)
		o.heap = o.heap[:n]
		o.down(0)
	}
	return o.done[i]
}
