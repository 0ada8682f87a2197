// Package res holds allot's fixed-size resource vectors: a snapshot numbers its
// resources once, and every quantity on the hot path is an array indexed by
// that number, never a map.
package res

import (
	"math"
	"math/bits"
)

// Max is the most resources a snapshot may declare.
const Max = 8

// Vec is one quantity per resource, in the snapshot's resource order.
type Vec [Max]int64

// Add returns v + o.
func (v Vec) Add(o Vec) Vec {
	for i := range v {
		v[i] += o[i]
	}
	return v
}

// Sub returns v - o.
func (v Vec) Sub(o Vec) Vec {
	for i := range v {
		v[i] -= o[i]
	}
	return v
}

// Scale returns v × k, saturating at math.MaxInt64.
func (v Vec) Scale(k int64) Vec {
	for i := range v {
		v[i] = MulSat(v[i], k)
	}
	return v
}

// LessEq reports whether every component of v is at most o's.
func (v Vec) LessEq(o Vec) bool {
	for i := range v {
		if v[i] > o[i] {
			return false
		}
	}
	return true
}

// Min returns the componentwise minimum.
func (v Vec) Min(o Vec) Vec {
	for i := range v {
		if o[i] < v[i] {
			v[i] = o[i]
		}
	}
	return v
}

// IsZero reports whether every component is zero.
func (v Vec) IsZero() bool { return v == Vec{} }

// Fill returns a vector with every component set to x.
func Fill(x int64) Vec {
	var v Vec
	for i := range v {
		v[i] = x
	}
	return v
}

// MulSat multiplies two non-negative quantities, saturating at MaxInt64.
func MulSat(a, b int64) int64 {
	if p, ok := MulOK(a, b); ok {
		return p
	}
	return math.MaxInt64
}

// MulOK multiplies two non-negative quantities and reports overflow. The
// full 128-bit product costs one multiplication, where a division to test
// for overflow cost tens of cycles.
func MulOK(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}
