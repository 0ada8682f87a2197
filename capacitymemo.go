package allot

import (
	"slices"
	"weak"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/topology"
)

// capacityMemo remembers what placing a unit's pod sets on the empty
// cluster gave: whether they fit and, when not, the failure. A scheduling
// loop asks it for every head that waits, and the answer depends only on
// the capacity (the state every version shares until a node changes) and
// the pod sets, so the next head of the same shape is answered without
// placing. It keeps the answers of one capacity, held weakly: the memo
// keeps no version alive.
type capacityMemo struct {
	on   weak.Pointer[topology.State]
	kept []capacityAnswer
	// first maps a unit's hash to its latest answer, next chains the
	// answers of one hash.
	first map[uint64]int32
	next  []int32
}

// capacityAnswer is one placement on the empty cluster: the pod sets (a
// copy), whether they fit, and the failure when not.
type capacityAnswer struct {
	sets []gang.PodSet
	fail gang.Failure
	ok   bool
}

// maxCapacityAnswers bounds the answers kept for one capacity; past it the
// placements run again.
const maxCapacityAnswers = 1 << 12

// lookup is the answer for sets on capacity, when known.
func (m *capacityMemo) lookup(capacity *topology.State, sets []gang.PodSet) (fail gang.Failure, ok, known bool) {
	if m.on != weak.Make(capacity) {
		return gang.Failure{}, false, false
	}
	i, found := m.first[hashSets(sets)]
	for found && i >= 0 {
		a := &m.kept[i]
		if slices.EqualFunc(a.sets, sets, func(x, y gang.PodSet) bool { return x.Equal(&y) }) {
			return a.fail, a.ok, true
		}
		i = m.next[i]
	}
	return gang.Failure{}, false, false
}

// record keeps what placing sets on capacity gave.
func (m *capacityMemo) record(capacity *topology.State, sets []gang.PodSet, fail gang.Failure, ok bool) {
	if on := weak.Make(capacity); on != m.on {
		clear(m.kept)
		m.kept, m.next = m.kept[:0], m.next[:0]
		clear(m.first)
		m.on = on
	}
	if len(m.kept) >= maxCapacityAnswers {
		return
	}
	if m.first == nil {
		m.first = make(map[uint64]int32)
	}
	h := hashSets(sets)
	next, found := m.first[h]
	if !found {
		next = -1
	}
	m.first[h] = int32(len(m.kept))
	m.next = append(m.next, next)
	a := capacityAnswer{sets: make([]gang.PodSet, len(sets)), fail: fail, ok: ok}
	for i := range sets {
		a.sets[i] = sets[i].Clone()
	}
	m.kept = append(m.kept, a)
}

// hashSets mixes what tells pod sets apart most often: their flavors,
// counts and requests.
func hashSets(sets []gang.PodSet) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) { h = (h ^ v) * 1099511628211 }
	mix(uint64(len(sets)))
	for i := range sets {
		ps := &sets[i]
		mix(uint64(ps.Flavor))
		mix(uint64(ps.Count))
		mix(uint64(ps.Level)<<8 | uint64(ps.Mode))
		for _, v := range ps.Res {
			mix(uint64(v))
		}
	}
	return h
}
