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
