// A 128-bit unsigned integer: a quantity's magnitude counted in nanos
// needs 94 bits.

package quantity

import "math/bits"

type u128 struct{ hi, lo uint64 }

func (x u128) isZero() bool { return x.hi == 0 && x.lo == 0 }

func (x u128) cmp(y u128) int {
	switch {
	case x.hi < y.hi || x.hi == y.hi && x.lo < y.lo:
		return -1
	case x == y:
		return 0
	}
	return 1
}

// mul is x*m, false when it does not fit 128 bits.
func (x u128) mul(m uint64) (u128, bool) {
	hi, lo := bits.Mul64(x.lo, m)
	carry, mid := bits.Mul64(x.hi, m)
	hi, c := bits.Add64(hi, mid, 0)
	return u128{hi, lo}, carry == 0 && c == 0
}

// add is x+a, false when it does not fit 128 bits.
func (x u128) add(a uint64) (u128, bool) {
	lo, c := bits.Add64(x.lo, a, 0)
	hi, c := bits.Add64(x.hi, 0, c)
	return u128{hi, lo}, c == 0
}

// shl is x<<k for k < 64, false when bits fall off.
func (x u128) shl(k uint) (u128, bool) {
	if k == 0 {
		return x, true
	}
	if x.hi>>(64-k) != 0 {
		return x, false
	}
	return u128{x.hi<<k | x.lo>>(64-k), x.lo << k}, true
}

// shr is x>>k for k < 64.
func (x u128) shr(k uint) u128 {
	if k == 0 {
		return x
	}
	return u128{x.hi >> k, x.lo>>k | x.hi<<(64-k)}
}

// divmod is x/d and x%d for d > 0.
func (x u128) divmod(d uint64) (u128, uint64) {
	qhi, r := x.hi/d, x.hi%d
	qlo, r := bits.Div64(r, x.lo, d)
	return u128{qhi, qlo}, r
}

// appendDecimal appends x in decimal digits.
func (x u128) appendDecimal(b []byte) []byte {
	var buf [40]byte
	i := len(buf)
	for {
		var r uint64
		x, r = x.divmod(10)
		i--
		buf[i] = byte('0' + r)
		if x.isZero() {
			break
		}
	}
	return append(b, buf[i:]...)
}
