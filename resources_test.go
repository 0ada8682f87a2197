package allot

import (
	"errors"
	"maps"
	"testing"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/quota"
)

// threeResources is a fixed part with three declared resources, tokens last.
func threeResources() *fixed {
	return &fixed{resources: []string{"gpu", "cpu", "tokens"}, resIdx: map[string]int{"gpu": 0, "cpu": 1, "tokens": 2}, gpu: 0, tokens: 2,
		ignored: []string{"ephemeral-storage", "pods"}}
}

// TestVectorKeys pins the conversion of a Resources map to a vector and
// back: the keys keep the names given with a zero quantity, and a refusal
// names the field at fault.
func TestVectorKeys(t *testing.T) {
	f := threeResources()
	for _, c := range []struct {
		name string
		m    Resources
		v    res.Vec
		keys uint16
		err  error
		path string
		// ignore reads m as a node's or a pod set's (podVector); back is
		// the map rebuilt when it is not m.
		ignore bool
		back   Resources
	}{
		{name: "empty", m: nil},
		{name: "some", m: Resources{"cpu": 500, "gpu": 2}, v: res.Vec{2, 500}, keys: 0b011},
		{name: "zero kept", m: Resources{"tokens": 0}, keys: 0b100},
		{name: "largest", m: Resources{"cpu": quota.MaxQuantity}, v: res.Vec{0, quota.MaxQuantity}, keys: 0b010},
		{name: "negative", m: Resources{"cpu": -1}, err: ErrInvalid, path: "p.cpu"},
		{name: "too large", m: Resources{"gpu": quota.MaxQuantity + 1}, err: ErrInvalid, path: "p.gpu"},
		{name: "unknown", m: Resources{"gpu": 1, "disk": 1, "aaa": 1}, err: ErrUnknownResource, path: "p.aaa"},
		{name: "ignored dropped", m: Resources{"gpu": 1, "ephemeral-storage": 5, "pods": 0}, ignore: true,
			v: res.Vec{1}, keys: 0b001, back: Resources{"gpu": 1}},
		{name: "ignored where not ignored", m: Resources{"gpu": 1, "ephemeral-storage": 5}, err: ErrUnknownResource, path: "p.ephemeral-storage"},
		{name: "unknown beside ignored", m: Resources{"pods": 1, "disk": 1}, ignore: true, err: ErrUnknownResource, path: "p.disk"},
	} {
		v, keys, err := f.vectorKeys(c.m, "p", c.ignore)
		if c.err != nil {
			var be *BuildError
			if !errors.Is(err, c.err) || !errors.As(err, &be) || be.Path != c.path {
				t.Errorf("%s: got %v, want %v at %s", c.name, err, c.err, c.path)
			}
			continue
		}
		if err != nil || v != c.v || keys != c.keys {
			t.Errorf("%s: got %v %03b %v, want %v %03b", c.name, v, keys, err, c.v, c.keys)
			continue
		}
		want := c.m
		if c.back != nil {
			want = c.back
		}
		if back := f.resourceMap(v, keys); !maps.Equal(back, want) {
			t.Errorf("%s: rebuilt %v, given %v", c.name, back, c.m)
		}
	}
}

// TestPodTokens pins what a pod's token budget adds to the "tokens"
// resource, and its refusals.
func TestPodTokens(t *testing.T) {
	for _, c := range []struct {
		name   string
		f      *fixed
		per    res.Vec
		tokens *Tokens
		want   int64
		err    error
	}{
		{name: "no budget", f: threeResources(), per: res.Vec{1, 2, 3}},
		{name: "budget", f: threeResources(), per: res.Vec{0, 0, 5}, tokens: &Tokens{Prompt: 100, MaxTokens: 20}, want: 120},
		{name: "no tokens resource", f: &fixed{resources: []string{"gpu"}, resIdx: map[string]int{"gpu": 0}, tokens: -1}, tokens: &Tokens{Prompt: 1}, err: ErrUnknownResource},
		{name: "negative", f: threeResources(), tokens: &Tokens{MaxTokens: -1}, err: ErrInvalid},
		{name: "sum too large", f: threeResources(), per: res.Vec{0, 0, quota.MaxQuantity}, tokens: &Tokens{Prompt: 1}, err: ErrInvalid},
	} {
		got, err := c.f.podTokens(c.per, c.tokens, "p")
		if !errors.Is(err, c.err) || err == nil && got != c.want {
			t.Errorf("%s: got %d %v, want %d %v", c.name, got, err, c.want, c.err)
		}
	}
}

// TestFmtVec pins how a vector reads in a message: every declared resource,
// in order.
func TestFmtVec(t *testing.T) {
	if got, want := threeResources().fmtVec(res.Vec{8, 32000}), "{gpu:8 cpu:32000 tokens:0}"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestGPULike pins which resource names look like a GPU's (the rule
// Builder.GPUResource documents).
func TestGPULike(t *testing.T) {
	for name, want := range map[string]bool{
		"gpu": true, "GPU": true, "nvidia.com/gpu": true, "amd.com/gpu": true, "example.com/gpu": true,
		"nvidia.com/gpu.shared": true, "nvidia.com/mig-1g.5gb": true, "nvidia.com/mig-3g.20gb": true,
		"gpu.intel.com/i915": true, "gpu.intel.com/xe": true,
		"cpu": false, "memory": false, "tokens": false, "gpus": false, "gpu-memory": false,
		"nvidia.com/gpumem": false, "nvidia.com/gpucores": false, "volcano.sh/vgpu-number": false,
		"habana.ai/gaudi": false, "google.com/tpu": false, "ephemeral-storage": false,
	} {
		if got := gpuLike(name); got != want {
			t.Errorf("gpuLike(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestAppendQuantity pins how a quantity reads in a message: cpu, memory
// and storage as Kubernetes writes them, counts as plain numbers.
func TestAppendQuantity(t *testing.T) {
	for _, c := range []struct {
		resource string
		v        int64
		want     string
	}{
		{"cpu", 1500, "1500m"}, {"cpu", 4000, "4"}, {"cpu", 0, "0"},
		{"memory", 16 << 30, "16Gi"}, {"memory", 1536 << 20, "1536Mi"}, {"memory", 1500, "1500"},
		{"ephemeral-storage", 1 << 40, "1Ti"},
		{"gpu", 100_000, "100000"}, {"nvidia.com/gpu", 8, "8"}, {"tokens", 97_000, "97000"},
	} {
		if got := string(appendQuantity([]byte("x "), c.resource, c.v)); got != "x "+c.want {
			t.Errorf("appendQuantity(%q, %d) = %q, want %q", c.resource, c.v, got, "x "+c.want)
		}
	}
}
