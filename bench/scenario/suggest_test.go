package scenario

import "testing"

func TestDidYouMean(t *testing.T) {
	fields := []string{"verdict", "reason", "victims", "victimReasons", "flavors", "borrowing", "borrowingLevel", "preemptible"}
	for _, c := range []struct {
		name  string
		known []string
		want  string
	}{
		{"verdcit", fields, "verdict"}, // two letters swapped
		{"verdic", fields, "verdict"},  // one missing
		{"Verdict", fields, "verdict"}, // case only
		{"victim", fields, "victims"},  // the nearer of victims and victimReasons
		{"borowingLevel", fields, "borrowingLevel"},
		{"preemtpible", fields, "preemptible"},
		{"colour", fields, ""},             // nothing near
		{"vx", []string{"v", "vxyz"}, "v"}, // one edit for a short name
		{"abc", []string{"xyz"}, ""},       // three edits is not a typo
		{"nominl", []string{"nominal", "nominally"}, "nominal"},
		{"a10", []string{"a100", "h100"}, "a100"}, // the first of the nearest
		{"x", nil, ""},
	} {
		want := ""
		if c.want != "" {
			want = ` (did you mean "` + c.want + `"?)`
		}
		if got := didYouMean(c.name, c.known); got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", c.name, got, want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "abc", 0},
		{"abc", "acb", 1},
		{"abc", "ab", 1},
		{"ab", "abc", 1},
		{"kitten", "sitting", 3},
		{"ca", "abc", 3}, // optimal string alignment, not full Damerau (2)
		{"abcdef", "", 6},
	} {
		if got := editDistance(c.a, c.b, 10); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := editDistance(c.a, c.b, 2); got != min(c.want, 2) {
			t.Errorf("editDistance(%q, %q, bound 2) = %d, want %d", c.a, c.b, got, min(c.want, 2))
		}
	}
}
