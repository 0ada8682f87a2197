package quantity

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in     string
		want   string // canonical text
		format Format
		value  int64 // Value()
		err    error
	}{
		{in: "0", want: "0", format: DecimalSI},
		{in: "-0", want: "0", format: DecimalSI},
		{in: "+7", want: "7", format: DecimalSI, value: 7},
		{in: "4", want: "4", format: DecimalSI, value: 4},
		{in: "500m", want: "500m", format: DecimalSI, value: 1},
		{in: "1.5", want: "1500m", format: DecimalSI, value: 2},
		{in: ".5", want: "500m", format: DecimalSI, value: 1},
		{in: "5.", want: "5", format: DecimalSI, value: 5},
		{in: "2000", want: "2k", format: DecimalSI, value: 2000},
		{in: "0.0000000001", want: "1n", format: DecimalSI, value: 1},
		{in: "1.0000000001", want: "1000000001n", format: DecimalSI, value: 2},
		{in: "1E", want: "1E", format: DecimalSI, value: 1e18},
		{in: "16Gi", want: "16Gi", format: BinarySI, value: 16 << 30},
		{in: "1.5Gi", want: "1536Mi", format: BinarySI, value: 1536 << 20},
		{in: "0.5Ki", want: "512", format: BinarySI, value: 512},
		{in: "0.0001Ki", want: "102400u", format: DecimalSI, value: 1},
		{in: "1e3", want: "1e3", format: DecimalExponent, value: 1000},
		{in: "1E3", want: "1e3", format: DecimalExponent, value: 1000},
		{in: "1e+3", want: "1e3", format: DecimalExponent, value: 1000},
		{in: "15e5", want: "1500e3", format: DecimalExponent, value: 1_500_000},
		{in: "1E-3", want: "1e-3", format: DecimalExponent, value: 1},
		{in: "1e-100", want: "1e-9", format: DecimalExponent, value: 1},
		{in: "-1.5", want: "-1500m", format: DecimalSI, value: -2},
		{in: "9223372036854775807", want: "9223372036854775807", format: DecimalSI, value: math.MaxInt64},
		{in: "-9223372036854775808", want: "-9223372036854775808", format: DecimalSI, value: math.MinInt64},
		{in: "8Ei", want: "9223372036854775807", format: BinarySI, value: math.MaxInt64},
		{in: "1e99999Ki", err: ErrSyntax},
		{in: "99999999999999999999999999999999999999999Ei", want: "9223372036854775807", format: BinarySI, value: math.MaxInt64},
		{in: "7Ei", want: "7Ei", format: BinarySI, value: 7 << 60},
		// apimachinery's leniency, kept.
		{in: "-", want: "0", format: DecimalSI},
		{in: ".", want: "0", format: DecimalSI},
		{in: "Ki", want: "0", format: BinarySI},
		{in: "e3", want: "0", format: DecimalExponent},
		{in: "Pi", err: ErrSyntax},
		{in: "e-10", err: ErrSyntax},
		// Beyond an int64, or an exponent beyond 32 bits.
		{in: "9223372036854775808", err: ErrRange},
		{in: "-9223372036854775809", err: ErrRange},
		{in: "10E", err: ErrRange},
		{in: "1e4294967296", err: ErrRange},
		{in: "0e4294967296", err: ErrRange},
		{in: "1e99999999999999999999", err: ErrSyntax},
		// Malformed.
		{in: "", err: ErrSyntax},
		{in: " 4", err: ErrSyntax},
		{in: "4 ", err: ErrSyntax},
		{in: "4gi", err: ErrSyntax},
		{in: "4KiB", err: ErrSyntax},
		{in: "1.2.3", err: ErrSyntax},
		{in: "1e", err: ErrSyntax},
		{in: "1e+", err: ErrSyntax},
		{in: "--1", err: ErrSyntax},
		{in: "5-3", err: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			q, err := Parse(tt.in)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Parse(%q) = %s, %v; want %v", tt.in, q, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if q.String() != tt.want || q.Format() != tt.format || q.Value() != tt.value {
				t.Fatalf("Parse(%q) = %s %s value %d; want %s %s value %d", tt.in, q, q.Format(), q.Value(), tt.want, tt.format, tt.value)
			}
		})
	}
}

func TestMilliValue(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4", 4000, true}, {"500m", 500, true}, {"0.1m", 1, true}, {"1n", 1, true}, {"-1.5", -1500, true},
		{"9223372036854775", 9223372036854775000, true}, {"9223372036854776", 0, false}, {"8Ei", 0, false},
	}
	for _, tt := range tests {
		q, err := Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := q.MilliValue(); got != tt.want || ok != tt.ok {
			t.Errorf("Parse(%q).MilliValue() = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCmp(t *testing.T) {
	order := []string{"-8Ei", "-1", "-1m", "0", "1n", "1m", "1", "1Ki", "1025", "1e6", "1Mi", "8Ei"}
	for i, a := range order {
		for j, b := range order {
			qa, _ := Parse(a)
			qb, _ := Parse(b)
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := qa.Cmp(qb); got != want {
				t.Errorf("Cmp(%s, %s) = %d, want %d", a, b, got, want)
			}
		}
	}
	one, _ := Parse("1Ki")
	if one == New(1024, DecimalSI) || one.Cmp(New(1024, DecimalSI)) != 0 {
		t.Error("1Ki and 1024 in DecimalSI: want equal values and unequal quantities")
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		q    Quantity
		want string
	}{
		{New(0, BinarySI), "0"},
		{New(1000, DecimalSI), "1k"},
		{New(1000, BinarySI), "1k"},
		{New(1024, BinarySI), "1Ki"},
		{New(1500, BinarySI), "1500"},
		{New(3<<30, BinarySI), "3Gi"},
		{New(5000, DecimalExponent), "5e3"},
		{New(math.MinInt64, BinarySI), "-9223372036854775808"},
		{New(math.MinInt64, DecimalSI), "-9223372036854775808"},
		{NewMilli(1500, DecimalSI), "1500m"},
		{NewMilli(4000, DecimalSI), "4"},
		{NewMilli(1500, BinarySI), "1500m"},
		{NewMilli(1, DecimalExponent), "1e-3"},
		{Quantity{}, "0"},
	}
	for _, tt := range tests {
		if got := tt.q.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.q, got, tt.want)
		}
		back, err := Parse(tt.q.String())
		if err != nil || back.Cmp(tt.q) != 0 {
			t.Errorf("Parse(%q) = %s, %v; want the value back", tt.q.String(), back, err)
		}
	}
}

func TestJSON(t *testing.T) {
	var v struct{ A, B, C, D Quantity }
	if err := json.Unmarshal([]byte(`{"A": "16Gi", "B": 1.5, "C": " 500m ", "D": null}`), &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	if want := `{"A":"16Gi","B":"1500m","C":"500m","D":"0"}`; string(out) != want {
		t.Fatalf("round trip = %s, want %s", out, want)
	}
	var q Quantity
	if err := json.Unmarshal([]byte(`"1x"`), &q); !errors.Is(err, ErrSyntax) {
		t.Fatalf("Unmarshal(\"1x\"): %v, want ErrSyntax", err)
	}
	if err := q.UnmarshalText([]byte(" 1")); !errors.Is(err, ErrSyntax) {
		t.Fatalf("UnmarshalText(\" 1\"): %v, want ErrSyntax: text is parsed as it is", err)
	}
}

func TestParseDoesNotAllocate(t *testing.T) {
	for _, s := range []string{"500m", "16Gi", "1.5Gi", "1e3", "0.000000000001Ki", "123456789012345678.123456789"} {
		if n := testing.AllocsPerRun(100, func() { _, _ = Parse(s) }); n != 0 {
			t.Errorf("Parse(%q): %v allocations, want 0", s, n)
		}
	}
	q, _ := Parse("1536Mi")
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf = q.Append(buf[:0]) }); n != 0 {
		t.Errorf("Append: %v allocations, want 0", n)
	}
}
