package bench

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot"
)

// taintedCluster is the fragmented benchmark cluster of n nodes with its
// flavor selected by a node label, not named, and every tenth node
// carrying the taint maintenance:NoExecute.
func taintedCluster(b testing.TB, n int) *allot.Snapshot {
	b.Helper()
	bl := Cluster(n, true)
	bl.Flavors[0].NodeLabels = map[string]string{"gpu.example.com/model": "h100"}
	for i := range bl.Nodes {
		nd := &bl.Nodes[i]
		nd.Flavor = ""
		nd.Labels["gpu.example.com/model"] = "h100"
		if i%10 == 0 {
			nd.Taints = []allot.Taint{{Key: "maintenance", Effect: allot.TaintNoExecute}}
		}
	}
	s, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkDecideTaints decides BenchmarkDecideGang's requests on the
// tainted cluster: tolerating the taint (which costs what an untainted
// cluster costs but for the check of the taints), and not (every domain
// with a tainted node counted node by node).
func BenchmarkDecideTaints(b *testing.B) {
	s := taintedCluster(b, 10240)
	for _, tolerate := range []bool{true, false} {
		for _, c := range GangCases() {
			req := c.Req
			req.PodSets = append([]allot.PodSet(nil), req.PodSets...)
			if tolerate {
				req.PodSets[0].Tolerations = []allot.Toleration{{Key: "maintenance", Operator: allot.TolerationExists}}
			}
			b.Run(fmt.Sprintf("tolerate=%t/nodes=10240/%s", tolerate, c.Name), func(b *testing.B) {
				b.ReportAllocs()
				var d allot.Decision
				for b.Loop() {
					allot.DecideInto(s, req, &d)
				}
				if (d.Verdict == allot.VerdictAdmit) != c.Admit {
					b.Fatalf("%s: %v %v: %s", c.Name, d.Verdict, d.Reason, d.Message)
				}
			})
		}
	}
}
