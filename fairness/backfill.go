package fairness

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/quota"
	"github.com/allot-sched/allot/topology"
)

// EndOf is when a running workload admitted at admitted with expected run
// time runtime is expected to end; false without a run time: the backfill
// plan never counts on it leaving.
func EndOf(admitted, runtime int64) (int64, bool) {
	if runtime <= 0 {
		return 0, false
	}
	return admitted + runtime, true
}

// Leaving is a running workload the backfill plan expects to end: when,
// and what it holds.
type Leaving struct {
	End int64
	B   *view.Booking
}

// SortLeaving puts ls in the order the workloads are expected to end: by
// end, then ID.
func SortLeaving(ls []Leaving) {
	slices.SortFunc(ls, func(a, b Leaving) int {
		if a.End != b.End {
			return cmp.Compare(a.End, b.End)
		}
		return cmp.Compare(a.B.ID, b.B.ID)
	})
}

// Blocked is a workload that waits for capacity, as planned on its
// flavors: its queue, what it charges to quota on each flavor (one entry a
// flavor) and its pod sets on flavors with nodes.
type Blocked struct {
	Queue   int32
	Charges []Charge
	Sets    []gang.PodSet
}

// Planner plans when blocked workloads can start as running workloads
// leave: View holds the quota usage now and what a booking charges and
// books (its State and Reserved are set per plan), Leaving the workloads
// expected to leave, in order (SortLeaving). Placer and Scratch are the
// caller's placer and assignment buffer, reused by every placement.
//
// Base, when set, is the state every held state Reserve is given was made
// from by taking reservations, which only take GPUs: no node of a held
// state has more free GPUs than on Base, which bounds what the leaving
// workloads can free.
type Planner struct {
	View    view.Sim
	Now     int64
	Leaving []Leaving
	Placer  *gang.Placer
	Scratch []gang.Assignment
	Base    *topology.State
	// baseFree is each node's free GPUs on Base, counted at the first
	// Reserve; room is Reserve's bound.
	baseFree []int32
	room     room
	// gone is Reserve's scratch: the bookings it frees at once.
	gone []*view.Booking
}

// room bounds, node by node, the free GPUs of a state as workloads leave
// it: free[n] is at least node n's. A pod of g whole GPUs sits on one
// node, so a pod set of count such pods fits only where the nodes hold
// count pods of g in all: Σ ⌊free[n]/g⌋ ≥ count. Pods of a GPU share take
// no whole GPU and are not bounded.
type room struct {
	free []int32
	sets []roomSet
}

// roomSet is a pod set's pods of gpus GPUs, count of them, and how many
// fit the bound now.
type roomSet struct {
	gpus        int32
	count, fits int64
}

// reset starts the bound at free, for the whole-GPU pod sets of sets.
func (r *room) reset(free []int32, sets []gang.PodSet) {
	r.free = append(r.free[:0], free...)
	r.sets = r.sets[:0]
	for i := range sets {
		if ps := &sets[i]; ps.Share == 0 && ps.GPUs > 0 {
			rs := roomSet{gpus: int32(ps.GPUs), count: ps.Count}
			for _, f := range r.free {
				rs.fits += int64(f / rs.gpus)
			}
			r.sets = append(r.sets, rs)
		}
	}
}

// leave frees b's pods in the bound: at most the GPUs they hold.
func (r *room) leave(b *view.Booking) {
	for _, pod := range b.Pods {
		if pod.Node < 0 || int(pod.Node) >= len(r.free) || pod.GPUs == 0 {
			continue
		}
		was := r.free[pod.Node]
		now := was + int32(bits.OnesCount64(pod.GPUs))
		r.free[pod.Node] = now
		for k := range r.sets {
			rs := &r.sets[k]
			rs.fits += int64(now/rs.gpus - was/rs.gpus)
		}
	}
}

// holds reports whether every whole-GPU pod set fits the bound.
func (r *room) holds() bool {
	for k := range r.sets {
		if r.sets[k].fits < r.sets[k].count {
			return false
		}
	}
	return true
}

// Reserve finds the first moment blocked workload b fits, running
// workloads leaving in turn, and where: held is the state with the
// reservations ahead of b taken, reserved their GPUs (one entry per node,
// sorted by node), which stay taken as the workloads on them leave. b
// starts once its quota fits and it can be placed, and no earlier than
// now; pods are its reserved GPUs, one per pod. false: no moment the plan
// foresees.
func (p *Planner) Reserve(b *Blocked, held *topology.State, reserved []gang.Assignment) (start int64, pods []gang.Assignment, ok bool) {
	// m frees pods only (FreeAll): its usage, the caller's, stays unwritten.
	m := p.View
	m.State, m.Reserved = held.Fork(), reserved
	// Only a placement reads the state, and it is tried only once the
	// quota fits and the nodes may hold the pods (room, from Base): the
	// quota is counted on a view without a state, where an eviction gives
	// back quota alone, and the leaving workloads' pods leave m's state, in
	// the same order, just before the placement that first reads it, with
	// one flush. (A queue far over its quota, or a gang larger than what
	// is free, lets hundreds leave before that.)
	quo := p.View
	quo.Usage, quo.State = p.View.Usage.Clone(), nil
	gone := 0 // Leaving[:gone] are off m
	bounded := p.Base != nil
	if bounded {
		if p.baseFree == nil {
			p.baseFree = make([]int32, p.Base.T.NumNodes())
			for n := range p.baseFree {
				p.baseFree[n] = int32(bits.OnesCount64(p.Base.FreeMask(int32(n))))
			}
		}
		p.room.reset(p.baseFree, b.Sets)
	}
	for i := range p.Leaving {
		l := &p.Leaving[i]
		quo.Evict(l.B)
		if bounded {
			p.room.leave(l.B)
			if !p.room.holds() {
				continue
			}
		}
		if !fitsQuota(quo.Tree, quo.Usage, b) {
			continue
		}
		p.gone = p.gone[:0]
		for ; gone <= i; gone++ {
			p.gone = append(p.gone, p.Leaving[gone].B)
		}
		m.FreeAll(p.gone)
		m.State.Flush()
		p.Placer.Reset(m.State)
		p.Placer.Final = true
		asg, _, placed := p.Placer.Place(b.Sets, p.Scratch[:0])
		p.Scratch = asg
		if !placed {
			continue
		}
		return max(l.End, p.Now), slices.Clone(asg), true
	}
	return 0, nil, false
}

// fitsQuota checks b's charges against what is available to its queue in
// usage u.
func fitsQuota(t *quota.ResourceTree, u quota.Usage, b *Blocked) bool {
	for _, c := range b.Charges {
		for r := range t.Resources() {
			if need := c.Need[r]; need > 0 && need > t.AvailableClamped(u, b.Queue, t.FR(int(c.Flavor), r)) {
				return false
			}
		}
	}
	return true
}

// AddReserved adds the GPUs of pods to reserved (one entry per node,
// sorted by node) as append does: in reserved's array while it has room,
// so a caller that shares reserved passes a copy.
func AddReserved(reserved, pods []gang.Assignment) []gang.Assignment {
	for _, a := range pods {
		i, ok := slices.BinarySearchFunc(reserved, a.Node, func(b gang.Assignment, n int32) int { return cmp.Compare(b.Node, n) })
		if ok {
			reserved[i].GPUs |= a.GPUs
		} else {
			reserved = slices.Insert(reserved, i, a)
		}
	}
	return reserved
}

// Overlaps reports whether any assignment of asg takes a GPU of pods.
func Overlaps(asg, pods []gang.Assignment) bool {
	for _, a := range asg {
		for _, b := range pods {
			if b.Node == a.Node && b.GPUs&a.GPUs != 0 {
				return true
			}
		}
	}
	return false
}
