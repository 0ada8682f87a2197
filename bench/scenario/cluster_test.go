package scenario

import (
	"strings"
	"testing"
)

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
