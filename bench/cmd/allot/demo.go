package main

import (
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench"
	"github.com/allot-sched/allot/bench/internal/cli"
	"github.com/allot-sched/allot/gang"
)

// demo builds the benchmark cluster (generated from a fixed seed, nothing
// to download), decides the benchmark requests on it, commits each
// admission through a store, and prints what happened and how long each
// decision took.
func demo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("allot demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nodes := fs.Int("nodes", 1024, "nodes in the cluster (8 GPUs each, 16 a rack, 8 racks a block)")
	fresh := fs.Bool("empty", false, "start from an empty cluster instead of the fragmented one")
	fs.Usage = func() { fmt.Fprintln(stderr, "usage: allot demo [-nodes N] [-empty]"); fs.PrintDefaults() }
	if _, exit, done := cli.ParseFlags(fs, args, 0, 0); done {
		return exit
	}
	if *nodes < 1 {
		fs.Usage()
		return 2
	}
	snap, err := bench.Cluster(*nodes, !*fresh).Build()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	store := allot.NewStore(snap)
	fmt.Fprintf(stdout, "cluster: %d nodes, %d GPUs, %d free, %d workloads running\n\n",
		*nodes, *nodes*8, snap.FreeGPUs(), len(snap.RunningIDs()))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "request\tverdict\treason\tdecide\tmessage")
	for i, c := range bench.GangCases() {
		req := c.Req
		req.ID = fmt.Sprintf("%s-%d", c.Name, i)
		s := store.Load()
		start := time.Now()
		d := allot.Decide(s, req)
		took := time.Since(start)
		fmt.Fprintf(tw, "%s\t%v\t%v\t%v\t%s\n", c.Name, d.Verdict, d.Reason, took.Round(time.Microsecond), d.Message)
		if d.Verdict == allot.VerdictAdmit {
			if _, err := store.Commit(d); err != nil {
				fmt.Fprintln(stderr, err)
				return 1
			}
		}
	}
	tw.Flush()
	s := store.Load()
	var mix []gang.Demand
	for _, c := range bench.GangCases() {
		ps := c.Req.PodSets[0]
		// Every node is of the first flavor.
		mix = append(mix, gang.Demand{Count: int64(ps.Count), GPUs: int(ps.PerPod["gpu"]), Flavors: 1})
	}
	f := s.FragmentationOf(mix)
	fmt.Fprintf(stdout, "\nafter the admissions: version %d, %d GPUs free on %d nodes; for the request mix %.1f%% of those nodes are stranded and %.1f of the free GPUs are expected stranded (FGD)\n",
		s.Version(), f.FreeGPUs, f.NodesWithFree, 100*f.NodeShare, f.ExpectedStranded)
	return 0
}
