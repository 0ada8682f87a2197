package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// target is one scenario file to load, or a path that could not be read.
type target struct {
	file string
	err  error
}

// scenarioFiles expands paths: a file stands for itself, a directory for
// every *.json file under it, sorted. Paths that cannot be read come back
// with their error, in place.
func scenarioFiles(paths []string) []target {
	var out []target
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			out = append(out, target{file: p, err: err})
			continue
		}
		if !info.IsDir() {
			out = append(out, target{file: p})
			continue
		}
		var found []target
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				found = append(found, target{file: path, err: err})
			case !d.IsDir() && strings.HasSuffix(d.Name(), ".json"):
				found = append(found, target{file: path})
			}
			return nil
		})
		if err != nil {
			found = append(found, target{file: p, err: err})
		}
		slices.SortStableFunc(found, func(a, b target) int { return strings.Compare(a.file, b.file) })
		out = append(out, found...)
	}
	return out
}
