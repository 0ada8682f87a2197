// Resolving the queues' and cohorts' configuration into the snapshot's
// form (quota's tree, each queue's limits), for Build and for the events
// that change it.

package allot

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/allot-sched/allot/quota"
)

// buildQueues validates the cohorts and queues and resolves them into s's
// configuration: each queue's limits, quota's tree and the cohorts' weights.
// It writes into s.config: requota calls it on a copy of the snapshot
// with a configuration of its own. With changed ≥ 0 every queue but
// queues[changed] is the one of that index in s's configuration, which
// resolved it: one without windows (the only part of a queue that reads
// the clock) keeps its limits, quota and admission rule, as resolving it
// again on the same flavors, resources and classes gives (SetQueue);
// changed < 0 resolves every queue.
func buildQueues(s *Snapshot, cohorts []Cohort, queues []Queue, changed int) error {
	cs := make([]quota.CohortSpec, len(cohorts))
	seen := make(map[string]bool, len(cohorts))
	for i, c := range cohorts {
		if c.Name == "" {
			return buildErr(ErrInvalid, fmt.Sprintf("cohorts[%d].name", i), "empty name")
		}
		if seen[c.Name] {
			return buildErr(ErrDuplicateID, fmt.Sprintf("cohorts[%d].name", i), "cohort %q twice", c.Name)
		}
		seen[c.Name] = true
		cs[i] = quota.CohortSpec{Name: c.Name, Parent: c.Parent}
	}
	qs := make([]quota.Queue, len(queues))
	qc := make([]string, len(queues))
	prevLimits, prevAdmission, prevResolved := s.limits, s.admission, s.resolved
	s.queueIdx = make(map[string]int32, len(queues))
	s.limits = make([]queueLimits, len(queues))
	s.admission = make([]queueAdmission, len(queues))
	s.resolved = make([]resolvedQueue, len(queues))
	// The resource tree: queues first (node q is queue q), then cohorts.
	nodes := make([]quota.NodeSpec, len(queues)+len(cohorts))
	queuePaths := newIndexPaths("queues", len(queues))
	for i := range queues {
		if changed >= 0 && i != changed && i < len(prevResolved) && len(queues[i].Windows) == 0 {
			s.limits[i], s.admission[i], s.resolved[i] = prevLimits[i], prevAdmission[i], prevResolved[i]
		} else {
			p := queuePaths.at(i)
			l, err := resolveLimits(s, &queues[i], p, s.now)
			if err != nil {
				return err
			}
			s.limits[i] = l
			q, node, err := resolveQueue(s, queues[i], p, l.scale, l.maxScale)
			if err != nil {
				return err
			}
			if s.admission[i], err = resolveAdmission(s, &queues[i], p); err != nil {
				return err
			}
			s.resolved[i] = resolvedQueue{q, node}
		}
		q, node := s.resolved[i].queue, s.resolved[i].node
		nodes[i] = quota.NodeSpec{Name: q.Name, Queue: true, Quotas: node}
		if _, dup := s.queueIdx[q.Name]; dup {
			return buildErr(ErrDuplicateID, fmt.Sprintf("queues[%d].name", i), "queue %q twice", q.Name)
		}
		s.queueIdx[q.Name] = int32(i)
		qs[i], qc[i] = q, queues[i].Cohort
	}
	parents, err := quota.Parents(cs, qs, qc)
	s.cohortWeight = make([]float64, len(cohorts))
	if err != nil {
		switch {
		case errors.Is(err, quota.ErrCohortCycle):
			return buildErr(ErrCohortCycle, "cohorts", "%v", err)
		default:
			return buildErr(ErrUnknownCohort, "cohorts", "%v", err)
		}
	}
	cohortPaths := newIndexPaths("cohorts", len(cohorts))
	for i, c := range cohorts {
		node, err := treeQuotas(s, c.Quota, cohortPaths.at(i), 1, c.Parent != "")
		if err != nil {
			return err
		}
		nodes[len(queues)+i] = quota.NodeSpec{Name: c.Name, Quotas: node}
		if s.cohortWeight[i], err = fairWeight(c.FairSharing, cohortPaths.at(i)); err != nil {
			return err
		}
	}
	for i := range nodes {
		nodes[i].Parent = parents[i]
	}
	rt, err := quota.NewResourceTree(len(s.flavors), len(s.resources), nodes)
	if err != nil {
		return buildErr(ErrInvalid, "queues", "%v", err)
	}
	s.quota, s.rtree = quota.NewTree(qs, rt), rt
	return nil
}

// resolveQueue validates a queue's configuration and turns it into quota's
// form, which scales it (FlavorQuota.SetResource): by scale, the windows and
// tier in force, and for what can ever fit by maxScale, the largest scale of
// the day.
func resolveQueue(s *Snapshot, q Queue, p string, scale, maxScale float64) (quota.Queue, []quota.ResourceQuota, error) {
	out := quota.Queue{Name: q.Name, Hold: q.Hold}
	if q.Name == "" {
		return out, nil, buildErr(ErrInvalid, p+".name", "empty name")
	}
	tryNext, stopAtPreempt, err := parseFungibility(q.FlavorFungibility, p+".flavorFungibility")
	if err != nil {
		return out, nil, err
	}
	out.TryNextWhenBorrowing, out.StopAtPreemption = tryNext, stopAtPreempt
	node, err := treeQuotas(s, q.Quota, p, scale, q.Cohort != "")
	if err != nil {
		return out, nil, err
	}
	byFlavor := make(map[int32]quota.FlavorQuota, len(q.Quota))
	var order []int32
	for i, fq := range q.Quota {
		// The paths are written out only for an error.
		fp := func() string { return fmt.Sprintf("%s.quota[%d]", p, i) }
		f, ok := s.flavorIdx[fq.Flavor]
		if !ok {
			return out, nil, buildErr(ErrUnknownFlavor, fp()+".flavor", "queue %q names flavor %q", q.Name, fq.Flavor)
		}
		if _, dup := byFlavor[f]; dup {
			return out, nil, buildErr(ErrDuplicateID, fp()+".flavor", "flavor %q twice", fq.Flavor)
		}
		e := quota.FlavorQuota{Flavor: f}
		for j, rq := range fq.Resources {
			rp := func() string { return fmt.Sprintf("%s.resources[%d]", fp(), j) }
			r, ok := s.resIdx[rq.Name]
			if !ok {
				return out, nil, buildErr(ErrUnknownResource, rp()+".name", "resource %q is not declared", rq.Name)
			}
			if e.Covered&(1<<r) != 0 {
				return out, nil, buildErr(ErrDuplicateID, rp()+".name", "resource %q twice", rq.Name)
			}
			for _, c := range [...]struct {
				v    *int64
				name string
			}{{rq.Hard, "hard"}, {rq.Soft, "soft"}} {
				if c.v != nil && (*c.v < 0 || *c.v > quota.MaxQuantity) {
					return out, nil, buildErr(ErrInvalid, rp()+"."+c.name, "quantity %d out of range", *c.v)
				}
			}
			if rq.Hard != nil && rq.Soft != nil && *rq.Soft > *rq.Hard {
				return out, nil, buildErr(ErrInvalid, rp()+".soft", "soft cap %d above hard cap %d", *rq.Soft, *rq.Hard)
			}
			e.SetResource(r, rq.Nominal, rq.Hard, rq.Soft, scale, maxScale)
		}
		byFlavor[f] = e
		order = append(order, f)
	}
	for i, name := range q.FlavorOrder {
		f, ok := s.flavorIdx[name]
		if !ok {
			return out, nil, buildErr(ErrUnknownFlavor, fmt.Sprintf("%s.flavorOrder[%d]", p, i), "flavor %q", name)
		}
		if e, ok := byFlavor[f]; ok {
			out.Flavors = append(out.Flavors, e)
			delete(byFlavor, f)
		}
	}
	// Flavors with quota but missing from flavorOrder follow in the
	// snapshot's flavor order.
	slices.Sort(order)
	for _, f := range order {
		if e, ok := byFlavor[f]; ok {
			out.Flavors = append(out.Flavors, e)
		}
	}
	return out, node, nil
}

// treeQuotas validates a queue's or cohort's quota and turns it into its
// node of the resource tree: one entry per flavor-resource, scaled by quota
// (ResourceQuota.Scaled). Borrowing and lending limits need a parent.
func treeQuotas(s *Snapshot, fqs []FlavorQuota, p string, scale float64, hasParent bool) ([]quota.ResourceQuota, error) {
	R := len(s.resources)
	out := make([]quota.ResourceQuota, len(s.flavors)*R)
	for i, fq := range fqs {
		f, ok := s.flavorIdx[fq.Flavor]
		if !ok {
			return nil, buildErr(ErrUnknownFlavor, fmt.Sprintf("%s.quota[%d].flavor", p, i), "flavor %q", fq.Flavor)
		}
		for j, rq := range fq.Resources {
			// Written out only for an error: a queue or cohort has many.
			rp := func() string { return fmt.Sprintf("%s.quota[%d].resources[%d]", p, i, j) }
			r, ok := s.resIdx[rq.Name]
			if !ok {
				return nil, buildErr(ErrUnknownResource, rp()+".name", "resource %q is not declared", rq.Name)
			}
			if rq.Nominal < 0 || rq.Nominal > quota.MaxQuantity {
				return nil, buildErr(ErrInvalid, rp()+".nominal", "quantity %d out of range", rq.Nominal)
			}
			e := quota.ResourceQuota{Nominal: rq.Nominal}
			for _, l := range [...]struct {
				v    *int64
				dst  **int64
				name string
			}{{rq.BorrowingLimit, &e.BorrowingLimit, "borrowingLimit"}, {rq.LendingLimit, &e.LendingLimit, "lendingLimit"}} {
				if l.v == nil {
					continue
				}
				if !hasParent {
					return nil, buildErr(ErrInvalid, rp()+"."+l.name, "a %s needs a cohort to borrow from or lend to", l.name)
				}
				if *l.v < 0 || *l.v > quota.MaxQuantity {
					return nil, buildErr(ErrInvalid, rp()+"."+l.name, "quantity %d out of range", *l.v)
				}
				v := *l.v
				*l.dst = &v
			}
			// Unscaled, a queue's lending limit above its nominal quota is
			// a mistake; any other lends all of a nominal quota it exceeds.
			if scale == 1 && fqIsQueue(p) && e.LendingLimit != nil && *e.LendingLimit > e.Nominal {
				return nil, buildErr(ErrInvalid, rp()+".lendingLimit", "lending limit %d above nominal %d", *e.LendingLimit, e.Nominal)
			}
			e = e.Scaled(scale)
			out[int(f)*R+r] = e
		}
	}
	return out, nil
}

// fqIsQueue tells a queue's path from a cohort's.
func fqIsQueue(p string) bool { return strings.HasPrefix(p, "queues") }

// parseFungibility reads Kueue's flavorFungibility: whenCanBorrow is
// Borrow (Kueue's MayStopSearch, the default) or TryNextFlavor; whenCanPreempt
// is TryNextFlavor (Kueue's default: a later flavor that fits without
// victims wins) or Preempt (MayStopSearch: preempt on the first flavor
// where victims make room).
func parseFungibility(f FlavorFungibility, p string) (tryNextBorrow, stopAtPreempt bool, err error) {
	switch f.WhenCanPreempt {
	case "", "TryNextFlavor":
	case "Preempt", "MayStopSearch":
		stopAtPreempt = true
	default:
		return false, false, buildErr(ErrInvalid, p+".whenCanPreempt", "%q is not Preempt or TryNextFlavor", f.WhenCanPreempt)
	}
	switch f.WhenCanBorrow {
	case "", "Borrow", "MayStopSearch":
		return false, stopAtPreempt, nil
	case "TryNextFlavor":
		return true, stopAtPreempt, nil
	}
	return false, false, buildErr(ErrInvalid, p+".whenCanBorrow", "%q is not Borrow or TryNextFlavor", f.WhenCanBorrow)
}
