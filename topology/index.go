package topology

import (
	"iter"
	"math/bits"

	"github.com/allot-sched/allot/internal/cow"
)

// The fit index orders the domains of each declared level by how many pods
// of g GPUs they hold (the state's fits), for every g, so that "the
// tightest domain of level l that holds k pods of g GPUs" costs a few word
// reads instead of a scan of the level. For one flavor, level and g it is a
// bitset per value v ≥ 1 over the level's domains (bit i: the i-th domain of
// the level holds exactly v pods), a summary bitset per value over the words
// of its row, and a bitset of the values whose row is not empty. A change of
// one node moves each of its domains from one value to another: O(levels ×
// G) word writes, a few each, on the state's copy-on-write words.
//
// Values run up to the most pods a domain holds at full capacity, so a
// level's index costs (its largest domain's pods) × (its domains) bits for
// each g. A level where that passes indexBudget has no index, and placement
// scans it, as it does everywhere the index cannot answer.

// levelIndex is where one flavor, level and GPU count's index sits in the
// state's words. The data words of a level interleave every GPU count by
// the GPUs a value stands for: the word of domains 64w to 64w+63 holding v
// pods of g GPUs sits at data + w·stride + (v·g − 1)·G + g − 1 (data
// includes the g − 1). A domain with u free GPUs holds about u/g pods of
// g GPUs for every g, so one node's change, which moves its domains from
// about u to about u − k GPUs, writes words that sit close together: a few
// pages a level rather than two for every GPU count.
type levelIndex struct {
	// vals is the first word of the non-empty values' bitset, sums of the
	// summaries (value v's at sums + (v−1)·sumWords), data as above.
	vals, sums, data, stride int32
	// step is the index's GPU count times the topology's G: the distance
	// between two values' data words.
	step int32
	// first is the level's first domain, n how many domains it has.
	first, n int32
	// maxV is the largest value a domain of the level can reach.
	maxV int32
	// rowWords words per value's row, sumWords per its summary, valWords
	// for the bitset of non-empty values.
	rowWords, sumWords, valWords int32
}

// word is the data word of value v holding domain position i.
func (x *levelIndex) word(v, i int32) int { return int(x.data + (i>>6)*x.stride + (v-1)*x.step) }

// sum is the summary word k of value v.
func (x *levelIndex) sum(v, k int32) int { return int(x.sums + (v-1)*x.sumWords + k) }

// indexMinDomains is the fewest domains a level must have for an index: a
// scan of fewer reads less than a commit would copy to keep it. (A
// variable so that tests can index small trees.)
var indexMinDomains int32 = 128

// indexBudget caps the words a level's index may take, relative to the
// cluster's nodes: a level whose domains are very uneven in size would
// otherwise take (the largest domain's pods) × (domains) bits.
func indexBudget(nodes int) int { return 4096 + 8*nodes }

// buildIndex lays out the fit index of every flavor's declared levels.
func (t *Topology) buildIndex() {
	L, G := len(t.Levels), t.G
	t.fitIdx = make([][]levelIndex, len(t.Flavors))
	if G == 0 || L == 0 {
		return
	}
	// The most pods of g GPUs each domain holds at full capacity: each
	// node's count added to its narrowest domain's, then each level's into
	// their parents', narrowest first (as State.Rebuild adds them).
	capFits := make([]int32, len(t.Domains)*G)
	for n := 0; n < t.NumNodes(); {
		nodes := t.nodes.Span(n, t.NumNodes()-n)
		for i := range nodes {
			node := &nodes[i]
			leaf := capFits[int(t.NodeDomains(int32(n + i))[L])*G:][:G]
			if node.vacant {
				for g := range leaf {
					leaf[g] += int32(G / (g + 1)) // room for the largest node Fill puts in: one island
				}
				continue
			}
			node.countFits(node.AllGPUs(), leaf[:node.GPUs])
		}
		n += len(nodes)
	}
	t.addUp(capFits, 1)
	words := int32(0)
	for f, ft := range t.Flavors {
		// Index (level-1)*G + g-1; an index with n == 0 is absent.
		idx := make([]levelIndex, L*G)
		for l := 1; l <= L; l++ {
			rng := ft.Levels[l]
			nd := rng[1] - rng[0]
			if nd <= 1 {
				continue // nothing to search
			}
			level := make([]levelIndex, G)
			need, most := 0, int32(0)
			for g := 1; g <= G; g++ {
				m := int32(0)
				for d := rng[0]; d < rng[1]; d++ {
					m = max(m, capFits[int(d)*G+g-1])
				}
				rw := (nd + 63) / 64
				x := levelIndex{first: rng[0], n: nd, maxV: m, rowWords: rw, sumWords: (rw + 63) / 64, valWords: (m + 64) / 64}
				level[g-1] = x
				most = max(most, m*int32(g))
				need += int(x.valWords + m*x.sumWords)
			}
			// Every value of every g at v·g ≤ most GPUs: most·G words a
			// row of 64 domains.
			stride := most * int32(G)
			need += int(stride * ((nd + 63) / 64))
			if nd < indexMinDomains || need > indexBudget(t.NumNodes()) {
				continue
			}
			data := words
			words += stride * ((nd + 63) / 64)
			for g := range level {
				x := &level[g]
				// Value v of g GPUs at (v·g − 1)·G + g − 1 = (v − 1)·g·G + g·G − G + g − 1.
				x.step = int32((g + 1) * G)
				x.data, x.stride = data+int32(g*G+g), stride
				x.vals = words
				words += x.valWords
				x.sums = words
				words += x.maxV * x.sumWords
			}
			copy(idx[(l-1)*G:], level)
		}
		t.fitIdx[f] = idx
	}
	t.idxWords = int(words)
}

// index returns the fit index of flavor f, tree level l and g GPUs, nil
// when there is none.
func (t *Topology) index(f int32, l, g int) *levelIndex {
	if l < 1 || l > len(t.Levels) || g < 1 || g > t.G || int(f) >= len(t.fitIdx) || t.fitIdx[f] == nil {
		return nil
	}
	x := &t.fitIdx[f][(l-1)*t.G+g-1]
	if x.n == 0 {
		return nil
	}
	return x
}

// rebuildIndex fills the fit index from the fits. Its words are written a
// page at a time, the page of each of a domain's three marks (marks) kept
// while the next domain's falls in it too, as it does for domains side by
// side: not a look-up through the copy-on-write words a bit.
func (s *State) rebuildIndex() {
	t := s.T
	s.idx = cow.Make[uint64](t.idxWords)
	s.indexed = true
	var spans [3][]uint64
	var at [3]int
	for f := range t.fitIdx {
		for l := 1; l <= len(t.Levels); l++ {
			for g := 1; g <= t.G; g++ {
				x := t.index(int32(f), l, g)
				if x == nil {
					continue
				}
				for i := range x.n {
					v := s.Fits(x.first+i, g)
					if v <= 0 {
						continue
					}
					for k, m := range x.marks(v, i) {
						if m.word < at[k] || m.word >= at[k]+len(spans[k]) {
							spans[k] = s.idx.MutSpan(m.word, len(s.idx.Span(m.word, t.idxWords-m.word)))
							at[k] = m.word
						}
						spans[k][m.word-at[k]] |= m.bit
					}
				}
			}
		}
	}
}

// mark is a bit of the index: word's bit.
type mark struct {
	word int
	bit  uint64
}

// marks are the bits that say domain i of the level (0 for its first)
// holds value v > 0: its bit in v's row, its row word's in v's summary,
// and v's among the values.
func (x *levelIndex) marks(v, i int32) [3]mark {
	return [3]mark{{x.word(v, i), 1 << (i & 63)}, {x.sum(v, i>>12), 1 << ((i >> 6) & 63)}, {int(x.vals + (v-1)>>6), 1 << ((v - 1) & 63)}}
}

// moveIndex moves domain d (of flavor f and tree level l) from value from
// to value to in the index for g GPUs.
func (s *State) moveIndex(f int32, d int32, l, g int, from, to int32) {
	x := s.T.index(f, l, g)
	if x == nil || from == to {
		return
	}
	i := d - x.first
	s.idxClear(x, from, i)
	s.idxSet(x, to, i)
}

func (s *State) idxSet(x *levelIndex, v, i int32) {
	if v <= 0 {
		return
	}
	for _, m := range x.marks(v, i) {
		if s.idx.At(m.word)&m.bit == 0 {
			*s.idx.Mut(m.word) |= m.bit
		}
	}
}

func (s *State) idxClear(x *levelIndex, v, i int32) {
	if v <= 0 {
		return
	}
	w := s.idx.Mut(x.word(v, i))
	if *w &^= 1 << (i & 63); *w != 0 {
		return
	}
	sw := s.idx.Mut(x.sum(v, i>>12))
	if *sw &^= 1 << ((i >> 6) & 63); *sw != 0 {
		return
	}
	for k := range x.sumWords {
		if s.idx.At(x.sum(v, k)) != 0 {
			return
		}
	}
	*s.idx.Mut(int(x.vals + (v-1)>>6)) &^= 1 << ((v - 1) & 63)
}

// Flushed reports whether every domain's aggregates are up to date (no
// change waits for Flush).
func (s *State) Flushed() bool { return s.dirty == nil || len(*s.dirty) == 0 }

// Indexed reports whether the fit index answers for flavor f, tree level l
// and pods of g GPUs (see Tightest).
func (s *State) Indexed(f int32, l, g int) bool { return s.indexed && s.T.index(f, l, g) != nil }

// Tightest returns the domain of tree level l of flavor f that holds, by
// the state's fits, the fewest pods of g GPUs among those that hold at
// least need, ties by domain index, and skipping the domains skip says so
// of; ok is false when none does. It reads the fit index: call it only
// where Indexed says there is one. Cost: a few word reads per value tried
// and per domain skipped.
func (s *State) Tightest(f int32, l, g int, need int64, skip func(d int32) bool) (d int32, fits int64, ok bool) {
	x := s.T.index(f, l, g)
	v := int32(max(need, 1))
	if need > int64(x.maxV) {
		return 0, 0, false
	}
	for {
		v = s.nextValue(x, v)
		if v < 0 {
			return 0, 0, false
		}
		for i := s.nextInRow(x, v, 0); i >= 0; i = s.nextInRow(x, v, i+1) {
			if d := x.first + i; skip == nil || !skip(d) {
				return d, int64(v), true
			}
		}
		v++
	}
}

// Largest returns the most pods of g GPUs, by the state's fits, that a
// domain of tree level l of flavor f holds, among the domains skip does not
// name (0 when none holds any). It reads the fit index, as Tightest does.
func (s *State) Largest(f int32, l, g int, skip func(d int32) bool) int64 {
	x := s.T.index(f, l, g)
	for v := s.prevValue(x, x.maxV); v > 0; v = s.prevValue(x, v-1) {
		for i := s.nextInRow(x, v, 0); i >= 0; i = s.nextInRow(x, v, i+1) {
			if skip == nil || !skip(x.first+i) {
				return int64(v)
			}
		}
	}
	return 0
}

// Descending yields the domains of tree level l of flavor f that hold a pod
// of g GPUs, by the state's fits, the most first, ties by domain index,
// with their fits. It reads the fit index, as Tightest does; each domain
// costs a few word reads.
func (s *State) Descending(f int32, l, g int) iter.Seq2[int32, int64] {
	return func(yield func(int32, int64) bool) {
		x := s.T.index(f, l, g)
		for v := s.prevValue(x, x.maxV); v > 0; v = s.prevValue(x, v-1) {
			for i := s.nextInRow(x, v, 0); i >= 0; i = s.nextInRow(x, v, i+1) {
				if !yield(x.first+i, int64(v)) {
					return
				}
			}
		}
	}
}

// nextValue is the smallest non-empty value ≥ v, -1 for none.
func (s *State) nextValue(x *levelIndex, v int32) int32 {
	if v > x.maxV {
		return -1
	}
	k := (v - 1) >> 6
	word := s.idx.At(int(x.vals+k)) &^ (1<<((v-1)&63) - 1)
	for {
		if word != 0 {
			return k<<6 + int32(bits.TrailingZeros64(word)) + 1
		}
		if k++; k >= x.valWords {
			return -1
		}
		word = s.idx.At(int(x.vals + k))
	}
}

// prevValue is the largest non-empty value ≤ v, 0 for none.
func (s *State) prevValue(x *levelIndex, v int32) int32 {
	if v <= 0 {
		return 0
	}
	k := (v - 1) >> 6
	word := s.idx.At(int(x.vals + k))
	if b := (v - 1) & 63; b < 63 {
		word &= 1<<(b+1) - 1
	}
	for {
		if word != 0 {
			return k<<6 + int32(63-bits.LeadingZeros64(word)) + 1
		}
		if k--; k < 0 {
			return 0
		}
		word = s.idx.At(int(x.vals + k))
	}
}

// nextInRow is the first domain position ≥ i in value v's row, -1 for none.
func (s *State) nextInRow(x *levelIndex, v, i int32) int32 {
	for i < x.n {
		w := i >> 6
		if word := s.idx.At(x.word(v, i)) &^ (1<<(i&63) - 1); word != 0 {
			return w<<6 + int32(bits.TrailingZeros64(word))
		}
		// The next non-empty word, by the summary.
		w++
		found := false
		for sk := w >> 6; sk < x.sumWords; sk++ {
			sum := s.idx.At(x.sum(v, sk))
			if sk == w>>6 {
				sum &^= 1<<(w&63) - 1
			}
			if sum != 0 {
				w = sk<<6 + int32(bits.TrailingZeros64(sum))
				found = true
				break
			}
		}
		if !found {
			return -1
		}
		i = w << 6
	}
	return -1
}
