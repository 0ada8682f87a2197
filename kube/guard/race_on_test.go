//go:build race

package guard_test

// raceEnabled tells the tests the race detector is on: it drops pooled
// buffers at random, so allocation counts do not hold.
const raceEnabled = true
