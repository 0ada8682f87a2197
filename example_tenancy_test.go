package allot_test

import (
	"fmt"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/labels"
)

// A queue admits the namespaces its selector matches and the priority
// classes it lists; tenants submit through their namespace's local queue.
func ExampleNamespace() {
	quota := []allot.FlavorQuota{{Flavor: "h100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 8}}}}
	b := allot.Builder{
		Resources: []string{"gpu"},
		Flavors:   []allot.Flavor{{Name: "h100"}},
		Nodes:     []allot.Node{{Name: "n0", Flavor: "h100", Capacity: allot.Resources{"gpu": 8}}},
		Queues: []allot.Queue{{Name: "gpu-pool", Quota: quota,
			NamespaceSelector: &labels.Selector{MatchLabels: map[string]string{"team": "ml"}},
			PriorityClasses:   []string{"standard"}}},
		Namespaces: []allot.Namespace{{Name: "ml", Labels: map[string]string{"team": "ml"}}, {Name: "web"}},
		LocalQueues: []allot.LocalQueue{{Namespace: "ml", Name: "train", ClusterQueue: "gpu-pool"},
			{Namespace: "web", Name: "train", ClusterQueue: "gpu-pool"}},
		PriorityClasses: []allot.PriorityClass{{Name: "standard", Value: 100}, {Name: "urgent", Value: 1000}},
	}
	snap, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range []allot.Request{
		{ID: "ml-job", Tenant: "ml", LocalQueue: "train", PriorityClass: "standard", Priority: 100},
		{ID: "web-job", Tenant: "web", LocalQueue: "train", PriorityClass: "standard", Priority: 100},
		{ID: "inflated", Tenant: "ml", LocalQueue: "train", PriorityClass: "standard", Priority: 5000},
		{ID: "urgent", Tenant: "ml", LocalQueue: "train", PriorityClass: "urgent", Priority: 1000},
	} {
		r.PodSets = []allot.PodSet{{Name: "main", Count: 1, PerPod: allot.Resources{"gpu": 4}}}
		d := allot.Decide(snap, r)
		fmt.Printf("%s: %v %v (queue %s)\n", r.ID, d.Verdict, d.Reason, d.Queue)
	}
	// Output:
	// ml-job: Admit Fits (queue gpu-pool)
	// web-job: Reject Unauthorized (queue gpu-pool)
	// inflated: Reject PriorityNotAllowed (queue gpu-pool)
	// urgent: Reject PriorityNotAllowed (queue gpu-pool)
}
