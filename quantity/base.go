// allot's base units: which unit each resource is counted in, and the
// conversions between quantities and the int64s of allot.Resources.

package quantity

import (
	"fmt"
	"strings"
)

// unit is how a resource is counted in base units and written back.
type unit struct {
	milli  bool   // in thousandths (cpu in millicores)
	whole  bool   // a fraction is an error, not rounded up
	format Format // the format FromBase writes it in
}

// unitOf is the one rule for a resource's unit, Kubernetes' own: cpu in
// millicores; memory and storage (ephemeral-storage, storage, hugepages-*)
// in bytes, written with binary suffixes; an extended resource — a name
// with a domain outside kubernetes.io, such as nvidia.com/gpu — in whole
// units, as the API server requires of them; and gpu, allot's default name
// for the accelerator, counted as its Kubernetes names are. Everything
// else is in whole units, a fraction rounded up.
func unitOf(resource string) unit {
	switch {
	case resource == "cpu":
		return unit{milli: true, format: DecimalSI}
	case resource == "memory" || resource == "ephemeral-storage" || resource == "storage" ||
		strings.HasPrefix(resource, "hugepages-"):
		return unit{format: BinarySI}
	case resource == "gpu" || Extended(resource):
		return unit{whole: true, format: DecimalSI}
	}
	return unit{format: DecimalSI}
}

// Extended reports whether a resource name is a Kubernetes extended
// resource, whose quantities must be whole numbers: its name has a domain
// prefix outside kubernetes.io ("nvidia.com/gpu", "example.com/foo"), and
// it is not a quota's "requests." name.
func Extended(resource string) bool {
	return strings.Contains(resource, "/") && !strings.Contains(resource, "kubernetes.io/") &&
		!strings.HasPrefix(resource, "requests.")
}

// ToBase converts a quantity of the named resource to allot's base units,
// rounding as Kubernetes' scheduler reads a request: cpu in millicores
// (MilliValue: "500m" is 500, "0.1m" rounds up to 1), every other resource
// in whole units (Value: "16Gi" is 17179869184, "1.5" rounds up to 2).
// Extended resources and gpu must be whole: "1.5" of nvidia.com/gpu is
// ErrNotWhole. Beyond an int64 is ErrRange. A negative quantity converts
// (rounded away from zero); allot refuses it where it is used.
func ToBase(resource string, q Quantity) (int64, error) { return toBase(resource, q, q.String()) }

// toBase is ToBase naming the quantity as text in its errors.
func toBase(resource string, q Quantity, text string) (int64, error) {
	u := unitOf(resource)
	if u.whole {
		v, ok := q.AsInt64()
		if !ok {
			return 0, fmt.Errorf("%w: %q: %s must be whole", ErrNotWhole, text, resource)
		}
		return v, nil
	}
	if u.milli {
		v, ok := q.MilliValue()
		if !ok {
			return 0, fmt.Errorf("%w: %q: %s in millicores overflows int64", ErrRange, text, resource)
		}
		return v, nil
	}
	return q.Value(), nil
}

// ParseBase parses a Kubernetes quantity of the named resource into base
// units: Parse, then ToBase.
func ParseBase(resource, s string) (int64, error) {
	q, err := Parse(s)
	if err != nil {
		return 0, err
	}
	return toBase(resource, q, s)
}

// FromBase is the quantity v base units of the named resource stand for,
// in the format Kubernetes writes the resource in: cpu in DecimalSI
// ("500m", "4"), memory and storage in BinarySI ("16Gi"), the rest in
// DecimalSI.
func FromBase(resource string, v int64) Quantity {
	u := unitOf(resource)
	if u.milli {
		return NewMilli(v, u.format)
	}
	return New(v, u.format)
}

// Scaled reports whether a resource's base unit is a fraction of the unit
// a person reads (cpu in millicores, memory and storage in bytes), so that
// its quantities read best in Kubernetes' form with a suffix ("1500m",
// "16Gi"); counted resources (gpu, pods, tokens, extended resources) read
// best as plain numbers.
func Scaled(resource string) bool {
	u := unitOf(resource)
	return u.milli || u.format == BinarySI
}

// FormatBase writes v base units of the named resource as a Kubernetes
// quantity in canonical form; ParseBase reads it back to v.
func FormatBase(resource string, v int64) string { return FromBase(resource, v).String() }

// AppendBase appends FormatBase's text to b.
func AppendBase(b []byte, resource string, v int64) []byte { return FromBase(resource, v).Append(b) }
