package bench

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/labels"
)

// tenancyQuotaOnly is quotaOnly's snapshot with 64 namespaces, three
// priority classes, and beside team-a the queue ml, which admits the
// namespaces its selector team=ml, tier NotIn (free) matches, and the
// queue ml-leveled, which besides allows two of the classes; each
// namespace has a local queue into each: train and batch.
func tenancyQuotaOnly(b testing.TB) *allot.Snapshot {
	bl := &allot.Builder{
		Resources: []string{"gpu", "cpu"},
		Flavors:   []allot.Flavor{{Name: "default"}},
		PriorityClasses: []allot.PriorityClass{{Name: "low", Value: 10}, {Name: "normal", Value: 100},
			{Name: "high", Value: 1000}},
	}
	quota := []allot.FlavorQuota{{Flavor: "default",
		Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 64}, {Name: "cpu", Nominal: 1_000_000}}}}
	sel := &labels.Selector{MatchLabels: map[string]string{"team": "ml"},
		MatchExpressions: []labels.Requirement{{Key: "tier", Operator: labels.NotIn, Values: []string{"free"}}}}
	bl.Queues = []allot.Queue{{Name: "team-a", Quota: quota}, {Name: "ml", Quota: quota, NamespaceSelector: sel},
		{Name: "ml-leveled", Quota: quota, NamespaceSelector: sel, PriorityClasses: []string{"low", "normal"}}}
	for i := range 64 {
		ns := fmt.Sprintf("ns-%02d", i)
		bl.Namespaces = append(bl.Namespaces, allot.Namespace{Name: ns, Labels: map[string]string{"team": "ml", "tier": "gold"}})
		bl.LocalQueues = append(bl.LocalQueues, allot.LocalQueue{Namespace: ns, Name: "train", ClusterQueue: "ml"},
			allot.LocalQueue{Namespace: ns, Name: "batch", ClusterQueue: "ml-leveled"})
	}
	bl.Running = []allot.Workload{{ID: "a1", Queue: "team-a", PodSets: []allot.PodSet{{Name: "main", Count: 1, Flavor: "default",
		PerPod: allot.Resources{"gpu": 3, "cpu": 12_000}}}}}
	s, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkDecideTenancy decides quotaOnly's request on a snapshot with
// namespaces, local queues and priority classes: as given (the rule asks
// nothing of it), through a local queue into the selector's queue, and
// through one into the queue that also lists classes, claiming one; each
// is admitted without allocating.
func BenchmarkDecideTenancy(b *testing.B) {
	s := tenancyQuotaOnly(b)
	_, plain := quotaOnly(b)
	local := plain
	local.Queue, local.Tenant, local.LocalQueue = "", "ns-42", "train"
	class := local
	class.LocalQueue, class.PriorityClass, class.Priority = "batch", "normal", 100
	for _, c := range []struct {
		name string
		req  allot.Request
	}{{"request=plain", plain}, {"request=localQueue", local}, {"request=localQueue+class", class}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var d allot.Decision
			for b.Loop() {
				allot.DecideInto(s, c.req, &d)
			}
			if d.Reason != allot.Fits {
				b.Fatalf("%v: %s", d.Reason, d.Message)
			}
		})
	}
}
