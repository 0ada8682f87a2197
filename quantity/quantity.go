// The Quantity value type: an exact decimal in Kubernetes' range and the
// form it is written in.

package quantity

import (
	"errors"
	"math"
)

// Errors of Parse and of the conversions to base units; the errors
// returned wrap them, so callers check with errors.Is.
var (
	ErrSyntax   = errors.New("quantity: not a Kubernetes quantity")
	ErrRange    = errors.New("quantity: out of range")
	ErrNotWhole = errors.New("quantity: not a whole number")
)

// Format is the family of suffixes a quantity is written with. Parse
// remembers it from the text, and String writes the quantity in it.
type Format uint8

const (
	// DecimalSI: m, k, M, G, T, P, E (and n, u) — "1500m", "16G". The
	// zero Format formats as DecimalSI.
	DecimalSI Format = 1 + iota
	// BinarySI: Ki, Mi, Gi, Ti, Pi, Ei — "16Gi". A value that no binary
	// suffix writes exactly (below 1024, or with a fraction) is written in
	// DecimalSI.
	BinarySI
	// DecimalExponent: e3, e-3 — "12e6".
	DecimalExponent
)

// String is Kubernetes' name of the format.
func (f Format) String() string {
	switch f {
	case BinarySI:
		return "BinarySI"
	case DecimalExponent:
		return "DecimalExponent"
	}
	return "DecimalSI"
}

// nano is one unit in nanos, the finest step a quantity keeps.
const nano = 1_000_000_000

// The largest magnitudes, in nanos: 2^63-1 units (Kubernetes' bound, and
// where it caps a binary quantity) and, for a negative quantity, 2^63, so
// that every int64 is a quantity.
var (
	maxPos, _ = u128{lo: math.MaxInt64}.mul(nano)
	maxNeg, _ = u128{lo: 1 << 63}.mul(nano)
)

// Quantity is a number as Kubernetes' resource.Quantity holds it: an exact
// decimal, a whole multiple of 10^-9 at most 2^63-1 in magnitude (2^63 when
// negative), and the Format it is written in. The zero value is 0.
//
// Two quantities are == when they have the same value and format; Cmp
// compares values alone.
type Quantity struct {
	mag    u128 // magnitude in nanos
	neg    bool // never set for zero
	format Format
}

// New is the quantity v in the given format.
func New(v int64, f Format) Quantity { return scaled(v, nano, f) }

// NewMilli is the quantity v/1000 in the given format.
func NewMilli(v int64, f Format) Quantity { return scaled(v, nano/1000, f) }

func scaled(v int64, unit uint64, f Format) Quantity {
	m := uint64(v)
	if v < 0 {
		m = -m
	}
	mag, _ := u128{lo: m}.mul(unit) // 2^63 × 10^9 fits 128 bits
	return Quantity{mag: mag, neg: v < 0, format: f}
}

// Format is the format q is written in.
func (q Quantity) Format() Format {
	if q.format == 0 {
		return DecimalSI
	}
	return q.format
}

// Sign is -1, 0 or +1.
func (q Quantity) Sign() int {
	switch {
	case q.mag.isZero():
		return 0
	case q.neg:
		return -1
	}
	return 1
}

// IsZero reports whether q is 0.
func (q Quantity) IsZero() bool { return q.mag.isZero() }

// Cmp compares the values of q and r: -1, 0 or +1.
func (q Quantity) Cmp(r Quantity) int {
	if q.Sign() != r.Sign() {
		if q.Sign() < r.Sign() {
			return -1
		}
		return 1
	}
	c := q.mag.cmp(r.mag)
	if q.neg {
		return -c
	}
	return c
}

// Value is q in whole units, a fraction rounded up, away from zero, as
// Kubernetes' Value rounds it: "1.5" is 2, "1m" is 1. Every quantity's
// Value fits an int64.
func (q Quantity) Value() int64 {
	v, _ := q.rounded(nano)
	return v
}

// MilliValue is q in thousandths, rounded up as Value rounds: "0.1m" is 1,
// "4" is 4000; false when that is beyond an int64.
func (q Quantity) MilliValue() (int64, bool) { return q.rounded(nano / 1000) }

// AsInt64 is q as an int64 when it is a whole number.
func (q Quantity) AsInt64() (int64, bool) {
	v, r := q.mag.divmod(nano)
	if r != 0 {
		return 0, false
	}
	return signed(v, q.neg)
}

// rounded is the magnitude in steps of unit nanos, rounded away from zero,
// with q's sign.
func (q Quantity) rounded(unit uint64) (int64, bool) {
	v, r := q.mag.divmod(unit)
	if r != 0 {
		v, _ = v.add(1) // v is far below 2^128
	}
	return signed(v, q.neg)
}

// signed is magnitude v with a sign, false when it is beyond an int64.
func signed(v u128, neg bool) (int64, bool) {
	switch {
	case v.hi != 0 || v.lo > 1<<63 || v.lo == 1<<63 && !neg:
		return 0, false
	case neg:
		return -int64(v.lo), true
	}
	return int64(v.lo), true
}
