package kueueconfig

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// yamlCases are YAML's corners that decide what JSON a document is: YAML
// 1.1's booleans and octals, keys that are numbers or booleans, equal
// keys, merges and anchors, escapes, timestamps, big and odd numbers,
// documents that are no mapping.
var yamlCases = []string{
	"a: 1\nb: [x, 2, 3.5, true, ~, null]\n",
	"on: yes\noff: no\ny: n\n",
	"1: one\n2.5: two\ntrue: t\n0x1f: hex\n",
	"a: 1\na: 2\nb: {c: 1, c: 3}\n",
	"base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3\n",
	"a: &x [1, 2]\nb: *x\n",
	"s: \"<tag> & \\\"q\\\" \\\\ \\t \\u00e9 \\u2028\"\nt: 'it''s'\n",
	"when: 2024-01-02T03:04:05Z\nday: 2024-01-02\n",
	"big: 18446744073709551615\nneg: -9223372036854775808\nf: 1e21\ng: 0.000001\nh: 1.0\noct: 0777\n",
	"nan: .nan\n",
	"inf: .inf\n",
	"? [a, b]\n: c\n",
	"~: x\n",
	"- a\n- b\n",
	"just a scalar\n",
	"",
	"# only a comment\n",
	"null\n",
	"a: |\n  line one\n  line two\nb: >\n  folded\n  text\n",
	"key with spaces: v\n\"quoted key\": w\nnested: {deep: {deeper: [{x: 1}, {y: [2, {z: 3}]}]}}\n",
	"a: !!str 123\nb: !!int \"7\"\nc: !!binary aGVsbG8=\n",
	"a: [\n",
	"\t- tab\n",
	"\ufeff- key: a\n  value: b\n",
	"\ufeffa: 1\n",
	"- key: a\n  value: b\n",
	"--- {a: 1}\n",
	"%YAML 1.1\n---\na: 1\n",
}

// TestYAMLToJSON: the converter gives yaml.YAMLToJSON's answer, byte for
// byte, or an error where it errs, on YAML's corners and on every document
// of the project's example files.
func TestYAMLToJSON(t *testing.T) {
	for _, doc := range append(yamlCases, exampleDocuments(t)...) {
		sameAsYAMLToJSON(t, []byte(doc))
	}
}

// FuzzYAMLToJSON: the same on any bytes.
func FuzzYAMLToJSON(f *testing.F) {
	for _, doc := range yamlCases {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) { sameAsYAMLToJSON(t, doc) })
}

func sameAsYAMLToJSON(t *testing.T, doc []byte) {
	t.Helper()
	want, werr := yaml.YAMLToJSON(doc)
	got, gerr := yamlToJSON(doc)
	if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
		t.Fatalf("%q:\n got %s (%v)\nwant %s (%v)", doc, got, gerr, want, werr)
	}
	if werr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("%q: error %q, want %q", doc, gerr, werr)
	}
}

// exampleDocuments are the documents of the example YAML files.
func exampleDocuments(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, glob := range []string{"../testdata/seeds/*.yaml", "../testdata/cluster/*.yaml", "../testdata/jobs/*.yaml", "../testdata/rules/*.yaml", "../deploy/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
			for {
				doc, err := r.Read()
				if err != nil {
					break
				}
				out = append(out, string(doc))
			}
		}
	}
	if len(out) < 50 {
		t.Fatalf("%d example documents: the globs found too few", len(out))
	}
	return out
}
