package quantity

import (
	"errors"
	"testing"
)

// FuzzParse: Parse never panics, refuses only with its own errors, and what
// it reads writes back as text that reads to the same value and text.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"500m", "16Gi", "1.5", "1e3", "1E-3", "0.0001Ki", "8Ei", "-8Ei", "Ki", "", "-", ".",
		"9223372036854775807", "-9223372036854775808", "1.5Gi", "123456789.123456789123", "1e-100"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrRange) {
				t.Fatalf("Parse(%q): %v, not one of the package's errors", s, err)
			}
			return
		}
		text := q.String()
		back, err := Parse(text)
		if err != nil || back.Cmp(q) != 0 || back.String() != text {
			t.Fatalf("Parse(%q) = %s reads back as %s, %v", s, text, back.String(), err)
		}
		if q.Sign() >= 0 {
			if v, ok := q.AsInt64(); ok && v != q.Value() {
				t.Fatalf("Parse(%q): AsInt64 %d, Value %d", s, v, q.Value())
			}
		}
	})
}
