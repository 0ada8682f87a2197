package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/allot-sched/allot/bench/scenario"
)

// decide prints the decision on a scenario's request (or its first decide
// step) as indented JSON.
func decide(args []string, stdout, stderr io.Writer) int {
	files, ok := parseArgs("decide", "FILE", args, 1, 1, stderr)
	if !ok {
		return 2
	}
	s, err := scenario.Load(files[0])
	if err != nil {
		fmt.Fprintf(stderr, "allot decide: %v\n", err)
		return 1
	}
	d, err := s.Decide()
	if err != nil {
		fmt.Fprintf(stderr, "allot decide: %v\n", err)
		return 1
	}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "allot decide: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return 0
}
