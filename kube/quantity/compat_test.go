// Package quantity_test holds allot's quantity package to apimachinery's
// resource.Quantity: what one parses, the other parses to the same value,
// canonical text, format, Value and MilliValue; what one refuses, the other
// refuses.
package quantity_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/allot-sched/allot/quantity"
	"k8s.io/apimachinery/pkg/api/resource"
)

// compat checks allot's reading of s against apimachinery's.
func compat(t *testing.T, s string) {
	t.Helper()
	got, err := quantity.Parse(s)
	want, kerr := resource.ParseQuantity(s)
	switch {
	case kerr != nil && err == nil:
		t.Fatalf("Parse(%q) = %s; apimachinery refuses it: %v", s, got, kerr)
	case kerr != nil:
		if !errors.Is(err, quantity.ErrSyntax) {
			t.Fatalf("Parse(%q): %v; apimachinery refuses it as malformed (%v), so should allot", s, err, kerr)
		}
		return
	case err != nil:
		if errors.Is(err, quantity.ErrRange) && beyondInt64(&want) {
			return // allot keeps no value no int64 holds
		}
		t.Fatalf("Parse(%q): %v; apimachinery reads %s", s, err, want.String())
	}
	if beyondInt64(&want) {
		t.Fatalf("Parse(%q) = %s; apimachinery reads %s, beyond an int64", s, got, want.String())
	}
	// resource.Quantity's String gives back the text it parsed when that
	// looks canonical to it ("+7", "1E3"); allot always writes the canonical
	// form, which CanonicalizeBytes computes.
	canonical := canonicalOf(&want)
	if g := got.String(); g != canonical {
		t.Fatalf("Parse(%q).String() = %q, apimachinery %q", s, g, canonical)
	}
	if g, w := got.Format().String(), string(want.Format); g != w {
		t.Fatalf("Parse(%q).Format() = %s, apimachinery %s", s, g, w)
	}
	if g, w := got.Sign(), want.Sign(); g != w {
		t.Fatalf("Parse(%q).Sign() = %d, apimachinery %d", s, g, w)
	}
	// apimachinery rounds a negative value toward zero or away from it
	// depending on how it holds it; allot's quantities are never negative
	// where they are used, so only the rest is held to it.
	if want.Sign() >= 0 {
		if g, w := got.Value(), want.Value(); g != w {
			t.Fatalf("Parse(%q).Value() = %d, apimachinery %d", s, g, w)
		}
		m, ok := got.MilliValue()
		if fits := want.Value() <= resource.MaxMilliValue; ok != fits || fits && m != want.MilliValue() {
			t.Fatalf("Parse(%q).MilliValue() = %d, %v; apimachinery %d (fits: %v)", s, m, ok, want.MilliValue(), fits)
		}
	}
	gj, _ := json.Marshal(got)
	if w := strconv.Quote(canonical); string(gj) != w {
		t.Fatalf("json.Marshal(Parse(%q)) = %s, want %s", s, gj, w)
	}
	back, err := quantity.Parse(got.String())
	if err != nil || back.Cmp(got) != 0 || back.String() != got.String() {
		t.Fatalf("Parse(%q) = %s does not read back: %s, %v", s, got, back, err)
	}
}

// canonicalOf is q's canonical text.
func canonicalOf(q *resource.Quantity) string {
	number, suffix := q.CanonicalizeBytes(nil)
	return string(number) + string(suffix)
}

// beyondInt64 reports whether q is larger in magnitude than every int64
// (2^63-1 positive, 2^63 negative).
func beyondInt64(q *resource.Quantity) bool {
	d := q.AsDec()
	v := new(big.Rat).SetInt(d.UnscaledBig())
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(int(d.Scale())))), nil))
	if d.Scale() > 0 {
		v.Quo(v, scale)
	} else {
		v.Mul(v, scale)
	}
	hi := new(big.Rat).SetInt64(math.MaxInt64)
	lo := new(big.Rat).SetInt(new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 63)))
	return v.Cmp(hi) > 0 || v.Cmp(lo) < 0
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestParseTable(t *testing.T) {
	// want is apimachinery's canonical text; "" means both refuse it.
	tests := []struct{ in, want string }{
		{"0", "0"}, {"-0", "0"}, {"000", "0"}, {"+7", "7"},
		{"1", "1"}, {"1000", "1k"}, {"1500", "1500"}, {"2000", "2k"},
		{"500m", "500m"}, {"0.5", "500m"}, {"1.5", "1500m"}, {".5", "500m"}, {"5.", "5"},
		{"0.001", "1m"}, {"0.0001", "100u"}, {"0.0000000001", "1n"}, {"1n", "1n"}, {"1u", "1u"},
		{"4", "4"}, {"1k", "1k"}, {"1M", "1M"}, {"1G", "1G"}, {"1T", "1T"}, {"1P", "1P"}, {"1E", "1E"},
		{"16Gi", "16Gi"}, {"1Ki", "1Ki"}, {"1Mi", "1Mi"}, {"1Ti", "1Ti"}, {"1Pi", "1Pi"}, {"1Ei", "1Ei"},
		{"1.5Gi", "1536Mi"}, {"0.5Ki", "512"}, {"1024Ki", "1Mi"}, {"1023", "1023"}, {"0.1Ki", "102400m"},
		{"0.0001Ki", "102400u"}, {"1e3", "1e3"}, {"1E3", "1e3"}, {"1e+3", "1e3"}, {"1e1", "10"},
		{"15e5", "1500e3"}, {"1e-3", "1e-3"}, {"1E-3", "1e-3"}, {"1e-10", "1e-9"}, {"25e-1", "2500e-3"},
		{"9223372036854775807", "9223372036854775807"}, {"-9223372036854775808", "-9223372036854775808"},
		{"8Ei", "9223372036854775807"}, {"16Ei", "9223372036854775807"}, {"-8Ei", "-9223372036854775807"},
		{"7Ei", "7Ei"}, {"-1.5", "-1500m"}, {"-16Gi", "-16Gi"},
		// apimachinery's leniency: no digits before a suffix is 0.
		{"", ""}, {"+", "0"}, {"-", "0"}, {".", "0"}, {"Ki", "0"}, {"Ti", "0"}, {"k", "0"}, {"e3", "0"},
		{"Pi", ""}, {"Ei", ""}, {"e-10", ""}, {".e-9", "0"},
		// Malformed.
		{" 4", ""}, {"4 ", ""}, {"4gi", ""}, {"4KiB", ""}, {"1.2.3", ""}, {"1e", ""}, {"1e+", ""},
		{"1e1.5", ""}, {"--1", ""}, {"1Ki5", ""}, {"5-3", ""}, {"0x10", ""}, {"1ee3", ""}, {"1e3Ki", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			compat(t, tt.in)
			q, err := quantity.Parse(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("Parse(%q) = %s, want an error", tt.in, q)
				}
				return
			}
			if err != nil || q.String() != tt.want {
				t.Fatalf("Parse(%q) = %s, %v; want %s", tt.in, q, err, tt.want)
			}
		})
	}
}

// TestParseRange: the values apimachinery keeps beyond an int64, which
// allot refuses.
func TestParseRange(t *testing.T) {
	for _, s := range []string{"9223372036854775808", "10E", "1e19", "1e30", "-9223372036854775809", "99999999999999999999999999999"} {
		if _, err := resource.ParseQuantity(s); err != nil {
			t.Fatalf("apimachinery refuses %q: %v", s, err)
		}
		if q, err := quantity.Parse(s); !errors.Is(err, quantity.ErrRange) {
			t.Errorf("Parse(%q) = %s, %v; want ErrRange", s, q, err)
		}
		compat(t, s)
	}
}

// gen makes quantity-like text: mostly well formed, with the corners the
// grammar allows (empty runs of digits, leading zeros, long fractions,
// every suffix, exponents) and some malformed ones.
func gen(r *rand.Rand) string {
	var b strings.Builder
	switch r.IntN(4) {
	case 0:
		b.WriteByte('-')
	case 1:
		if r.IntN(4) == 0 {
			b.WriteByte('+')
		}
	}
	digits := func(max int) {
		n := r.IntN(max + 1)
		for range n {
			if r.IntN(3) == 0 {
				b.WriteByte('0')
			} else {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
		}
	}
	lengths := []int{0, 1, 3, 6, 12, 19, 24}
	digits(lengths[r.IntN(len(lengths))])
	if r.IntN(2) == 0 {
		b.WriteByte('.')
		digits(lengths[r.IntN(len(lengths))])
	}
	suffixes := []string{"", "", "", "m", "n", "u", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
	switch r.IntN(8) {
	case 0, 1:
		e := "e"
		if r.IntN(2) == 0 {
			e = "E"
		}
		b.WriteString(e)
		switch r.IntN(3) {
		case 0:
			b.WriteByte('-')
		case 1:
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(r.IntN(41)))
	case 2:
		junk := []string{"ki", "KiB", "e", "E+", "m5", "Gi3", "ee3", " ", "x", ".", "-", "i", "mm", "EE"}
		b.WriteString(junk[r.IntN(len(junk))])
	default:
		b.WriteString(suffixes[r.IntN(len(suffixes))])
	}
	return b.String()
}

// TestParseGenerated compares allot and apimachinery on many generated
// strings, from a fixed seed.
func TestParseGenerated(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 20_000
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		compat(t, gen(r))
	}
}

// FuzzCompat compares allot and apimachinery on any text; its seeds run as
// part of go test.
func FuzzCompat(f *testing.F) {
	for _, s := range []string{"500m", "16Gi", "1.5", "1e3", "1E-3", "0.0001Ki", "8Ei", "Ki", "-", ".", "1.5Gi", "123456789.123456789123"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !tame(s) {
			t.Skip()
		}
		compat(t, s)
	})
}

// tame keeps the fuzzer to text whose exponent apimachinery computes in
// reasonable time and without wrapping 32 bits: |e| at most 100.
func tame(s string) bool {
	i := strings.LastIndexAny(s, "eE")
	if i < 0 || i == len(s)-1 {
		return len(s) < 200
	}
	n, err := strconv.ParseInt(s[i+1:], 10, 64)
	return err != nil || n >= -100 && n <= 100
}

// TestBaseUnits: allot's base units are what Kubernetes reads and writes:
// cpu through MilliValue and NewMilliQuantity in DecimalSI, memory through
// Value and NewQuantity in BinarySI, the rest through Value and DecimalSI.
func TestBaseUnits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	values := []int64{0, 1, 999, 1000, 1023, 1024, 1500, 1 << 30, 16 << 30, 1e9, 1e18, math.MaxInt64, 1<<62 + 1}
	for range 20_000 {
		v := r.Int64()
		switch r.IntN(3) {
		case 0:
			v >>= r.IntN(63)
		case 1:
			v = int64(r.IntN(64)) << (10 * r.IntN(6))
		}
		values = append(values, v)
	}
	for _, v := range values {
		for _, c := range []struct {
			resource string
			want     *resource.Quantity
		}{
			{"cpu", resource.NewMilliQuantity(v, resource.DecimalSI)},
			{"memory", resource.NewQuantity(v, resource.BinarySI)},
			{"ephemeral-storage", resource.NewQuantity(v, resource.BinarySI)},
			{"nvidia.com/gpu", resource.NewQuantity(v, resource.DecimalSI)},
			{"pods", resource.NewQuantity(v, resource.DecimalSI)},
		} {
			s := quantity.FormatBase(c.resource, v)
			if w := canonicalOf(c.want); s != w {
				t.Fatalf("FormatBase(%q, %d) = %q, apimachinery %q", c.resource, v, s, w)
			}
			back, err := quantity.ParseBase(c.resource, s)
			if err != nil || back != v {
				t.Fatalf("ParseBase(%q, %q) = %d, %v; want %d", c.resource, s, back, err, v)
			}
		}
	}
	// Parsing rounds as the scheduler reads a request.
	for range 20_000 {
		s := gen(r)
		k, err := resource.ParseQuantity(s)
		if err != nil || k.Sign() < 0 || beyondInt64(&k) {
			continue
		}
		if got, err := quantity.ParseBase("memory", s); err != nil || got != k.Value() {
			t.Fatalf("ParseBase(memory, %q) = %d, %v; apimachinery Value %d", s, got, err, k.Value())
		}
		got, err := quantity.ParseBase("cpu", s)
		if k.Value() <= resource.MaxMilliValue && (err != nil || got != k.MilliValue()) {
			t.Fatalf("ParseBase(cpu, %q) = %d, %v; apimachinery MilliValue %d", s, got, err, k.MilliValue())
		}
	}
}
