package main

import (
	"fmt"
	"io"

	"github.com/allot-sched/allot/bench/scenario"
)

// validate loads each scenario, builds its snapshot, replays its steps and
// checks every request (scenario.Scenario.Validate), reporting ok or the
// error, with its file and JSON path, for each file.
func validate(args []string, stdout, stderr io.Writer) int {
	paths, exit, done := parseArgs("validate", "FILE...", args, 1, -1, stderr)
	if done {
		return exit
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
		return fmt.Errorf("%s", pathError(t))
	}
	s, err := scenario.Load(t.file)
	if err != nil {
		return err
	}
	return s.Validate()
}
