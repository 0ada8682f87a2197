package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/explain"
	"github.com/allot-sched/allot/kube/kueueconfig"
	"github.com/allot-sched/allot/kube/kueuejob"
)

// paths is a flag that may be given more than once.
type paths []string

func (p *paths) String() string     { return strings.Join(*p, ",") }
func (p *paths) Set(s string) error { *p = append(*p, s); return nil }

func decide(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("allot decide", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var kueueDirs, clusters paths
	fs.Var(&kueueDirs, "kueue", "file or directory of the Kueue configuration (repeatable)")
	fs.Var(&clusters, "cluster", "file or directory of the cluster's Nodes, Namespaces and Pods (repeatable)")
	job := fs.String("job", "", "file of the job to decide: a Job, JobSet, RayJob, Workload, or the pods of one pod group")
	asJSON := fs.Bool("json", false, "print the decision as JSON, with its trail")
	fairSharing := fs.Bool("fair-sharing", false, "Kueue's fairSharing is enabled in its Configuration")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if len(kueueDirs) == 0 || *job == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "allot decide: --kueue and --job are required, and nothing else")
		return 2
	}
	c, b, err := load(append(kueueDirs, clusters...), *fairSharing, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "allot decide: %v\n", err)
		return 1
	}
	objs, err := kueueconfig.ReadPaths(*job)
	if err != nil {
		fmt.Fprintf(stderr, "allot decide: %v\n", err)
		return 1
	}
	j, err := kueuejob.FromObjects(objs)
	if err != nil {
		fmt.Fprintf(stderr, "allot decide: %s: %v\n", *job, err)
		return 1
	}
	req, warns, err := kueuejob.Request(c, j)
	for _, w := range warns {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	var inad *kueueconfig.InadmissibleError
	if errors.As(err, &inad) {
		explain.WriteInadmissible(stdout, inad, *asJSON)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "allot decide: %v\n", err)
		return 1
	}
	snap, err := b.Build()
	if err != nil {
		fmt.Fprintf(stderr, "allot decide: %v\n", err)
		return 1
	}
	d := allot.Decide(snap, req)
	if *asJSON {
		if err := explain.WriteJSON(stdout, d); err != nil {
			fmt.Fprintf(stderr, "allot decide: %v\n", err)
			return 1
		}
		return 0
	}
	explain.WriteDecision(stdout, snap, req, d)
	return 0
}
