//go:build !race

package sim

// raceEnabled tells the tests the race detector is on (see race_test.go).
const raceEnabled = false
