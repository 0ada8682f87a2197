package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/scenario"
)

// Config is a team's own cluster and queues for a run, in place of the
// equal split of the GPUs among the trace's queues: a scenario file's
// flavors, nodes (or node sets), topology levels, cohorts and queues with
// their quotas, borrowing and lending limits, caps, preemption and flavor
// fungibility, fair sharing and options; and how the trace's queues map
// onto its queues.
//
// A scenario file is a configuration as it is. The simulator reads one
// more top-level field, "simulate", which the scenario format does not
// have:
//
//	"simulate": {"queueMap": {"vc-ee9e": "team-a", "*": "team-b"}}
//
// A trace queue (Philly's virtual cluster, Alibaba's namespace, a
// synthetic team) goes to the configuration's queue that
//
//  1. queueMap names for it;
//  2. else has its name;
//  3. else queueMap names for "*";
//  4. else comes next in turn: the trace queues left, in name order, take
//     the configuration's queues in the file's order, one each, round
//     robin.
//
// The trace is the workload: the file's running and pending workloads,
// history, request and steps are not replayed (Ignored lists them), and
// the clock starts at 0. Without nodes the cluster is Options.Nodes or
// Options.Shape, of the file's one flavor, with Shape's block and rack
// levels in place of the file's.
//
// ConfigPolicy runs the file as written. Any other policy overlays it:
// without Borrowing the queues leave their cohorts (their quotas rigid at
// nominal, limits dropped); with Strict they are StrictFIFO; without
// Preemption they preempt nothing, and with it a queue that sets no
// preemption of its own preempts lower priorities within itself and
// reclaims lent quota from any borrower; the policy's Backfill,
// TopologyAware and FairSharing replace the file's. A queue depth the
// file leaves at 0 is Options.QueueDepth.
type Config struct {
	// Name is the file's base name without .json, or the scenario's name.
	Name string
	// Cluster describes the cluster and queues; its Running, Pending and
	// History are empty but for the history's half-life.
	Cluster allot.Builder
	// QueueMap maps trace queues to the configuration's queues; "*" maps
	// the rest.
	QueueMap map[string]string
	// Ignored lists what the file holds that a run does not replay, as
	// "2 running workloads".
	Ignored []string
}

// configSection is the simulator's own part of a configuration file.
type configSection struct {
	QueueMap map[string]string `json:"queueMap"`
}

// LoadConfig reads a configuration from a scenario file (see Config).
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(path, data)
}

// ParseConfig reads a configuration from a scenario file's bytes; name
// names the file in errors and, without .json, the configuration.
func ParseConfig(name string, data []byte) (*Config, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		// The scenario parser says where the JSON breaks, line and column.
		if _, perr := scenario.Parse(name, data); perr != nil {
			return nil, perr
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var section configSection
	if raw, ok := top["simulate"]; ok {
		// Field names match exactly, as the scenario format's do.
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, fmt.Errorf("%s: $.simulate: %w", name, err)
		}
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			if k != "queueMap" {
				return nil, fmt.Errorf("%s: $.simulate: unknown field %q (want queueMap)", name, k)
			}
		}
		if err := json.Unmarshal(raw, &section); err != nil {
			return nil, fmt.Errorf("%s: $.simulate: %w", name, err)
		}
		delete(top, "simulate")
		var err error
		if data, err = json.Marshal(top); err != nil {
			return nil, err
		}
	}
	s, err := scenario.Parse(name, data)
	if err != nil {
		return nil, err
	}
	c, err := newConfig(strings.TrimSuffix(filepath.Base(name), ".json"), s.Builder(), section.QueueMap)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(s.Steps) == 1 {
		c.Ignored = append(c.Ignored, "1 step")
	} else if len(s.Steps) > 1 {
		c.Ignored = append(c.Ignored, fmt.Sprintf("%d steps", len(s.Steps)))
	}
	if s.Request != nil {
		c.Ignored = append(c.Ignored, "a request")
	}
	return c, nil
}

// FromBuilder makes a configuration of a cluster and its queues described
// by a Builder, as the Kubernetes bridge reads them from a Kueue
// configuration; queueMap maps trace queues onto its queues as a file's
// "simulate" field does (nil: by name, else round robin). Its running and
// pending workloads and history are not replayed (Ignored lists them).
func FromBuilder(name string, b allot.Builder, queueMap map[string]string) (*Config, error) {
	c, err := newConfig(name, b, queueMap)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// newConfig is a configuration of b, without its workloads and history,
// checked as every configuration is.
func newConfig(name string, cluster allot.Builder, queueMap map[string]string) (*Config, error) {
	c := &Config{Name: name, Cluster: cluster, QueueMap: queueMap}
	b := &c.Cluster
	for _, part := range []struct {
		n         int
		one, many string
	}{
		{len(b.Running), "running workload", "running workloads"}, {len(b.Pending), "pending workload", "pending workloads"},
		{len(b.History.Usage) + len(b.History.Preemptions), "history entry", "history entries"},
	} {
		switch {
		case part.n == 1:
			c.Ignored = append(c.Ignored, "1 "+part.one)
		case part.n > 1:
			c.Ignored = append(c.Ignored, fmt.Sprintf("%d %s", part.n, part.many))
		}
	}
	// The history's half-life is configuration and stays; its entries go.
	b.Running, b.Pending, b.History, b.Now = nil, nil, allot.History{HalfLife: b.History.HalfLife}, 0
	if len(b.Queues) == 0 {
		return nil, errors.New("the configuration has no queues")
	}
	if len(b.Flavors) == 0 {
		return nil, errors.New("the configuration has no flavors")
	}
	if len(b.Nodes) == 0 && len(b.Flavors) > 1 {
		return nil, fmt.Errorf("%d flavors and no nodes: a configuration of several flavors lists its nodes", len(b.Flavors))
	}
	keys := make([]string, 0, len(c.QueueMap))
	for k := range c.QueueMap {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if q := c.QueueMap[k]; !slices.ContainsFunc(b.Queues, func(aq allot.Queue) bool { return aq.Name == q }) {
			return nil, fmt.Errorf("queueMap[%q]: %q is not a queue of the configuration", k, q)
		}
	}
	return c, nil
}

// Assign maps each of the trace's queues to one of the configuration's by
// the rules of Config, and returns the mapping.
func (c *Config) Assign(traceQueues []string) map[string]string {
	names := make([]string, len(c.Cluster.Queues))
	for i, q := range c.Cluster.Queues {
		names[i] = q.Name
	}
	sorted := slices.Clone(traceQueues)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	out := make(map[string]string, len(sorted))
	next := 0
	for _, tq := range sorted {
		switch q, ok := c.QueueMap[tq]; {
		case ok:
			out[tq] = q
		case slices.Contains(names, tq):
			out[tq] = tq
		case c.QueueMap["*"] != "":
			out[tq] = c.QueueMap["*"]
		default:
			out[tq] = names[next%len(names)]
			next++
		}
	}
	return out
}
