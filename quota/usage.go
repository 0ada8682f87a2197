package quota

import (
	"errors"
	"fmt"
	"slices"

	"github.com/allot-sched/allot/internal/cow"
	"github.com/allot-sched/allot/internal/res"
)

// ErrUsageShape is returned by Recompute for a Usage that does not match
// the tree.
var ErrUsageShape = errors.New("quota: usage does not match the tree")

// Usage is the usage of every node of a ResourceTree: Usage[n][fr]. A
// queue's row is the sum of its admitted workloads; a cohort's row is what
// its children use beyond their localQuota, Σ max(0, Usage(child) −
// localQuota(child)).
//
// Usage is copy-on-write by rows. Rows are shared between versions and are
// never written in place: every write builds a new row and stores it in the
// outer slice. So Clone (a shallow copy of the outer slice) is a version
// that later writes to either side cannot change. One writer owns a Usage
// and may call AddUsage, RemoveUsage, AddVec and Recompute on it; readers
// hold their own Clone and must not mutate it.
type Usage [][]int64

// NewUsage is a Usage of zeros for t. Every row starts as one shared zero
// row, which copy-on-write makes safe.
func (t *ResourceTree) NewUsage() Usage {
	zero := make([]int64, t.frs)
	u := make(Usage, len(t.parent))
	for i := range u {
		u[i] = zero
	}
	return u
}

// Clone is an independent version of u. It copies only the outer slice.
func (u Usage) Clone() Usage { return slices.Clone(u) }

// Rows is where a writer that writes usage at nearly every version (a
// store's master) takes its fresh rows, and the outer slices of the
// versions it publishes, many to an allocation (cow.Block). A nil *Rows
// allocates each apart. A Rows has one writer.
type Rows struct {
	rows  cow.Block[int64]
	outer cow.Block[[]int64]
}

// CloneFrom is Clone with the copy taken from r.
func (u Usage) CloneFrom(r *Rows) Usage {
	if r == nil || len(u) == 0 {
		return u.Clone()
	}
	return r.outer.Clone(u)
}

// At is node n's usage of fr.
func (u Usage) At(n int32, fr int) int64 { return u[n][fr] }

// slab is k fresh rows of t.frs in one allocation, so a write that touches
// k nodes allocates once, or, from r, a fraction of once.
func (t *ResourceTree) slab(r *Rows, k int) []int64 {
	if r == nil {
		return make([]int64, k*t.frs)
	}
	return r.rows.Take(k * t.frs)
}

// rowOf is the i-th row of a slab, its capacity clipped so that it never
// reaches into its neighbour.
func (t *ResourceTree) rowOf(slab []int64, i int) []int64 {
	return slab[i*t.frs : (i+1)*t.frs : (i+1)*t.frs]
}

func (t *ResourceTree) mustQueue(op string, q int32) {
	if !t.queue[q] {
		panic(fmt.Sprintf("quota: %s on cohort %q; usage is added to queues only", op, t.names[q]))
	}
}

// AddUsage adds v ≥ 0 of fr to queue q, spilling to the ancestors exactly as
// Kueue's addUsage: Usage(n) += v, and if n has a parent and v exceeds
// LocalAvailable(n) (taken before the add), v − LocalAvailable(n) is added
// to the parent the same way. It allocates once (new rows for the nodes it
// changes), or not at all for v = 0.
func (t *ResourceTree) AddUsage(u Usage, q int32, fr int, v int64) {
	t.mustQueue("AddUsage", q)
	if v < 0 {
		panic(fmt.Sprintf("quota: AddUsage of negative amount %d", v))
	}
	if v == 0 {
		return
	}
	// Count the nodes the spill reaches. Each step depends only on that
	// node's row and the amount arriving there, so a dry run finds them.
	k := 1
	for n, d := q, v; t.parent[n] >= 0; k++ {
		la := t.LocalAvailable(u, n, fr)
		if d <= la {
			break
		}
		n, d = t.parent[n], SubAmount(d, la)
	}
	slab := t.slab(nil, k)
	n, d := q, v
	for i := range k {
		la := t.LocalAvailable(u, n, fr)
		row := t.rowOf(slab, i)
		copy(row, u[n])
		row[fr] = AddAmount(row[fr], d)
		u[n] = row
		n, d = t.parent[n], SubAmount(d, la)
	}
}

// RemoveUsage removes v ≥ 0 of fr from queue q, exactly as Kueue's
// removeUsage: with stored = Usage(n) − localQuota(n) before the removal,
// Usage(n) −= v, and if stored > 0 and n has a parent, min(v, stored) is
// removed from the parent the same way. Remove only what was added.
func (t *ResourceTree) RemoveUsage(u Usage, q int32, fr int, v int64) {
	t.mustQueue("RemoveUsage", q)
	if v < 0 {
		panic(fmt.Sprintf("quota: RemoveUsage of negative amount %d", v))
	}
	if v == 0 {
		return
	}
	// Whether the removal reaches the parent depends only on what n stores
	// there, not on the amount.
	k := 1
	for n := q; t.parent[n] >= 0 && SubAmount(u[n][fr], t.local[int(n)*t.frs+fr]) > 0; n = t.parent[n] {
		k++
	}
	slab := t.slab(nil, k)
	n, d := q, v
	for i := range k {
		stored := SubAmount(u[n][fr], t.local[int(n)*t.frs+fr])
		row := t.rowOf(slab, i)
		copy(row, u[n])
		row[fr] = SubAmount(row[fr], d)
		u[n] = row
		n, d = t.parent[n], min(d, stored)
	}
}

// AddVec adds (sign = +1) or removes (sign = −1) a whole per-resource
// vector on one flavor of queue q: vec[r] goes to fr = FR(flavor, r) for
// each of the tree's resources. It is AddUsage or RemoveUsage per resource,
// with the same spill, but each node on the path is rewritten once and the
// whole call allocates once. Every component of vec must be ≥ 0; components
// past Resources() are ignored.
func (t *ResourceTree) AddVec(u Usage, q int32, flavor int, vec res.Vec, sign int) {
	t.AddVecFrom(u, nil, q, flavor, vec, sign)
}

// AddVecFrom is AddVec taking the new rows from rows.
func (t *ResourceTree) AddVecFrom(u Usage, rows *Rows, q int32, flavor int, vec res.Vec, sign int) {
	t.mustQueue("AddVec", q)
	if sign != 1 && sign != -1 {
		panic(fmt.Sprintf("quota: AddVec sign %d, want +1 or -1", sign))
	}
	if flavor < 0 || flavor >= t.flavors {
		panic(fmt.Sprintf("quota: AddVec flavor %d of %d", flavor, t.flavors))
	}
	zero := true
	for r := range t.resources {
		if vec[r] < 0 {
			panic(fmt.Sprintf("quota: AddVec negative amount %d of resource %d", vec[r], r))
		}
		zero = zero && vec[r] == 0
	}
	if zero {
		return
	}
	base := flavor * t.resources
	k, d := 1, vec
	for n := q; t.parent[n] >= 0 && t.spill(u, n, base, &d, sign); n = t.parent[n] {
		k++
	}
	slab := t.slab(rows, k)
	n, d := q, vec
	for i := range k {
		here := d
		t.spill(u, n, base, &d, sign) // from the row before the write
		row := t.rowOf(slab, i)
		copy(row, u[n])
		for r := range t.resources {
			if sign > 0 {
				row[base+r] = AddAmount(row[base+r], here[r])
			} else {
				row[base+r] = SubAmount(row[base+r], here[r])
			}
		}
		u[n] = row
		n = t.parent[n]
	}
}

// spill replaces the amounts d arriving at node n (one per resource of the
// flavor at base) with the amounts that move on to n's parent, by the
// addUsage (sign > 0) or removeUsage rule, and reports whether any does.
// It reads n's row as it is before the write.
func (t *ResourceTree) spill(u Usage, n int32, base int, d *res.Vec, sign int) bool {
	more := false
	row, local := u[n], t.local[int(n)*t.frs:]
	for r := range t.resources {
		x := d[r]
		if x == 0 {
			continue
		}
		fr := base + r
		next := int64(0)
		if sign > 0 {
			if la := max(0, SubAmount(local[fr], row[fr])); x > la {
				next = SubAmount(x, la)
			}
		} else if stored := SubAmount(row[fr], local[fr]); stored > 0 {
			next = min(x, stored)
		}
		d[r] = next
		more = more || next != 0
	}
	return more
}

// Recompute rebuilds every cohort's usage in u from its queues' usage, from
// scratch, by Kueue's definition Usage(cohort) = Σ_children max(0,
// Usage(child) − localQuota(child)). Use it after a quota change (a new
// ResourceTree over the same node list), where the usage maintained under
// the old localQuota no longer holds. Queue rows are kept; cohort rows are
// replaced, all in one allocation.
func (t *ResourceTree) Recompute(u Usage) error {
	if len(u) != len(t.parent) {
		return fmt.Errorf("%w: %d rows for %d nodes", ErrUsageShape, len(u), len(t.parent))
	}
	cohorts := 0
	for n, row := range u {
		if !t.queue[n] {
			cohorts++
		} else if len(row) != t.frs {
			return fmt.Errorf("%w: queue %q has %d entries, want %d", ErrUsageShape, t.names[n], len(row), t.frs)
		}
	}
	slab := t.slab(nil, cohorts)
	i := 0
	for n := range u {
		if !t.queue[n] {
			u[n] = t.rowOf(slab, i)
			i++
		}
	}
	// The fresh cohort rows belong to this version alone, so they are
	// filled in place; bottomUp finishes each row before its parent reads it.
	for _, n := range t.bottomUp {
		p := t.parent[n]
		if p < 0 {
			continue
		}
		row, prow, local := u[n], u[p], t.local[int(n)*t.frs:]
		for fr := range t.frs {
			if c := SubAmount(row[fr], local[fr]); c > 0 {
				prow[fr] = AddAmount(prow[fr], c)
			}
		}
	}
	return nil
}
