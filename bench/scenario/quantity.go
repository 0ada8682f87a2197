package scenario

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// maxExponent bounds the decimal exponent of a quantity ("1e30"). Anything
// beyond it overflows int64 (or rounds to a fraction) anyway, and the bound
// keeps a hostile "1e999999999" from building a huge number.
const maxExponent = 64

// suffixes maps the Kubernetes suffixes other than a decimal exponent to
// their factor: binary SI (Ki..Ei) and decimal SI (m, k..E).
var suffixes = map[string]*big.Rat{
	"":   big.NewRat(1, 1),
	"m":  big.NewRat(1, 1000),
	"k":  pow10(3),
	"M":  pow10(6),
	"G":  pow10(9),
	"T":  pow10(12),
	"P":  pow10(15),
	"E":  pow10(18),
	"Ki": pow2(10),
	"Mi": pow2(20),
	"Gi": pow2(30),
	"Ti": pow2(40),
	"Pi": pow2(50),
	"Ei": pow2(60),
}

// ParseQuantity converts a quantity of the named resource to allot's base
// units: cpu in millicores ("4" is 4000, "500m" is 500), every other resource
// in plain units ("16Gi" is 17179869184). The text is a JSON number or a
// Kubernetes quantity: a decimal number with an optional binary SI (Ki..Ei),
// decimal SI (m, k, M, G, T, P, E) or exponent (e3, E-2) suffix.
//
// It fails on malformed text, on negative values, on values beyond int64,
// and on fractions of a base unit; for gpu the message says that GPUs must
// be whole.
func ParseQuantity(resource, text string) (int64, error) {
	v, err := parseDecimal(text)
	if err != nil {
		return 0, fmt.Errorf("quantity %q: %w", text, err)
	}
	if resource == "cpu" {
		v.Mul(v, big.NewRat(1000, 1))
	}
	switch {
	case v.Sign() < 0:
		return 0, fmt.Errorf("quantity %q: must not be negative", text)
	case !v.IsInt() && resource == "gpu":
		return 0, fmt.Errorf("quantity %q: gpu must be whole", text)
	case !v.IsInt() && resource == "cpu":
		return 0, fmt.Errorf("quantity %q: cpu is counted in whole millicores", text)
	case !v.IsInt():
		return 0, fmt.Errorf("quantity %q: %s must be a whole number of base units", text, resource)
	case !v.Num().IsInt64():
		return 0, fmt.Errorf("quantity %q: overflows int64", text)
	}
	return v.Num().Int64(), nil
}

// parseDecimal parses sign, digits, an optional fraction and a suffix into
// an exact rational.
func parseDecimal(text string) (*big.Rat, error) {
	i := 0
	negative := false
	if i < len(text) && (text[i] == '+' || text[i] == '-') {
		negative = text[i] == '-'
		i++
	}
	intStart := i
	for i < len(text) && isDigit(text[i]) {
		i++
	}
	intDigits := text[intStart:i]
	var fracDigits string
	if i < len(text) && text[i] == '.' {
		i++
		fracStart := i
		for i < len(text) && isDigit(text[i]) {
			i++
		}
		fracDigits = text[fracStart:i]
	}
	if intDigits == "" && fracDigits == "" {
		return nil, errors.New("not a number")
	}
	factor, err := suffixFactor(text[i:])
	if err != nil {
		return nil, err
	}
	mantissa, ok := new(big.Int).SetString(intDigits+fracDigits, 10)
	if !ok { // unreachable: only digits were collected
		return nil, errors.New("not a number")
	}
	v := new(big.Rat).SetFrac(mantissa, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(fracDigits))), nil))
	v.Mul(v, factor)
	if negative {
		v.Neg(v)
	}
	return v, nil
}

// suffixFactor returns the factor a quantity suffix stands for.
func suffixFactor(suffix string) (*big.Rat, error) {
	if f, ok := suffixes[suffix]; ok {
		return f, nil
	}
	if suffix[0] != 'e' && suffix[0] != 'E' {
		return nil, fmt.Errorf("unknown suffix %q", suffix)
	}
	exp := suffix[1:]
	digits := exp
	if digits != "" && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	if digits == "" || !allDigits(digits) {
		return nil, fmt.Errorf("bad exponent %q", suffix)
	}
	n, err := strconv.Atoi(exp)
	if err != nil || n > maxExponent || n < -maxExponent {
		return nil, fmt.Errorf("exponent %q out of range", suffix)
	}
	if n < 0 {
		return new(big.Rat).Inv(pow10(-n)), nil
	}
	return pow10(n), nil
}

func pow10(n int) *big.Rat {
	return new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil))
}

func pow2(n uint) *big.Rat {
	return new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), n))
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// wholeNumber parses a JSON number that must be a whole number within
// [lo, hi]. "1e3" and "2.0" are whole; "1.5" is not.
func wholeNumber(text string, lo, hi int64) (int64, error) {
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		if n < lo || n > hi {
			return 0, fmt.Errorf("%s is out of range [%d, %d]", text, lo, hi)
		}
		return n, nil
	}
	v, err := parseDecimal(text)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", text, err)
	}
	if !v.IsInt() {
		return 0, fmt.Errorf("want a whole number, got %s", text)
	}
	if !v.Num().IsInt64() || v.Num().Int64() < lo || v.Num().Int64() > hi {
		return 0, fmt.Errorf("%s is out of range [%d, %d]", text, lo, hi)
	}
	return v.Num().Int64(), nil
}

// Ranges for wholeNumber.
const (
	minInt32 = math.MinInt32
	maxInt32 = math.MaxInt32
	maxInt   = math.MaxInt64
)
