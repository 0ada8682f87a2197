//go:build race

package sim

// raceEnabled tells the tests the race detector is on, so that replays of
// whole public traces, which run on one goroutine, can step aside.
const raceEnabled = true
