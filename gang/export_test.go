package gang

// SearchOnesEverywhere makes the unconstrained placement take the
// counter-guided search for one-pod nodes on every scope, however small,
// until the returned function restores the threshold.
func SearchOnesEverywhere() (restore func()) {
	old := onesSearchMin
	onesSearchMin = -1
	return func() { onesSearchMin = old }
}

// Count is how many pods of ps the domain d at tree level l holds on the
// placer's state (overlay included).
func (p *Placer) Count(ps *PodSet, d int32, l int) int64 {
	p.setPodSet(ps)
	return p.count(d, l)
}

// ScanLevels makes the level searches scan every domain instead of reading
// the state's fit index, until the returned function restores it.
func ScanLevels() (restore func()) {
	useIndex = false
	return func() { useIndex = true }
}
