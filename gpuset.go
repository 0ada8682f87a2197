package allot

import (
	"encoding/json"
	"fmt"
	"math/bits"
)

// GPUSet is a set of node-local GPU indices (0..63) as a bit mask: a small
// comparable value. In JSON it is the list of indices, ascending.
type GPUSet uint64

// GPUSetOf returns the set of the given indices; indices outside 0..63 are
// ignored.
func GPUSetOf(indices ...int) GPUSet {
	var s GPUSet
	for _, i := range indices {
		if i >= 0 && i < 64 {
			s |= 1 << i
		}
	}
	return s
}

// Len is the number of GPUs in the set.
func (s GPUSet) Len() int { return bits.OnesCount64(uint64(s)) }

// Has reports whether GPU i is in the set.
func (s GPUSet) Has(i int) bool { return i >= 0 && i < 64 && s&(1<<i) != 0 }

// Indices lists the set's GPUs, ascending.
func (s GPUSet) Indices() []int {
	out := make([]int, 0, s.Len())
	for m := uint64(s); m != 0; m &= m - 1 {
		out = append(out, bits.TrailingZeros64(m))
	}
	return out
}

func (s GPUSet) String() string { return fmt.Sprint(s.Indices()) }

// MarshalJSON renders the set as a list of indices.
func (s GPUSet) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+3*s.Len())
	b = append(b, '[')
	for m := uint64(s); m != 0; m &= m - 1 {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = fmt.Append(b, bits.TrailingZeros64(m))
	}
	return append(b, ']'), nil
}

// UnmarshalJSON parses a list of indices.
func (s *GPUSet) UnmarshalJSON(b []byte) error {
	var idx []int
	if err := json.Unmarshal(b, &idx); err != nil {
		return err
	}
	var out GPUSet
	for _, i := range idx {
		if i < 0 || i >= 64 {
			return fmt.Errorf("allot: GPU index %d out of range 0..63", i)
		}
		out |= 1 << i
	}
	*s = out
	return nil
}
