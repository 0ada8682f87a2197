package preempt

import (
	"slices"

	"github.com/allot-sched/allot/gang"
)

// Failures remembers the preemptors Find found no victims for on one
// world, so that a scheduling loop asking again for the same search on the
// same snapshot (the next head of a queue with the same shape, priority
// and flavors) is answered without reading every admitted workload. Find
// is a function of its world and its preemptor, so the answer is the one a
// search would give. Which world the failures belong to is the caller's to
// track: Reset when it changes. The zero value is empty and ready.
type Failures struct {
	kept []failure
	// first maps a preemptor's hash to its latest kept entry, next chains
	// the entries of one hash.
	first map[uint64]int32
	next  []int32
}

// A failure is a preemptor kept, sharing no memory with the caller's: its
// Quota is left out, quotas says which flavors it had one on.
type failure struct {
	p      Preemptor
	quotas []bool
}

// maxFailures bounds the preemptors kept for one world; past it the
// searches run again.
const maxFailures = 1 << 12

// Reset forgets every failure, keeping the memory.
func (f *Failures) Reset() {
	clear(f.kept)
	f.kept, f.next = f.kept[:0], f.next[:0]
	clear(f.first)
}

// Failed reports whether Find found no victims, on the world of the
// failures, for a preemptor that asks what p asks.
func (f *Failures) Failed(p *Preemptor) bool {
	i, ok := f.first[p.hash()]
	for ok && i >= 0 {
		if f.kept[i].asks(p) {
			return true
		}
		i = f.next[i]
	}
	return false
}

// Add records that Find found no victims for p. It keeps a copy: p's
// memory may be reused.
func (f *Failures) Add(p *Preemptor) {
	if len(f.kept) >= maxFailures {
		return
	}
	if f.first == nil {
		f.first = make(map[uint64]int32)
	}
	h := p.hash()
	next, ok := f.first[h]
	if !ok {
		next = -1
	}
	f.first[h] = int32(len(f.kept))
	f.next = append(f.next, next)
	k := failure{p: *p}
	k.p.Need, k.p.Open, k.p.Quota = slices.Clone(p.Need), slices.Clone(p.Open), nil
	k.quotas = make([]bool, len(p.Quota))
	for i, q := range p.Quota {
		k.quotas[i] = q != nil
	}
	if p.Sets != nil {
		k.p.Sets = make([]gang.PodSet, len(p.Sets))
		for i := range p.Sets {
			k.p.Sets[i] = p.Sets[i].Clone()
		}
	}
	f.kept = append(f.kept, k)
}

// asks reports whether preemptor p asks Find what the kept one asked: it
// differs in nothing the search reads. The submission time counts only
// where a policy compares it (LowerOrNewerEqualPriority); a queue's quota
// on a flavor is the world's, so only which flavors have one is compared.
func (k *failure) asks(p *Preemptor) bool {
	q := &k.p
	if q.Queue != p.Queue || q.Priority != p.Priority || q.Policies != p.Policies || q.Exhausted != p.Exhausted ||
		q.Policies.comparesSubmission() && q.SubmittedAt != p.SubmittedAt {
		return false
	}
	if !slices.Equal(q.Need, p.Need) || !slices.Equal(q.Open, p.Open) || len(k.quotas) != len(p.Quota) ||
		(q.Sets == nil) != (p.Sets == nil) || !slices.EqualFunc(q.Sets, p.Sets, func(a, b gang.PodSet) bool { return a.Equal(&b) }) {
		return false
	}
	for i, fq := range p.Quota {
		if k.quotas[i] != (fq != nil) {
			return false
		}
	}
	return true
}

// comparesSubmission reports whether a policy lets the submission times of
// the preemptor and a candidate decide.
func (l *Policies) comparesSubmission() bool {
	return l.WithinQueue == LowerOrNewerEqualPriority || l.Reclaim == LowerOrNewerEqualPriority || l.Borrow == LowerOrNewerEqualPriority
}

// hash mixes what asks compares first: the queue, priority, the
// submission time where it counts, and what the request charges.
func (p *Preemptor) hash() uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) { h = (h ^ v) * 1099511628211 }
	mix(uint64(p.Queue))
	mix(uint64(uint32(p.Priority)))
	if p.Policies.comparesSubmission() {
		mix(uint64(p.SubmittedAt))
	}
	for _, v := range p.Need {
		for _, x := range v {
			mix(uint64(x))
		}
	}
	mix(uint64(len(p.Sets)))
	for i := range p.Sets {
		mix(uint64(p.Sets[i].Count))
		mix(uint64(p.Sets[i].Flavor))
	}
	return h
}

// Len is how many failures are kept.
func (f *Failures) Len() int { return len(f.kept) }
