package explain

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/kueueconfig"
	"github.com/allot-sched/allot/quantity"
)

// Inadmissible is Kueue's no, given before quota and placement, as JSON
// carries it.
type Inadmissible struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Object  string `json:"object"`
}

// InadmissibleOf is e as JSON carries it: a Queue verdict with Kueue's
// reason.
func InadmissibleOf(e *kueueconfig.InadmissibleError) Inadmissible {
	return Inadmissible{Verdict: "Queue", Reason: e.Reason, Message: e.Message, Object: e.Object}
}

// WriteInadmissible writes Kueue's no, given before quota and placement,
// for a person or, with asJSON, as indented JSON.
func WriteInadmissible(w io.Writer, e *kueueconfig.InadmissibleError, asJSON bool) error {
	if asJSON {
		return WriteJSON(w, InadmissibleOf(e))
	}
	_, err := fmt.Fprintf(w, "%s\nverdict: Queue (%s): Kueue keeps it pending before quota and placement are looked at\nmessage: %s\n", e.Object, e.Reason, e.Message)
	return err
}

// WriteJSON writes v (a Decision, an Inadmissible) as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteDecision writes a decision for a person: the verdict and reason,
// the message with its figures, the flavors, the placement by domain, what
// is borrowed and the victims.
func WriteDecision(w io.Writer, snap *allot.Snapshot, req allot.Request, d allot.Decision) {
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
