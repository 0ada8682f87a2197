package allot

import (
	"testing"
	"unsafe"
)

// TestRecordSize pins the running record within a 512-byte allocation:
// past it, a malloc header puts every commit's record in the next size
// class.
func TestRecordSize(t *testing.T) {
	if n := unsafe.Sizeof(running{}); n > 512 {
		t.Fatalf("a running record is %d bytes, more than 512", n)
	}
}
