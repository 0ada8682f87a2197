package volcano_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/volcano"
)

const queues = `apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec:
  weight: 3
  reclaimable: false
  guarantee:
    resource: {nvidia.com/gpu: "8", cpu: "32"}
  capability: {nvidia.com/gpu: "24", cpu: "96"}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: prod}
spec:
  parent: root
  capability: {nvidia.com/gpu: "16"}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: org}
spec:
  weight: 2
  guarantee:
    resource: {nvidia.com/gpu: "4"}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: org-team}
spec:
  parent: org
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec:
  minMember: 4
  queue: research
  priorityClassName: high
  minTaskMember: {worker: 3}
  minResources: {nvidia.com/gpu: "32"}
`

func decode(t *testing.T) ([]volcano.Queue, []volcano.PodGroup) {
	t.Helper()
	var docs [][]byte
	for _, d := range strings.Split(queues, "\n---\n") {
		docs = append(docs, []byte(d))
	}
	qs, pgs, err := volcano.Decode(docs)
	if err != nil {
		t.Fatal(err)
	}
	return qs, pgs
}

func find[T any](xs []T, ok func(T) bool) (T, bool) {
	for _, x := range xs {
		if ok(x) {
			return x, true
		}
	}
	var zero T
	return zero, false
}

func gpuQuota(fqs []allot.FlavorQuota) allot.ResourceQuota {
	rq, _ := find(fqs[0].Resources, func(r allot.ResourceQuota) bool { return r.Name == "nvidia.com/gpu" })
	return rq
}

// TestQueueFields holds each Queue row of the README's table to its
// mapping.
func TestQueueFields(t *testing.T) {
	qs, _ := decode(t)
	b, warns, err := volcano.Builder(qs, volcano.Options{Capacity: allot.Resources{"nvidia.com/gpu": 64, "cpu": 256_000}})
	if err != nil {
		t.Fatal(err)
	}
	research, _ := find(b.Queues, func(q allot.Queue) bool { return q.Name == "research" })
	prod, _ := find(b.Queues, func(q allot.Queue) bool { return q.Name == "prod" })
	team, _ := find(b.Queues, func(q allot.Queue) bool { return q.Name == "org-team" })
	org, isCohort := find(b.Cohorts, func(c allot.Cohort) bool { return c.Name == "org" })
	root, _ := find(b.Cohorts, func(c allot.Cohort) bool { return c.Name == volcano.Root })
	rq := gpuQuota(research.Quota)
	for _, c := range []struct {
		row  string
		ok   bool
		got  any
		want any
	}{
		{"weight", research.FairSharing != nil && *research.FairSharing.Weight == 3, research.FairSharing, 3},
		{"weight defaults to 1", prod.FairSharing != nil && *prod.FairSharing.Weight == 1, prod.FairSharing, 1},
		{"guarantee is nominal", rq.Nominal == 8, rq.Nominal, 8},
		{"guarantee is never lent", rq.LendingLimit != nil && *rq.LendingLimit == 0, rq.LendingLimit, 0},
		{"capability caps borrowing", rq.BorrowingLimit != nil && *rq.BorrowingLimit == 16, rq.BorrowingLimit, 16},
		{"no capability, no cap", gpuQuota(team.Quota).BorrowingLimit == nil, gpuQuota(team.Quota).BorrowingLimit, nil},
		{"parent root", prod.Cohort == volcano.Root && research.Cohort == volcano.Root, prod.Cohort, volcano.Root},
		{"parent", team.Cohort == "org", team.Cohort, "org"},
		{"a parent is a cohort", isCohort && org.Parent == volcano.Root && gpuQuota(org.Quota).Nominal == 4, org, "cohort org under root"},
		{"root holds what guarantees leave", len(root.Quota) == 1 && gpuQuota(root.Quota).Nominal == 64-8, root.Quota, 56},
		{"reclaim by the cohort", research.Preemption.ReclaimWithinCohort == "Any", research.Preemption, "Any"},
		{"fair sharing on", b.FairSharing.Enabled, b.FairSharing, true},
		{"reclaimable false warned", strings.Contains(fmt.Sprint(warns), "queues/research: spec.reclaimable"), warns, "a warning"},
	} {
		if !c.ok {
			t.Errorf("%s: got %+v, want %v", c.row, c.got, c.want)
		}
	}
	// The description builds, and decides: research borrows up to its
	// capability and no further.
	for i := range 8 {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: "default", Capacity: allot.Resources{"nvidia.com/gpu": 8, "cpu": 32_000}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		gpus  int32
		admit bool
	}{{3, true}, {4, false}} {
		d := allot.Decide(s, allot.Request{ID: "r", Queue: "research", PodSets: []allot.PodSet{{Name: "main", Count: c.gpus, PerPod: allot.Resources{"nvidia.com/gpu": 8}}}})
		if (d.Verdict == allot.VerdictAdmit) != c.admit {
			t.Errorf("%d nodes of research: %v %v: %s", c.gpus, d.Verdict, d.Reason, d.Message)
		}
	}
}

// TestPodGroupFields holds each PodGroup row of the README's table to its
// mapping.
func TestPodGroupFields(t *testing.T) {
	_, pgs := decode(t)
	pg := pgs[0]
	o := volcano.Options{PriorityClasses: map[string]int32{"high": 1000}}
	tasks := []volcano.Task{{Name: "ps", Replicas: 1, PerPod: allot.Resources{"cpu": 4000}}, {Name: "worker", Replicas: 4, PerPod: allot.Resources{"nvidia.com/gpu": 8}}}
	req, warns, err := volcano.Request(pg, tasks, o)
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := find(req.PodSets, func(p allot.PodSet) bool { return p.Name == "ps" })
	worker, _ := find(req.PodSets, func(p allot.PodSet) bool { return p.Name == "worker" })
	for _, c := range []struct {
		row string
		ok  bool
		got any
	}{
		{"queue", req.Queue == "research", req.Queue},
		{"priorityClassName", req.Priority == 1000, req.Priority},
		{"a task is a pod set", ps.Count == 1 && worker.Count == 4, req.PodSets},
		{"minTaskMember", worker.MinCount == 3 && ps.MinCount == 0, req.PodSets},
		{"minResources above the minimum pods warned", strings.Contains(fmt.Sprint(warns), "spec.minResources"), warns},
		{"namespace is the tenant", req.Tenant == "ml" && req.ID == "ml/train", req},
	} {
		if !c.ok {
			t.Errorf("%s: got %+v", c.row, c.got)
		}
	}
	// minMember over one task is its minimum; over several, a warning when
	// allot needs more.
	one := pg
	one.MinTaskMember = nil
	if req, _, err = volcano.Request(one, tasks[1:], o); err != nil || req.PodSets[0].MinCount != 0 {
		t.Errorf("minMember 4 of one task of 4 (whole): %+v %v", req.PodSets, err)
	}
	one.MinMember = 2
	if req, _, err = volcano.Request(one, tasks[1:], o); err != nil || req.PodSets[0].MinCount != 2 {
		t.Errorf("minMember 2 of one task of 4: %+v %v", req.PodSets, err)
	}
	if _, warns, _ = volcano.Request(one, tasks, o); !strings.Contains(fmt.Sprint(warns), "spec.minMember") {
		t.Errorf("minMember 2 across two tasks: no warning in %v", warns)
	}
	// Without tasks: minMember pods of minResources' share.
	bare := volcano.PodGroup{Name: "g", Namespace: "ns", Queue: "prod", MinMember: 4, MinResources: allot.Resources{"nvidia.com/gpu": 32}}
	if req, _, err = volcano.Request(bare, nil, o); err != nil || len(req.PodSets) != 1 || req.PodSets[0].Count != 4 || req.PodSets[0].PerPod["nvidia.com/gpu"] != 8 {
		t.Errorf("bare pod group: %+v %v", req, err)
	}
	for _, c := range []struct {
		name  string
		pg    volcano.PodGroup
		tasks []volcano.Task
		err   error
		field string
	}{
		{"unknown class", volcano.PodGroup{Name: "g", PriorityClassName: "x", MinMember: 1}, nil, volcano.ErrInvalid, "spec.priorityClassName"},
		{"uneven minResources", volcano.PodGroup{Name: "g", MinMember: 3, MinResources: allot.Resources{"nvidia.com/gpu": 8}}, nil, volcano.ErrNotExpressible, "spec.minResources.nvidia.com/gpu"},
		{"no pods", volcano.PodGroup{Name: "g"}, nil, volcano.ErrInvalid, "spec.minMember"},
		{"minMember above the pods", volcano.PodGroup{Name: "g", MinMember: 9}, tasks, volcano.ErrInvalid, "spec.minMember"},
		{"unknown task", volcano.PodGroup{Name: "g", MinTaskMember: map[string]int32{"x": 1}}, tasks, volcano.ErrInvalid, "spec.minTaskMember.x"},
		{"task minimum above replicas", volcano.PodGroup{Name: "g", MinTaskMember: map[string]int32{"ps": 2}}, tasks, volcano.ErrInvalid, "spec.minTaskMember.ps"},
	} {
		if _, _, err := volcano.Request(c.pg, c.tasks, o); !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.field+":") {
			t.Errorf("%s: %v, want %v naming %s", c.name, err, c.err, c.field)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct{ doc, field string }{
		{"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec: {weight: 0}\n", "spec.weight"},
		{"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec: {capability: {cpu: lots}}\n", "spec.capability.cpu"},
		{"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec: {reclaimable: maybe}\n", "spec.reclaimable"},
		{"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: n}\nspec: {minMember: -1}\n", "spec.minMember"},
		{"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: n}\nspec: {minTaskMember: {a: x}}\n", "spec.minTaskMember.a"},
		{"apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\n", "neither a Queue nor a PodGroup"},
	} {
		if _, _, err := volcano.Decode([][]byte{[]byte(c.doc)}); !errors.Is(err, volcano.ErrInvalid) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%q: %v, want ErrInvalid naming %s", c.doc, err, c.field)
		}
	}
	qs := []volcano.Queue{{Name: "a", Parent: "missing", Weight: 1}}
	if _, _, err := volcano.Builder(qs, volcano.Options{}); !errors.Is(err, volcano.ErrInvalid) || !strings.Contains(err.Error(), "spec.parent") {
		t.Errorf("a missing parent: %v", err)
	}
	qs = []volcano.Queue{{Name: "a", Weight: 1, Guarantee: allot.Resources{"cpu": 8}, Capability: allot.Resources{"cpu": 4}}}
	if _, _, err := volcano.Builder(qs, volcano.Options{}); !errors.Is(err, volcano.ErrInvalid) || !strings.Contains(err.Error(), "spec.capability.cpu") {
		t.Errorf("capability below guarantee: %v", err)
	}
}
