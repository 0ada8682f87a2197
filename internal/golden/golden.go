// Package golden keeps the project's golden files: records of what the
// library answered (a source line, then the rendered answer), compared
// with what a test renders now, or rewritten with the tests' -rewrite
// flag. The root's and package fuzz's golden tests share it; nothing else
// imports it.
package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Record is one entry of a golden file: where it comes from and what was
// answered there.
type Record struct {
	Source string
	Body   string
}

// header starts a record in a golden file; the record's body follows
// on the next lines.
const header = "## "

// Check compares recs with the golden file at path, or writes them there
// when rewrite is set (the tests' -rewrite flag).
func Check(t testing.TB, path string, recs []Record, rewrite bool) {
	t.Helper()
	var buf strings.Builder
	for _, r := range recs {
		if strings.Contains(r.Source, "\n") || strings.HasPrefix(r.Body, header) || strings.Contains(r.Body, "\n"+header) {
			t.Fatalf("record %q cannot be written to a golden file: its source spans lines or its body holds a header", r.Source)
		}
		buf.WriteString(header + r.Source + "\n" + r.Body + "\n")
	}
	if rewrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(buf.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d records to %s", len(recs), path)
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: regenerate it with go test -run Golden . ./fuzz -rewrite", err)
	}
	if string(data) == buf.String() {
		return
	}
	want := parse(string(data))
	for i := range min(len(want), len(recs)) {
		if want[i] != recs[i] {
			t.Fatalf("%s: record %d of %d differs\n%s", path, i+1, len(want), describeDiff(want[i], recs[i]))
		}
	}
	if len(want) > len(recs) {
		t.Fatalf("%s: %d records, now %d; the first missing one:\n%s%s\n%s", path, len(want), len(recs), header, want[len(recs)].Source, clipBody(want[len(recs)].Body))
	}
	if len(recs) > len(want) {
		t.Fatalf("%s: %d records, now %d; the first new one:\n%s%s\n%s", path, len(want), len(recs), header, recs[len(want)].Source, clipBody(recs[len(want)].Body))
	}
	t.Fatalf("%s differs from what the test renders in layout only: regenerate it with -rewrite", path)
}

// parse splits a golden file into its records.
func parse(data string) []Record {
	var recs []Record
	var body []string
	flush := func() {
		if len(recs) > 0 {
			recs[len(recs)-1].Body = strings.Join(body, "\n")
		}
		body = body[:0]
	}
	for _, line := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
		if src, ok := strings.CutPrefix(line, header); ok {
			flush()
			recs = append(recs, Record{Source: src})
			continue
		}
		body = append(body, line)
	}
	flush()
	return recs
}

// describeDiff shows a record as the golden file has it and as it is now,
// from where the two part: the first line that differs, or for bodies of
// one line (compact JSON) the first byte.
func describeDiff(want, got Record) string {
	var b strings.Builder
	if want.Source != got.Source {
		fmt.Fprintf(&b, "source was  %s\nsource now  %s\n", want.Source, got.Source)
	} else {
		fmt.Fprintf(&b, "source: %s\n", got.Source)
	}
	wl, gl := strings.Split(want.Body, "\n"), strings.Split(got.Body, "\n")
	if len(wl) == 1 && len(gl) == 1 {
		i := 0
		for i < min(len(want.Body), len(got.Body)) && want.Body[i] == got.Body[i] {
			i++
		}
		from := max(0, i-200)
		fmt.Fprintf(&b, "first difference at byte %d:\n- …%s\n+ …%s", i, clipBody(want.Body[from:]), clipBody(got.Body[from:]))
		return b.String()
	}
	for i := range max(len(wl), len(gl)) {
		if i >= len(wl) || i >= len(gl) || wl[i] != gl[i] {
			w, g := "(none)", "(none)"
			if i < len(wl) {
				w = wl[i]
			}
			if i < len(gl) {
				g = gl[i]
			}
			fmt.Fprintf(&b, "first difference in line %d of the body:\n- %s\n+ %s\n", i+1, clipBody(w), clipBody(g))
			break
		}
	}
	fmt.Fprintf(&b, "golden:\n%s\nnow:\n%s", clipBody(want.Body), clipBody(got.Body))
	return b.String()
}

// clipBody shortens a body for a failure message.
func clipBody(s string) string {
	if len(s) > 4000 {
		return s[:4000] + "…"
	}
	return s
}
