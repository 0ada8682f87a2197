package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/internal/cli"
	"github.com/allot-sched/allot/bench/scenario"
)

const decideUsage = `usage: allot decide [-step N] FILE

Prints, as indented JSON with its trail, the decision on the file's
request, or on its first decide step (the events before it applied); with
-step N, the decision of its N-th step, which must be a decide step, on
the state the steps before it leave (decide steps committing where they
say commit, drains running the loop). Expectations are not checked.
`

// decide prints the decision on a scenario's request (or a decide step's)
// as indented JSON.
func decide(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("allot decide", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, decideUsage); fs.PrintDefaults() }
	step := fs.Int("step", 0, "decide the `N`-th step (from 1) instead of the first decide step")
	files, exit, done := cli.ParseFlags(fs, args, 1, 1)
	if done {
		return exit
	}
	s, err := scenario.Load(files[0])
	if err != nil {
		fmt.Fprintf(stderr, "allot decide: %v\n", err)
		return 1
	}
	var d allot.Decision
	stepSet := false
	fs.Visit(func(f *flag.Flag) { stepSet = stepSet || f.Name == "step" })
	if stepSet {
		d, err = s.DecideStep(*step)
	} else {
		d, err = s.Decide()
	}
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
