package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench"
	"github.com/allot-sched/allot/bench/scenario"
)

const exportUsage = `usage: allot export [-after N] [-o OUT] FILE
       allot export -cluster N [-o OUT]

Writes a snapshot as a scenario file (scenario.Marshal): the one FILE
builds, after its first N steps (all of them without -after), with the
request to decide next; or the fragmented benchmark cluster of N nodes
with -cluster. allot check passes the file it writes and allot decide
gives the decision the original would give at that point.
`

// export writes the state a scenario reaches, or the benchmark cluster,
// as a scenario file of its own: to stdout, or to -o.
func export(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("allot export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, exportUsage); fs.PrintDefaults() }
	after := fs.Int("after", -1, "replay only the first `N` steps (default: all)")
	cluster := fs.Int("cluster", 0, "write the fragmented benchmark cluster of `N` nodes instead of a file's state")
	out := fs.String("o", "", "write to `OUT` instead of stdout")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *cluster < 0 || (*cluster > 0) == (fs.NArg() == 1) || fs.NArg() > 1 {
		fs.Usage()
		return 2
	}
	var (
		snap *allot.Snapshot
		req  *allot.Request
		name string
		err  error
	)
	if *cluster > 0 {
		name = fmt.Sprintf("bench-cluster-%d", *cluster)
		snap, err = bench.Cluster(*cluster, true).Build()
	} else {
		var sc *scenario.Scenario
		if sc, err = scenario.Load(fs.Arg(0)); err == nil {
			name = sc.Name
			if *after >= 0 {
				name += fmt.Sprintf(" after %d steps", *after)
			}
			snap, req, err = sc.StateAfter(*after)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "allot export: %v\n", err)
		return 1
	}
	data, err := scenario.Marshal(name, snap.Builder(), req)
	if err != nil {
		fmt.Fprintf(stderr, "allot export: %v\n", err)
		return 1
	}
	if *out == "" {
		_, err = stdout.Write(data)
	} else {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "allot export: %v\n", strings.TrimPrefix(err.Error(), "open "))
		return 1
	}
	return 0
}
