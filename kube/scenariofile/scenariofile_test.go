package scenariofile_test

import (
	"bytes"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/scenario"
	"github.com/allot-sched/allot/kube/kueueconfig"
	"github.com/allot-sched/allot/kube/scenariofile"
)

// TestRoundTrip: what Marshal writes, the core's scenario package reads
// back to a description Marshal writes byte for byte again, and it runs.
func TestRoundTrip(t *testing.T) {
	objs, err := kueueconfig.ReadPaths("../testdata/seeds/training-cq-fixed.yaml", "../testdata/seeds/team-a.yaml", "../testdata/cluster")
	if err != nil {
		t.Fatal(err)
	}
	c, err := kueueconfig.Import(objs, kueueconfig.Options{FairSharing: allot.FairSharing{Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := c.Builder()
	if err != nil {
		t.Fatal(err)
	}
	req := &allot.Request{ID: "r", Queue: "training-cq", Tenant: "ml-training",
		PodSets: []allot.PodSet{{Name: "main", Count: 2, PerPod: allot.Resources{"nvidia.com/gpu": 8, "cpu": 1500}, Topology: allot.TopologyRequest{Required: "cloud.example.com/topology-rack"}}}}
	first, err := scenariofile.Marshal("seeds", b, req)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Parse("seeds", first)
	if err != nil {
		t.Fatal(err)
	}
	second, err := scenariofile.Marshal("seeds", s.Builder(), s.Request)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("a second Marshal differs:\n%s\n---\n%s", first, second)
	}
	if r := s.Run(); !r.Passed {
		t.Errorf("%v", r.Failures)
	}
	d, err := s.Decide()
	if err != nil || d.Verdict != allot.VerdictAdmit {
		t.Errorf("%v %v: %s", d.Verdict, err, d.Message)
	}
}

func TestRefusesWhatTheFormatCannotHold(t *testing.T) {
	for _, b := range []allot.Builder{
		{Resources: []string{"cpu"}, Nodes: []allot.Node{{Name: "n", Capacity: allot.Resources{"gpu": 1}}}},
		{History: allot.History{HalfLife: 10}},
		{Options: allot.Options{QueueDepth: 3}},
	} {
		if _, err := scenariofile.Marshal("x", b, nil); err == nil {
			t.Errorf("%+v: no error", b)
		}
	}
}
