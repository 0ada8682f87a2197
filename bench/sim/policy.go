package sim

import (
	"encoding/json"
	"fmt"
	"os"
)

// Policy is one configuration of allot's machinery; the simulator compares
// policies side by side on the same workload and cluster.
type Policy struct {
	Name string `json:"name"`
	// Strict makes every queue StrictFIFO: a waiting head holds back the
	// rest of its queue.
	Strict bool `json:"strict,omitempty"`
	// Borrowing puts every queue in one cohort, so idle quota can be
	// borrowed; without it quotas are rigid.
	Borrowing bool `json:"borrowing,omitempty"`
	// Preemption lets a queue preempt lower priorities within itself and
	// reclaim its lent quota from borrowers.
	Preemption bool `json:"preemption,omitempty"`
	// Backfill keeps EASY reservations for blocked workloads.
	Backfill bool `json:"backfill,omitempty"`
	// TopologyAware admits a workload only where its pods fit on nodes.
	// Without it admission checks quota alone and the pods are bound to
	// nodes afterwards, first fit: a workload whose pods find no nodes
	// waits while holding its quota (Kueue without topology-aware
	// scheduling).
	TopologyAware bool `json:"topologyAware,omitempty"`
	// FairSharing orders admissions and preemptions by dominant share.
	FairSharing bool `json:"fairSharing,omitempty"`
	// Topology asks multi-pod jobs to prefer one domain of this level
	// (empty: no preference; a level the cluster lacks is none either).
	Topology string `json:"topology,omitempty"`
	// AsConfigured runs a configuration (Options.Config) as written, its
	// options, fair sharing and queues' strategies and preemption
	// included: the other switches, which otherwise overlay it, are not
	// read.
	AsConfigured bool `json:"asConfigured,omitempty"`
}

// ConfigPolicy is the built-in policy that runs a configuration as
// written.
var ConfigPolicy = Policy{Name: "config", AsConfigured: true}

// Policies are the four built-in policies, in report order.
func Policies() []Policy {
	return []Policy{
		{Name: "fifo", Strict: true, TopologyAware: true},
		{Name: "kueue", Borrowing: true, Preemption: true},
		{Name: "slurm", Backfill: true, TopologyAware: true},
		{Name: "allot", Borrowing: true, Preemption: true, Backfill: true, TopologyAware: true, FairSharing: true, Topology: "rack"},
	}
}

// PolicyByName finds a built-in policy.
func PolicyByName(name string) (Policy, bool) {
	if name == ConfigPolicy.Name {
		return ConfigPolicy, true
	}
	for _, p := range Policies() {
		if p.Name == name {
			return p, true
		}
	}
	return Policy{}, false
}

// LoadPolicy reads a policy from a JSON file with Policy's fields; unknown
// fields are an error.
func LoadPolicy(path string) (Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		return Policy{}, err
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	var p Policy
	if err := dec.Decode(&p); err != nil {
		return Policy{}, fmt.Errorf("%s: %w", path, err)
	}
	if p.Name == "" {
		return Policy{}, fmt.Errorf("%s: the policy needs a name", path)
	}
	return p, nil
}
