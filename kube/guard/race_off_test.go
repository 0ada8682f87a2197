//go:build !race

package guard_test

const raceEnabled = false
