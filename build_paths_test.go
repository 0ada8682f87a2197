package allot_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
)

// TestBuildNamesTheEntryDeepInTheDescription checks the paths Build gives
// for entries past the first of each list — a later node, pod set, pod or
// GPU list, quota entry — which it writes out only for the error.
func TestBuildNamesTheEntryDeepInTheDescription(t *testing.T) {
	twoSets := func(ps1 allot.PodSet) allot.Workload {
		w := running("w", "n0", 1)
		w.PodSets = append(w.PodSets, ps1)
		return w
	}
	three := func(nodes ...string) allot.PodSet {
		return allot.PodSet{Name: "v", Count: int32(len(nodes)), Flavor: "h100", Nodes: nodes, PerPod: allot.Resources{"gpu": 2}}
	}
	cases := []struct {
		name   string
		mutate func(*allot.Builder)
		want   error
		path   string
	}{
		{"a later node's capacity", func(b *allot.Builder) {
			b.Nodes = append(b.Nodes, allot.Node{Name: "n2", Flavor: "h100", Labels: map[string]string{"rack": "r1"}, Capacity: allot.Resources{"gpu": 8, "cpu": -4}})
		}, allot.ErrInvalid, "nodes[2].capacity.cpu"},
		{"a later node's undeclared GPU", func(b *allot.Builder) { b.Nodes[1].Capacity["amd.com/gpu"] = 2 }, allot.ErrGPUResource, "nodes[1].capacity.amd.com/gpu"},
		{"a declared resource naming a GPU", func(b *allot.Builder) {
			b.Resources = append(b.Resources, "nvidia.com/mig-1g.10gb")
			b.Nodes[1].Capacity["nvidia.com/mig-1g.10gb"] = 7
		}, allot.ErrGPUResource, "nodes[1].capacity.nvidia.com/mig-1g.10gb"},
		{"a declared resource naming a GPU, none of it", func(b *allot.Builder) {
			b.Resources = append(b.Resources, "nvidia.com/mig-1g.10gb")
			b.Nodes[1].Capacity["nvidia.com/mig-1g.10gb"] = 0
			b.Nodes[1].Capacity["cpu"] = -1
		}, allot.ErrInvalid, "nodes[1].capacity.cpu"},
		{"a later node's taint", func(b *allot.Builder) {
			b.Nodes[1].Taints = []allot.Taint{{Key: "a", Effect: "NoSchedule"}, {Key: "b", Effect: "Sometimes"}}
		}, allot.ErrInvalid, "nodes[1].taints[1].effect"},
		{"the second pod set's count", func(b *allot.Builder) {
			ps := three("n1")
			ps.Count = 0
			b.Running = []allot.Workload{twoSets(ps)}
		}, allot.ErrInvalid, "running[0].podSets[1].count"},
		{"the second pod set's request", func(b *allot.Builder) {
			ps := three("n1")
			ps.PerPod["rdma"] = 1
			b.Running = []allot.Workload{twoSets(ps)}
		}, allot.ErrUnknownResource, "running[0].podSets[1].perPod.rdma"},
		{"the second pod set's tokens", func(b *allot.Builder) {
			ps := three("n1")
			ps.Tokens = &allot.Tokens{Prompt: 1}
			b.Running = []allot.Workload{twoSets(ps)}
		}, allot.ErrUnknownResource, "running[0].podSets[1].tokens"},
		{"the third pod's unknown node", func(b *allot.Builder) {
			b.Running = []allot.Workload{twoSets(three("n1", "n1", "n7"))}
		}, allot.ErrUnknownNode, "running[0].podSets[1].nodes[2]"},
		{"the third pod past its node", func(b *allot.Builder) {
			b.Running = []allot.Workload{twoSets(three("n1", "n1", "n1", "n1", "n1"))}
		}, allot.ErrOverCapacity, "running[0].podSets[1].nodes[4]"},
		{"the second pod's GPU list", func(b *allot.Builder) {
			ps := three("n1", "n1")
			ps.GPUIndices = [][]int{{0, 1}, {1, 2}}
			b.Running = []allot.Workload{twoSets(ps)}
		}, allot.ErrOverCapacity, "running[0].podSets[1].gpuIndices[1]"},
		{"the second pod's GPU count", func(b *allot.Builder) {
			ps := three("n1", "n1")
			ps.GPUIndices = [][]int{{0, 1}, {2}}
			b.Running = []allot.Workload{twoSets(ps)}
		}, allot.ErrInvalid, "running[0].podSets[1].gpuIndices[1]"},
		{"a pod on a node of another flavor", func(b *allot.Builder) {
			b.Flavors = append(b.Flavors, allot.Flavor{Name: "a100"})
			b.Nodes = append(b.Nodes, allot.Node{Name: "a0", Flavor: "a100", Labels: map[string]string{"rack": "r9"}, Capacity: allot.Resources{"gpu": 8}})
			b.Running = []allot.Workload{twoSets(three("n1", "a0"))}
		}, allot.ErrInvalid, "running[0].podSets[1].nodes[1]"},
		{"the twelfth workload", func(b *allot.Builder) {
			for i := range 12 {
				b.Running = append(b.Running, running(string(rune('a'+i)), "n9", 0))
			}
			b.Running[11].PodSets[0].Nodes = []string{"nope"}
			for i := range 11 {
				b.Running[i].PodSets[0].Nodes = []string{"n1"}
			}
		}, allot.ErrUnknownNode, "running[11].podSets[0].nodes[0]"},
		{"the same ID at a later index", func(b *allot.Builder) {
			b.Running = []allot.Workload{running("a", "n1", 1), running("b", "n1", 1), running("a", "n0", 1)}
		}, allot.ErrDuplicateID, "running[2].id"},
		{"a cohort's quota entry", func(b *allot.Builder) {
			b.Cohorts[1].Quota = []allot.FlavorQuota{{Flavor: "h100", Resources: []allot.ResourceQuota{{Name: "gpu", Nominal: 1}, {Name: "cpu", Nominal: -1}}}}
		}, allot.ErrInvalid, "cohorts[1].quota[0].resources[1].nominal"},
		{"a queue's quota entry", func(b *allot.Builder) {
			b.Queues[0].Quota[0].Resources = append(b.Queues[0].Quota[0].Resources, allot.ResourceQuota{Name: "tpu"})
		}, allot.ErrUnknownResource, "queues[0].quota[0].resources[1].name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := baseBuilder()
			c.mutate(&b)
			_, err := b.Build()
			var be *allot.BuildError
			if !errors.Is(err, c.want) || !errors.As(err, &be) || be.Path != c.path {
				t.Fatalf("Build() = %v, want %v at %s", err, c.want, c.path)
			}
		})
	}
}

// TestBuildDuplicateIDsInOrder checks that a workload ID given twice is
// the error given where a check workload by workload would find it first:
// before a later workload's error, after an earlier one's, and with the
// path of the workload it repeats.
func TestBuildDuplicateIDsInOrder(t *testing.T) {
	pending := func(id string) allot.Workload {
		return allot.Workload{ID: id, Queue: "q", PodSets: []allot.PodSet{{Name: "m", Count: 1, PerPod: allot.Resources{"gpu": 1}}}}
	}
	cases := []struct {
		name    string
		running []allot.Workload
		pending []allot.Workload
		want    error
		path    string
		also    string // the path the message names, for a duplicate
	}{
		{"a duplicate before a workload past its node",
			[]allot.Workload{running("a", "n1", 6), running("a", "n0", 1), running("b", "n1", 4)}, nil,
			allot.ErrDuplicateID, "running[1].id", "running[0]"},
		{"a duplicate that takes its node past capacity",
			[]allot.Workload{running("a", "n1", 6), running("a", "n1", 4)}, nil,
			allot.ErrDuplicateID, "running[1].id", "running[0]"},
		{"a workload past its node before a duplicate",
			[]allot.Workload{running("a", "n1", 6), running("b", "n1", 4), running("a", "n0", 1)}, nil,
			allot.ErrOverCapacity, "running[1].podSets[0].nodes[0]", ""},
		{"the first of two duplicates",
			[]allot.Workload{running("z", "n0", 1), running("b", "n0", 1), running("c", "n0", 1), running("c", "n1", 1), running("z", "n1", 1)}, nil,
			allot.ErrDuplicateID, "running[3].id", "running[2]"},
		{"one ID three times",
			[]allot.Workload{running("a", "n0", 1), running("x", "n0", 1), running("a", "n1", 1), running("a", "n1", 1)}, nil,
			allot.ErrDuplicateID, "running[2].id", "running[0]"},
		{"an ID that is the prefix of another's",
			[]allot.Workload{running("run-1234", "n0", 1), running("run-12345", "n0", 1), running("run-1234\x00", "n1", 1), running("run-12345", "n1", 1)}, nil,
			allot.ErrDuplicateID, "running[3].id", "running[1]"},
		{"an empty ID after a duplicate",
			[]allot.Workload{running("a", "n0", 1), running("a", "n0", 1), running("", "n1", 1)}, nil,
			allot.ErrDuplicateID, "running[1].id", "running[0]"},
		{"an empty ID before a duplicate",
			[]allot.Workload{running("a", "n0", 1), running("", "n0", 1), running("a", "n1", 1)}, nil,
			allot.ErrInvalid, "running[1].id", ""},
		{"a pending workload of an admitted one's ID",
			[]allot.Workload{running("a", "n0", 1), running("b", "n0", 1)}, []allot.Workload{pending("c"), pending("b")},
			allot.ErrDuplicateID, "pending[1].id", "running[1]"},
		{"a pending workload of a pending one's ID",
			[]allot.Workload{running("a", "n0", 1)}, []allot.Workload{pending("c"), pending("c")},
			allot.ErrDuplicateID, "pending[1].id", "pending[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := baseBuilder()
			b.Running, b.Pending = c.running, c.pending
			_, err := b.Build()
			var be *allot.BuildError
			if !errors.Is(err, c.want) || !errors.As(err, &be) || be.Path != c.path {
				t.Fatalf("Build() = %v, want %v at %s", err, c.want, c.path)
			}
			if c.also != "" && !strings.HasSuffix(err.Error(), "is also "+c.also) {
				t.Errorf("Build() = %v, want the duplicate of %s", err, c.also)
			}
		})
	}
}
