package sim

import (
	"os"
	"testing"

	"github.com/allot-sched/allot/bench/trace"
)

func TestZZProfPhilly(t *testing.T) {
	name := os.Getenv("ZZPOLICY")
	if name == "" {
		t.Skip()
	}
	tr, err := trace.LoadPhilly("../../../shared/traces/philly_adaptdl.csv")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := PolicyByName(name)
	r, err := Run(tr, p, Options{Shape: Shape{Nodes: 64, GPUsPerNode: 8, NodesPerRack: 16, RacksPerBlock: 8}, QueueDepth: 100})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s completed %d", name, r.Completed)
}
