package allot

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// appendQuote quotes as strconv.AppendQuote does: names of printable
// ASCII, and strings with quotes, backslashes, control bytes, runes
// beyond ASCII and invalid UTF-8.
func TestAppendQuoteIsStrconvs(t *testing.T) {
	cases := []string{"", "team-a", "11cb48", "a b", `say "hi"`, `back\slash`, "tab\there", "del\x7f", "é", "日本", "\xff\xfe", "~ !"}
	rng := rand.New(rand.NewPCG(2026, 47))
	alphabet := []byte("az09-_. ~\"\\\t\x7f\x80\xc3\xa9")
	for range 2000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := string(appendQuote([]byte("x"), s)), string(strconv.AppendQuote([]byte("x"), s)); got != want {
			t.Errorf("appendQuote(%q) = %s, want %s", s, got, want)
		}
	}
}
