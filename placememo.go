package allot

import (
	"slices"
	"weak"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/topology"
)

// placeMemo remembers what placing a unit's pod sets on one state with a
// fresh placer gave: whether they fit and, when not, the failure. A
// scheduling loop places every head that waits, on the empty cluster (the
// capacity, which every version shares until a node changes) to tell
// whether it could ever fit and on the free capacity of its snapshot, and
// the answer depends only on the state, the pod sets and whether the
// placement is final, so the next head of the same shape is answered
// without placing. It keeps the answers of one state, held weakly: the
// memo keeps no version alive.
type placeMemo struct {
	on   weak.Pointer[topology.State]
	kept []placeAnswer
	// first maps a unit's hash to its latest answer, next chains the
	// answers of one hash.
	first map[uint64]int32
	next  []int32
}

// placeAnswer is one placement: the pod sets (a copy), whether it was
// final (gang.Placer.Final), whether they fit, and the failure when not.
type placeAnswer struct {
	sets  []gang.PodSet
	final bool
	fail  gang.Failure
	ok    bool
}

// maxPlaceAnswers bounds the answers kept for one state; past it the
// placements run again.
const maxPlaceAnswers = 1 << 12

// lookup is the answer for sets on st, when known.
func (m *placeMemo) lookup(st *topology.State, sets []gang.PodSet, final bool) (fail gang.Failure, ok, known bool) {
	if m.on.Value() != st {
		return gang.Failure{}, false, false
	}
	i, found := m.first[hashSets(sets)]
	for found && i >= 0 {
		a := &m.kept[i]
		if a.final == final && slices.EqualFunc(a.sets, sets, func(x, y gang.PodSet) bool { return x.Equal(&y) }) {
			return a.fail, a.ok, true
		}
		i = m.next[i]
	}
	return gang.Failure{}, false, false
}

// record keeps what placing sets on st gave.
func (m *placeMemo) record(st *topology.State, sets []gang.PodSet, final bool, fail gang.Failure, ok bool) {
	if m.on.Value() != st {
		clear(m.kept)
		m.kept, m.next = m.kept[:0], m.next[:0]
		clear(m.first)
		m.on = weak.Make(st)
	}
	if len(m.kept) >= maxPlaceAnswers {
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
	a := placeAnswer{sets: make([]gang.PodSet, len(sets)), final: final, fail: fail, ok: ok}
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
