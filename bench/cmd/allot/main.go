// Command allot runs and inspects allot's scenario files (see
// bench/scenario and SCENARIOS.md).
//
// Usage:
//
//	allot check PATH...     run every scenario in the files and directories given
//	allot decide FILE       print the decision for the file's request as JSON
//	allot validate FILE...  load and build each scenario's snapshot
//	allot export FILE       write the state a scenario reaches as a scenario file
//	allot demo [-nodes N]   decide the benchmark requests on a generated cluster
//	allot simulate [flags]  replay a workload under fifo, kueue, slurm and allot
//
// check prints one line per scenario, PASS or FAIL with the reasons
// indented below, and a closing line "N passed, M failed". Every command
// exits 1 when something failed and 2 on a usage error.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

const usageText = `usage:
  allot check PATH...     run every scenario (*.json, recursively) in the paths given
  allot decide FILE       print the decision for the file's request as JSON
  allot validate FILE...  load each scenario and build its snapshot
  allot export FILE       write the state a scenario reaches as a scenario file
                          (-after N steps, -o OUT; -cluster N: the benchmark cluster)
  allot demo [-nodes N]   decide the benchmark requests on a generated cluster
  allot simulate [flags]  replay a workload under fifo, kueue, slurm and allot
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command with its arguments (without the program name); it
// returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "check":
		return check(rest, stdout, stderr)
	case "decide":
		return decide(rest, stdout, stderr)
	case "validate":
		return validate(rest, stdout, stderr)
	case "export":
		return export(rest, stdout, stderr)
	case "demo":
		return demo(rest, stdout, stderr)
	case "simulate":
		return simulate(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
		return 0
	default:
		fmt.Fprintf(stderr, "allot: unknown command %q\n%s", cmd, usageText)
		return 2
	}
}

// parseArgs parses a subcommand's arguments (it has no flags yet, but -h
// works and a mistyped flag is a usage error) and checks their number.
func parseArgs(name, operands string, args []string, min, max int, stderr io.Writer) ([]string, bool) {
	fs := flag.NewFlagSet("allot "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintf(stderr, "usage: allot %s %s\n", name, operands) }
	if err := fs.Parse(args); err != nil {
		return nil, false
	}
	if n := fs.NArg(); n < min || max >= 0 && n > max {
		fs.Usage()
		return nil, false
	}
	return fs.Args(), true
}
