// Parse: Kubernetes' quantity grammar, read as apimachinery's scanner
// reads it, and the exact value it stands for, rounded up to nanos.

package quantity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxDigits is the most decimal digits a magnitude in nanos can have: the
// bound is about 9.2 × 10^27.
const maxDigits = 28

// Parse reads a Kubernetes quantity: a sign, a decimal number and a suffix
// (see the package documentation). It does not allocate unless it fails.
func Parse(s string) (Quantity, error) {
	t, ok := scan(s)
	switch {
	case s == "":
		return Quantity{}, fmt.Errorf("%w: empty", ErrSyntax)
	case !ok && t.whole == "" && t.frac == "":
		return Quantity{}, fmt.Errorf("%w: %q: not a number", ErrSyntax, s)
	case !ok:
		return Quantity{}, fmt.Errorf("%w: %q: unknown suffix %q", ErrSyntax, s, t.suffix)
	}
	binary, exp, format, err := interpret(t.suffix)
	if err != nil {
		return Quantity{}, fmt.Errorf("%w: %q: unknown suffix %q", err, s, t.suffix)
	}
	d := digits{t.whole, t.frac}
	if d.len() == 0 && !zeroWithoutDigits(binary, exp) {
		return Quantity{}, fmt.Errorf("%w: %q has no digits", ErrSyntax, s)
	}
	d = d.trimZeros()
	q := Quantity{neg: t.neg, format: format}
	if binary {
		q.mag = binaryNanos(d, len(t.frac), uint(exp))
		if !q.mag.isZero() && q.mag.cmp(u128{lo: nano}) < 0 {
			q.format = DecimalSI // no binary suffix writes a fraction of one
		}
	} else {
		mag, ok := decimalNanos(d, int64(exp)+9-int64(len(t.frac)))
		limit := maxPos
		if t.neg {
			limit = maxNeg
		}
		if !ok || mag.cmp(limit) > 0 {
			return Quantity{}, fmt.Errorf("%w: %q is beyond ±2^63", ErrRange, s)
		}
		q.mag = mag
	}
	if q.mag.isZero() {
		q.neg = false
	}
	return q, nil
}

// scanned is a quantity's text in parts.
type scanned struct {
	neg         bool
	whole, frac string // the digits before and after the point
	suffix      string
}

// scan splits s as apimachinery's scanner does: an optional sign, digits,
// an optional point and digits, then a suffix of the letters
// "eEinumkKMGTP", an optional sign and digits, to the end. Every part may
// be empty: "", "+", "." and "Ki" scan.
func scan(s string) (scanned, bool) {
	var t scanned
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		t.neg = s[i] == '-'
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	t.whole = s[start:i]
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		t.frac = s[start:i]
	}
	start = i
	for i < len(s) && strings.IndexByte("eEinumkKMGTP", s[i]) >= 0 {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	t.suffix = s[start:] // all that follows the number, when the scan fails
	return t, i == len(s)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// interpret reads a suffix: binary reports a power of two (exp is 10 for
// Ki), otherwise exp is a power of ten.
func interpret(suffix string) (binary bool, exp int32, f Format, err error) {
	switch suffix {
	case "":
		return false, 0, DecimalSI, nil
	case "n":
		return false, -9, DecimalSI, nil
	case "u":
		return false, -6, DecimalSI, nil
	case "m":
		return false, -3, DecimalSI, nil
	case "k":
		return false, 3, DecimalSI, nil
	case "M":
		return false, 6, DecimalSI, nil
	case "G":
		return false, 9, DecimalSI, nil
	case "T":
		return false, 12, DecimalSI, nil
	case "P":
		return false, 15, DecimalSI, nil
	case "E":
		return false, 18, DecimalSI, nil
	case "Ki":
		return true, 10, BinarySI, nil
	case "Mi":
		return true, 20, BinarySI, nil
	case "Gi":
		return true, 30, BinarySI, nil
	case "Ti":
		return true, 40, BinarySI, nil
	case "Pi":
		return true, 50, BinarySI, nil
	case "Ei":
		return true, 60, BinarySI, nil
	}
	if len(suffix) > 1 && (suffix[0] == 'e' || suffix[0] == 'E') {
		n, err := strconv.ParseInt(suffix[1:], 10, 64)
		switch {
		case err != nil:
			return false, 0, 0, ErrSyntax
		case n < math.MinInt32 || n > math.MaxInt32:
			// apimachinery would cut such an exponent to 32 bits.
			return false, 0, 0, ErrRange
		}
		return false, int32(n), DecimalExponent, nil
	}
	return false, 0, 0, ErrSyntax
}

// zeroWithoutDigits reports whether apimachinery reads a quantity without
// digits ("", "-", ".", "Ki", "e3") as 0 rather than refusing it: it does
// where its int64 fast path takes the text, which a decimal exponent below
// -9 or a Pi or Ei suffix keeps from it.
func zeroWithoutDigits(binary bool, exp int32) bool {
	if binary {
		return exp <= 40
	}
	return exp >= -9
}

// decimalNanos is d × 10^shift in nanos, rounded up; false when it is
// certainly beyond the largest quantity.
func decimalNanos(d digits, shift int64) (u128, bool) {
	n := int64(d.len())
	switch {
	case n == 0:
		return u128{}, true
	case shift >= 0:
		if n+shift > maxDigits {
			return u128{}, false
		}
		x := d.value(0, int(n))
		for range shift {
			x, _ = x.mul(10) // below 10^28
		}
		return x, true
	case -shift >= n:
		return u128{lo: 1}, true // a nonzero value finer than a nano
	}
	keep := int(n + shift)
	if keep > maxDigits {
		return u128{}, false
	}
	x := d.value(0, keep)
	if d.nonzero(keep, int(n)) {
		x, _ = x.add(1)
	}
	return x, true
}

// binaryNanos is d/10^frac × 2^k in nanos, rounded up and capped at 2^63-1
// units, as apimachinery caps a binary quantity.
func binaryNanos(d digits, frac int, k uint) u128 {
	n := d.len()
	limit := maxPos.shr(k)
	if frac <= 9 {
		shift := 9 - frac
		if n+shift > maxDigits {
			return maxPos
		}
		x := d.value(0, n)
		for range shift {
			x, _ = x.mul(10)
		}
		if x.cmp(limit) > 0 {
			return maxPos
		}
		x, _ = x.shl(k)
		return x
	}
	// d = h × 10^m + l with l the last m digits: the nanos are h × 2^k
	// plus l × 2^k / 10^m rounded up, which is below 2^k. The second is
	// worked out digit by digit from the right, as long multiplication.
	m := frac - 9
	cut := max(n-m, 0)
	var carry uint64
	inexact := false
	for j := n - 1; j >= n-m && (j >= 0 || carry != 0); j-- {
		var digit uint64
		if j >= 0 {
			digit = uint64(d.at(j) - '0')
		}
		t := digit<<k + carry // at most 10 × 2^60
		inexact = inexact || t%10 != 0
		carry = t / 10
	}
	if inexact {
		carry++
	}
	if cut > maxDigits {
		return maxPos
	}
	h := d.value(0, cut)
	if h.cmp(limit) > 0 {
		return maxPos
	}
	h, _ = h.shl(k)
	x, _ := h.add(carry)
	if x.cmp(maxPos) > 0 {
		return maxPos
	}
	return x
}

// digits is a number's digits before and after the point, read as one
// sequence without copying them.
type digits struct{ a, b string }

func (d digits) len() int { return len(d.a) + len(d.b) }

func (d digits) at(i int) byte {
	if i < len(d.a) {
		return d.a[i]
	}
	return d.b[i-len(d.a)]
}

// trimZeros drops the leading zeros.
func (d digits) trimZeros() digits {
	d.a = strings.TrimLeft(d.a, "0")
	if d.a == "" {
		d.b = strings.TrimLeft(d.b, "0")
	}
	return d
}

// value is the number the digits [i, j) write; j-i is at most maxDigits.
func (d digits) value(i, j int) u128 {
	var x u128
	for ; i < j; i++ {
		x, _ = x.mul(10)
		x, _ = x.add(uint64(d.at(i) - '0'))
	}
	return x
}

// nonzero reports whether any of the digits [i, j) is not 0.
func (d digits) nonzero(i, j int) bool {
	for ; i < j; i++ {
		if d.at(i) != '0' {
			return true
		}
	}
	return false
}
