package sortkey

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
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

// TestOrderEqualsStableSort checks Order against a stable sort of the
// indices by string on random lists: strings sharing long prefixes, with
// zero bytes, given twice, of every length around the two words.
func TestOrderEqualsStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	alphabet := []string{"", "\x00", "a", "b", "run-", "default/train-job-", "1", "12", "\xff"}
	for trial := range 300 {
		ss := make([]string, rng.IntN(200))
		for i := range ss {
			var b strings.Builder
			for range rng.IntN(6) {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			if trial%3 == 0 {
				b.WriteString(strconv.Itoa(rng.IntN(100000)))
			}
			ss[i] = b.String()
		}
		want := make([]int32, len(ss))
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortStableFunc(want, func(a, b int32) int { return strings.Compare(ss[a], ss[b]) })
		if got := Order(len(ss), func(i int) string { return ss[i] }); !slices.Equal(got, want) {
			t.Fatalf("trial %d: Order(%q) = %v, want %v", trial, ss, got, want)
		}
	}
}
