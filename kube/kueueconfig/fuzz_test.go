package kueueconfig_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/allot-sched/allot/kube/kueueconfig"
)

// FuzzDecodeImport: any bytes give objects or an error, never a panic,
// and objects that import give a description that marshals and builds or
// an error.
func FuzzDecodeImport(f *testing.F) {
	for _, glob := range []string{"../testdata/seeds/*.yaml", "../testdata/cluster/*.yaml", "../testdata/jobs/*.yaml", "../testdata/rules/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := kueueconfig.Decode("fuzz", data)
		if err != nil {
			return
		}
		for _, o := range objs {
			_ = o.Name()
			_ = kueueconfig.Validate(o)
		}
		c, err := kueueconfig.Import(objs, kueueconfig.Options{})
		if err != nil {
			return
		}
		b, _, err := c.Builder()
		if err != nil {
			t.Fatalf("Import accepted what Builder refuses: %v", err)
		}
		if _, err := b.Build(); err != nil {
			t.Fatalf("Import accepted what does not build: %v", err)
		}
	})
}
