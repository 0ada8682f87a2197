package quota

// LocalAvailable is the part of n's localQuota on fr that its usage leaves
// free: max(0, localQuota(n) − Usage(n)). Its parent cannot see it.
func (t *ResourceTree) LocalAvailable(u Usage, n int32, fr int) int64 {
	return max(0, SubAmount(t.local[int(n)*t.frs+fr], u[n][fr]))
}

// Available is how much more of fr node n can take, Kueue's available():
//
//	root:     SubtreeQuota(root) − Usage(root)
//	non-root: LocalAvailable(n) + min(available(parent),
//	          storedInParent − usedInParent + BL(n))   (the min only with BL set)
//	where     storedInParent = SubtreeQuota(n) − localQuota(n)
//	          usedInParent   = max(0, Usage(n) − localQuota(n))
//
// It is negative after over-admission (quota removed, or a node moved,
// under admitted usage). It walks n's path once and does not allocate.
func (t *ResourceTree) Available(u Usage, n int32, fr int) int64 {
	path := t.Path(n)
	root := path[len(path)-1]
	avail := SubAmount(t.subtree[int(root)*t.frs+fr], u[root][fr])
	for j := len(path) - 2; j >= 0; j-- {
		m := path[j]
		i, used := int(m)*t.frs+fr, u[m][fr]
		lq := t.local[i]
		if bl := t.borrowing[i]; bl != Unlimited {
			stored := SubAmount(t.subtree[i], lq)
			usedInParent := max(0, SubAmount(used, lq))
			avail = min(avail, AddAmount(SubAmount(stored, usedInParent), bl))
		}
		avail = AddAmount(max(0, SubAmount(lq, used)), avail)
	}
	return avail
}

// AvailableClamped is Available floored at 0, Kueue's
// ClusterQueueSnapshot.Available: a request of v fits n on fr when
// v ≤ AvailableClamped.
func (t *ResourceTree) AvailableClamped(u Usage, n int32, fr int) int64 {
	return max(0, t.Available(u, n, fr))
}

// Borrowing reports whether n uses more of fr than its SubtreeQuota (for a
// queue, its nominal quota).
func (t *ResourceTree) Borrowing(u Usage, n int32, fr int) bool {
	return t.subtree[int(n)*t.frs+fr] < u[n][fr]
}

// BorrowingWith reports whether n would borrow on fr with v more:
// SubtreeQuota(n) < Usage(n) + v.
func (t *ResourceTree) BorrowingWith(u Usage, n int32, fr int, v int64) bool {
	return t.subtree[int(n)*t.frs+fr] < AddAmount(u[n][fr], v)
}

// IsWithinNominal reports whether n's usage is within its SubtreeQuota on
// every fr in frs, Kueue's IsWithinNominalInResources.
func (t *ResourceTree) IsWithinNominal(u Usage, n int32, frs []int) bool {
	row := int(n) * t.frs
	for _, fr := range frs {
		if t.subtree[row+fr] < u[n][fr] {
			return false
		}
	}
	return true
}

// FitsInQuota is Kueue's QuantitiesFitInQuota for one fr: whether v more
// fits n's SubtreeQuota, and what of v is left for n's parent to hold,
// max(0, v − LocalAvailable(n)).
func (t *ResourceTree) FitsInQuota(u Usage, n int32, fr int, v int64) (fits bool, remaining int64) {
	return !t.BorrowingWith(u, n, fr, v), max(0, SubAmount(v, t.LocalAvailable(u, n, fr)))
}

// InCohort reports whether queue q sits in a cohort. One that does not
// borrows from nobody: its borrowing level is 0 whatever it asks.
func (t *ResourceTree) InCohort(q int32) bool { return t.parent[q] >= 0 }

// BorrowingLevel is how far up queue q must reach for v more of fr, Kueue's
// FindHeightOfLowestSubtreeThatFits. Level 0 when q would not borrow (or
// has no parent); otherwise, with remaining = v − LocalAvailable(q), the
// Height of the first ancestor a, walking up, that would not borrow with
// remaining (remaining shrinks by LocalAvailable(a) at each step), or the
// root's height when none would.
//
// mayReclaimInHierarchy is true when q has a parent and either does not
// borrow or the lowest subtree that holds the request is not the whole
// tree: capacity outside that subtree is used by others and may be
// reclaimed.
func (t *ResourceTree) BorrowingLevel(u Usage, q int32, fr int, v int64) (level int, mayReclaimInHierarchy bool) {
	if !t.InCohort(q) || !t.BorrowingWith(u, q, fr, v) {
		return 0, t.InCohort(q)
	}
	remaining := SubAmount(v, t.LocalAvailable(u, q, fr))
	path := t.Path(q)
	for _, a := range path[1:] {
		if !t.BorrowingWith(u, a, fr, remaining) {
			return int(t.height[a]), t.parent[a] >= 0
		}
		remaining = SubAmount(remaining, t.LocalAvailable(u, a, fr))
	}
	return int(t.height[path[len(path)-1]]), false
}
