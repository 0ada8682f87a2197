package res

import (
	"math"
	"math/bits"
)

// A wide sum is a 128-bit two's-complement number hi·2^64 + lo, lo
// unsigned: what a total over many quantities needs, each within int64,
// when the total need not be. Kept incrementally, it stays exact where a
// saturating sum would lose what it clipped.

// AddWide adds x to a wide sum's low word lo and returns the new low word
// and what its high word gains (-1, 0 or 1).
func AddWide(lo uint64, x int64) (uint64, int64) {
	sum, carry := bits.Add64(lo, uint64(x), 0)
	return sum, int64(carry) + x>>63
}

// SubWide subtracts x from a wide sum's low word lo and returns the new low
// word and what its high word gains (-1, 0 or 1).
func SubWide(lo uint64, x int64) (uint64, int64) {
	diff, borrow := bits.Sub64(lo, uint64(x), 0)
	return diff, -int64(borrow) - x>>63
}

// SatWide is the wide sum hi·2^64 + lo clamped to int64.
func SatWide(hi int64, lo uint64) int64 {
	switch {
	case hi == 0 && lo <= math.MaxInt64, hi == -1 && lo > math.MaxInt64:
		return int64(lo)
	case hi < 0:
		return math.MinInt64
	}
	return math.MaxInt64
}
