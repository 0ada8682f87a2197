package sortkey

import (
	"cmp"
	"strings"
	"testing"
)

// TestPrefixOrdersAsStrings checks that wherever two strings' words
// differ, they compare as the strings do.
func TestPrefixOrdersAsStrings(t *testing.T) {
	words := []string{"", "\x00", "a", "a\x00", "ab", "abcdefgh", "abcdefgh\x00", "abcdefgi", "abcdefghz", "run-1234", "run-12345", "run-2", "\xff\xff", "Z"}
	for _, a := range words {
		for _, b := range words {
			if c := cmp.Compare(Prefix(a), Prefix(b)); c != 0 && c != strings.Compare(a, b) {
				t.Errorf("Prefix(%q) vs Prefix(%q) compares %d, the strings %d", a, b, c, strings.Compare(a, b))
			}
		}
	}
}

// FuzzPrefix checks the same for any two strings.
func FuzzPrefix(f *testing.F) {
	f.Add("run-1234", "run-12345")
	f.Add("a\x00", "a")
	f.Add("run-123456", "run-123457")
	f.Fuzz(func(t *testing.T, a, b string) {
		if c := cmp.Compare(Prefix(a), Prefix(b)); c != 0 && c != strings.Compare(a, b) {
			t.Errorf("Prefix(%q) vs Prefix(%q) compares %d, the strings %d", a, b, c, strings.Compare(a, b))
		}
		if c := cmp.Or(cmp.Compare(Word(a, 0), Word(b, 0)), cmp.Compare(Word(a, 1), Word(b, 1))); c != 0 && c != strings.Compare(a, b) {
			t.Errorf("the first two words of %q and %q compare %d, the strings %d", a, b, c, strings.Compare(a, b))
		}
		if len(a) <= 8 && len(b) <= 8 && strings.TrimRight(a, "\x00") != strings.TrimRight(b, "\x00") && Prefix(a) == Prefix(b) {
			t.Errorf("%q and %q, short and different, share a word", a, b)
		}
	})
}
