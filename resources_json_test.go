package allot_test

import (
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/quantity"
)

func TestResourcesUnmarshalJSON(t *testing.T) {
	tests := []struct {
		in   string
		want allot.Resources
		err  error  // errors.Is target; nil: no error
		msg  string // substring of the error
	}{
		{in: `{"cpu": 1500, "memory": 17179869184, "gpu": 8}`, want: allot.Resources{"cpu": 1500, "memory": 16 << 30, "gpu": 8}},
		{in: `{"cpu": "1.5", "memory": "16Gi", "gpu": "8"}`, want: allot.Resources{"cpu": 1500, "memory": 16 << 30, "gpu": 8}},
		{in: `{"cpu": "500m", "nvidia.com/gpu": "2", "ephemeral-storage": "100Gi"}`, want: allot.Resources{"cpu": 500, "nvidia.com/gpu": 2, "ephemeral-storage": 100 << 30}},
		{in: `{"cpu": "0.1m", "memory": "1.5"}`, want: allot.Resources{"cpu": 1, "memory": 2}}, // rounded up, as Kubernetes rounds
		{in: `{"memory": "1e3", "tokens": "4Ki"}`, want: allot.Resources{"memory": 1000, "tokens": 4096}},
		{in: `{"gpu": 0, "cpu": "0"}`, want: allot.Resources{"gpu": 0, "cpu": 0}},
		{in: `{}`, want: allot.Resources{}},
		{in: `null`, want: nil},
		{in: `{"cpu": -1}`, want: allot.Resources{"cpu": -1}}, // validation refuses it, naming the field
		{in: `{"nvidia.com/gpu": "1.5"}`, err: quantity.ErrNotWhole, msg: `resource "nvidia.com/gpu"`},
		{in: `{"gpu": "500m"}`, err: quantity.ErrNotWhole, msg: "gpu must be whole"},
		{in: `{"memory": "16GB"}`, err: quantity.ErrSyntax, msg: `unknown suffix "GB"`},
		{in: `{"memory": "10E"}`, err: quantity.ErrRange},
		{in: `{"cpu": 1.5}`, err: allot.ErrInvalid, msg: "not a whole number of base units"},
		{in: `{"cpu": 1e3}`, err: allot.ErrInvalid},
		{in: `{"cpu": 9223372036854775808}`, err: allot.ErrInvalid},
		{in: `{"cpu": null}`, err: allot.ErrInvalid},
		{in: `{"cpu": true}`, err: allot.ErrInvalid},
		{in: `{"b": "x", "a": "y"}`, err: quantity.ErrSyntax, msg: `resource "a"`}, // the first by name
		{in: `[1]`, msg: "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got allot.Resources
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.err != nil || tt.msg != "" {
				if err == nil || tt.err != nil && !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.msg) {
					t.Fatalf("Unmarshal(%s) = %v, %v; want an error (%v) containing %q", tt.in, got, err, tt.err, tt.msg)
				}
				return
			}
			if err != nil || !maps.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Fatalf("Unmarshal(%s) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestResourcesJSONRoundTrip: marshalled Resources read back to the same
// map, an explicit 0 included, inside a request as alone.
func TestResourcesJSONRoundTrip(t *testing.T) {
	r := allot.Request{ID: "a", Queue: "q", PodSets: []allot.PodSet{{Name: "p", Count: 2,
		PerPod: allot.Resources{"gpu": 0, "cpu": 1500, "memory": 16 << 30, "nvidia.com/gpu": 8}}}}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back allot.Request
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.PodSets[0].PerPod; !maps.Equal(got, r.PodSets[0].PerPod) {
		t.Fatalf("round trip: %v, want %v (JSON %s)", got, r.PodSets[0].PerPod, data)
	}
	if _, ok := back.PodSets[0].PerPod["gpu"]; !ok {
		t.Fatal("the explicit gpu: 0 was lost")
	}
	// A request written as a Kubernetes user writes it decodes to the same.
	var k8s allot.Request
	in := `{"id": "a", "queue": "q", "podSets": [{"name": "p", "count": 2, "perPod": {"gpu": "0", "cpu": "1500m", "memory": "16Gi", "nvidia.com/gpu": "8"}}]}`
	if err := json.Unmarshal([]byte(in), &k8s); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(k8s.PodSets[0].PerPod, r.PodSets[0].PerPod) {
		t.Fatalf("quantity strings: %v, want %v", k8s.PodSets[0].PerPod, r.PodSets[0].PerPod)
	}
}
