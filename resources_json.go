// Resources in JSON: numbers in base units, as the Go API counts them, or
// Kubernetes quantity strings, as a cluster's objects write them.

package allot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/allot-sched/allot/quantity"
)

// UnmarshalJSON reads an object of resource names to quantities. A number
// is in base units, as the Go API counts them ({"cpu": 1500} is 1500
// millicores); a string is a Kubernetes quantity, converted to base units
// by quantity.ParseBase ({"cpu": "1.5"} is 1500 too, {"memory": "16Gi"} is
// 17179869184, {"nvidia.com/gpu": "1.5"} an error: a GPU is whole). A name
// given 0 is kept, distinct from a name not given; null is a nil map.
// Marshalled, Resources are numbers in base units, which read back to the
// same map.
func (r *Resources) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	if raw == nil {
		*r = nil
		return nil
	}
	m := make(Resources, len(raw))
	for _, name := range sortedKeys(raw) { // the first bad name, by name, is the error
		v, err := resourceValue(name, bytes.TrimSpace(raw[name]))
		if err != nil {
			return fmt.Errorf("allot: resource %q: %w", name, err)
		}
		m[name] = v
	}
	*r = m
	return nil
}

// resourceValue reads one quantity of the named resource: a whole number
// in base units or a quantity string.
func resourceValue(name string, v json.RawMessage) (int64, error) {
	switch {
	case len(v) > 0 && v[0] == '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return 0, err
		}
		return quantity.ParseBase(name, s)
	case len(v) > 0 && (v[0] == '-' || '0' <= v[0] && v[0] <= '9'):
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: the number %s is not a whole number of base units within int64 (a string such as \"1.5\" is a Kubernetes quantity)", ErrInvalid, v)
		}
		return n, nil
	}
	return 0, fmt.Errorf("%w: %s is neither a number of base units nor a quantity string", ErrInvalid, v)
}
