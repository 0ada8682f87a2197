// Command allot runs and inspects allot's scenario files (see
// bench/scenario and SCENARIOS.md).
//
// Usage:
//
//	allot check PATH...     run every scenario in the files and directories given
//	allot decide FILE       print the decision for the file's request as JSON
//	                        (-step N: of its N-th step, the steps before it replayed)
//	allot validate FILE...  load each scenario, build its snapshot, replay its
//	                        steps and check every request
//	allot export FILE       write the state a scenario reaches as a scenario file
//	allot demo [-nodes N]   decide the benchmark requests on a generated cluster
//	allot simulate [flags]  replay a workload under fifo, kueue, slurm and allot
//
// check prints one line per file, PASS or FAIL with the reasons indented
// below (a file that does not load or build: FAIL, the file, the JSON
// path and the reason on one line), and a closing line "N passed, M
// failed". Errors name the file and the JSON path of the value at fault,
// and an unknown field the nearest known one. Every command exits 1 when
// something failed and 2 on a usage error; -h prints a command's usage
// and exits 0.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/allot-sched/allot/bench/internal/cli"
	"github.com/allot-sched/allot/bench/simcmd"
)

const usageText = `usage:
  allot check PATH...     run every scenario (*.json, recursively) in the paths given
  allot decide FILE       print the decision for the file's request as JSON
                          (-step N: of its N-th step, the steps before it replayed)
  allot validate FILE...  load each scenario, build its snapshot, replay its
                          steps and check every request
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
		paceReplay()
		return simcmd.Run(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
		return 0
	default:
		fmt.Fprintf(stderr, "allot: unknown command %q\n%s", cmd, usageText)
		return 2
	}
}

// replayGC is the garbage collector's pace for simulate (GOGC). A replay
// is a batch job that keeps little alive (the cluster, the queues, the
// jobs) and allocates with every decision: at Go's default of 100 the
// collector's workers took 11% of the CPU of slurm's Philly replay, which
// took 20.3 s of CPU at 400 against 27.3 s, its memory peaking higher
// (the README has the figures). replayMemory is the soft limit
// (GOMEMLIMIT) past which the collector runs sooner again: a long trace
// keeps more alive, and its heap at 400 grows four times as large.
const (
	replayGC     = 400
	replayMemory = 3 << 30
)

// paceReplay sets the collector's pace and soft memory limit for a
// replay, each unless the environment sets it (GOGC, GOMEMLIMIT).
func paceReplay() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(replayGC)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(replayMemory)
	}
}

// parseArgs parses a subcommand's arguments (it has no flags, but -h
// works and a mistyped flag is a usage error) and checks their number.
// When the command should not go on, done is true and exit is its status:
// 0 after -h, 2 on a usage error.
func parseArgs(name, operands string, args []string, min, max int, stderr io.Writer) (rest []string, exit int, done bool) {
	fs := flag.NewFlagSet("allot "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintf(stderr, "usage: allot %s %s\n", name, operands) }
	return cli.ParseFlags(fs, args, min, max)
}
