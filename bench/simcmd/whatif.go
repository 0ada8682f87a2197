package simcmd

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/scenario"
	"github.com/allot-sched/allot/bench/sim"
)

// The rollback what-if: before a corrected configuration goes live, what
// would it do to the cluster as it stands? The state is a scenario file
// (allot export writes one from a production snapshot): its nodes,
// flavors, running and pending workloads. The configuration's cohorts,
// queues, options and fair sharing replace the state's, and one
// scheduling loop runs on a copy: the pending workloads it would admit,
// the running ones it would preempt for them, and why the rest would
// wait. Nothing is committed anywhere.

// whatIf is the report of one configuration on one state.
type whatIf struct {
	running, pending int
	admitted         []allot.Decision // Admit and Preempt, in the loop's order
	victims          []allot.Victim   // of the Preempt decisions
	waits            map[string]int   // verdict and reason of the rest
}

// decideWhatIf runs the scheduling loop on the state under the
// configuration's queues. Preemptions are taken in two phases, so a
// victim is not admitted again in the same loop: what the loop shows is
// the first thing the new configuration would do.
func decideWhatIf(state *scenario.Scenario, c *sim.Config) (*whatIf, error) {
	b := state.Builder()
	b.Cohorts, b.Queues, b.Options, b.FairSharing = c.Cluster.Cohorts, c.Cluster.Queues, c.Cluster.Options, c.Cluster.FairSharing
	b.Options.TwoPhasePreemption = true
	snap, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("the state under %s: %w", c.Name, err)
	}
	st := allot.NewStore(snap)
	out := &whatIf{running: len(b.Running), pending: len(b.Pending), waits: map[string]int{}}
	for _, d := range allot.Schedule(st) {
		switch d.Verdict {
		case allot.VerdictAdmit, allot.VerdictPreempt:
			out.admitted = append(out.admitted, d)
			out.victims = append(out.victims, d.Victims...)
		default:
			out.waits[d.Verdict.String()+" "+d.Reason.String()]++
		}
	}
	return out, nil
}

// printWhatIf prints the report.
func printWhatIf(w io.Writer, stateName string, c *sim.Config, r *whatIf) {
	fmt.Fprintf(w, "state %s under config %s: %d running, %d pending; nothing is committed\n", stateName, c.Name, r.running, r.pending)
	fmt.Fprintf(w, "\nwould admit %d pending:\n", len(r.admitted))
	for _, d := range r.admitted {
		how := d.Reason.String()
		if d.Verdict == allot.VerdictPreempt {
			ids := make([]string, len(d.Victims))
			for i, v := range d.Victims {
				ids[i] = v.ID
			}
			how = "once it has preempted " + strings.Join(ids, ", ")
		}
		fmt.Fprintf(w, "  %s (%s): %s\n", d.Workload, d.Queue, how)
	}
	fmt.Fprintf(w, "\nwould preempt %d running:\n", len(r.victims))
	for _, v := range r.victims {
		fmt.Fprintf(w, "  %s (%s, priority %d): %s for %s, losing %d GPU-seconds\n", v.ID, v.Queue, v.Priority, v.Reason, v.Preemptor, v.LostGPUSeconds)
	}
	left := 0
	for _, n := range r.waits {
		left += n
	}
	fmt.Fprintf(w, "\nwould leave %d pending:\n", left)
	for _, k := range slices.Sorted(maps.Keys(r.waits)) {
		fmt.Fprintf(w, "  %d %s\n", r.waits[k], k)
	}
}

// simulateWhatIf answers the what-if for each configuration on the state
// file.
func simulateWhatIf(statePath string, configs []*sim.Config, stdout, stderr io.Writer) int {
	state, err := scenario.Load(statePath)
	if err != nil {
		fmt.Fprintln(stderr, "allot simulate:", err)
		return 1
	}
	for i, c := range configs {
		r, err := decideWhatIf(state, c)
		if err != nil {
			fmt.Fprintln(stderr, "allot simulate:", err)
			return 1
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		printWhatIf(stdout, state.Name, c, r)
	}
	return 0
}
