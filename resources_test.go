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
	return &fixed{resources: []string{"gpu", "cpu", "tokens"}, resIdx: map[string]int{"gpu": 0, "cpu": 1, "tokens": 2}, gpu: 0, tokens: 2}
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
	}{
		{name: "empty", m: nil},
		{name: "some", m: Resources{"cpu": 500, "gpu": 2}, v: res.Vec{2, 500}, keys: 0b011},
		{name: "zero kept", m: Resources{"tokens": 0}, keys: 0b100},
		{name: "largest", m: Resources{"cpu": quota.MaxQuantity}, v: res.Vec{0, quota.MaxQuantity}, keys: 0b010},
		{name: "negative", m: Resources{"cpu": -1}, err: ErrInvalid, path: "p.cpu"},
		{name: "too large", m: Resources{"gpu": quota.MaxQuantity + 1}, err: ErrInvalid, path: "p.gpu"},
		{name: "unknown", m: Resources{"gpu": 1, "disk": 1, "aaa": 1}, err: ErrUnknownResource, path: "p.aaa"},
	} {
		v, keys, err := f.vectorKeys(c.m, "p")
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
		if back := f.resourceMap(v, keys); !maps.Equal(back, c.m) {
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
