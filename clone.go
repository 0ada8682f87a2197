// Deep copies of the API's types: versions share what a snapshot holds, so
// what goes in (Build, the events) and what comes out (the accessors) is
// copied down to every map, slice and pointer.

package allot

import (
	"maps"
	"slices"
)

// clone copies a workload.
func (w *Workload) clone() Workload {
	c := *w
	c.PodSets = clonePodSets(w.PodSets)
	return c
}

func clonePodSets(sets []PodSet) []PodSet {
	out := slices.Clone(sets)
	for i := range out {
		ps := &out[i]
		ps.PerPod = maps.Clone(ps.PerPod)
		ps.Flavors = slices.Clone(ps.Flavors)
		ps.Tokens = clonePtr(ps.Tokens)
		ps.Topology.Slices = slices.Clone(ps.Topology.Slices)
		ps.Nodes = slices.Clone(ps.Nodes)
		ps.GPUIndices = slices.Clone(ps.GPUIndices)
		for k := range ps.GPUIndices {
			ps.GPUIndices[k] = slices.Clone(ps.GPUIndices[k])
		}
	}
	return out
}

func cloneQueue(q Queue) Queue {
	q.Quota = cloneFlavorQuotas(q.Quota)
	q.FlavorOrder = slices.Clone(q.FlavorOrder)
	bw := &q.Preemption.BorrowWithinCohort
	bw.MaxPriorityThreshold = clonePtr(bw.MaxPriorityThreshold)
	if q.FairSharing != nil {
		fs := *q.FairSharing
		fs.Weight = clonePtr(fs.Weight)
		q.FairSharing = &fs
	}
	q.Tenants = slices.Clone(q.Tenants)
	q.NamespaceSelector = q.NamespaceSelector.Clone()
	q.PriorityClasses = slices.Clone(q.PriorityClasses)
	q.UserCap = maps.Clone(q.UserCap)
	q.NonPreemptibleCap = maps.Clone(q.NonPreemptibleCap)
	q.Windows = slices.Clone(q.Windows)
	q.SLATier = clonePtr(q.SLATier)
	return q
}

// cloneFlavorQuotas copies quota given per flavor, its limits included.
func cloneFlavorQuotas(fqs []FlavorQuota) []FlavorQuota {
	fqs = slices.Clone(fqs)
	for i := range fqs {
		rs := slices.Clone(fqs[i].Resources)
		for k := range rs {
			r := &rs[k]
			r.BorrowingLimit, r.LendingLimit = clonePtr(r.BorrowingLimit), clonePtr(r.LendingLimit)
			r.Hard, r.Soft = clonePtr(r.Hard), clonePtr(r.Soft)
		}
		fqs[i].Resources = rs
	}
	return fqs
}

func cloneCohort(c Cohort) Cohort {
	c.Quota = cloneFlavorQuotas(c.Quota)
	if c.FairSharing != nil {
		fs := *c.FairSharing
		fs.Weight = clonePtr(fs.Weight)
		c.FairSharing = &fs
	}
	return c
}

// cloneAll copies each element with clone.
func cloneAll[T any](xs []T, clone func(T) T) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = clone(x)
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
