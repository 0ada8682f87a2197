package allot

import (
	"testing"
	"unsafe"
)

// TestRecordSize pins the running record within a 576-byte allocation
// (its 536 bytes and a malloc header): past it, every commit's record goes
// in the next size class. The pod set's tolerations took it past 512.
func TestRecordSize(t *testing.T) {
	if n := unsafe.Sizeof(running{}); n > 576-8 {
		t.Fatalf("a running record is %d bytes, more than 568", n)
	}
}
