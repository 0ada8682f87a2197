package examples_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/audit"
)

// TestEmbedder is the contract of issue "The embedder's contract", end to
// end, as a platform service outside the library runs it: a snapshot from
// the cluster's objects, a store that takes the cluster's churn, a
// webhook that decides and a controller that commits what it decoded, a
// preemption in two phases, and the audit log drained and written out.
func TestEmbedder(t *testing.T) {
	c := theCluster()
	b, err := c.builder(1000)
	if err != nil {
		t.Fatal(err)
	}
	b.Options.TwoPhasePreemption = true // victims take time to terminate

	// The snapshot, from Kubernetes' objects: nvidia.com/gpu is the GPU,
	// quantities are read by Kubernetes' rules, ephemeral-storage ignored.
	snap, err := b.Build()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if got := snap.GPUResource(); got != gpu {
		t.Fatalf("GPUResource %q", got)
	}
	if got := snap.FreeGPUs(); got != 24 {
		t.Fatalf("FreeGPUs %d, want the 24 of three 8-GPU nodes", got)
	}
	st0, _ := snap.NodeStatus("gpu-0")
	if st0.Free[gpu] != 8 || st0.Free["cpu"] != 207_000 || st0.Free["memory"] != 1824<<30 || st0.FreeGPUs.Len() != 8 {
		t.Fatalf("gpu-0 free %v, GPUs %v", st0.Free, st0.FreeGPUs)
	}
	if n, _ := snap.Node("gpu-0"); n.MaxPods != 110 || n.Capacity["ephemeral-storage"] != 0 {
		t.Fatalf("gpu-0 as allot holds it: %+v", n)
	}
	if q, _ := snap.QueueStatus("team-a"); q.Quota[0].Resources[1].Name != "cpu" || q.Quota[0].Resources[1].Nominal != 800_000 {
		t.Fatalf("team-a quota %+v", q.Quota)
	}
	// Undeclared as the GPU, nvidia.com/gpu would be counted as an
	// ordinary resource and its GPUs never placed: Build refuses that.
	wrong := b
	wrong.GPUResource = ""
	if _, err := wrong.Build(); !errors.Is(err, allot.ErrGPUResource) {
		t.Fatalf("Build without the GPU resource: %v, want ErrGPUResource", err)
	}

	store, err := allot.NewStoreWith(snap, allot.StoreOptions{AuditCapacity: 64})
	if err != nil {
		t.Fatal(err)
	}
	request := func(w kueueWorkload) allot.Request {
		t.Helper()
		r, err := c.request(w)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	commit := func(what string, d allot.Decision) *allot.Snapshot {
		t.Helper()
		s, err := store.Commit(d)
		if err != nil {
			t.Fatalf("%s: Commit: %v", what, err)
		}
		return s
	}
	apply := func(what string, ev allot.Event) *allot.Snapshot {
		t.Helper()
		s, err := store.Apply(ev)
		if err != nil {
			t.Fatalf("%s: Apply: %v", what, err)
		}
		return s
	}

	// A gang of two 8-GPU pods that must share a rack is admitted on rack
	// r0, one pod a node, every GPU placed by index.
	train := request(job("train", 0, 2, 8, rackLabel))
	if train.PodSets[0].PerPod["cpu"] != 24_500 || train.PodSets[0].PerPod["memory"] != 200<<30+512<<20 {
		t.Fatalf("train's pods ask for %v", train.PodSets[0].PerPod)
	}
	d := allot.Decide(store.Load(), train)
	if d.Verdict != allot.VerdictAdmit || len(d.Placement) != 2 || d.Placement[0].GPUs != allot.GPUSetOf(0, 1, 2, 3, 4, 5, 6, 7) {
		t.Fatalf("train: %v %v %s, placement %v", d.Verdict, d.Reason, d.Message, d.Placement)
	}
	if nodes := []string{d.Placement[0].Node, d.Placement[1].Node}; !slices.Equal(nodes, []string{"gpu-0", "gpu-1"}) {
		t.Fatalf("train on %v, want rack r0's nodes", nodes)
	}
	s := commit("train", d)
	apply("checkpoint", allot.Checkpoint{ID: train.ID}) // train saves its work at t=1000

	// The cluster's churn: a node joins rack r1, another loses half its
	// GPUs (a device gone bad: the kubelet reports 4 allocatable), and
	// one of train's nodes is drained away, which evicts train whole.
	s = apply("add gpu-3", allot.AddNode{Node: mustNode(t, c, gpuNode("gpu-3", "r1"))})
	if s.FreeGPUs() != 16 {
		t.Fatalf("after adding gpu-3: %d free GPUs, want 16", s.FreeGPUs())
	}
	gpu2, _ := s.Node("gpu-2")
	gpu2.Capacity[gpu] = 4
	s = apply("resize gpu-2", allot.SetNode{Node: gpu2})
	if st, _ := s.NodeStatus("gpu-2"); st.Free[gpu] != 4 || st.FreeGPUs != allot.GPUSetOf(0, 1, 2, 3) || s.FreeGPUs() != 12 {
		t.Fatalf("after resizing gpu-2: %+v, %d free in all", st, s.FreeGPUs())
	}

	// A webhook decides a small serving job and sends the decision as
	// JSON, request and all; it lands on gpu-2, the tightest node that
	// holds it.
	eval := request(job("eval", 100, 1, 2, ""))
	wire, err := json.Marshal(allot.Decide(store.Load(), eval))
	if err != nil {
		t.Fatal(err)
	}

	apply("ten minutes", allot.AdvanceTime{Seconds: 600})
	s = apply("remove gpu-1", allot.RemoveNode{Node: "gpu-1"})
	if got := s.PendingIDs(); !slices.Equal(got, []string{train.ID}) || s.RunningCount("team-a") != 0 || s.FreeGPUs() != 20 {
		t.Fatalf("after removing gpu-1: pending %v, %d running, %d free GPUs", got, s.RunningCount("team-a"), s.FreeGPUs())
	}
	if ev := s.Evictions()[0]; ev.ID != train.ID || ev.Reason != allot.EvictedNodeRemoved || ev.LostGPUSeconds != 600*16 {
		t.Fatalf("train's eviction %+v, want NodeRemoved losing the 600 s since its checkpoint on 16 GPUs", ev)
	}

	// The controller decodes the decision and commits it, the store
	// having moved on since: it is checked again as any stale decision.
	// A decision changed on the way (onto the node that went) is refused.
	var got allot.Decision
	if err := json.Unmarshal(wire, &got); err != nil {
		t.Fatal(err)
	}
	if got.Request().ID != eval.ID || got.Verdict != allot.VerdictAdmit || got.Placement[0].Node != "gpu-2" {
		t.Fatalf("decoded %s: %v on %v", got.Request().ID, got.Verdict, got.Placement)
	}
	moved := got.Clone()
	moved.Placement[0].Node = "gpu-1"
	if _, err := store.Commit(moved); !errors.Is(err, allot.ErrConflict) {
		t.Fatalf("a decision placed on a removed node: %v, want ErrConflict", err)
	}
	s = commit("eval from JSON", got)
	if w, ok := s.Running(eval.ID); !ok || w.PodSets[0].Nodes[0] != "gpu-2" || !slices.Equal(w.PodSets[0].GPUIndices[0], []int{0, 1}) {
		t.Fatalf("eval running %v: %+v", ok, w)
	}

	// gpu-2 is repaired: 8 GPUs again.
	gpu2.Capacity[gpu] = 8
	if s = apply("repair gpu-2", allot.SetNode{Node: gpu2}); s.FreeGPUs() != 22 {
		t.Fatalf("after repairing gpu-2: %d free GPUs, want 22", s.FreeGPUs())
	}

	// train, evicted, cannot have a rack now: r1 has 14 GPUs free, in 6
	// and 8. The trail says what held (its quota) and what did not (the
	// nodes).
	d = allot.Decide(store.Load(), train)
	if d.Verdict != allot.VerdictQueue || d.Reason != allot.TopologyUnsatisfiable || trail(&d) != "validate+ authorize+ hold+ quota+ placement-" {
		t.Fatalf("train again: %v %v %s, trail %s", d.Verdict, d.Reason, d.Message, trail(&d))
	}
	// Without the rack, the loop admits it on gpu-0 and gpu-3.
	apply("withdraw train", allot.Withdraw{ID: train.ID})
	train.PodSets[0].Topology = allot.TopologyRequest{}
	apply("resubmit train", allot.Submit{Workload: allot.Workload(train)})
	decided := allot.Schedule(store)
	if len(decided) != 1 || decided[0].Verdict != allot.VerdictAdmit {
		t.Fatalf("the loop: %+v", decided)
	}
	apply("checkpoint", allot.Checkpoint{ID: train.ID})
	s = apply("an hour", allot.AdvanceTime{Seconds: 3600})

	// Two-phase preemption: an urgent 8-GPU job preempts train. Its
	// victim evicts with its GPUs still booked, and the preemptor holds
	// its room until the victim is gone.
	urgent := request(job("urgent", 100, 1, 8, ""))
	d = allot.Decide(s, urgent)
	if d.Verdict != allot.VerdictPreempt || len(d.Victims) != 1 || d.Victims[0].ID != train.ID {
		t.Fatalf("urgent: %v %v %s", d.Verdict, d.Reason, d.Message)
	}
	s = commit("urgent", d)
	if h, ok := s.Held(urgent.ID); !ok || !slices.Equal(h.Victims, []string{train.ID}) {
		t.Fatalf("urgent holds %v: %+v", ok, h)
	}
	if by, _, ok := s.Evicting(train.ID); !ok || by != urgent.ID {
		t.Fatalf("train evicting %v for %q", ok, by)
	}
	if s.FreeGPUs() != 6 || !slices.Equal(s.RunningIDs(), []string{eval.ID, train.ID}) {
		t.Fatalf("while train terminates: %d free GPUs, running %v", s.FreeGPUs(), s.RunningIDs())
	}
	apply("terminating", allot.AdvanceTime{Seconds: 30})
	s = apply("train is gone", allot.Terminated{ID: train.ID})
	if _, held := s.Held(urgent.ID); held || !slices.Equal(s.RunningIDs(), []string{eval.ID, urgent.ID}) || !slices.Equal(s.PendingIDs(), []string{train.ID}) {
		t.Fatalf("after train terminated: running %v, pending %v", s.RunningIDs(), s.PendingIDs())
	}

	// The audit log, drained: every admission, every eviction with its
	// preemptor, reason, policy, lost work and recovery point, the hold
	// and the termination, in the order the store made them; written as
	// JSON Lines and read back.
	var buf bytes.Buffer
	w := audit.NewWriter(&buf)
	n, err := w.Drain(store)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := audit.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range recs {
		lines = append(lines, fmt.Sprintf("t=%d %s %s by=%s victims=%v reason=%s policy=%q lost=%d recovery=%d",
			r.At, r.Kind, r.Workload, r.Preemptor, r.Victims, r.Reason, r.Policy, r.LostGPUSeconds, r.RecoveryPoint))
	}
	want := []string{
		`t=1000 admitted ml/train by= victims=[] reason= policy="" lost=0 recovery=0`,
		`t=1600 evicted ml/train by= victims=[] reason=NodeRemoved policy="" lost=9600 recovery=1000`,
		`t=1600 admitted ml/eval by= victims=[] reason= policy="" lost=0 recovery=0`,
		`t=1600 admitted ml/train by= victims=[] reason= policy="" lost=0 recovery=0`,
		`t=5200 evicted ml/train by=ml/urgent victims=[] reason=InClusterQueue policy="withinQueue: LowerPriority" lost=57600 recovery=1600`,
		`t=5200 held ml/urgent by= victims=[ml/train] reason= policy="" lost=0 recovery=0`,
		`t=5230 terminated ml/train by= victims=[] reason=Terminated policy="" lost=0 recovery=0`,
		`t=5230 admitted ml/urgent by= victims=[ml/train] reason= policy="" lost=0 recovery=0`,
	}
	if !slices.Equal(lines, want) || n != len(want) || w.Missed() != 0 {
		t.Fatalf("audit log (%d records drained, %d missed):\n%s\nwant:\n%s", n, w.Missed(), strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if again := store.DrainAudit(nil); len(again) != 0 {
		t.Fatalf("a second drain gives %d records", len(again))
	}
}

// mustNode reads a Node's JSON into the node allot takes.
func mustNode(t *testing.T, c cluster, js string) allot.Node {
	t.Helper()
	n, err := c.node(decode[kubeNode](js))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// trail renders a decision's trail as its stages, + passed, - failed.
func trail(d *allot.Decision) string {
	var parts []string
	for _, c := range d.Trail {
		mark := "-"
		if c.Passed {
			mark = "+"
		}
		parts = append(parts, c.Stage.String()+mark)
	}
	return strings.Join(parts, " ")
}
