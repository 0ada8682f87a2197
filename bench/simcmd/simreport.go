package simcmd

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/allot-sched/allot/bench/sim"
	"github.com/allot-sched/allot/bench/trace"
)

// The report of a replay in time: the tables, their legend, the wall-clock
// timing apart from them, and the files of -out.

// simulateLegend explains every column of the tables; -h prints it too.
const simulateLegend = `Columns (time figures in seconds unless named in hours):
  util, useful     busy GPU-time over the cluster's in the window (the
                   arrival window, first arrival to last; when every job
                   arrives at once, until the last backlog clears), and
                   the same without the work preemption and failures lost
  wait CLASS       queue wait (submission to first start) of the class's
                   jobs, p50/p90/p99; classes highest priority first
  preempt/100      evictions per 100 admissions
  blocked          fragmentation: the share of samples (every 10 simulated
                   minutes while work is active) at which a waiting job
                   asks for no more GPUs than are free but its pods fit on
                   no set of nodes, whatever quota and order say
  idle GPUs        the mean share of the cluster's GPUs free at those
                   samples: idle because of their shape alone
  FGD mix          FGD's fragmentation against the trace's own pod mix:
                   the share of free GPUs a typical pod of the trace
                   cannot use, averaged over the samples
  jobs/h, GPU-h/h  jobs completed within the window per hour of it, and
                   the GPU-hours those jobs ran per hour
  lost GPU-h       GPU-hours preemption threw away (work since the last
                   checkpoint, and terminating victims' idle GPUs)
  JCT mean, JCT p99
                   job completion time, submission to end
  active h, makespan h
                   hours from the first arrival until the last backlog
                   clears (what the charts show), and until the last
                   completion (which the longest job sets)
  backlog          the mean of waiting jobs over the samples
  frag nodes, frag GPUs, frag>10%
                   fragmentation against the backlog, at the samples where
                   work waits: the share of nodes with free GPUs on which
                   no waiting pod fits, the share of free GPUs the waiting
                   mix cannot use, the share of samples with frag nodes
                   above 10%; a long queue holds a pod for every hole and
                   lowers them, so read them beside backlog
  done, rejected   jobs completed, and never admissible under the policy
  decisions        decisions of the scheduling loop
`

// classOrder lists the priority classes of all the runs, highest priority
// first, so that a column of the table is one class in every row.
func classOrder(rs []*sim.Result) []string {
	type class struct {
		name string
		prio int32
	}
	var cs []class
	seen := map[string]int{}
	for _, r := range rs {
		for _, c := range r.Waits {
			if i, ok := seen[c.Class]; ok {
				cs[i].prio = max(cs[i].prio, c.Priority)
				continue
			}
			seen[c.Class] = len(cs)
			cs = append(cs, class{c.Class, c.Priority})
		}
	}
	slices.SortFunc(cs, func(a, b class) int { return cmp.Or(cmp.Compare(b.prio, a.prio), cmp.Compare(a.name, b.name)) })
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

// classWaits is a run's waits of one class, and whether any of its jobs
// started.
func classWaits(r *sim.Result, class string) (sim.ClassWaits, bool) {
	for _, c := range r.Waits {
		if c.Class == class {
			return c, true
		}
	}
	return sim.ClassWaits{}, false
}

// printTable prints the health numbers, one row per run, then the rest of
// the figures, then the legend. It reads no clock: the same runs print the
// same tables.
func printTable(w io.Writer, rs []*sim.Result) {
	classes := classOrder(rs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "policy\tutil\tuseful\t"
	for _, c := range classes {
		head += "wait " + c + "\t"
	}
	fmt.Fprintln(tw, head+"preempt/100\tblocked\tidle GPUs\tFGD mix\tjobs/h\tGPU-h/h\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%.1f%%\t%.1f%%\t", r.Label(), 100*r.Utilization, 100*r.UsefulUtilization)
		for _, c := range classes {
			if cw, ok := classWaits(r, c); ok {
				fmt.Fprintf(tw, "%.0f/%.0f/%.0f\t", cw.Median, cw.P90, cw.P99)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintf(tw, "%.2f\t%.1f%%\t%.1f%%\t%.1f%%\t%.1f\t%.1f\t\n", r.PreemptionRate, 100*r.FragBlocked, 100*r.FragBlockedGPUs, 100*r.FragMix,
			r.Throughput, r.DoneGPUHoursPerHour)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tlost GPU-h\tJCT mean\tJCT p99\tactive h\tmakespan h\tbacklog\tfrag nodes\tfrag GPUs\tfrag>10%\tdone\trejected\tdecisions\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%.1f\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f%%\t%.1f%%\t%.1f%%\t%d\t%d\t%d\t\n",
			r.Label(), r.LostGPUHours, r.JCTMean, r.JCTP99, float64(r.ActiveWindow)/3600, float64(r.Span)/3600, r.MeanWaiting,
			100*r.FragNodeShare, 100*r.FragStrandedShare, 100*r.FragAbove10, r.Completed, r.Rejected, r.Decisions)
	}
	tw.Flush()
	for _, r := range rs {
		if r.NodeFailures > 0 {
			fmt.Fprintf(w, "%s: %d node failures stopped %d jobs, losing %.1f GPU-hours\n", r.Label(), r.NodeFailures, r.Interruptions, r.FailureLostGPUHours)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, simulateLegend)
}

// printTiming prints the wall-clock time of each run, apart from the
// report: it changes from one run to the next. With runs at once
// (parallel above 1) it adds the time of them all.
func printTiming(w io.Writer, rs []*sim.Result, walls []time.Duration, parallel int, total time.Duration) {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%s %.1f s (%.0f decisions/s)", r.Label(), walls[i].Seconds(), float64(r.Decisions)/max(walls[i].Seconds(), 1e-9))
	}
	all := ""
	if parallel > 1 {
		all = fmt.Sprintf("; all %.1f s (%d at once)", total.Seconds(), parallel)
	}
	fmt.Fprintf(w, "\ntiming (wall clock, varies between runs): %s%s\n", strings.Join(parts, ", "), all)
}

// printQueues prints each run's queues: their jobs, queue waits, the
// GPU-hours of the jobs they completed and the most GPUs they ran on at
// once.
func printQueues(w io.Writer, rs []*sim.Result) {
	fmt.Fprintln(w, "\nper queue:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tqueue\tjobs\tdone\trejected\twait p50\tp90\tp99\tGPU-h done\tpeak GPUs\t")
	for _, r := range rs {
		for _, q := range r.Queues {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t%d\t\n", r.Label(), q.Queue, q.Jobs, q.Completed, q.Rejected, q.Median, q.P90, q.P99, q.GPUHours, q.PeakGPUs)
		}
	}
	tw.Flush()
}

// resultRows are results.csv: a row per run, the waits of every class in
// columns of their own.
func resultRows(rs []*sim.Result) [][]string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	classes := classOrder(rs)
	head := []string{"policy", "config", "gpus", "jobs", "utilization", "useful_utilization"}
	for _, c := range classes {
		head = append(head, "wait_"+c+"_p50", "wait_"+c+"_p90", "wait_"+c+"_p99")
	}
	head = append(head, "preemption_rate", "lost_gpu_hours", "frag_blocked", "frag_blocked_gpus", "frag_mix", "frag_node_share",
		"frag_stranded_share", "frag_above_10", "mean_waiting", "throughput", "done_gpu_hours_per_hour", "jct_mean", "jct_p99",
		"window", "arrival_window", "active_window", "span", "completed", "rejected", "decisions")
	rows := [][]string{head}
	for _, r := range rs {
		row := []string{r.Policy, r.Config, strconv.FormatInt(r.GPUs, 10), strconv.Itoa(r.Jobs), f(r.Utilization), f(r.UsefulUtilization)}
		for _, c := range classes {
			if cw, ok := classWaits(r, c); ok {
				row = append(row, f(cw.Median), f(cw.P90), f(cw.P99))
			} else {
				row = append(row, "", "", "")
			}
		}
		i := func(v int64) string { return strconv.FormatInt(v, 10) }
		row = append(row, f(r.PreemptionRate), f(r.LostGPUHours), f(r.FragBlocked), f(r.FragBlockedGPUs), f(r.FragMix), f(r.FragNodeShare),
			f(r.FragStrandedShare), f(r.FragAbove10), f(r.MeanWaiting), f(r.Throughput), f(r.DoneGPUHoursPerHour), f(r.JCTMean), f(r.JCTP99),
			i(r.Window), i(r.ArrivalWindow), i(r.ActiveWindow), i(r.Span), strconv.Itoa(r.Completed), strconv.Itoa(r.Rejected), strconv.Itoa(r.Decisions))
		rows = append(rows, row)
	}
	return rows
}

// writeReport writes the results as JSON, a CSV row per run, a CSV of the
// sampled series and the charts.
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
	if err := writeCSV(filepath.Join(dir, "results.csv"), resultRows(rs)); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	rows := [][]string{{"policy", "config", "at", "utilization", "waiting", "frag_mix", "blocked_gpus", "frag_node_share", "frag_stranded_share"}}
	for _, r := range rs {
		for _, s := range r.Series {
			rows = append(rows, []string{r.Policy, r.Config, strconv.FormatInt(s.At, 10), f(s.Utilization), strconv.Itoa(s.Waiting),
				f(s.MixShare), strconv.FormatInt(s.BlockedGPUs, 10), f(s.NodeShare), f(s.StrandedShare)})
		}
	}
	if err := writeCSV(filepath.Join(dir, "series.csv"), rows); err != nil {
		return err
	}
	for _, c := range sim.Charts() {
		var buf bytes.Buffer
		if err := c.Draw(&buf, rs); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, c.File), buf.Bytes(), 0o644); err != nil {
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
