package quantity

import (
	"errors"
	"math"
	"testing"
)

func TestParseBase(t *testing.T) {
	tests := []struct {
		resource, in string
		want         int64
		err          error
	}{
		// cpu is in millicores, rounded up.
		{"cpu", "4", 4000, nil},
		{"cpu", "500m", 500, nil},
		{"cpu", "1.5", 1500, nil},
		{"cpu", "0.0005", 1, nil},
		{"cpu", "1k", 1_000_000, nil},
		{"cpu", "9223372036854776", 0, ErrRange},
		// Other resources are in whole units, rounded up.
		{"memory", "16Gi", 16 << 30, nil},
		{"memory", "1.5Gi", 1536 << 20, nil},
		{"memory", "1.5", 2, nil},
		{"memory", "1500m", 2, nil},
		{"memory", "1e3", 1000, nil},
		{"memory", "8Ei", math.MaxInt64, nil},
		{"ephemeral-storage", "100Gi", 100 << 30, nil},
		{"tokens", "1024", 1024, nil},
		{"pods", "0.5", 1, nil},
		// Extended resources and gpu are whole.
		{"gpu", "8", 8, nil},
		{"gpu", "8.0", 8, nil},
		{"gpu", "1.5", 0, ErrNotWhole},
		{"gpu", "500m", 0, ErrNotWhole},
		{"nvidia.com/gpu", "2", 2, nil},
		{"nvidia.com/gpu", "1.5", 0, ErrNotWhole},
		{"nvidia.com/mig-1g.5gb", "0.5", 0, ErrNotWhole},
		{"example.com/foo", "1e3", 1000, nil},
		// A name in kubernetes.io's domain is a native resource.
		{"kubernetes.io/batch-cpu", "0.5", 1, nil},
		// Parse's errors pass through.
		{"memory", "16GB", 0, ErrSyntax},
		{"memory", "1e19", 0, ErrRange},
	}
	for _, tt := range tests {
		got, err := ParseBase(tt.resource, tt.in)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("ParseBase(%q, %q) = %d, %v; want %v", tt.resource, tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseBase(%q, %q) = %d, %v; want %d", tt.resource, tt.in, got, err, tt.want)
		}
	}
}

func TestFormatBase(t *testing.T) {
	tests := []struct {
		resource string
		v        int64
		want     string
	}{
		{"cpu", 4000, "4"},
		{"cpu", 500, "500m"},
		{"cpu", 1500, "1500m"},
		{"cpu", 1_000_000, "1k"},
		{"memory", 16 << 30, "16Gi"},
		{"memory", 1536 << 20, "1536Mi"},
		{"memory", 1000, "1k"},
		{"memory", 1500, "1500"},
		{"memory", 0, "0"},
		{"hugepages-2Mi", 4 << 20, "4Mi"},
		{"gpu", 8, "8"},
		{"nvidia.com/gpu", 1000, "1k"},
		{"tokens", 4096, "4096"},
	}
	for _, tt := range tests {
		if got := FormatBase(tt.resource, tt.v); got != tt.want {
			t.Errorf("FormatBase(%q, %d) = %q, want %q", tt.resource, tt.v, got, tt.want)
		}
		if got := string(AppendBase([]byte("x="), tt.resource, tt.v)); got != "x="+tt.want {
			t.Errorf("AppendBase(%q, %d) = %q, want %q", tt.resource, tt.v, got, "x="+tt.want)
		}
		if back, err := ParseBase(tt.resource, tt.want); err != nil || back != tt.v {
			t.Errorf("ParseBase(%q, %q) = %d, %v; want %d", tt.resource, tt.want, back, err, tt.v)
		}
	}
}

func TestExtended(t *testing.T) {
	for name, want := range map[string]bool{
		"nvidia.com/gpu": true, "amd.com/gpu": true, "gpu.intel.com/i915": true, "example.com/foo": true,
		"gpu": false, "cpu": false, "memory": false, "kubernetes.io/foo": false, "requests.nvidia.com/gpu": false,
	} {
		if got := Extended(name); got != want {
			t.Errorf("Extended(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestScaled(t *testing.T) {
	for name, want := range map[string]bool{
		"cpu": true, "memory": true, "ephemeral-storage": true, "hugepages-1Gi": true,
		"gpu": false, "nvidia.com/gpu": false, "tokens": false, "pods": false,
	} {
		if got := Scaled(name); got != want {
			t.Errorf("Scaled(%q) = %v, want %v", name, got, want)
		}
	}
}
