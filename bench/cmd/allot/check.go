package main

import (
	"fmt"
	"io"

	"github.com/allot-sched/allot/bench/scenario"
)

// check runs every scenario under the paths and reports each.
func check(args []string, stdout, stderr io.Writer) int {
	paths, ok := parseArgs("check", "PATH...", args, 1, -1, stderr)
	if !ok {
		return 2
	}
	passed, failed := 0, 0
	for _, t := range scenarioFiles(paths) {
		if t.err != nil {
			failed++
			fmt.Fprintf(stdout, "FAIL %v\n", t.err)
			continue
		}
		s, err := scenario.Load(t.file)
		if err != nil {
			failed++
			fmt.Fprintf(stdout, "FAIL %v\n", err)
			continue
		}
		r := s.Run()
		if r.Passed {
			passed++
			fmt.Fprintf(stdout, "PASS %s\n", r.Name)
			continue
		}
		failed++
		fmt.Fprintf(stdout, "FAIL %s\n", r.Name)
		for _, f := range r.Failures {
			fmt.Fprintf(stdout, "    %s\n", f)
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}
