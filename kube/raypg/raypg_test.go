package raypg_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/raypg"
)

// cluster is n nodes of 8 GPUs and 64 CPUs in one rack.
func cluster(t *testing.T, n int) *allot.Snapshot {
	t.Helper()
	b := allot.Builder{Resources: []string{"gpu", "cpu", "memory"}, Levels: []string{"rack"}, Flavors: []allot.Flavor{{Name: "default"}},
		Queues: []allot.Queue{{Name: "q", Quota: []allot.FlavorQuota{{Flavor: "default", Resources: []allot.ResourceQuota{
			{Name: "gpu", Nominal: 1000}, {Name: "cpu", Nominal: 1 << 30}, {Name: "memory", Nominal: 1 << 50}}}}}}}
	for i := range n {
		b.Nodes = append(b.Nodes, allot.Node{Name: fmt.Sprintf("n%d", i), Flavor: "default", Labels: map[string]string{"rack": "r0"},
			Capacity: allot.Resources{"gpu": 8, "cpu": 64_000, "memory": 512 << 30}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func bundles(n int, b raypg.Bundle) []raypg.Bundle {
	out := make([]raypg.Bundle, n)
	for i := range out {
		out[i] = b
	}
	return out
}

// nodesUsed counts the distinct nodes of a placement.
func nodesUsed(d allot.Decision) int {
	seen := map[string]bool{}
	for _, p := range d.Placement {
		seen[p.Node] = true
	}
	return len(seen)
}

// TestStrategies holds each row of the README's table of strategies to a
// decision: what Ray would do, allot does, or warns or refuses.
func TestStrategies(t *testing.T) {
	four := bundles(4, raypg.Bundle{"GPU": 2, "CPU": 8})
	big := bundles(3, raypg.Bundle{"GPU": 4})
	mixed := []raypg.Bundle{{"GPU": 4}, {"GPU": 2}, {"GPU": 1, "CPU": 1.5}}
	for _, c := range []struct {
		name     string
		strategy string
		bundles  []raypg.Bundle
		nodes    int
		admit    bool
		used     int // nodes the placement uses
		warn     string
		err      error
	}{
		{"STRICT_PACK on one node", raypg.StrictPack, four, 4, true, 1, "", nil},
		{"STRICT_PACK waits when no node holds all", raypg.StrictPack, big, 4, false, 0, "", nil},
		{"STRICT_PACK of mixed shapes on one node", raypg.StrictPack, mixed, 4, true, 1, "", nil},
		{"STRICT_PACK of mixed shapes waits past a node", raypg.StrictPack, []raypg.Bundle{{"GPU": 4}, {"GPU": 4}, {"GPU": 2}}, 4, false, 0, "", nil},
		{"PACK on one node", raypg.Pack, four, 4, true, 1, "", nil},
		{"PACK of mixed shapes on one node", raypg.Pack, mixed, 4, true, 1, "", nil},
		{"PACK over fewest nodes", raypg.Pack, big, 4, true, 2, "", nil},
		{"PACK is the default", "", four, 4, true, 1, "", nil},
		{"STRICT_SPREAD on distinct nodes", raypg.StrictSpread, four, 4, true, 4, "", nil},
		{"STRICT_SPREAD waits for nodes", raypg.StrictSpread, four, 3, false, 0, "", nil},
		{"STRICT_SPREAD of mixed shapes refused", raypg.StrictSpread, mixed, 4, false, 0, "", raypg.ErrNotExpressible},
		{"SPREAD as STRICT_SPREAD", raypg.Spread, four, 4, true, 4, "decided as STRICT_SPREAD", nil},
		{"SPREAD waits where Ray would share", raypg.Spread, four, 3, false, 0, "decided as STRICT_SPREAD", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, warns, err := raypg.Request(raypg.PlacementGroup{Name: "pg", Bundles: c.bundles, Strategy: c.strategy}, "pg", "q")
			if c.err != nil {
				if !errors.Is(err, c.err) || !strings.Contains(err.Error(), "strategy") {
					t.Fatalf("error %v, want %v naming the strategy", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(warns); (c.warn == "") != (len(warns) == 0) || !strings.Contains(got, c.warn) {
				t.Fatalf("warnings %s, want %q", got, c.warn)
			}
			d := allot.Decide(cluster(t, c.nodes), req)
			if (d.Verdict == allot.VerdictAdmit) != c.admit {
				t.Fatalf("%v %v: %s", d.Verdict, d.Reason, d.Message)
			}
			if c.admit && nodesUsed(d) != c.used {
				t.Fatalf("placed on %d nodes, want %d: %+v", nodesUsed(d), c.used, d.Placement)
			}
		})
	}
}

// TestBundles holds the bundles' mapping to pod sets and resources.
func TestBundles(t *testing.T) {
	req, _, err := raypg.Request(raypg.PlacementGroup{Bundles: []raypg.Bundle{
		{"GPU": 1, "CPU": 0.5, "memory": 1 << 30}, {"GPU": 1, "CPU": 0.5, "memory": 1 << 30}, {"CPU": 2, "custom": 3, "GPU": 0}, {"GPU": 1, "CPU": 0.5, "memory": 1 << 30},
	}, Strategy: raypg.StrictPack}, "pg", "q")
	if err != nil {
		t.Fatal(err)
	}
	want := []allot.PodSet{
		{Name: "bundle-0", Count: 2, PerPod: allot.Resources{"gpu": 1, "cpu": 500, "memory": 1 << 30}},
		{Name: "bundle-2", Count: 1, PerPod: allot.Resources{"cpu": 2000, "custom": 3}},
		{Name: "bundle-3", Count: 1, PerPod: allot.Resources{"gpu": 1, "cpu": 500, "memory": 1 << 30}},
	}
	for i := range want {
		want[i].Topology = allot.TopologyRequest{Required: "node", Group: "placement-group"}
	}
	if !reflect.DeepEqual(req.PodSets, want) {
		t.Fatalf("pod sets\n%+v\nwant\n%+v", req.PodSets, want)
	}
	for _, c := range []struct {
		pg    raypg.PlacementGroup
		err   error
		field string
	}{
		{raypg.PlacementGroup{}, raypg.ErrInvalid, "bundles"},
		{raypg.PlacementGroup{Bundles: []raypg.Bundle{{}}}, raypg.ErrInvalid, "bundles[0]"},
		{raypg.PlacementGroup{Bundles: []raypg.Bundle{{"GPU": 0.5}}}, raypg.ErrNotExpressible, "bundles[0].GPU"},
		{raypg.PlacementGroup{Bundles: []raypg.Bundle{{"CPU": 0.0005}}}, raypg.ErrNotExpressible, "bundles[0].CPU"},
		{raypg.PlacementGroup{Bundles: []raypg.Bundle{{"custom": 1.5}}}, raypg.ErrNotExpressible, "bundles[0].custom"},
		{raypg.PlacementGroup{Bundles: []raypg.Bundle{{"GPU": -1}}}, raypg.ErrInvalid, "bundles[0].GPU"},
		{raypg.PlacementGroup{Bundles: []raypg.Bundle{{"GPU": 1}}, Strategy: "pack"}, raypg.ErrInvalid, "strategy"},
	} {
		if _, _, err := raypg.Request(c.pg, "pg", "q"); !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.field+":") {
			t.Errorf("%+v: %v, want %v naming %s", c.pg, err, c.err, c.field)
		}
	}
}
