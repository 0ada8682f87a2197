// Writing a snapshot's description as a scenario file: the way a
// production state is saved, to be replayed with allot check or allot
// decide.

package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/allot-sched/allot/quantity"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/labels"
)

// Marshal writes the description b (a Builder, as allot.Snapshot.Builder
// gives one) as a scenario file named name, with req as its request when
// req is not nil: Parse reads it back to a description that builds the same
// snapshot, and marshalling that gives the same bytes. Quantities are
// written in the format's notation (cpu in cores, or millicores as "500m";
// every other resource in base units), Kueue's MayStopSearch as the
// format's Borrow or Preempt, lists in the order b gives them and maps
// sorted by key. A file without a request or steps passes allot check when
// it builds; with a request, allot decide prints its decision.
//
// A description the format cannot hold is an error: a time before zero or
// a workload's time after now, a negative count or quantity, a resource b
// does not declare, a value JSON cannot write.
func Marshal(name string, b allot.Builder, req *allot.Request) ([]byte, error) {
	w := writer{resources: b.Resources}
	if len(w.resources) == 0 {
		w.resources = defaultResources
	}
	f := file{Name: name, Now: b.Now, Version: b.Version, Resources: w.resources, Ignored: b.IgnoredResources, Flavors: b.Flavors,
		History: w.history(b.History), Options: options(b.Options), FairSharing: fairSharing(b.FairSharing)}
	if b.GPUResource != "" && b.GPUResource != allot.DefaultGPUResource {
		f.GPUResource = b.GPUResource
	}
	f.GPUShare = b.GPUShareResource
	if len(b.Levels) > 0 {
		f.Topology = &topologyLevels{Levels: b.Levels}
	}
	for _, n := range b.Nodes {
		f.Nodes = append(f.Nodes, w.node(n))
	}
	for _, c := range b.Cohorts {
		f.Cohorts = append(f.Cohorts, cohortOut{Name: c.Name, Parent: c.Parent, Quota: w.quota(c.Quota), FairSharing: weight(c.FairSharing)})
	}
	f.Namespaces, f.PriorityClasses, f.LocalQueues = b.Namespaces, b.PriorityClasses, b.LocalQueues
	for _, q := range b.Queues {
		f.Queues = append(f.Queues, w.queue(q))
	}
	for _, r := range b.Running {
		f.Running = append(f.Running, w.workload(r, running))
	}
	for _, p := range b.Pending {
		f.Pending = append(f.Pending, w.workload(p, pending))
	}
	if req != nil {
		r := w.workload(allot.Workload(*req), request)
		f.Request = &r
	}
	if err := w.check(b); err != nil {
		return nil, fmt.Errorf("scenario: %s: %w", name, err)
	}
	if w.err != nil {
		return nil, fmt.Errorf("scenario: %s: %w", name, w.err)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("scenario: %s: %w", name, err)
	}
	return out.Bytes(), nil
}

// The file's parts, in the order SCENARIOS.md lists them; every field
// that is its zero value is left out, as Parse reads it back.
type (
	file struct {
		Name        string          `json:"name,omitempty"`
		Now         int64           `json:"now,omitempty"`
		Version     uint64          `json:"version,omitempty"`
		Resources   []string        `json:"resources"`
		GPUResource string          `json:"gpuResource,omitempty"`
		GPUShare    string          `json:"gpuShareResource,omitempty"`
		Ignored     []string        `json:"ignoredResources,omitempty"`
		Topology    *topologyLevels `json:"topology,omitempty"`
		Flavors     []allot.Flavor  `json:"flavors,omitempty"`
		Nodes       []nodeOut       `json:"nodes,omitempty"`
		Cohorts     []cohortOut     `json:"cohorts,omitempty"`
		Queues      []queueOut      `json:"queues,omitempty"`
		Running     []workloadOut   `json:"running,omitempty"`
		Pending     []workloadOut   `json:"pending,omitempty"`
		History     *historyOut     `json:"history,omitempty"`
		Options     *optionsOut     `json:"options,omitempty"`
		FairSharing *fairSharingOut `json:"fairSharing,omitempty"`
		Request     *workloadOut    `json:"request,omitempty"`

		// Who may submit where, at which priority.
		Namespaces      []allot.Namespace     `json:"namespaces,omitempty"`
		LocalQueues     []allot.LocalQueue    `json:"localQueues,omitempty"`
		PriorityClasses []allot.PriorityClass `json:"priorityClasses,omitempty"`
	}
	topologyLevels struct {
		Levels []string `json:"levels"`
	}
	nodeOut struct {
		Name          string            `json:"name"`
		Flavor        string            `json:"flavor,omitempty"`
		Labels        map[string]string `json:"labels,omitempty"`
		Taints        []allot.Taint     `json:"taints,omitempty"`
		Capacity      quantities        `json:"capacity,omitzero"`
		GPUGroups     []int             `json:"gpuGroups,omitempty"`
		ShareableGPUs []int             `json:"shareableGpus,omitempty"`
		MIG           []migOut          `json:"mig,omitempty"`
		MaxPods       int32             `json:"maxPods,omitempty"`
		CooldownUntil int64             `json:"cooldownUntil,omitempty"`
		Unschedulable bool              `json:"unschedulable,omitempty"`
		Down          bool              `json:"down,omitempty"`
	}
	migOut struct {
		GPU      int        `json:"gpuIndex"`
		Profiles quantities `json:"profiles"`
	}
	cohortOut struct {
		Name        string         `json:"name"`
		Parent      string         `json:"parent,omitempty"`
		Quota       quotaOut       `json:"quota,omitempty"`
		FairSharing *fairSharingOf `json:"fairSharing,omitempty"`
	}
	fairSharingOf struct {
		Weight *float64 `json:"weight,omitempty"`
	}
	// quotaOut is flavor → resource → limits.
	quotaOut    map[string]map[string]resourceOut
	resourceOut struct {
		Nominal        amount  `json:"nominal"`
		BorrowingLimit *amount `json:"borrowingLimit,omitempty"`
		LendingLimit   *amount `json:"lendingLimit,omitempty"`
		Hard           *amount `json:"hard,omitempty"`
		Soft           *amount `json:"soft,omitempty"`
	}
	queueOut struct {
		Name              string          `json:"name"`
		Cohort            string          `json:"cohort,omitempty"`
		Quota             quotaOut        `json:"quota,omitempty"`
		FlavorOrder       []string        `json:"flavorOrder,omitempty"`
		FlavorFungibility *fungibilityOut `json:"flavorFungibility,omitempty"`
		Preemption        *preemptionOut  `json:"preemption,omitempty"`
		FairSharing       *fairSharingOf  `json:"fairSharing,omitempty"`
		Tenants           []string        `json:"tenants,omitempty"`
		QueueingStrategy  string          `json:"queueingStrategy,omitempty"`
		Hold              bool            `json:"hold,omitempty"`
		UserCap           quantities      `json:"userCap,omitzero"`
		NonPreemptibleCap quantities      `json:"nonPreemptibleCap,omitzero"`
		Windows           []allot.Window  `json:"windows,omitempty"`
		SLATier           *allot.SLATier  `json:"slaTier,omitempty"`
		// NamespaceSelector and PriorityClasses: see allot.Namespace and
		// allot.PriorityClass.
		NamespaceSelector *labels.Selector `json:"namespaceSelector,omitempty"`
		PriorityClasses   []string         `json:"priorityClasses,omitempty"`
	}
	fungibilityOut struct {
		WhenCanBorrow  string `json:"whenCanBorrow,omitempty"`
		WhenCanPreempt string `json:"whenCanPreempt,omitempty"`
	}
	preemptionOut struct {
		WithinQueue         string        `json:"withinQueue,omitempty"`
		ReclaimWithinCohort string        `json:"reclaimWithinCohort,omitempty"`
		BorrowWithinCohort  *borrowWithin `json:"borrowWithinCohort,omitempty"`
	}
	borrowWithin struct {
		Policy               string `json:"policy,omitempty"`
		MaxPriorityThreshold *int32 `json:"maxPriorityThreshold,omitempty"`
	}
	workloadOut struct {
		ID              string         `json:"id,omitempty"`
		Queue           string         `json:"queue,omitempty"`
		Tenant          string         `json:"tenant,omitempty"`
		User            string         `json:"user,omitempty"`
		Priority        int32          `json:"priority,omitempty"`
		SubmittedAt     int64          `json:"submittedAt,omitempty"`
		AdmittedAt      int64          `json:"admittedAt,omitempty"`
		ExpectedRuntime int64          `json:"expectedRuntime,omitempty"`
		Preemption      *preemptionSet `json:"preemption,omitempty"`
		PodSets         []podSetOut    `json:"podSets"`
		Borrowing       bool           `json:"borrowing,omitempty"`
		LocalQueue      string         `json:"localQueue,omitempty"`
		PriorityClass   string         `json:"priorityClass,omitempty"`
	}
	preemptionSet struct {
		Class            allot.PreemptionClass `json:"class,omitzero"`
		LastCheckpointAt int64                 `json:"lastCheckpointAt,omitempty"`
	}
	podSetOut struct {
		Name        string             `json:"name"`
		Count       int32              `json:"count"`
		MinCount    int32              `json:"minCount,omitempty"`
		PerPod      quantities         `json:"perPod,omitzero"`
		Flavors     []string           `json:"flavors,omitempty"`
		Tolerations []allot.Toleration `json:"tolerations,omitempty"`
		Tokens      *allot.Tokens      `json:"tokens,omitempty"`
		Topology    *topologyOut       `json:"topology,omitempty"`
		Flavor      string             `json:"flavor,omitempty"`
		Nodes       []string           `json:"nodes,omitempty"`
		GPUIndices  [][]int            `json:"gpuIndices,omitempty"`
	}
	topologyOut struct {
		Required  string                `json:"required,omitempty"`
		Preferred string                `json:"preferred,omitempty"`
		Policy    allot.PlacementPolicy `json:"policy,omitzero"`
		Slices    []allot.Slice         `json:"slices,omitempty"`
		Group     string                `json:"group,omitempty"`
	}
	historyOut struct {
		Usage       map[string]quantities `json:"usage,omitempty"`
		Preemptions map[string]float64    `json:"preemptions,omitempty"`
		HalfLife    int64                 `json:"halfLife,omitempty"`
	}
	optionsOut struct {
		Backfill      *bool  `json:"backfill,omitempty"`
		BackfillDepth int    `json:"backfillDepth,omitempty"`
		BackfillHolds string `json:"backfillHolds,omitempty"`
		OrderByDebt   bool   `json:"orderByDebt,omitempty"`
		OrderByUsage  bool   `json:"orderByUsage,omitempty"`
		QueueDepth    int    `json:"queueDepth,omitempty"`
		TopologyAware *bool  `json:"topologyAware,omitempty"`
		Semantics     string `json:"semantics,omitempty"`
	}
	fairSharingOut struct {
		Enabled              bool     `json:"enabled,omitempty"`
		PreemptionStrategies []string `json:"preemptionStrategies,omitempty"`
	}
)

// amount is an amount of a resource in base units, written in the
// format's notation for that resource.
type amount struct {
	resource string
	v        int64
}

// MarshalJSON writes a resource counted in units of its own (gpu,
// extended resources) as a number, and cpu, memory and storage as the
// Kubernetes quantity package quantity writes ("1500m", "16Gi").
func (q amount) MarshalJSON() ([]byte, error) {
	if !quantity.Scaled(q.resource) {
		return strconv.AppendInt(nil, q.v, 10), nil
	}
	return strconv.AppendQuote(nil, quantity.FormatBase(q.resource, q.v)), nil
}

// quantities is a resource map in the format's notation.
type quantities map[string]amount

// writer turns a description into the file's parts, keeping the first
// problem it meets.
type writer struct {
	resources []string
	err       error
}

func (w *writer) failf(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}

func (w *writer) quantities(m allot.Resources, where string) quantities {
	if m == nil {
		return nil
	}
	out := make(quantities, len(m))
	for name, v := range m {
		if v < 0 {
			w.failf("%s.%s: negative quantity %d", where, name, v)
		}
		out[name] = amount{name, v}
	}
	return out
}

func (w *writer) optQuantity(v *int64, resource string) *amount {
	if v == nil {
		return nil
	}
	return &amount{resource, *v}
}

func (w *writer) node(n allot.Node) nodeOut {
	out := nodeOut{Name: n.Name, Flavor: n.Flavor, Labels: n.Labels, Taints: n.Taints, Capacity: w.quantities(n.Capacity, "node "+n.Name+" capacity"),
		GPUGroups: n.GPUGroups, MaxPods: n.MaxPods, CooldownUntil: n.CooldownUntil, Unschedulable: n.Unschedulable, Down: n.Down}
	if n.ShareableGPUs != 0 {
		out.ShareableGPUs = n.ShareableGPUs.Indices()
	}
	for _, m := range n.MIG {
		out.MIG = append(out.MIG, migOut{GPU: m.GPU, Profiles: w.quantities(m.Profiles, "node "+n.Name+" mig")})
	}
	return out
}

func (w *writer) quota(fqs []allot.FlavorQuota) quotaOut {
	if len(fqs) == 0 {
		return nil
	}
	out := quotaOut{}
	for _, fq := range fqs {
		rs := map[string]resourceOut{}
		for _, r := range fq.Resources {
			rs[r.Name] = resourceOut{Nominal: amount{r.Name, r.Nominal}, BorrowingLimit: w.optQuantity(r.BorrowingLimit, r.Name),
				LendingLimit: w.optQuantity(r.LendingLimit, r.Name), Hard: w.optQuantity(r.Hard, r.Name), Soft: w.optQuantity(r.Soft, r.Name)}
		}
		out[fq.Flavor] = rs
	}
	return out
}

func weight(fs *allot.QueueFairSharing) *fairSharingOf {
	if fs == nil {
		return nil
	}
	return &fairSharingOf{Weight: fs.Weight}
}

// mayStop is Kueue's name for Borrow and Preempt, which allot takes too.
const mayStop = "MayStopSearch"

func (w *writer) queue(q allot.Queue) queueOut {
	out := queueOut{Name: q.Name, Cohort: q.Cohort, Quota: w.quota(q.Quota), FlavorOrder: q.FlavorOrder, FairSharing: weight(q.FairSharing),
		Tenants: q.Tenants, QueueingStrategy: q.QueueingStrategy, Hold: q.Hold,
		UserCap: w.quantities(q.UserCap, "queue "+q.Name+" userCap"), NonPreemptibleCap: w.quantities(q.NonPreemptibleCap, "queue "+q.Name+" nonPreemptibleCap"),
		Windows: q.Windows, SLATier: q.SLATier, NamespaceSelector: q.NamespaceSelector, PriorityClasses: q.PriorityClasses}
	if ff := q.FlavorFungibility; ff != (allot.FlavorFungibility{}) {
		f := fungibilityOut(ff)
		if f.WhenCanBorrow == mayStop {
			f.WhenCanBorrow = "Borrow"
		}
		if f.WhenCanPreempt == mayStop {
			f.WhenCanPreempt = "Preempt"
		}
		out.FlavorFungibility = &f
	}
	if p := q.Preemption; p.WithinQueue != "" || p.ReclaimWithinCohort != "" || p.BorrowWithinCohort != (allot.BorrowWithinCohort{}) {
		out.Preemption = &preemptionOut{WithinQueue: p.WithinQueue, ReclaimWithinCohort: p.ReclaimWithinCohort}
		if bw := p.BorrowWithinCohort; bw != (allot.BorrowWithinCohort{}) {
			out.Preemption.BorrowWithinCohort = &borrowWithin{Policy: bw.Policy, MaxPriorityThreshold: bw.MaxPriorityThreshold}
		}
	}
	return out
}

func (w *writer) workload(x allot.Workload, kind workloadKind) workloadOut {
	out := workloadOut{ID: x.ID, Queue: x.Queue, Tenant: x.Tenant, User: x.User, Priority: x.Priority, SubmittedAt: x.SubmittedAt,
		AdmittedAt: x.AdmittedAt, ExpectedRuntime: x.ExpectedRuntime, Borrowing: x.Borrowing, PodSets: []podSetOut{},
		LocalQueue: x.LocalQueue, PriorityClass: x.PriorityClass}
	if x.Preemption != (allot.PreemptionSpec{}) {
		p := preemptionSet(x.Preemption)
		out.Preemption = &p
	}
	for _, ps := range x.PodSets {
		o := podSetOut{Name: ps.Name, Count: ps.Count, MinCount: ps.MinCount, PerPod: w.quantities(ps.PerPod, "workload "+x.ID+" perPod"), Flavors: ps.Flavors,
			Tolerations: ps.Tolerations, Tokens: ps.Tokens, Flavor: ps.Flavor, Nodes: ps.Nodes, GPUIndices: ps.GPUIndices}
		if t := ps.Topology; t.Required != "" || t.Preferred != "" || t.Policy != 0 || len(t.Slices) > 0 || t.Group != "" {
			o.Topology = &topologyOut{Required: t.Required, Preferred: t.Preferred, Policy: t.Policy, Slices: t.Slices, Group: t.Group}
		}
		if kind == running && ps.Flavor == "" {
			w.failf("running workload %q: pod set %q has no flavor", x.ID, ps.Name)
		}
		out.PodSets = append(out.PodSets, o)
	}
	return out
}

func (w *writer) history(h allot.History) *historyOut {
	if len(h.Usage) == 0 && len(h.Preemptions) == 0 && h.HalfLife == 0 {
		return nil
	}
	out := &historyOut{Preemptions: h.Preemptions, HalfLife: h.HalfLife}
	for q, m := range h.Usage {
		if out.Usage == nil {
			out.Usage = map[string]quantities{}
		}
		out.Usage[q] = w.quantities(m, "history usage "+q)
	}
	return out
}

func options(o allot.Options) *optionsOut {
	if o == (allot.Options{}) {
		return nil
	}
	return &optionsOut{Backfill: o.Backfill, BackfillDepth: o.BackfillDepth, BackfillHolds: o.BackfillHolds, OrderByDebt: o.OrderByDebt, OrderByUsage: o.OrderByUsage,
		QueueDepth: o.QueueDepth, TopologyAware: o.TopologyAware, Semantics: o.Semantics}
}

func fairSharing(f allot.FairSharing) *fairSharingOut {
	if !f.Enabled && len(f.PreemptionStrategies) == 0 {
		return nil
	}
	return &fairSharingOut{Enabled: f.Enabled, PreemptionStrategies: f.PreemptionStrategies}
}

// check refuses what the format cannot hold: times before zero, a
// workload's time after now, resources b neither declares nor ignores.
func (w *writer) check(b allot.Builder) error {
	if b.Now < 0 {
		return fmt.Errorf("now %d is before zero", b.Now)
	}
	declared := func(m allot.Resources, where string) error {
		for name := range m {
			if !slices.Contains(w.resources, name) && !slices.Contains(b.IgnoredResources, name) {
				return fmt.Errorf("%s: resource %q is not declared", where, name)
			}
		}
		return nil
	}
	for _, n := range b.Nodes {
		if err := declared(n.Capacity, "node "+n.Name); err != nil {
			return err
		}
		if n.CooldownUntil < 0 {
			return fmt.Errorf("node %q: cooldownUntil %d is before zero", n.Name, n.CooldownUntil)
		}
	}
	for _, list := range [][]allot.Workload{b.Running, b.Pending} {
		for _, x := range list {
			for _, t := range []struct {
				name string
				v    int64
			}{{"submittedAt", x.SubmittedAt}, {"admittedAt", x.AdmittedAt}, {"preemption.lastCheckpointAt", x.Preemption.LastCheckpointAt}} {
				if t.v < 0 || t.v > b.Now {
					return fmt.Errorf("workload %q: %s %d is not within [0, now %d]", x.ID, t.name, t.v, b.Now)
				}
			}
			for _, ps := range x.PodSets {
				if err := declared(ps.PerPod, "workload "+x.ID); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// StateAfter replays the scenario's first n steps (all of them for n < 0)
// as Run does, decide steps committing where they say commit, and returns
// the snapshot they leave and the request to decide on it: the next decide
// step's, or the file's own request when it has one; nil when neither
// follows. Marshal of its Builder with that request is the scenario as one
// state, what allot export writes.
func (s *Scenario) StateAfter(n int) (*allot.Snapshot, *allot.Request, error) {
	if n < 0 || n > len(s.Steps) {
		n = len(s.Steps)
	}
	snap, err := s.replay(n, nil)
	if err != nil {
		return nil, nil, err
	}
	req := s.Request
	for _, st := range s.Steps[n:] {
		if st.Kind == StepDecide {
			r := st.Request
			req = &r
			break
		}
	}
	return snap, req, nil
}

// replay builds the snapshot and replays the first n steps on a store, as
// Run does without checking expectations: decide steps commit where they
// say commit, drains run the loop, events apply. Before each decide step
// is decided, see (when not nil) looks at its request on the snapshot of
// the moment, and an error it returns ends the replay. It returns the
// snapshot the steps leave; an error is an *Error naming the file and the
// JSON path.
func (s *Scenario) replay(n int, see func(i int, st Step, cur *allot.Snapshot) error) (*allot.Snapshot, error) {
	snap, err := s.Build()
	if err != nil {
		return nil, err
	}
	store := allot.NewStore(snap)
	for i, st := range s.Steps[:n] {
		switch st.Kind {
		case StepDecide:
			if see != nil {
				if err := see(i, st, store.Load()); err != nil {
					return nil, err
				}
			}
			d := allot.Decide(store.Load(), st.Request)
			if st.Commit && (d.Verdict == allot.VerdictAdmit || d.Verdict == allot.VerdictPreempt) {
				if _, err := store.Commit(d); err != nil {
					return nil, &Error{File: s.File, Path: fmt.Sprintf("$.steps[%d].commit", i), Reason: trimAllot(err.Error()), Err: err}
				}
			}
		case StepDrain:
			allot.Schedule(store)
		case StepExpectState:
		default:
			ev, _ := st.Event()
			if _, err := store.Apply(ev); err != nil {
				return nil, s.stepError(i, st, err)
			}
		}
	}
	return store.Load(), nil
}
