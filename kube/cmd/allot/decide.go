package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/kueueconfig"
	"github.com/allot-sched/allot/kube/kueuejob"
	"github.com/allot-sched/allot/quantity"
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
		return printInadmissible(stdout, inad, *asJSON)
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
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(d); err != nil {
			fmt.Fprintf(stderr, "allot decide: %v\n", err)
			return 1
		}
		return 0
	}
	printDecision(stdout, snap, req, d)
	return 0
}

// printInadmissible says Kueue's no, given before quota and placement.
func printInadmissible(w io.Writer, e *kueueconfig.InadmissibleError, asJSON bool) int {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			Verdict string `json:"verdict"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
			Object  string `json:"object"`
		}{"Queue", e.Reason, e.Message, e.Object})
		return 0
	}
	fmt.Fprintf(w, "%s\nverdict: Queue (%s): Kueue keeps it pending before quota and placement are looked at\nmessage: %s\n", e.Object, e.Reason, e.Message)
	return 0
}

// printDecision writes a decision for a person: the verdict and reason,
// the message with its figures, the flavors, the placement by domain, what
// is borrowed and the victims.
func printDecision(w io.Writer, snap *allot.Snapshot, req allot.Request, d allot.Decision) {
	fmt.Fprintf(w, "%s → ClusterQueue %s, priority %d\n", req.ID, req.Queue, req.Priority)
	for _, ps := range req.PodSets {
		t := "unconstrained"
		switch {
		case ps.Topology.Required != "":
			t = "required " + ps.Topology.Required
		case ps.Topology.Preferred != "":
			t = "preferred " + ps.Topology.Preferred
		}
		fmt.Fprintf(w, "  pod set %s: %d × %s, %s, flavors %s\n", ps.Name, ps.Count, formatResources(snap, ps.PerPod), t, strings.Join(ps.Flavors, ", "))
	}
	fmt.Fprintf(w, "verdict: %s (%s)\nmessage: %s\n", d.Verdict, d.Reason, d.Message)
	for _, f := range d.Flavors {
		fmt.Fprintf(w, "flavor: %s → %s\n", f.PodSet, f.Flavor)
	}
	levels := snap.Levels()
	type domain struct{ podSet, path string }
	counts := map[domain]map[string]int{}
	var order []domain
	for _, p := range d.Placement {
		var parts []string
		for _, l := range levels {
			v, _ := snap.NodeLabel(p.Node, l)
			parts = append(parts, l+"="+v)
		}
		k := domain{p.PodSet, strings.Join(parts, " / ")}
		if counts[k] == nil {
			counts[k] = map[string]int{}
			order = append(order, k)
		}
		counts[k][p.Node]++
	}
	if len(order) > 0 {
		fmt.Fprintln(w, "placement:")
	}
	for _, k := range order {
		var nodes []string
		for _, n := range slices.Sorted(func(yield func(string) bool) {
			for n := range counts[k] {
				if !yield(n) {
					return
				}
			}
		}) {
			nodes = append(nodes, fmt.Sprintf("%s ×%d", n, counts[k][n]))
		}
		where := k.path
		if where == "" {
			where = "(no topology levels)"
		}
		fmt.Fprintf(w, "  %s: %s: %s\n", k.podSet, where, strings.Join(nodes, ", "))
	}
	for _, b := range d.Borrowing {
		fmt.Fprintf(w, "borrowing: %s %s %s (level %d)\n", b.Flavor, b.Resource, quantity.FormatBase(b.Resource, b.Amount), d.BorrowingLevel)
	}
	for _, v := range d.Victims {
		fmt.Fprintf(w, "victim: %s (ClusterQueue %s, priority %d): %s, by %s\n", v.ID, v.Queue, v.Priority, v.Reason, v.Policy)
	}
}

func formatResources(snap *allot.Snapshot, r allot.Resources) string {
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range r {
			if !yield(n) {
				return
			}
		}
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + " " + quantity.FormatBase(n, r[n])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
