// Partial admission: a pod set with a minCount may be admitted with fewer
// pods than it asks for, down to that minimum, as Kueue v0.17's scheduler
// admits one (getInitialAssignments, flavorassigner.PodSetReducer):
//
//   - The request is decided at its full counts first. When that admits it
//     (Admit, or Preempt with victims: a full-count preemption comes
//     first), nothing is reduced.
//   - Otherwise the counts are searched by binary search over an index i
//     from 0 (the full counts) to D, the sum over the pod sets of count −
//     minCount: at i, pod set k asks for count_k − ⌊(count_k − minCount_k)
//     × i / D⌋, so all the pod sets with a minCount shrink together, in
//     proportion (Kueue's fillPodSetSizesForSearchIndex). Each count is
//     decided afresh, the flavor assignment and the placement re-run; it
//     succeeds when that decision admits it or preempts for it, as Kueue
//     counts a Fit or a Preempt with targets. The search (sort.Search, as
//     Kueue's) returns the smallest index that succeeds: the largest
//     counts, where success is monotone, as quota and placement make it.
//     Where it is not, the answer is the index Kueue's search finds, not
//     necessarily the largest count that would succeed.
//   - Preemption at a reduced count needs no switch of its own: the queue's
//     preemption policy allows it at every count as at the full one.
//
// The decision admits the counts found with what deciding them gives (its
// flavors, placement, victims and trail), the counts in its Flavors, and a
// last trail check (StagePartial) that lists the counts tried and says why
// the next larger count is not admitted. When not even the minimum is
// admitted, the decision is the minimum's (Queue, or Reject when it could
// never fit) with the same check.

package allot

import (
	"fmt"
	"sort"
	"strconv"
)

// validateMinCount checks a pod set's minCount: zero (none), or from 1 to
// the count. Slices fix the count's shape, which a smaller count would
// break, so they do not combine with a minCount below the count.
func (ps *PodSet) validateMinCount() (msg, field string) {
	switch m := ps.MinCount; {
	case m == 0:
	case m < 0:
		return fmt.Sprintf("must be at least 1, got %d", m), "minCount"
	case m > ps.Count:
		return fmt.Sprintf("%d is more than the count, %d", m, ps.Count), "minCount"
	case m < ps.Count && len(ps.Topology.Slices) > 0:
		return "partial admission does not combine with topology.slices", "minCount"
	}
	return "", ""
}

// minCounted reports whether some pod set of r has a minCount.
func (r *Request) minCounted() bool {
	for i := range r.PodSets {
		if r.PodSets[i].MinCount != 0 {
			return true
		}
	}
	return false
}

// admits reports whether pod set ps may be admitted with count pods: its
// count, or down to its minCount.
func (ps *PodSet) admits(count int32) bool {
	return count == ps.Count || ps.MinCount > 0 && ps.MinCount <= count && count <= ps.Count
}

// admittedCount is the count a decision's flavor entry f admits pod set
// ps at (its Count, zero meaning the pod set's); ok is false when the
// pod set may not be admitted at it.
func (ps *PodSet) admittedCount(f PodSetFlavor) (int32, bool) {
	if f.Count == 0 {
		return ps.Count, true
	}
	return f.Count, ps.admits(f.Count)
}

// fixedRequest is the request of d at the counts d admits, without
// minCounts: what deciding again must admit for d to still hold. It is
// d's own request when that asks for no minCount.
func (d *Decision) fixedRequest() Request {
	r := d.request
	if !r.minCounted() {
		return r
	}
	r.PodSets = append([]PodSet(nil), r.PodSets...)
	for i := range r.PodSets {
		ps := &r.PodSets[i]
		if i < len(d.Flavors) {
			ps.Count, _ = ps.admittedCount(d.Flavors[i])
		}
		ps.MinCount = 0
	}
	return r
}

// partialSearch is one partial admission in progress.
type partialSearch struct {
	s *Snapshot
	r *Request
	n int
	// full and delta are each pod set's count and count − minCount;
	// total is the sum of the deltas, the search's last index.
	full, delta [maxPodSets]int32
	total       int32
	// sets holds the pod sets of the request at the counts being tried.
	sets [maxPodSets]PodSet
	// tried lists the indexes tried, in order, with their reasons.
	tried []probe
	// best holds the decision at bestAt, the smallest index that
	// succeeded, and cur the one just made; failAt is the last index that
	// failed, with its decision's message and reason.
	dec       [2]Decision
	best, cur *Decision
	bestAt    int32
	failAt    int32
	failMsg   string
	failWhy   Reason
}

// probe is an index tried and the reason its decision gave.
type probe struct {
	at     int32
	reason Reason
}

// decidePartial finishes the decision d of a request with a minCount: d
// holds the decision at the full counts. It sets the counts admitted or,
// when d does not admit the request and a smaller count may, searches for
// the counts as Kueue does and makes d the decision at those counts.
func decidePartial(s *Snapshot, d *Decision) {
	r := &d.request
	if ok := d.Verdict == VerdictAdmit || d.Verdict == VerdictPreempt; ok || !countMatters(d) {
		for i := range d.Flavors {
			d.Flavors[i].Count = r.PodSets[i].Count
		}
		return
	}
	p := &partialSearch{s: s, r: r, n: len(r.PodSets)}
	for i := range r.PodSets {
		ps := &r.PodSets[i]
		p.full[i] = ps.Count
		if ps.MinCount > 0 {
			p.delta[i] = ps.Count - ps.MinCount
		}
		p.total += p.delta[i]
	}
	if p.total == 0 {
		return
	}
	p.best, p.cur = &p.dec[0], &p.dec[1]
	p.failAt, p.failMsg, p.failWhy = 0, d.Message, d.Reason
	p.tried = append(make([]probe, 0, 24), probe{0, d.Reason})
	at := int32(sort.Search(int(p.total)+1, func(i int) bool { return p.try(d, int32(i)) }))
	if at <= p.total {
		p.conclude(d, p.best, true)
		return
	}
	// Not even the minimum: the last index tried is the minimum's.
	p.conclude(d, p.cur, false)
}

// countMatters reports whether d, a decision at the full counts that does
// not admit the request, may change with the counts: it failed a check
// after hold (the request's validity, its queue, its tenant and hold do
// not depend on how many pods it asks for).
func countMatters(d *Decision) bool {
	return len(d.Trail) > 0 && d.Trail[len(d.Trail)-1].Stage > StageHold
}

// countsAt fills counts with each pod set's count at search index at.
func (p *partialSearch) countsAt(at int32, counts *[maxPodSets]int32) {
	for i := range p.n {
		counts[i] = p.full[i] - int32(int64(p.delta[i])*int64(at)/int64(p.total))
	}
}

// try decides the request at search index at and reports whether that
// decision admits it.
func (p *partialSearch) try(d *Decision, at int32) bool {
	if at == 0 {
		return false // the full counts, decided already
	}
	var counts [maxPodSets]int32
	p.countsAt(at, &counts)
	// Neighbouring indexes may give the same counts, whose decision is
	// the same: the one of an index tried already stands.
	for _, t := range p.tried {
		var was [maxPodSets]int32
		p.countsAt(t.at, &was)
		if was != counts {
			continue
		}
		ok := t.reason.Verdict() == VerdictAdmit || t.reason.Verdict() == VerdictPreempt
		if ok {
			p.bestAt = at
		} else {
			p.failAt = at
		}
		return ok
	}
	req := *p.r
	for i := range p.n {
		p.sets[i] = p.r.PodSets[i]
		p.sets[i].Count, p.sets[i].MinCount = counts[i], 0
	}
	req.PodSets = p.sets[:p.n]
	cur := p.cur
	cur.work = d.work // scratch only: the probes run one after another
	decide(p.s, req, cur, true)
	p.tried = append(p.tried, probe{at, cur.Reason})
	if cur.Verdict == VerdictAdmit || cur.Verdict == VerdictPreempt {
		p.best, p.cur, p.bestAt = cur, p.best, at
		return true
	}
	p.failAt, p.failMsg, p.failWhy = at, cur.Message, cur.Reason
	return false
}

// conclude makes d the decision from (the one at the counts admitted, or
// at the minimum when admitted is false), its counts in its flavors, with
// the search's message and trail check.
func (p *partialSearch) conclude(d *Decision, from *Decision, admitted bool) {
	at := p.total
	if admitted {
		at = p.bestAt
	}
	var counts [maxPodSets]int32
	p.countsAt(at, &counts)
	d.Verdict, d.Reason = from.Verdict, from.Reason
	d.Flavors = append(d.Flavors[:0], from.Flavors...)
	for i := range d.Flavors {
		d.Flavors[i].Count = counts[i]
	}
	d.Placement = append(d.Placement[:0], from.Placement...)
	d.Borrowing = append(d.Borrowing[:0], from.Borrowing...)
	d.BorrowingLevel, d.Preemptible = from.BorrowingLevel, from.Preemptible
	d.Victims = append(d.Victims[:0], from.Victims...)
	d.Trail = append(d.Trail[:0], from.Trail...)

	// The message: the decision's, and what partial admission made of it.
	var b []byte
	if admitted {
		b = append(b, from.Message...)
		b = append(b, "; partial admission: "...)
		b = p.appendAdmitted(b, &counts)
		b = append(b, ", "...)
		b = p.appendAt(b, p.failAt)
		b = append(b, " not admitted: "...)
		b = append(b, p.failWhy.String()...)
	} else {
		b = append(b, "not admitted even at the minimum, "...)
		b = p.appendAdmitted(b, &counts)
		b = append(b, ": "...)
		b = append(b, from.Message...)
	}
	d.Message = string(b)

	// The trail check: the counts tried, and why not more.
	b = b[:0]
	b = p.appendPodSets(b)
	b = append(b, ": tried "...)
	for k, t := range p.tried {
		if k > 0 {
			b = append(b, ", "...)
		}
		b = p.appendAt(b, t.at)
		b = append(b, ' ')
		b = append(b, t.reason.String()...)
	}
	if admitted {
		b = append(b, "; admitted at "...)
		b = p.appendAt(b, p.bestAt)
		b = append(b, "; at "...)
		b = p.appendAt(b, p.failAt)
		b = append(b, ": "...)
		b = append(b, p.failMsg...)
	} else {
		b = append(b, "; not admitted even at "...)
		b = p.appendAt(b, p.total)
	}
	d.Trail = append(d.Trail, Check{Stage: StagePartial, Passed: admitted, Detail: string(b)})
}

// reducible reports whether pod set i has a minCount below its count.
func (p *partialSearch) reducible(i int) bool { return p.delta[i] > 0 }

// appendPodSets names the reducible pod sets with their counts and
// minimums: `pod set "workers" (count 10, minCount 4)`.
func (p *partialSearch) appendPodSets(b []byte) []byte {
	b, k := p.appendReducible(b, nil)
	if k > 1 {
		b = append(b, ", reduced together"...)
	}
	return b
}

// appendAdmitted writes the reducible pod sets at counts: `pod set
// "workers" 6 of 10 pods (minCount 4)`.
func (p *partialSearch) appendAdmitted(b []byte, counts *[maxPodSets]int32) []byte {
	b, _ = p.appendReducible(b, counts)
	return b
}

// appendReducible lists the reducible pod sets, each by name with its
// count (at counts when not nil: "6 of 10 pods") and minimum, and says
// how many it listed.
func (p *partialSearch) appendReducible(b []byte, counts *[maxPodSets]int32) ([]byte, int) {
	b = p.appendNoun(b)
	k := 0
	for i := range p.n {
		if !p.reducible(i) {
			continue
		}
		if k > 0 {
			b = append(b, ", "...)
		}
		k++
		ps := &p.r.PodSets[i]
		b = strconv.AppendQuote(b, ps.Name)
		if counts == nil {
			b = append(b, " (count "...)
			b = strconv.AppendInt(b, int64(ps.Count), 10)
			b = append(b, ", minCount "...)
		} else {
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(counts[i]), 10)
			b = append(b, " of "...)
			b = strconv.AppendInt(b, int64(ps.Count), 10)
			b = append(b, " pods (minCount "...)
		}
		b = strconv.AppendInt(b, int64(ps.MinCount), 10)
		b = append(b, ')')
	}
	return b, k
}

// reducibles is how many pod sets have a minCount below their count.
func (p *partialSearch) reducibles() int {
	k := 0
	for i := range p.n {
		if p.reducible(i) {
			k++
		}
	}
	return k
}

// appendNoun writes "pod set " or, for several, "pod sets ".
func (p *partialSearch) appendNoun(b []byte) []byte {
	if p.reducibles() > 1 {
		return append(b, "pod sets "...)
	}
	return append(b, "pod set "...)
}

// appendAt writes the counts of the reducible pod sets at search index
// at: "6", or "(6, 3)" for several.
func (p *partialSearch) appendAt(b []byte, at int32) []byte {
	var counts [maxPodSets]int32
	p.countsAt(at, &counts)
	k := p.reducibles()
	if k > 1 {
		b = append(b, '(')
	}
	j := 0
	for i := range p.n {
		if !p.reducible(i) {
			continue
		}
		if j > 0 {
			b = append(b, ", "...)
		}
		j++
		b = strconv.AppendInt(b, int64(counts[i]), 10)
	}
	if k > 1 {
		b = append(b, ')')
	}
	return b
}

// placeableMemo remembers, while a request with a minCount is decided (at
// its full counts, then at each count searched), whether a unit of pod
// sets could be placed on a flavor of the empty cluster at the counts
// tried: a count placed there says every smaller one could be, one that
// could not be says no larger one could, so the decision places on the
// empty cluster about once instead of at every count that waits for quota
// or free nodes. Off (and empty) otherwise.
type placeableMemo struct {
	on      bool
	entries []placeableEntry
}

// placeableEntry is one answer: unit u of pod sets on flavor f at counts.
type placeableEntry struct {
	u      uint16
	f      int32
	ok     bool
	counts [maxPodSets]int32
}

// start turns the memo on, empty, for one search; stop turns it off.
func (m *placeableMemo) start() { m.on, m.entries = true, m.entries[:0] }
func (m *placeableMemo) stop()  { m.on, m.entries = false, m.entries[:0] }

// lookup answers for unit u of dc's request on flavor f when an earlier
// answer implies it.
func (m *placeableMemo) lookup(dc *decider, u uint16, f int32) (ok, known bool) {
	if !m.on {
		return false, false
	}
	for i := range m.entries {
		e := &m.entries[i]
		if e.u != u || e.f != f {
			continue
		}
		smaller, larger := true, true
		for k := 0; k < dc.n; k++ {
			if u&(1<<k) != 0 {
				c := dc.r.PodSets[k].Count
				smaller = smaller && c <= e.counts[k]
				larger = larger && c >= e.counts[k]
			}
		}
		switch {
		case e.ok && smaller:
			return true, true
		case !e.ok && larger:
			return false, true
		}
	}
	return false, false
}

// record keeps the answer ok for unit u of dc's request on flavor f.
func (m *placeableMemo) record(dc *decider, u uint16, f int32, ok bool) {
	if !m.on {
		return
	}
	e := placeableEntry{u: u, f: f, ok: ok}
	for k := 0; k < dc.n; k++ {
		if u&(1<<k) != 0 {
			e.counts[k] = dc.r.PodSets[k].Count
		}
	}
	m.entries = append(m.entries, e)
}
