package scenario

import (
	"strings"
	"testing"
)

func TestWholeNumber(t *testing.T) {
	tests := []struct {
		text   string
		lo, hi int64
		want   int64
		err    string
	}{
		{"0", 0, 10, 0, ""},
		{"10", 0, 10, 10, ""},
		{"11", 0, 10, 0, "out of range"},
		{"-1", 0, 10, 0, "out of range"},
		{"-2", -5, 10, -2, ""},
		{"1e1", 0, 10, 10, ""},
		{"2.0", 0, 10, 2, ""},
		{"2.5", 0, 10, 0, "want a whole number"},
		{"1e400", 0, maxInt, 0, "out of range"},
		{"2147483648", minInt32, maxInt32, 0, "out of range"},
	}
	for _, tt := range tests {
		got, err := wholeNumber(tt.text, tt.lo, tt.hi)
		if tt.err == "" {
			if err != nil || got != tt.want {
				t.Errorf("wholeNumber(%q) = %d, %v; want %d", tt.text, got, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("wholeNumber(%q) = %d, %v; want an error containing %q", tt.text, got, err, tt.err)
		}
	}
}
