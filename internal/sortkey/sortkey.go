package sortkey

import "encoding/binary"

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
