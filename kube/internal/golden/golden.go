// Package golden compares test output with files under testdata, and
// rewrites them when the test runs with -rewrite.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files with what the tests produce")

// Check compares got with the file at path; with -rewrite it writes got
// there instead.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *rewrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -rewrite to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -rewrite to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
