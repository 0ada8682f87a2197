package allot_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/scenario"
)

// renamed is b with its gpu resource called name everywhere: resources,
// capacity, quotas, requests and running workloads. The GPU resource is
// declared as such when declare is set.
func renamed(b allot.Builder, name string, declare bool) allot.Builder {
	swap := func(m allot.Resources) allot.Resources {
		if m == nil {
			return nil
		}
		out := maps.Clone(m)
		if v, ok := out["gpu"]; ok {
			delete(out, "gpu")
			out[name] = v
		}
		return out
	}
	b.Resources = slices.Clone(b.Resources)
	for i, r := range b.Resources {
		if r == "gpu" {
			b.Resources[i] = name
		}
	}
	if declare {
		b.GPUResource = name
	}
	b.Nodes = slices.Clone(b.Nodes)
	for i := range b.Nodes {
		b.Nodes[i].Capacity = swap(b.Nodes[i].Capacity)
	}
	b.Queues = slices.Clone(b.Queues)
	for i := range b.Queues {
		q := &b.Queues[i]
		q.Quota = slices.Clone(q.Quota)
		for j := range q.Quota {
			q.Quota[j].Resources = slices.Clone(q.Quota[j].Resources)
			for k := range q.Quota[j].Resources {
				if q.Quota[j].Resources[k].Name == "gpu" {
					q.Quota[j].Resources[k].Name = name
				}
			}
		}
	}
	b.Running = slices.Clone(b.Running)
	for i := range b.Running {
		b.Running[i] = renamedWorkload(b.Running[i], swap)
	}
	return b
}

func renamedWorkload(w allot.Workload, swap func(allot.Resources) allot.Resources) allot.Workload {
	w.PodSets = slices.Clone(w.PodSets)
	for j := range w.PodSets {
		w.PodSets[j].PerPod = swap(w.PodSets[j].PerPod)
	}
	return w
}

func TestGPUResourceBuild(t *testing.T) {
	nvidia := func(b *allot.Builder) { *b = renamed(*b, "nvidia.com/gpu", true) }
	cases := []struct {
		name   string
		mutate func(*allot.Builder)
		err    error
		path   string
	}{
		// The silent case this declaration exists for: GPUs under a name
		// the snapshot counts as an ordinary resource.
		{name: "nvidia.com/gpu not declared as the GPU", mutate: func(b *allot.Builder) { *b = renamed(*b, "nvidia.com/gpu", false) },
			err: allot.ErrGPUResource, path: "nodes[0].capacity.nvidia.com/gpu"},
		{name: "nvidia.com/gpu declared", mutate: nvidia},
		{name: "amd.com/gpu declared", mutate: func(b *allot.Builder) { *b = renamed(*b, "amd.com/gpu", true) }},
		{name: "gpuResource not among the resources", mutate: func(b *allot.Builder) { b.GPUResource = "nvidia.com/gpu" },
			err: allot.ErrUnknownResource, path: "gpuResource"},
		{name: "gpuResource tokens", mutate: func(b *allot.Builder) {
			b.Resources = append(b.Resources, "tokens")
			b.GPUResource = "tokens"
		}, err: allot.ErrInvalid, path: "gpuResource"},
		{name: "an undeclared GPU beside the declared one", mutate: func(b *allot.Builder) {
			b.Nodes = slices.Clone(b.Nodes)
			b.Nodes[1].Capacity = allot.Resources{"gpu": 8, "gpu.intel.com/xe": 2}
		}, err: allot.ErrGPUResource, path: "nodes[1].capacity.gpu.intel.com/xe"},
		{name: "a MIG profile declared as an ordinary resource", mutate: func(b *allot.Builder) {
			nvidia(b)
			b.Resources = append(b.Resources, "nvidia.com/mig-1g.5gb")
			b.Nodes[0].Capacity["nvidia.com/mig-1g.5gb"] = 7
		}, err: allot.ErrGPUResource, path: "nodes[0].capacity.nvidia.com/mig-1g.5gb"},
		{name: "a GPU-like name with no capacity", mutate: func(b *allot.Builder) {
			b.Resources = append(b.Resources, "amd.com/gpu")
			b.Nodes = slices.Clone(b.Nodes)
			b.Nodes[0].Capacity = allot.Resources{"gpu": 8, "amd.com/gpu": 0}
		}},
		{name: "a GPU-like name ignored", mutate: func(b *allot.Builder) {
			b.IgnoredResources = []string{"nvidia.com/mig-1g.5gb"}
			b.Nodes = slices.Clone(b.Nodes)
			b.Nodes[0].Capacity = allot.Resources{"gpu": 8, "nvidia.com/mig-1g.5gb": 7}
		}},
		{name: "more than 64 GPUs under nvidia.com/gpu", mutate: func(b *allot.Builder) {
			nvidia(b)
			b.Nodes[1].Capacity["nvidia.com/gpu"] = 65
		}, err: allot.ErrInvalid, path: "nodes[1].capacity.nvidia.com/gpu"},
		{name: "ignored and declared", mutate: func(b *allot.Builder) { b.IgnoredResources = []string{"cpu"} },
			err: allot.ErrInvalid, path: "ignoredResources[0]"},
		{name: "ignored twice", mutate: func(b *allot.Builder) { b.IgnoredResources = []string{"pods", "pods"} },
			err: allot.ErrDuplicateID, path: "ignoredResources[1]"},
		{name: "ignored empty", mutate: func(b *allot.Builder) { b.IgnoredResources = []string{""} },
			err: allot.ErrInvalid, path: "ignoredResources[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := baseBuilder()
			c.mutate(&b)
			_, err := b.Build()
			if c.err == nil {
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				return
			}
			var be *allot.BuildError
			if !errors.Is(err, c.err) || !errors.As(err, &be) || be.Path != c.path {
				t.Fatalf("Build: %v; want %v at %s", err, c.err, c.path)
			}
		})
	}
}

// TestGPUResourceDefaults: a snapshot that names its GPU resource and no
// resources has the default ones with its GPU in place of gpu.
func TestGPUResourceDefaults(t *testing.T) {
	b := allot.Builder{GPUResource: "nvidia.com/gpu", Flavors: []allot.Flavor{{Name: "f"}},
		Nodes: []allot.Node{{Name: "n", Flavor: "f", Capacity: allot.Resources{"nvidia.com/gpu": 4, "memory": 1 << 30}}}}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Resources(), []string{"nvidia.com/gpu", "cpu", "memory"}; !slices.Equal(got, want) {
		t.Errorf("Resources() = %v, want %v", got, want)
	}
	if s.GPUResource() != "nvidia.com/gpu" || s.FreeGPUs() != 4 {
		t.Errorf("GPUResource() = %q, FreeGPUs() = %d; want nvidia.com/gpu, 4", s.GPUResource(), s.FreeGPUs())
	}
	none, err := (&allot.Builder{Resources: []string{"cpu"}, Flavors: []allot.Flavor{{Name: "f"}}}).Build()
	if err != nil {
		t.Fatal(err)
	}
	if none.GPUResource() != "" {
		t.Errorf("a snapshot without gpu: GPUResource() = %q, want none", none.GPUResource())
	}
}

// gpuWorld is a cluster with lower-priority work running and requests that
// fit, wait for topology, preempt it (losing GPU-seconds), and use the
// GPU islands.
func gpuWorld() (allot.Builder, []allot.Request) {
	b := baseBuilder()
	b.Now = 1000
	b.Queues[0].Preemption.WithinQueue = "LowerPriority"
	b.Queues[0].Quota[0].Resources = append(b.Queues[0].Quota[0].Resources, allot.ResourceQuota{Name: "cpu", Nominal: 64_000})
	b.Running = []allot.Workload{running("low", "n1", 6)}
	b.Running[0].AdmittedAt = 400
	b.History.Usage = map[string]allot.Resources{"q": {"gpu": 3600}}
	gang := func(id string, prio int32, count int32, gpus int64, required string) allot.Request {
		return allot.Request{ID: id, Queue: "q", Priority: prio, SubmittedAt: 900, PodSets: []allot.PodSet{{Name: "w", Count: count,
			PerPod: allot.Resources{"gpu": gpus, "cpu": 1000}, Topology: allot.TopologyRequest{Required: required}}}}
	}
	return b, []allot.Request{
		gang("fits", 0, 1, 4, "rack"),
		gang("island", 0, 2, 4, ""),
		gang("scattered", 0, 2, 5, "rack"),
		gang("preempts", 10, 2, 8, "rack"),
		gang("no-gpu", 0, 1, 0, ""),
	}
}

// TestGPUResourceNamed: with the GPU called nvidia.com/gpu or amd.com/gpu,
// every decision is the one made with gpu, names aside — GPU indices in
// placements, lost work in GPU-seconds, messages — and so are FreeGPUs
// and the fairness history.
func TestGPUResourceNamed(t *testing.T) {
	ref, reqs := gpuWorld()
	refSnap, err := ref.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nvidia.com/gpu", "amd.com/gpu"} {
		t.Run(name, func(t *testing.T) {
			b := renamed(ref, name, true)
			b.History.Usage = map[string]allot.Resources{"q": {name: 3600}}
			snap, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			if got, want := snap.FreeGPUs(), refSnap.FreeGPUs(); got != want || got != 10 {
				t.Fatalf("FreeGPUs() = %d, want %d (with gpu) and 10", got, want)
			}
			if got, want := snap.HistoricalUsage("q"), refSnap.HistoricalUsage("q"); got != want {
				t.Fatalf("HistoricalUsage = %v, want %v", got, want)
			}
			swap := func(m allot.Resources) allot.Resources {
				out := maps.Clone(m)
				out[name] = out["gpu"]
				delete(out, "gpu")
				return out
			}
			for _, r := range reqs {
				want := allot.Decide(refSnap, r)
				rr := r
				rr.PodSets = slices.Clone(r.PodSets)
				for i := range rr.PodSets {
					rr.PodSets[i].PerPod = swap(rr.PodSets[i].PerPod)
				}
				got := allot.Decide(snap, rr)
				// The request each carries is the caller's, its names in
				// another order once renamed.
				gj, wj := withoutRequest(t, mustJSON(t, got)), withoutRequest(t, mustJSON(t, want))
				if bytes.Contains(gj, []byte(" gpu ")) {
					t.Errorf("%s: the decision with %s speaks of gpu: %s", r.ID, name, gj)
				}
				if g := bytes.ReplaceAll(gj, []byte(name), []byte("gpu")); !bytes.Equal(g, wj) {
					t.Errorf("%s: decision with %s differs from the one with gpu:\n%s\n%s", r.ID, name, gj, wj)
				}
				if got.Verdict == allot.VerdictAdmit || got.Verdict == allot.VerdictPreempt {
					for _, p := range got.Placement {
						if n := bits.OnesCount64(uint64(p.GPUs)); int64(n) != rr.PodSets[0].PerPod[name] {
							t.Errorf("%s: pod %d holds GPUs %v, asks for %d", r.ID, p.Pod, p.GPUs, rr.PodSets[0].PerPod[name])
						}
					}
				}
				if got.Verdict == allot.VerdictAdmit && r.ID == "fits" {
					store := allot.NewStore(snap)
					if _, err := store.Commit(got); err != nil {
						t.Fatal(err)
					}
					if f := store.Load().FreeGPUs(); f != 6 {
						t.Errorf("FreeGPUs after admitting 4: %d, want 6", f)
					}
				}
			}
			// The decisions exercised what they are meant to.
			if d := allot.Decide(snap, allot.Request{ID: "x", Queue: "q", PodSets: []allot.PodSet{{Name: "w", Count: 2,
				PerPod: allot.Resources{name: 8}, Topology: allot.TopologyRequest{Required: "rack"}}}, Priority: 10}); d.Verdict != allot.VerdictPreempt ||
				len(d.Victims) != 1 || d.Victims[0].LostGPUSeconds != 6*600 {
				t.Errorf("preemption: %v %s %+v; want the victim losing 3600 GPU-seconds", d.Verdict, d.Message, d.Victims)
			}
		})
	}
}

// renameGPUJSON renames the gpu resource of a scenario file to name: every
// object key "gpu", the "gpu" of its resources list, and its gpuResource.
func renameGPUJSON(t *testing.T, data []byte, name string) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree map[string]any
	if err := dec.Decode(&tree); err != nil {
		t.Fatal(err)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, e := range v {
				if k == "gpu" {
					k = name
				}
				out[k] = walk(e)
			}
			return out
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		}
		return v
	}
	tree = walk(tree).(map[string]any)
	declared := true // the default resources have gpu
	if rs, ok := tree["resources"].([]any); ok {
		declared = false
		for i, r := range rs {
			if r == "gpu" {
				rs[i], declared = name, true
			}
		}
	}
	if declared {
		tree["gpuResource"] = name
	}
	out, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGPUResourceScenarios replays every scenario file twice, as it is and
// with its GPUs called nvidia.com/gpu, and finds the same records, names
// aside: every decision (placements with their GPU indices, victims with
// their lost GPU-seconds, borrowing, messages, trails), the store's free
// GPUs and evictions after every step, the loop's order.
func TestGPUResourceScenarios(t *testing.T) {
	const name = "nvidia.com/gpu"
	for _, dir := range []string{"testdata/scenarios", sharedScenarios} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		if len(files) == 0 && dir == sharedScenarios {
			continue
		}
		if len(files) == 0 {
			t.Fatalf("no scenarios in %s", dir)
		}
		for _, f := range files {
			t.Run(filepath.Base(f), func(t *testing.T) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				orig, err := scenario.Parse(f, data)
				if err != nil {
					t.Skipf("does not load: %v", err)
				}
				ren, err := scenario.Parse(f, renameGPUJSON(t, data, name))
				if err != nil {
					t.Fatalf("renamed, it does not load: %v", err)
				}
				want, got := replayDecisions(t, orig), replayDecisions(t, ren)
				if len(got) != len(want) {
					t.Fatalf("%d records with %s, %d with gpu", len(got), name, len(want))
				}
				for i := range want {
					g := strings.ReplaceAll(string(withoutRequest(t, []byte(got[i].Body))), name, "gpu")
					w := strings.ReplaceAll(string(withoutRequest(t, []byte(want[i].Body))), name, "gpu")
					if got[i].Source != want[i].Source || g != w {
						t.Fatalf("%s: with %s:\n%s\nwith gpu:\n%s", want[i].Source, name, got[i].Body, want[i].Body)
					}
				}
			})
		}
	}
}

func TestGPUResourceSentinel(t *testing.T) {
	b := renamed(baseBuilder(), "nvidia.com/gpu", false)
	_, err := b.Build()
	if want := fmt.Sprintf("set gpuResource to %q", "nvidia.com/gpu"); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Build: %v; want the remedy %q in the message", err, want)
	}
}

// withoutRequest is a decision's JSON without the request it carries; any
// other JSON (a state, an error) as it is.
func withoutRequest(t *testing.T, b []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m["request"] == nil {
		return b
	}
	delete(m, "request")
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
