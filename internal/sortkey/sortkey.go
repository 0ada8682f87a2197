package sortkey

import "encoding/binary"

// Prefix is s's first eight bytes read big-endian, zeros past its end:
// where two strings' words differ they order the strings (a string that
// is a prefix of another has the lesser or the same word); where they tie
// the strings must be compared.
func Prefix(s string) uint64 {
	var b [8]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:])
}
