package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/allot-sched/allot/bench/sim"
	"github.com/allot-sched/allot/bench/trace"
)

const simulateUsage = `usage: allot simulate [flags]

With no flags: the synthetic Philly-calibrated workload on 1,024 GPUs
(128 nodes of 8, 16 nodes a rack, 8 racks a block), all four policies.

  -trace SPEC      synthetic (default), philly:PATH, openb:PODS,NODES, or a
                   trace in allot's own format (PATH.json or PATH.csv)
  -policies LIST   comma-separated: fifo, kueue, slurm, allot, or a policy
                   JSON file (default: all four)
  -seed N          seed of the synthetic workload (default 1)
  -jobs N          jobs of the synthetic workload, 1 to 1000000 (default 3000)
  -load F          the synthetic workload's offered load: the work inside
                   its arrival window over the cluster, above 0 and at
                   most 100 (default 0.9)
  -nodes N -gpus-per-node N -nodes-per-rack N -racks-per-block N
                   the cluster shape (openb brings its own nodes): at most
                   65536 nodes of 1 to 64 GPUs
  -queue-depth N   a scheduling loop stops after N workloads it cannot
                   admit, as Slurm's default_queue_depth (default 100; 0: all)
  -node-mtbf S     nodes fail at random while jobs arrive, S simulated
                   seconds apart on average per node (default 0: never);
                   a failure stops the jobs on the node, which lose their
                   work since the last checkpoint and wait again
  -repair-time S   a failed node's mean time to repair (default 3600);
                   both at most 1000000000 seconds
  -failure-seed N  seed of the failures (default 1)
  -termination-delay S
                   seconds a preemption's victim takes to terminate
                   (default 30, Kubernetes' default grace period): the
                   store commits preemptions in two phases, the victim's
                   GPUs booked and idle until it is gone and its
                   preemptor holding its room; 0 commits them in one
                   phase, the victims gone at once
  -out DIR         also write report.json, results.csv, series.csv and the
                   charts utilization.svg, waits.svg, fragmentation.svg
  -pack            the packing replay of FGD's experiment instead of the
                   replay in time: every job arrives in order and never
                   leaves, and the table reports the GPUs left unallocated
                   when the demand reaches the capacity and at the end
                   (openb keeps its never-scheduled pods; with -out, the
                   results and their curves go to pack.json)

The openb packing replay:

  allot simulate -pack -trace openb:../shared/traces/openb_pod_list_default.csv,../shared/traces/openb_node_list_gpu_node.csv

A progress bar goes to stderr when it is a terminal and a policy runs for
more than two seconds.
`

// simulate replays a workload under each policy and prints the comparison.
func simulate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("allot simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, simulateUsage) }
	shape := sim.DefaultShape()
	spec := fs.String("trace", "synthetic", "")
	policies := fs.String("policies", "fifo,kueue,slurm,allot", "")
	seed := fs.Uint64("seed", 1, "")
	jobs := fs.Int("jobs", trace.DefaultSynthetic().Jobs, "")
	load := fs.Float64("load", trace.DefaultSynthetic().Load, "")
	out := fs.String("out", "", "")
	depth := fs.Int("queue-depth", 100, "")
	mtbf := fs.Int64("node-mtbf", 0, "")
	repair := fs.Int64("repair-time", 3600, "")
	failureSeed := fs.Uint64("failure-seed", 1, "")
	termination := fs.Int64("termination-delay", sim.DefaultTerminationDelay, "")
	pack := fs.Bool("pack", false, "")
	fs.IntVar(&shape.Nodes, "nodes", shape.Nodes, "")
	fs.IntVar(&shape.GPUsPerNode, "gpus-per-node", shape.GPUsPerNode, "")
	fs.IntVar(&shape.NodesPerRack, "nodes-per-rack", shape.NodesPerRack, "")
	fs.IntVar(&shape.RacksPerBlock, "racks-per-block", shape.RacksPerBlock, "")
	if _, exit, done := parseFlags(fs, args, 0, 0); done {
		return exit
	}
	if msg := checkSimulateFlags(*jobs, *load, shape, *depth, *mtbf, *repair, *termination); msg != "" {
		fmt.Fprintln(stderr, "allot simulate:", msg)
		return 2
	}
	var ps []sim.Policy
	for _, name := range strings.Split(*policies, ",") {
		name = strings.TrimSpace(name)
		if p, ok := sim.PolicyByName(name); ok {
			ps = append(ps, p)
			continue
		}
		p, err := sim.LoadPolicy(name)
		if err != nil {
			fmt.Fprintf(stderr, "allot simulate: policy %q is not fifo, kueue, slurm or allot, nor a readable policy file: %v\n", name, err)
			return 2
		}
		ps = append(ps, p)
	}
	tr, err := loadTrace(*spec, *seed, *jobs, *load, shape, *pack)
	if err != nil {
		fmt.Fprintln(stderr, "allot simulate:", err)
		return 1
	}
	opts := sim.Options{Shape: shape, Nodes: tr.Nodes, QueueDepth: *depth, NodeMTBF: *mtbf, RepairTime: *repair, FailureSeed: *failureSeed,
		TerminationDelay: *termination}
	if *termination == 0 {
		opts.TerminationDelay = -1 // one phase
	}
	gpus := shape.GPUs()
	if len(tr.Nodes) > 0 {
		gpus = 0
		for _, n := range tr.Nodes {
			gpus += int64(n.GPUs)
		}
	}
	if *pack {
		fmt.Fprintf(stdout, "packing trace %s: %d pods arrive in order on %d GPUs and never leave\n\n", tr.Name, len(tr.Jobs), gpus)
		return simulatePack(tr, ps, opts, *out, stdout, stderr)
	}
	fmt.Fprintf(stdout, "trace %s: %d jobs on %d GPUs\n\n", tr.Name, len(tr.Jobs), gpus)
	var results []*sim.Result
	walls := make([]time.Duration, 0, len(ps))
	for _, p := range ps {
		t0 := time.Now()
		o := opts
		bar := newProgress(stderr, p.Name)
		if bar != nil {
			o.Progress = bar.update
		}
		r, err := sim.Run(tr, p, o)
		if bar != nil {
			bar.finish()
		}
		if err != nil {
			fmt.Fprintln(stderr, "allot simulate:", err)
			return 1
		}
		walls = append(walls, time.Since(t0))
		results = append(results, r)
	}
	printTable(stdout, results, walls)
	if *out != "" {
		if err := writeReport(*out, tr, results); err != nil {
			fmt.Fprintln(stderr, "allot simulate:", err)
			return 1
		}
		fmt.Fprintf(stdout, "\nreport written to %s\n", *out)
	}
	return 0
}

// maxJobs bounds -jobs: a million jobs, twelve times the Philly trace.
// maxLoad bounds -load: beyond it the synthetic workload cannot offer more
// anyway (its arrivals are already a second apart).
const (
	maxJobs = 1_000_000
	maxLoad = 100
)

// checkSimulateFlags checks the numeric flags of simulate against their
// ranges and returns what is wrong with the first one out of range, naming
// the flag and its range, or "".
func checkSimulateFlags(jobs int, load float64, shape sim.Shape, depth int, mtbf, repair, termination int64) string {
	for _, f := range []struct {
		name      string
		v, lo, hi int64
		note      string
	}{
		{"jobs", int64(jobs), 1, maxJobs, ""},
		{"nodes", int64(shape.Nodes), 1, sim.MaxNodes, ""},
		{"gpus-per-node", int64(shape.GPUsPerNode), 1, sim.MaxGPUsPerNode, ""},
		{"nodes-per-rack", int64(shape.NodesPerRack), 1, sim.MaxNodes, ""},
		{"racks-per-block", int64(shape.RacksPerBlock), 1, sim.MaxNodes, ""},
		{"queue-depth", int64(depth), 0, math.MaxInt, " (0: no bound)"},
		{"node-mtbf", mtbf, 0, sim.MaxFailureSeconds, " seconds (0: nodes never fail)"},
		{"repair-time", repair, 1, sim.MaxFailureSeconds, " seconds"},
		{"termination-delay", termination, 0, sim.MaxFailureSeconds, " seconds (0: preemptions in one phase)"},
	} {
		if f.v < f.lo || f.v > f.hi {
			if f.hi == math.MaxInt {
				return fmt.Sprintf("-%s %d is out of range: want %d or more%s", f.name, f.v, f.lo, f.note)
			}
			return fmt.Sprintf("-%s %d is out of range: want %d to %d%s", f.name, f.v, f.lo, f.hi, f.note)
		}
	}
	if !(load > 0 && load <= maxLoad) {
		return fmt.Sprintf("-load %v is out of range: want a number above 0 and at most %d", load, maxLoad)
	}
	return ""
}

// loadTrace reads the trace spec names. A packing replay keeps openb's
// never-scheduled pods: they are part of the demand it places.
func loadTrace(spec string, seed uint64, jobs int, load float64, shape sim.Shape, pack bool) (*trace.Trace, error) {
	kind, arg, _ := strings.Cut(spec, ":")
	switch kind {
	case "synthetic":
		cfg := trace.DefaultSynthetic()
		cfg.Seed, cfg.Jobs, cfg.ClusterGPUs, cfg.Load = seed, jobs, int(shape.GPUs()), load
		return trace.Synthetic(cfg), nil
	case "philly":
		return trace.LoadPhilly(arg)
	case "openb":
		pods, nodes, ok := strings.Cut(arg, ",")
		if !ok {
			return nil, fmt.Errorf("openb wants PODS,NODES, got %q", arg)
		}
		return trace.LoadOpenB(pods, nodes, trace.OpenBOptions{KeepUnscheduled: pack})
	default:
		return trace.Load(spec)
	}
}

// simulatePack runs the packing replay under each policy, prints its table
// and FGD's published figure beside it, and writes pack.json under out.
func simulatePack(tr *trace.Trace, ps []sim.Policy, opts sim.Options, out string, stdout, stderr io.Writer) int {
	var results []*sim.PackResult
	for _, p := range ps {
		o := opts
		bar := newProgress(stderr, p.Name)
		if bar != nil {
			o.Progress = bar.update
		}
		r, err := sim.Pack(tr, p, o)
		if bar != nil {
			bar.finish()
		}
		if err != nil {
			fmt.Fprintln(stderr, "allot simulate:", err)
			return 1
		}
		results = append(results, r)
	}
	printPackTable(stdout, results)
	if out != "" {
		if err := writePackReport(out, tr, results); err != nil {
			fmt.Fprintln(stderr, "allot simulate:", err)
			return 1
		}
		fmt.Fprintf(stdout, "\nreport written to %s\n", out)
	}
	return 0
}

// printPackTable prints one row per policy of a packing replay, then the
// figure FGD published for the openb cluster, to read the rows against.
func printPackTable(w io.Writer, rs []*sim.PackResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tpods\tplaced\tfailed\trequested GPUs\tallocated\tunallocated @100%\tunallocated @end\tfrag nodes\tfrag GPUs\t")
	for _, r := range rs {
		full := "-"
		if r.Full != nil {
			full = fmt.Sprintf("%d (%.1f%%)", r.Full.UnallocatedGPUs, 100*float64(r.Full.UnallocatedGPUs)/float64(r.GPUs))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%d (%.1f%%)\t%.1f%%\t%.1f%%\t\n",
			r.Policy, r.Pods, r.Placed, r.Failed, r.RequestedGPUs, r.AllocatedGPUs, full,
			r.UnallocatedGPUs, 100*float64(r.UnallocatedGPUs)/float64(r.GPUs),
			100*r.Fragmentation.NodeShare, 100*r.Fragmentation.StrandedShare)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nPublished figure: on the openb cluster, FGD (Weng et al., ATC'23) left up to 49% fewer GPUs unallocated than packing policies, about 290 GPUs, with GPUs shared; this replay books whole GPUs.")
}

// writePackReport writes the packing results, their curves included, as
// pack.json.
func writePackReport(dir string, tr *trace.Trace, rs []*sim.PackResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(struct {
		Trace   string            `json:"trace"`
		Pods    int               `json:"pods"`
		Results []*sim.PackResult `json:"results"`
	}{tr.Name, len(tr.Jobs), rs}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "pack.json"), append(b, '\n'), 0o644)
}

// printTable prints one row per policy: the four health numbers first.
func printTable(w io.Writer, rs []*sim.Result, walls []time.Duration) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tutil\tuseful\twait p50/p90/p99 (s)\tpreempt/100\tlost GPU-h\tfrag nodes\tfrag GPUs\tfrag>10%\tfrag mix\tjobs/h\tJCT mean (s)\tJCT p99 (s)\tdone\trejected\tdecisions\tdecisions/s\t")
	for i, r := range rs {
		all := allWaits(r)
		fmt.Fprintf(tw, "%s\t%.1f%%\t%.1f%%\t%s\t%.2f\t%.1f\t%.1f%%\t%.1f%%\t%.1f%%\t%.1f%%\t%.2f\t%.0f\t%.0f\t%d\t%d\t%d\t%.0f\t\n",
			r.Policy, 100*r.Utilization, 100*r.UsefulUtilization, all, r.PreemptionRate, r.LostGPUHours,
			100*r.FragNodeShare, 100*r.FragStrandedShare, 100*r.FragAbove10, 100*r.FragMix, r.Throughput, r.JCTMean, r.JCTP99,
			r.Completed, r.Rejected, r.Decisions, float64(r.Decisions)/walls[i].Seconds())
	}
	tw.Flush()
	for _, r := range rs {
		if r.NodeFailures > 0 {
			fmt.Fprintf(w, "%s: %d node failures stopped %d jobs, losing %.1f GPU-hours\n", r.Policy, r.NodeFailures, r.Interruptions, r.FailureLostGPUHours)
		}
	}
	fmt.Fprintln(w, "\nqueue wait by priority class, seconds (p50 / p90 / p99):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t", r.Policy)
		for _, c := range r.Waits {
			fmt.Fprintf(tw, "%s: %.0f / %.0f / %.0f\t", c.Class, c.Median, c.P90, c.P99)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// allWaits renders the waits of the most-populated class.
func allWaits(r *sim.Result) string {
	best := -1
	for i, c := range r.Waits {
		if best < 0 || c.Jobs > r.Waits[best].Jobs {
			best = i
		}
	}
	if best < 0 {
		return "-"
	}
	c := r.Waits[best]
	return fmt.Sprintf("%s %.0f/%.0f/%.0f", c.Class, c.Median, c.P90, c.P99)
}

// writeReport writes the results as JSON, a CSV row per policy and a CSV
// of the sampled series.
func writeReport(dir string, tr *trace.Trace, rs []*sim.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(struct {
		Trace   string        `json:"trace"`
		Jobs    int           `json:"jobs"`
		Results []*sim.Result `json:"results"`
	}{tr.Name, len(tr.Jobs), rs}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	rows := [][]string{{"policy", "utilization", "useful_utilization", "preemption_rate", "lost_gpu_hours", "frag_node_share", "frag_stranded_share", "frag_above_10", "frag_mix", "throughput", "jct_mean", "jct_p99", "completed", "rejected", "decisions"}}
	for _, r := range rs {
		rows = append(rows, []string{r.Policy, f(r.Utilization), f(r.UsefulUtilization), f(r.PreemptionRate), f(r.LostGPUHours),
			f(r.FragNodeShare), f(r.FragStrandedShare), f(r.FragAbove10), f(r.FragMix), f(r.Throughput), f(r.JCTMean), f(r.JCTP99),
			strconv.Itoa(r.Completed), strconv.Itoa(r.Rejected), strconv.Itoa(r.Decisions)})
	}
	if err := writeCSV(filepath.Join(dir, "results.csv"), rows); err != nil {
		return err
	}
	rows = [][]string{{"policy", "at", "utilization", "waiting", "frag_node_share", "frag_stranded_share"}}
	for _, r := range rs {
		for _, s := range r.Series {
			rows = append(rows, []string{r.Policy, strconv.FormatInt(s.At, 10), f(s.Utilization), strconv.Itoa(s.Waiting), f(s.NodeShare), f(s.StrandedShare)})
		}
	}
	if err := writeCSV(filepath.Join(dir, "series.csv"), rows); err != nil {
		return err
	}
	for name, chart := range map[string]func(io.Writer, []*sim.Result) error{
		"utilization.svg": sim.UtilizationSVG, "waits.svg": sim.WaitsSVG, "fragmentation.svg": sim.FragmentationSVG,
	} {
		var buf bytes.Buffer
		if err := chart(&buf, rs); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func writeCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
