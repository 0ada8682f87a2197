package sortkey

import (
	"encoding/binary"
	"slices"
	"strings"
)

// Prefix is s's first eight bytes read big-endian, zeros past its end:
// where two strings' words differ they order the strings (a string that
// is a prefix of another has the lesser or the same word); where they tie
// the strings must be compared, or their next words (Word).
func Prefix(s string) uint64 { return Word(s, 0) }

// Word is s's k-th eight bytes (from byte 8k) read big-endian, zeros past
// its end: where two strings' words 0 to k-1 tie, their k-th words order
// them as Prefix's do.
func Word(s string, k int) uint64 {
	var b [8]byte
	if 8*k < len(s) {
		copy(b[:], s[8*k:])
	}
	return binary.BigEndian.Uint64(b[:])
}

// Order is the order of n strings, at(i) the i-th, by string order and,
// among equal strings, by index: at(order[0]) is the least. It sorts their
// first two words by radix, least significant byte first, skipping a byte
// all of them share, and compares the strings themselves only where those
// words tie: at most sixteen passes over the n strings' words, not
// n log n comparisons.
func Order(n int, at func(i int) string) []int32 {
	type rec struct {
		hi, lo uint64
		i      int32
	}
	a, b := make([]rec, n), make([]rec, n)
	for i := range a {
		s := at(i)
		a[i] = rec{Word(s, 0), Word(s, 1), int32(i)}
	}
	var count [256]int
	for pass := range 16 {
		shift := uint(8 * (pass % 8))
		digit := func(r *rec) int {
			if pass < 8 {
				return int(r.lo >> shift & 0xff)
			}
			return int(r.hi >> shift & 0xff)
		}
		count = [256]int{}
		for k := range a {
			count[digit(&a[k])]++
		}
		if n == 0 || count[digit(&a[0])] == n {
			continue // a byte all share leaves the order as it is
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for k := range a {
			d := digit(&a[k])
			b[count[d]] = a[k]
			count[d]++
		}
		a, b = b, a
	}
	// Strings whose first two words tie may differ past them, or in
	// trailing zero bytes: each run of them is sorted by the strings, its
	// order by index kept among equal ones.
	for k := 0; k < n; {
		j := k + 1
		for j < n && a[j].hi == a[k].hi && a[j].lo == a[k].lo {
			j++
		}
		if j-k > 1 {
			slices.SortStableFunc(a[k:j], func(x, y rec) int { return strings.Compare(at(int(x.i)), at(int(y.i))) })
		}
		k = j
	}
	order := make([]int32, n)
	for k := range a {
		order[k] = a[k].i
	}
	return order
}
