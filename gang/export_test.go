package gang

// SearchOnesEverywhere makes the unconstrained placement take the
// counter-guided search for one-pod nodes on every scope, however small,
// until the returned function restores the threshold.
func SearchOnesEverywhere() (restore func()) {
	old := onesSearchMin
	onesSearchMin = -1
	return func() { onesSearchMin = old }
}
