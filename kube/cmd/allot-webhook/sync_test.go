package main

import (
	"fmt"
	"io"
	"sync"
)

// syncWriter serialises the logger's writes with the test's reads.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// String is what was written so far, read under the lock (w must be a
// fmt.Stringer, as a *bytes.Buffer is).
func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.(fmt.Stringer).String()
}
