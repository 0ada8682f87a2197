package main

import (
	"fmt"
	"io"

	"github.com/allot-sched/allot/bench/scenario"
)

// validate loads each scenario and builds its snapshot, reporting ok or
// the error for each file.
func validate(args []string, stdout, stderr io.Writer) int {
	paths, ok := parseArgs("validate", "FILE...", args, 1, -1, stderr)
	if !ok {
		return 2
	}
	status := 0
	for _, t := range scenarioFiles(paths) {
		if err := validateFile(t); err != nil {
			fmt.Fprintln(stderr, err)
			status = 1
			continue
		}
		fmt.Fprintf(stdout, "ok %s\n", t.file)
	}
	return status
}

func validateFile(t target) error {
	if t.err != nil {
		return t.err
	}
	s, err := scenario.Load(t.file)
	if err != nil {
		return err
	}
	if _, err := s.Build(); err != nil {
		return fmt.Errorf("%s: build: %w", t.file, err)
	}
	return nil
}
