//go:build race

package cluster

// raceEnabled tells the tests the race detector is on: it changes what
// allocates, so allocation counts do not hold.
const raceEnabled = true
