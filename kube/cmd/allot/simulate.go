package main

import (
	"flag"
	"io"
	"path/filepath"
	"slices"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/sim"
	"github.com/allot-sched/allot/bench/simcmd"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// simulate is the core's allot simulate, with a Kueue configuration as a
// configuration: -kueue PATH imports the Kueue objects there (and the
// Nodes -cluster names, if any) as import kueue does and replays the
// trace on them; -kueue twice compares two configurations side by side.
func simulate(args []string, stdout, stderr io.Writer) int {
	var clusters paths
	var fairSharing *bool
	return simcmd.Run(args, stdout, stderr, simcmd.Source{
		Flag: "kueue",
		Usage: `  -kueue PATH      a Kueue configuration, files or a directory of its
                   objects (ResourceFlavors, ClusterQueues, Cohorts,
                   LocalQueues, WorkloadPriorityClasses, Topologies, and
                   Nodes if it has them), read as allot import kueue reads
                   them, Kueue's semantics on; the trace's queues go to
                   its ClusterQueues by name, else round robin. Give
                   -kueue twice to compare two configurations
  -cluster PATH    the Nodes of every -kueue configuration (repeatable)
  -fair-sharing    Kueue's fairSharing is enabled in its Configuration
`,
		Define: func(fs *flag.FlagSet) {
			fs.Var(&clusters, "cluster", "")
			fairSharing = fs.Bool("fair-sharing", false, "")
		},
		Load: func(path string) (*sim.Config, error) {
			_, b, err := load(append([]string{path}, clusters...), *fairSharing, stderr)
			if err != nil {
				return nil, err
			}
			// The pods no LocalQueue admitted have a queue of their own;
			// a replay takes none of the cluster's running pods, and no
			// job of the trace goes there.
			b.Queues = slices.DeleteFunc(b.Queues, func(q allot.Queue) bool { return q.Name == kueueconfig.UnmanagedQueue })
			return sim.FromBuilder(filepath.Base(filepath.Clean(path)), b, nil)
		},
	})
}
