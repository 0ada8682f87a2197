package allot

import (
	"strconv"

	"github.com/allot-sched/allot/quantity"
)

// appendQuantity renders a quantity of the named resource for messages:
// cpu, memory and storage as Kubernetes writes them ("1500m", "4",
// "16Gi"), counted resources (GPUs, tokens) as plain numbers.
func appendQuantity(b []byte, resource string, v int64) []byte {
	if quantity.Scaled(resource) {
		return quantity.AppendBase(b, resource, v)
	}
	return strconv.AppendInt(b, v, 10)
}

// scaledResources has bit r set when names[r]'s quantities are written
// with a unit (quantity.Scaled), which appendQuantity would ask again of
// every quantity a message writes.
func scaledResources(names []string) uint16 {
	var m uint16
	for r, n := range names {
		if quantity.Scaled(n) {
			m |= 1 << r
		}
	}
	return m
}
