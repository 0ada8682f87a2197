// Package scenariofile writes an allot description as a scenario file, the
// format the core's bench/scenario package reads and allot check runs.
//
// It has the signature of the core's own writer-to-be (scenario.Marshal)
// so that the kube module can move to it once the core has one that
// writes every field an imported configuration sets (gpuResource,
// ignoredResources and options.semantics among them).
package scenariofile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/quantity"
)

// Marshal writes the description b as a scenario file named name, with
// req as its request when req is not nil. Quantities are written as
// Kubernetes writes them (cpu "500m" or cores, memory "16Gi"), GPUs and
// other counted resources as numbers; Kueue's MayStopSearch as the
// format's Borrow (whenCanBorrow) or Preempt (whenCanPreempt). Lists keep
// b's order; maps are written sorted by key. A resource b neither declares
// nor ignores is an error, and so is a fairness history, a version or an
// option other than backfill, topologyAware and semantics, which an
// imported configuration never sets.
func Marshal(name string, b allot.Builder, req *allot.Request) ([]byte, error) {
	w := writer{b: &b}
	if len(b.History.Usage) > 0 || len(b.History.Preemptions) > 0 || b.History.HalfLife != 0 ||
		b.Options.BackfillDepth != 0 || b.Options.OrderByDebt || b.Options.OrderByUsage || b.Options.QueueDepth != 0 || b.Version != 0 {
		return nil, fmt.Errorf("scenariofile: %s: history, version and options other than backfill, topologyAware and semantics are not written", name)
	}
	f := file{Name: name, Now: b.Now, Resources: b.Resources, GPUResource: b.GPUResource, IgnoredResources: b.IgnoredResources,
		Flavors: b.Flavors, Options: options(b.Options)}
	if len(b.Levels) > 0 {
		f.Topology = &topology{Levels: b.Levels}
	}
	if fs := b.FairSharing; fs.Enabled || len(fs.PreemptionStrategies) > 0 {
		f.FairSharing = &fs
	}
	for _, n := range b.Nodes {
		f.Nodes = append(f.Nodes, node{Name: n.Name, Flavor: n.Flavor, Labels: n.Labels, Capacity: w.quantities(n.Capacity, "node "+n.Name),
			GPUGroups: n.GPUGroups, MaxPods: n.MaxPods, CooldownUntil: n.CooldownUntil, Unschedulable: n.Unschedulable})
		if n.Down {
			// The format has no down node: a node down is one that
			// takes no pods, which unschedulable says.
			f.Nodes[len(f.Nodes)-1].Unschedulable = true
		}
	}
	for _, c := range b.Cohorts {
		f.Cohorts = append(f.Cohorts, cohort{Name: c.Name, Parent: c.Parent, Quota: w.quota(c.Quota), FairSharing: c.FairSharing})
	}
	for _, q := range b.Queues {
		f.Queues = append(f.Queues, w.queue(q))
	}
	for _, r := range b.Running {
		f.Running = append(f.Running, w.workload(r, true))
	}
	for _, p := range b.Pending {
		f.Pending = append(f.Pending, w.workload(p, false))
	}
	if req != nil {
		r := w.workload(allot.Workload(*req), false)
		f.Request = &r
	}
	if w.err != nil {
		return nil, fmt.Errorf("scenariofile: %s: %w", name, w.err)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("scenariofile: %s: %w", name, err)
	}
	return out.Bytes(), nil
}

type (
	file struct {
		Name             string             `json:"name,omitempty"`
		Now              int64              `json:"now,omitempty"`
		Resources        []string           `json:"resources,omitempty"`
		GPUResource      string             `json:"gpuResource,omitempty"`
		IgnoredResources []string           `json:"ignoredResources,omitempty"`
		Topology         *topology          `json:"topology,omitempty"`
		Flavors          []allot.Flavor     `json:"flavors,omitempty"`
		Nodes            []node             `json:"nodes,omitempty"`
		Cohorts          []cohort           `json:"cohorts,omitempty"`
		Queues           []queue            `json:"queues,omitempty"`
		Running          []workload         `json:"running,omitempty"`
		Pending          []workload         `json:"pending,omitempty"`
		Options          *opts              `json:"options,omitempty"`
		FairSharing      *allot.FairSharing `json:"fairSharing,omitempty"`
		Request          *workload          `json:"request,omitempty"`
	}
	topology struct {
		Levels []string `json:"levels"`
	}
	node struct {
		Name          string            `json:"name"`
		Flavor        string            `json:"flavor"`
		Labels        map[string]string `json:"labels,omitempty"`
		Capacity      quantities        `json:"capacity"`
		GPUGroups     []int             `json:"gpuGroups,omitempty"`
		MaxPods       int32             `json:"maxPods,omitempty"`
		CooldownUntil int64             `json:"cooldownUntil,omitempty"`
		Unschedulable bool              `json:"unschedulable,omitempty"`
	}
	cohort struct {
		Name        string                  `json:"name"`
		Parent      string                  `json:"parent,omitempty"`
		Quota       quotas                  `json:"quota,omitempty"`
		FairSharing *allot.QueueFairSharing `json:"fairSharing,omitempty"`
	}
	quotas map[string]map[string]limits
	limits struct {
		Nominal        q  `json:"nominal"`
		BorrowingLimit *q `json:"borrowingLimit,omitempty"`
		LendingLimit   *q `json:"lendingLimit,omitempty"`
		Hard           *q `json:"hard,omitempty"`
		Soft           *q `json:"soft,omitempty"`
	}
	queue struct {
		Name              string                   `json:"name"`
		Cohort            string                   `json:"cohort,omitempty"`
		Quota             quotas                   `json:"quota,omitempty"`
		FlavorOrder       []string                 `json:"flavorOrder,omitempty"`
		FlavorFungibility *allot.FlavorFungibility `json:"flavorFungibility,omitempty"`
		Preemption        *preemption              `json:"preemption,omitempty"`
		FairSharing       *allot.QueueFairSharing  `json:"fairSharing,omitempty"`
		Tenants           []string                 `json:"tenants,omitempty"`
		QueueingStrategy  string                   `json:"queueingStrategy,omitempty"`
		Hold              bool                     `json:"hold,omitempty"`
		UserCap           quantities               `json:"userCap,omitempty"`
		NonPreemptibleCap quantities               `json:"nonPreemptibleCap,omitempty"`
		Windows           []allot.Window           `json:"windows,omitempty"`
		SLATier           *allot.SLATier           `json:"slaTier,omitempty"`
	}
	preemption struct {
		WithinQueue         string                    `json:"withinQueue,omitempty"`
		ReclaimWithinCohort string                    `json:"reclaimWithinCohort,omitempty"`
		BorrowWithinCohort  *allot.BorrowWithinCohort `json:"borrowWithinCohort,omitempty"`
	}
	workload struct {
		ID              string                `json:"id,omitempty"`
		Queue           string                `json:"queue,omitempty"`
		Tenant          string                `json:"tenant,omitempty"`
		User            string                `json:"user,omitempty"`
		Priority        int32                 `json:"priority,omitempty"`
		SubmittedAt     int64                 `json:"submittedAt,omitempty"`
		AdmittedAt      int64                 `json:"admittedAt,omitempty"`
		ExpectedRuntime int64                 `json:"expectedRuntime,omitempty"`
		Preemption      *allot.PreemptionSpec `json:"preemption,omitempty"`
		PodSets         []podSet              `json:"podSets"`
		Borrowing       bool                  `json:"borrowing,omitempty"`
	}
	podSet struct {
		Name       string                 `json:"name"`
		Count      int32                  `json:"count"`
		PerPod     quantities             `json:"perPod,omitempty"`
		Flavors    []string               `json:"flavors,omitempty"`
		Tokens     *allot.Tokens          `json:"tokens,omitempty"`
		Topology   *allot.TopologyRequest `json:"topology,omitempty"`
		Flavor     string                 `json:"flavor,omitempty"`
		Nodes      []string               `json:"nodes,omitempty"`
		GPUIndices [][]int                `json:"gpuIndices,omitempty"`
	}
	opts struct {
		Backfill      *bool  `json:"backfill,omitempty"`
		TopologyAware *bool  `json:"topologyAware,omitempty"`
		Semantics     string `json:"semantics,omitempty"`
	}
)

// q is a quantity of one resource, written as Kubernetes writes it for
// cpu, memory and storage, and as a number of base units for counted
// resources.
type q struct {
	resource string
	v        int64
}

func (x q) MarshalJSON() ([]byte, error) {
	if quantity.Scaled(x.resource) {
		return strconv.AppendQuote(nil, quantity.FormatBase(x.resource, x.v)), nil
	}
	return strconv.AppendInt(nil, x.v, 10), nil
}

type quantities map[string]q

type writer struct {
	b   *allot.Builder
	err error
}

func (w *writer) failf(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}

func (w *writer) known(name string) bool {
	for _, r := range w.b.Resources {
		if r == name {
			return true
		}
	}
	for _, r := range w.b.IgnoredResources {
		if r == name {
			return true
		}
	}
	return false
}

func (w *writer) quantities(m allot.Resources, where string) quantities {
	if m == nil {
		return nil
	}
	out := make(quantities, len(m))
	for name, v := range m {
		if !w.known(name) {
			w.failf("%s: resource %q is neither declared nor ignored", where, name)
		}
		if v < 0 {
			w.failf("%s: negative quantity %d of %s", where, v, name)
		}
		out[name] = q{name, v}
	}
	return out
}

func opt(name string, v *int64) *q {
	if v == nil {
		return nil
	}
	return &q{name, *v}
}

func (w *writer) quota(fqs []allot.FlavorQuota) quotas {
	if len(fqs) == 0 {
		return nil
	}
	out := quotas{}
	for _, fq := range fqs {
		rs := map[string]limits{}
		for _, r := range fq.Resources {
			rs[r.Name] = limits{Nominal: q{r.Name, r.Nominal}, BorrowingLimit: opt(r.Name, r.BorrowingLimit),
				LendingLimit: opt(r.Name, r.LendingLimit), Hard: opt(r.Name, r.Hard), Soft: opt(r.Name, r.Soft)}
		}
		out[fq.Flavor] = rs
	}
	return out
}

func (w *writer) queue(x allot.Queue) queue {
	out := queue{Name: x.Name, Cohort: x.Cohort, Quota: w.quota(x.Quota), FlavorOrder: x.FlavorOrder, FairSharing: x.FairSharing,
		Tenants: x.Tenants, QueueingStrategy: x.QueueingStrategy, Hold: x.Hold,
		UserCap: w.quantities(x.UserCap, "queue "+x.Name), NonPreemptibleCap: w.quantities(x.NonPreemptibleCap, "queue "+x.Name),
		Windows: x.Windows, SLATier: x.SLATier}
	if ff := x.FlavorFungibility; ff != (allot.FlavorFungibility{}) {
		if ff.WhenCanBorrow == "MayStopSearch" {
			ff.WhenCanBorrow = "Borrow"
		}
		if ff.WhenCanPreempt == "MayStopSearch" {
			ff.WhenCanPreempt = "Preempt"
		}
		out.FlavorFungibility = &ff
	}
	if p := x.Preemption; p.WithinQueue != "" || p.ReclaimWithinCohort != "" || p.BorrowWithinCohort != (allot.BorrowWithinCohort{}) {
		out.Preemption = &preemption{WithinQueue: p.WithinQueue, ReclaimWithinCohort: p.ReclaimWithinCohort}
		if bw := p.BorrowWithinCohort; bw != (allot.BorrowWithinCohort{}) {
			out.Preemption.BorrowWithinCohort = &bw
		}
	}
	return out
}

func (w *writer) workload(x allot.Workload, running bool) workload {
	out := workload{ID: x.ID, Queue: x.Queue, Tenant: x.Tenant, User: x.User, Priority: x.Priority, SubmittedAt: x.SubmittedAt,
		ExpectedRuntime: x.ExpectedRuntime, PodSets: []podSet{}}
	if running {
		out.AdmittedAt, out.Borrowing = x.AdmittedAt, x.Borrowing
	}
	if x.Preemption != (allot.PreemptionSpec{}) {
		p := x.Preemption
		out.Preemption = &p
	}
	for _, ps := range x.PodSets {
		o := podSet{Name: ps.Name, Count: ps.Count, PerPod: w.quantities(ps.PerPod, "workload "+x.ID), Flavors: ps.Flavors, Tokens: ps.Tokens}
		if t := ps.Topology; t.Required != "" || t.Preferred != "" || t.Policy != 0 || len(t.Slices) > 0 || t.Group != "" {
			o.Topology = &t
		}
		if running {
			o.Flavor, o.Nodes, o.GPUIndices = ps.Flavor, ps.Nodes, ps.GPUIndices
		}
		out.PodSets = append(out.PodSets, o)
	}
	return out
}

func options(o allot.Options) *opts {
	if o.Backfill == nil && o.TopologyAware == nil && o.Semantics == "" {
		return nil
	}
	return &opts{Backfill: o.Backfill, TopologyAware: o.TopologyAware, Semantics: o.Semantics}
}
