package scenario

import (
	"strings"
	"testing"
)

func TestParseQuantity(t *testing.T) {
	tests := []struct {
		resource, text string
		want           int64
		err            string // substring of the error; empty: no error
	}{
		// cpu is in millicores.
		{"cpu", "4", 4000, ""},
		{"cpu", "500m", 500, ""},
		{"cpu", "1.5", 1500, ""},
		{"cpu", "0.001", 1, ""},
		{"cpu", ".5", 500, ""},
		{"cpu", "2.", 2000, ""},
		{"cpu", "1k", 1000000, ""},
		{"cpu", "0.0005", 0, "whole millicores"},
		{"cpu", "1u", 0, "unknown suffix"},
		// Everything else is in plain units.
		{"memory", "16Gi", 17179869184, ""},
		{"memory", "2Ti", 2199023255552, ""},
		{"memory", "1Ki", 1024, ""},
		{"memory", "1Ei", 1 << 60, ""},
		{"memory", "1k", 1000, ""},
		{"memory", "1M", 1000000, ""},
		{"memory", "1G", 1000000000, ""},
		{"memory", "1T", 1000000000000, ""},
		{"memory", "1P", 1000000000000000, ""},
		{"memory", "1E", 1000000000000000000, ""},
		{"memory", "1.5Gi", 1610612736, ""},
		{"memory", "1e3", 1000, ""},
		{"memory", "1E3", 1000, ""},
		{"memory", "1e+3", 1000, ""},
		{"memory", "25e-1", 0, "whole number of base units"},
		{"memory", "2500e-3", 0, "whole number of base units"},
		{"memory", "2000e-3", 2, ""},
		{"memory", "1.5", 0, "whole number of base units"},
		{"memory", "1500m", 0, "whole number of base units"},
		{"memory", "2000m", 2, ""},
		{"memory", "+7", 7, ""},
		{"memory", "0", 0, ""},
		{"memory", "-0", 0, ""},
		{"memory", "9223372036854775807", 9223372036854775807, ""},
		{"memory", "9223372036854775808", 0, "overflows int64"},
		{"memory", "8Ei", 0, "overflows int64"},
		{"memory", "10E", 0, "overflows int64"},
		{"memory", "1e19", 0, "overflows int64"},
		{"memory", "1e999999999", 0, "out of range"},
		{"memory", "-1", 0, "must not be negative"},
		{"memory", "-1Gi", 0, "must not be negative"},
		{"tokens", "1024", 1024, ""},
		// gpu must be whole.
		{"gpu", "8", 8, ""},
		{"gpu", "8.0", 8, ""},
		{"gpu", "1.5", 0, "gpu must be whole"},
		{"gpu", "500m", 0, "gpu must be whole"},
		{"gpu", "-2", 0, "must not be negative"},
		// Malformed text.
		{"gpu", "", 0, "not a number"},
		{"gpu", "Gi", 0, "not a number"},
		{"gpu", ".", 0, "not a number"},
		{"gpu", " 4", 0, "not a number"},
		{"gpu", "4 ", 0, "unknown suffix"},
		{"gpu", "4gi", 0, "unknown suffix"},
		{"gpu", "4KiB", 0, "unknown suffix"},
		{"gpu", "1.2.3", 0, "unknown suffix"},
		{"gpu", "1e", 0, "bad exponent"},
		{"gpu", "1e+", 0, "bad exponent"},
		{"gpu", "1e1.5", 0, "bad exponent"},
		{"gpu", "--1", 0, "not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.resource+"="+tt.text, func(t *testing.T) {
			got, err := ParseQuantity(tt.resource, tt.text)
			if tt.err == "" {
				if err != nil || got != tt.want {
					t.Fatalf("ParseQuantity(%q, %q) = %d, %v; want %d", tt.resource, tt.text, got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("ParseQuantity(%q, %q) = %d, %v; want an error containing %q", tt.resource, tt.text, got, err, tt.err)
			}
		})
	}
}

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

func TestParseLabelTemplate(t *testing.T) {
	tests := []struct {
		tmpl string
		i    int
		want string
		err  string
	}{
		{"r0", 7, "r0", ""},
		{"n{i}", 7, "n7", ""},
		{"b{i/16}", 31, "b1", ""},
		{"r{i/4}-n{i}", 9, "r2-n9", ""},
		{"{i/2}{i/3}", 6, "32", ""},
		{"r{i/0}", 0, "", "neither"},
		{"r{j}", 0, "", "neither"},
		{"r{i/-1}", 0, "", "neither"},
		{"r{i/+2}", 0, "", "neither"},
		{"r{i", 0, "", "unmatched {"},
		{"r}i", 0, "", "unmatched }"},
		{"r}{i}", 0, "", "unmatched }"},
	}
	for _, tt := range tests {
		tmpl, err := parseLabelTemplate(tt.tmpl)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseLabelTemplate(%q): err %v, want one containing %q", tt.tmpl, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseLabelTemplate(%q): %v", tt.tmpl, err)
			continue
		}
		if got := tmpl.expand(tt.i); got != tt.want {
			t.Errorf("expand(%q, %d) = %q, want %q", tt.tmpl, tt.i, got, tt.want)
		}
	}
}
