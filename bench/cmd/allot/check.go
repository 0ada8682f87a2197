package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/allot-sched/allot/bench/scenario"
)

// check runs every scenario under the paths and reports each by its file.
func check(args []string, stdout, stderr io.Writer) int {
	paths, exit, done := parseArgs("check", "PATH...", args, 1, -1, stderr)
	if done {
		return exit
	}
	passed, failed := 0, 0
	for _, t := range scenarioFiles(paths) {
		if t.err != nil {
			failed++
			fmt.Fprintf(stdout, "FAIL %s\n", pathError(t))
			continue
		}
		s, err := scenario.Load(t.file)
		if err != nil {
			failed++
			fmt.Fprintf(stdout, "FAIL %v\n", err)
			continue
		}
		r := s.Run()
		switch {
		case r.Passed:
			passed++
			fmt.Fprintf(stdout, "PASS %s\n", t.file)
		case r.Err != nil:
			// It does not build: one line, as a file that does not
			// load, the error naming the file and the JSON path.
			failed++
			fmt.Fprintf(stdout, "FAIL %v\n", r.Err)
		default:
			failed++
			fmt.Fprintf(stdout, "FAIL %s\n", t.file)
			for _, f := range r.Failures {
				fmt.Fprintf(stdout, "    %s\n", f)
			}
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

// pathError says why a path could not be read: the path, then the reason
// without the operation ("x.json: no such file or directory").
func pathError(t target) string {
	var pe *fs.PathError
	if errors.As(t.err, &pe) {
		return pe.Path + ": " + pe.Err.Error()
	}
	return t.err.Error()
}
