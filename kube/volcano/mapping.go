package volcano

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/allot-sched/allot"
)

// Options say what the objects do not: the flavor the queues' quota is
// of, the cluster's capacity and the priority classes.
type Options struct {
	// Flavor names the one flavor of the queues' quota ("default" when
	// empty); the nodes the caller adds are of it.
	Flavor string
	// Capacity is the cluster's (its nodes' allocatable, summed): the
	// root cohort holds what of it the guarantees leave, for the queues
	// to borrow. Nil: the queues have their guarantees only.
	Capacity allot.Resources
	// PriorityClasses are Kubernetes' PriorityClasses, name to value,
	// that PodGroups name.
	PriorityClasses map[string]int32
}

func (o *Options) flavor() string {
	if o.Flavor == "" {
		return "default"
	}
	return o.Flavor
}

// Builder returns the queues as a Builder's resources, flavor, cohorts and
// queues, fair sharing on (Volcano's proportion plugin divides the
// cluster by weight); the caller adds the nodes and workloads.
func Builder(qs []Queue, o Options) (allot.Builder, []Warning, error) {
	byName := map[string]*Queue{}
	parents := map[string]bool{}
	for i := range qs {
		q := &qs[i]
		if _, dup := byName[q.Name]; dup {
			return allot.Builder{}, nil, fmt.Errorf("%w: queues/%s: metadata.name: twice", ErrInvalid, q.Name)
		}
		byName[q.Name] = q
		if q.Parent != "" {
			parents[q.Parent] = true
		}
	}
	var warns []Warning
	names := map[string]bool{}
	for r := range o.Capacity {
		names[r] = true
	}
	for _, q := range qs {
		for r := range q.Guarantee {
			names[r] = true
		}
		for r := range q.Capability {
			names[r] = true
		}
	}
	resources := slices.Sorted(maps.Keys(names))
	b := allot.Builder{Resources: resources, Flavors: []allot.Flavor{{Name: o.flavor()}}, FairSharing: allot.FairSharing{Enabled: true}}
	if slices.Contains(resources, "nvidia.com/gpu") {
		b.GPUResource = "nvidia.com/gpu"
	}
	// The root holds the capacity the leaf queues' guarantees leave.
	root := allot.Cohort{Name: Root}
	if o.Capacity != nil {
		left := maps.Clone(o.Capacity)
		for _, q := range qs {
			if !parents[q.Name] {
				for r, v := range q.Guarantee {
					left[r] = max(left[r]-v, 0)
				}
			}
		}
		root.Quota = []allot.FlavorQuota{quota(o.flavor(), resources, left, nil, false)}
	}
	b.Cohorts = append(b.Cohorts, root)
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		q := byName[name]
		obj := "queues/" + name
		if name == Root {
			if q.Guarantee != nil || q.Capability != nil {
				warns = append(warns, Warning{Object: obj, Field: "spec", Message: "the root queue's guarantee and capability are not modelled: the root cohort holds the capacity the guarantees leave"})
			}
			continue
		}
		parent := Root
		if q.Parent != "" {
			if _, ok := byName[q.Parent]; !ok {
				return allot.Builder{}, nil, fmt.Errorf("%w: %s: spec.parent: no Queue %q", ErrInvalid, obj, q.Parent)
			}
			parent = q.Parent
		}
		for r, g := range q.Guarantee {
			if c, ok := q.Capability[r]; ok && c < g {
				return allot.Builder{}, nil, fmt.Errorf("%w: %s: spec.capability.%s: %d below its guarantee %d", ErrInvalid, obj, r, c, g)
			}
		}
		w := float64(q.Weight)
		fq := quota(o.flavor(), resources, q.Guarantee, q.Capability, true)
		if parents[name] {
			b.Cohorts = append(b.Cohorts, allot.Cohort{Name: name, Parent: parent, Quota: []allot.FlavorQuota{fq}, FairSharing: &allot.QueueFairSharing{Weight: &w}})
			continue
		}
		b.Queues = append(b.Queues, allot.Queue{Name: name, Cohort: parent, Quota: []allot.FlavorQuota{fq},
			FairSharing: &allot.QueueFairSharing{Weight: &w},
			Preemption:  allot.QueuePreemption{WithinQueue: "LowerPriority", ReclaimWithinCohort: "Any"}})
		if !q.Reclaimable {
			warns = append(warns, Warning{Object: obj, Field: "spec.reclaimable", Message: "false not modelled: allot's queues reclaim what any queue borrowed; this queue's workloads above its guarantee may be reclaimed where Volcano would not"})
		}
	}
	return b, warns, nil
}

// quota is one flavor's quota over resources: nominal the guarantee
// (never lent when guaranteed), borrowing up to the capability.
func quota(flavor string, resources []string, nominal, capability allot.Resources, guaranteed bool) allot.FlavorQuota {
	fq := allot.FlavorQuota{Flavor: flavor}
	for _, r := range resources {
		rq := allot.ResourceQuota{Name: r, Nominal: nominal[r]}
		if c, ok := capability[r]; ok {
			limit := c - nominal[r]
			rq.BorrowingLimit = &limit
		}
		if guaranteed {
			zero := int64(0)
			rq.LendingLimit = &zero
		}
		fq.Resources = append(fq.Resources, rq)
	}
	return fq
}

// Task is one task of a PodGroup's job (a Volcano Job's task, or the pods
// of one template): its replicas and each pod's requests in allot's base
// units.
type Task struct {
	Name     string
	Replicas int32
	PerPod   allot.Resources
}

// Request returns the PodGroup, with its tasks, as a request: one pod set
// a task. Without tasks the pod set is minMember pods of minResources'
// share each.
func Request(pg PodGroup, tasks []Task, o Options) (allot.Request, []Warning, error) {
	obj := "podgroups/" + pg.Namespace + "/" + pg.Name
	req := allot.Request{ID: pg.Namespace + "/" + pg.Name, Queue: pg.Queue, Tenant: pg.Namespace}
	if pg.PriorityClassName != "" {
		v, ok := o.PriorityClasses[pg.PriorityClassName]
		if !ok {
			return allot.Request{}, nil, fmt.Errorf("%w: %s: spec.priorityClassName: no PriorityClass %q", ErrInvalid, obj, pg.PriorityClassName)
		}
		req.Priority = v
	}
	var warns []Warning
	if len(tasks) == 0 {
		if pg.MinMember < 1 {
			return allot.Request{}, nil, fmt.Errorf("%w: %s: spec.minMember: no tasks and no minMember: no pods to decide", ErrInvalid, obj)
		}
		per := allot.Resources{}
		for _, r := range slices.Sorted(maps.Keys(pg.MinResources)) {
			v := pg.MinResources[r]
			if v%int64(pg.MinMember) != 0 {
				return allot.Request{}, nil, fmt.Errorf("%w: %s: spec.minResources.%s: %d does not split evenly over minMember %d pods", ErrNotExpressible, obj, r, v, pg.MinMember)
			}
			per[r] = v / int64(pg.MinMember)
		}
		req.PodSets = []allot.PodSet{{Name: "main", Count: pg.MinMember, PerPod: per}}
		return req, nil, nil
	}
	total, least := int32(0), int32(0)
	for _, task := range slices.Sorted(maps.Keys(pg.MinTaskMember)) {
		if !slices.ContainsFunc(tasks, func(t Task) bool { return t.Name == task }) {
			return allot.Request{}, nil, fmt.Errorf("%w: %s: spec.minTaskMember.%s: no such task", ErrInvalid, obj, task)
		}
	}
	for _, t := range tasks {
		ps := allot.PodSet{Name: t.Name, Count: t.Replicas, PerPod: t.PerPod}
		if m, ok := pg.MinTaskMember[t.Name]; ok {
			if m > t.Replicas {
				return allot.Request{}, nil, fmt.Errorf("%w: %s: spec.minTaskMember.%s: %d above the task's %d replicas", ErrInvalid, obj, t.Name, m, t.Replicas)
			}
			if m < t.Replicas {
				ps.MinCount = max(m, 1)
			}
		}
		total += ps.Count
		req.PodSets = append(req.PodSets, ps)
	}
	if pg.MinMember > total {
		return allot.Request{}, nil, fmt.Errorf("%w: %s: spec.minMember: %d above the tasks' %d pods: the gang never starts", ErrInvalid, obj, pg.MinMember, total)
	}
	// minMember across one task is its minimum; across several, allot's
	// minimums are per pod set.
	if len(req.PodSets) == 1 && len(pg.MinTaskMember) == 0 && pg.MinMember > 0 && pg.MinMember < total {
		req.PodSets[0].MinCount = pg.MinMember
	}
	for _, ps := range req.PodSets {
		least += atLeast(ps)
	}
	if pg.MinMember > 0 && least > pg.MinMember {
		warns = append(warns, Warning{Object: obj, Field: "spec.minMember", Message: fmt.Sprintf(
			"%d across %d tasks not modelled: allot's minimums are per pod set (minTaskMember); decided with at least %d pods", pg.MinMember, len(tasks), least)})
	}
	var short []string
	for _, r := range slices.Sorted(maps.Keys(pg.MinResources)) {
		need := int64(0)
		for _, ps := range req.PodSets {
			need += int64(atLeast(ps)) * ps.PerPod[r]
		}
		if pg.MinResources[r] > need {
			short = append(short, fmt.Sprintf("%s %d > %d", r, pg.MinResources[r], need))
		}
	}
	if len(short) > 0 {
		warns = append(warns, Warning{Object: obj, Field: "spec.minResources", Message: "asks more than the minimum pods do (" + strings.Join(short, ", ") +
			"): Volcano holds the group until the queue has it, allot admits on the pods' own requests"})
	}
	return req, warns, nil
}

// atLeast is the fewest pods pod set ps is admitted with.
func atLeast(ps allot.PodSet) int32 {
	if ps.MinCount > 0 {
		return ps.MinCount
	}
	return ps.Count
}
