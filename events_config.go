// The events that change what a snapshot is described in: its flavors,
// topology levels and resources. They are rare configuration changes, so
// they take one general path: the snapshot's own description, edited as
// the event says and built as Build builds it, with what a description
// does not hold carried over.

package allot

import (
	"fmt"
	"slices"

	"github.com/allot-sched/allot/internal/view"
)

// AddFlavor adds a flavor, validated as Build validates a flavor; a known
// name is refused as Build refuses a flavor declared twice
// (ErrDuplicateID). It goes before the flavor Before names in the
// snapshot's order (the order queues try flavors in unless their
// FlavorOrder says otherwise), or last when Before is empty; an unknown
// Before is ErrUnknownFlavor.
//
// Nodes that name no flavor are selected anew, as Build selects them, so a
// node whose labels match the new flavor's NodeLabels better than its
// flavor's moves to it (refused, with Build's *BuildError naming the pod,
// while it runs a pod the new flavor's nodes could not hold there). A
// snapshot keeps only the node labels its flavors and levels name, so a
// flavor that selects by another label selects no node by it until the
// node is described with it: Nodes are nodes described anew with the
// flavor, as SetNode takes them (each a known node, ErrUnknownNode, named
// once), or SetNode after.
//
// Refused while two-phase preemptions are in flight (ErrInFlight).
//
// Cost: the snapshot is described and built anew, O(nodes + running +
// pending) as Build, the fairness history, evictions and audit carried
// over: on the fragmented benchmark cluster of 10,240 nodes and 4,100
// running workloads, about 45 ms, 22 MB and 97,000 allocations, and 0.6 s
// at 102,400 nodes (BenchmarkNodeChurn's add-remove-flavor-steady rows, a
// quota-only flavor added and removed in turn).
type AddFlavor struct {
	Flavor Flavor
	Before string
	Nodes  []Node
}

func (e AddFlavor) apply(s *Snapshot) error {
	at := len(s.flavors)
	if e.Before != "" {
		f, ok := s.flavorIdx[e.Before]
		if !ok {
			return fmt.Errorf("%w: %q to add %q before", ErrUnknownFlavor, e.Before, e.Flavor.Name)
		}
		at = int(f)
	}
	return s.redescribe(func(b *Builder) error {
		b.Flavors = slices.Insert(b.Flavors, at, e.Flavor)
		return describeNodes(b, e.Nodes)
	}, nil)
}

// RemoveFlavor removes a flavor. A flavor still in use is not removed:
// the event is refused with an *InUseError (errors.Is ErrInUse) listing
// the queues whose quota or flavor order names it, the cohorts whose quota
// does, the nodes that serve it, the admitted workloads with a pod set on
// it or allowing it (PodSet.Flavors) and the pending workloads with a pod
// set allowing it; change those first (SetQueue, SetCohort, SetNode or
// RemoveNode, Finish, Evict or Withdraw). An unknown flavor is
// ErrUnknownFlavor.
//
// Refused while two-phase preemptions are in flight (ErrInFlight).
//
// Cost: the flavor's use is found in O(queues + cohorts + flavor's nodes +
// running + pending), and the snapshot is then described and built anew,
// as AddFlavor's.
type RemoveFlavor struct{ Flavor string }

func (e RemoveFlavor) apply(s *Snapshot) error {
	f, ok := s.flavorIdx[e.Flavor]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownFlavor, e.Flavor)
	}
	if err := s.flavorInUse(f); err != nil {
		return err
	}
	return s.redescribe(func(b *Builder) error {
		b.Flavors = slices.Delete(b.Flavors, int(f), int(f)+1)
		return nil
	}, nil)
}

// flavorInUse is RemoveFlavor's refusal of flavor f while something uses
// it, nil when nothing does.
func (s *Snapshot) flavorInUse(f int32) error {
	name := s.flavors[f].Name
	in := &InUseError{Flavor: name}
	names := func(fqs []FlavorQuota) bool {
		return slices.ContainsFunc(fqs, func(fq FlavorQuota) bool { return fq.Flavor == name })
	}
	for i := range s.queues {
		if q := &s.queues[i]; names(q.Quota) || slices.Contains(q.FlavorOrder, name) {
			in.Queues = append(in.Queues, q.Name)
		}
	}
	for i := range s.cohorts {
		if names(s.cohorts[i].Quota) {
			in.Cohorts = append(in.Cohorts, s.cohorts[i].Name)
		}
	}
	tree := &s.topo.Flavors[f]
	for n := tree.First; n < tree.End; n++ {
		if !s.topo.Vacant(n) {
			in.Nodes = append(in.Nodes, s.topo.NodeName(n))
		}
	}
	allows := func(pss []PodSet) bool {
		return slices.ContainsFunc(pss, func(ps PodSet) bool { return slices.Contains(ps.Flavors, name) })
	}
	s.running.Scan(func(r *running) bool {
		if slices.ContainsFunc(r.Sets, func(set view.Set) bool { return set.Flavor == f }) || allows(r.w.PodSets) {
			in.Running = append(in.Running, r.ID)
		}
		return true
	})
	s.pending.Scan(func(w *Workload) bool {
		if allows(w.PodSets) {
			in.Pending = append(in.Pending, w.ID)
		}
		return true
	})
	if len(in.Queues)+len(in.Cohorts)+len(in.Nodes)+len(in.Running)+len(in.Pending) == 0 {
		return nil
	}
	slices.Sort(in.Queues)
	slices.Sort(in.Cohorts)
	slices.Sort(in.Nodes)
	return in
}

// SetLevels makes Levels the topology's levels, broad to narrow, validated
// as Build validates them (a *BuildError whose path starts with
// "topology.levels"): every node's domains are worked out anew from its
// labels, and a node without a label of a new level is refused as Build
// refuses it (ErrMissingLabel). A snapshot keeps only the node labels its
// levels and flavors name, so the nodes' labels for a new level come with
// the event: Nodes are nodes described anew with the levels, as SetNode
// takes them (each a known node, ErrUnknownNode, named once). The running
// pods stay on their nodes and GPUs. A pod set that asks for a level no
// longer declared is refused: a pending one's as Build refuses it, a
// running one's alike (ErrInvalid naming the pod set), since evicted it
// could not wait again.
//
// Refused while two-phase preemptions are in flight (ErrInFlight).
//
// Cost: the snapshot is described and built anew, as AddFlavor's.
type SetLevels struct {
	Levels []string
	Nodes  []Node
}

func (e SetLevels) apply(s *Snapshot) error {
	return s.redescribe(func(b *Builder) error {
		b.Levels = slices.Clone(e.Levels)
		return describeNodes(b, e.Nodes)
	}, runningLevels)
}

// runningLevels refuses levels that a running workload's pod set asks
// for and next no longer declares, as Build refuses a pending one's
// (validateTopology): evicted, it could wait no more.
func runningLevels(next *Snapshot, b *Builder) error {
	for i := range b.Running {
		w := &b.Running[i]
		for j := range w.PodSets {
			ps := &w.PodSets[j]
			if msg, field := next.validateTopology(&ps.Topology, ps.Count); msg != "" {
				return buildErr(ErrInvalid, fmt.Sprintf("running[%d].podSets[%d].%s", i, j, field), "workload %q pod set %q: %s", w.ID, ps.Name, msg)
			}
		}
	}
	return nil
}

// SetResources declares the snapshot's resources anew: Resources,
// GPUResource, GPUShareResource and IgnoredResources become the event's,
// with a Builder's meanings and defaults, validated as Build validates
// them. A resource still named where it is not declared — by a queue's or
// cohort's quota or caps, a node's capacity, a workload's pod sets — is
// refused with the *BuildError Build gives (ErrUnknownResource): change
// the quotas first, or ignore the resource (IgnoredResources), which drops
// it from nodes and pod sets where they are read. A resource newly
// declared is one nodes and pod sets did not carry (the snapshot dropped
// it as ignored): describe them anew after (SetNode, SetRunning). The
// fairness history is carried over while the resource it counts (the GPU,
// or else the first resource) keeps its name, and starts again from none
// otherwise; the fairness debt is carried over.
//
// Refused while two-phase preemptions are in flight (ErrInFlight).
//
// Cost: the snapshot is described and built anew, as AddFlavor's.
type SetResources struct {
	Resources        []string
	GPUResource      string
	GPUShareResource string
	IgnoredResources []string
}

func (e SetResources) apply(s *Snapshot) error {
	return s.redescribe(func(b *Builder) error {
		b.Resources, b.GPUResource = slices.Clone(e.Resources), e.GPUResource
		b.GPUShareResource, b.IgnoredResources = e.GPUShareResource, slices.Clone(e.IgnoredResources)
		return nil
	}, nil)
}

// describeNodes replaces the nodes of b that nodes describe anew, each
// named once and known, as SetNode takes them.
func describeNodes(b *Builder, nodes []Node) error {
	if len(nodes) == 0 {
		return nil
	}
	at := make(map[string]int, len(b.Nodes))
	for i := range b.Nodes {
		at[b.Nodes[i].Name] = i
	}
	for i := range nodes {
		name := nodes[i].Name
		j, ok := at[name]
		switch {
		case !ok:
			return fmt.Errorf("%w: %q", ErrUnknownNode, name)
		case slices.ContainsFunc(nodes[:i], func(n Node) bool { return n.Name == name }):
			return checkNodeName(name, fmt.Sprintf("nodes[%d]", i), true)
		}
		b.Nodes[j] = nodes[i]
	}
	return nil
}

// redescribe is the configuration events' one path: s described as a
// Builder (Snapshot.Builder), edited by edit, built as Build builds it,
// checked by check (when not nil) for what Build does not refuse but the
// event does, and made s, a store's master, in place of the old. What a description
// does not hold is carried over: the version, the evictions the store
// keeps and where the audit records of the change are staged; and what it
// holds rounded, the fairness debt and historical usage, exactly (the
// queues are the same), the historical usage only while the resource it
// counts keeps its name (none otherwise). Refused while two-phase preemptions are in
// flight, which a description does not hold either (ErrInFlight); on an
// error s is unchanged.
//
// Cost: what describing s costs (a map or two a node) and what Build
// costs, O(nodes + running + pending).
func (s *Snapshot) redescribe(edit func(b *Builder) error, check func(next *Snapshot, b *Builder) error) error {
	if s.inflight != nil {
		return fmt.Errorf("%w: %d preemptors hold their room and %d victims evict: let them settle (Terminated, Withdraw)",
			ErrInFlight, len(s.inflight.holds), len(s.inflight.evicting))
	}
	b := s.Builder()
	// The historical usage is carried over below, exactly; the
	// description's is rounded, and counts a resource the edit may take.
	b.History.Usage = nil
	if err := edit(&b); err != nil {
		return err
	}
	next, err := b.Build()
	if err != nil {
		return err
	}
	if check != nil {
		if err := check(next, &b); err != nil {
			return err
		}
	}
	m := next.masterCopy()
	m.own(rowDebt | rowUsed)
	copy(m.debt, s.debt)
	if m.resources[m.historyResource()] == s.resources[s.historyResource()] {
		copy(m.used, s.used)
	}
	m.evictions, m.evictionCap, m.evictionsDropped = s.evictions, s.evictionCap, s.evictionsDropped
	m.staged = s.staged
	*s = *m
	return nil
}
