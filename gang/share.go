// Fractional pods: thousandths of one shareable GPU each, packed onto one
// physical GPU (never across two), shared GPUs first.

package gang

import (
	"math"
	"math/bits"

	"github.com/allot-sched/allot/topology"
)

// ovShare is what the overlay's fractional pods hold of one GPU.
type ovShare struct {
	node  int32
	gpu   int32
	milli int32
}

// ovHeld is the thousandths of GPU gi of node n the overlay's fractional
// pods hold.
func (p *Placer) ovHeld(n int32, gi int) int32 {
	held := int32(0)
	for i := range p.ovShares {
		if e := &p.ovShares[i]; e.node == n && int(e.gpu) == gi {
			held += e.milli
		}
	}
	return held
}

// shareRoom is the thousandths of GPU gi of node n one more fractional pod
// of this request may take: the state's room (topology.State.ShareRoom)
// less what the overlay holds, none of a GPU an earlier whole-GPU pod of
// the request took.
func (p *Placer) shareRoom(n int32, gi int) int32 {
	room := p.st.ShareRoom(n, gi)
	if room == 0 || len(p.ov) == 0 {
		return room
	}
	held := p.ovHeld(n, gi)
	if held == 0 {
		if i, ok := p.ovFind(n); ok && p.ov[i].gpus&(1<<gi) != 0 {
			return 0
		}
	}
	return room - held
}

// shareFits is how many pods of the current fractional pod set node n's
// shareable GPUs hold, GPU by GPU.
func (p *Placer) shareFits(n int32) int64 {
	share := p.ps.Share
	p.roomsOf(n, p.roomBuf())
	c := int64(0)
	for m := p.t.Node(n).Shareable; m != 0; m &= m - 1 {
		c += int64(p.rooms[bits.TrailingZeros64(m)] / share)
	}
	return c
}

// pickShare is the GPU of node n the next fractional pod takes, given
// each shareable GPU's room (rooms[gi]) and which of them are free whole
// (whole): the shared GPU whose room holds the pod most tightly (best fit,
// lowest index on a tie), else a free whole GPU in the island with the
// fewest free (topology.Node.TakeGPUs), so that whole GPUs stay whole for
// whole-GPU pods where they can; -1 when none holds it.
func pickShare(node *topology.Node, rooms *[topology.MaxNodeGPUs]int32, whole uint64, share int32) int {
	best, bestRoom := -1, int32(math.MaxInt32)
	for m := node.Shareable &^ whole; m != 0; m &= m - 1 {
		gi := bits.TrailingZeros64(m)
		if r := rooms[gi]; r >= share && r < bestRoom {
			best, bestRoom = gi, r
		}
	}
	if best >= 0 {
		return best
	}
	if g := node.TakeGPUs(whole, 1); g != 0 {
		return bits.TrailingZeros64(g)
	}
	return -1
}

// roomsOf fills, for node n, each shareable GPU's room for the request
// and returns those free whole (no share held, by the state or the
// overlay).
func (p *Placer) roomsOf(n int32, rooms *[topology.MaxNodeGPUs]int32) uint64 {
	whole := p.st.ShareRooms(n, rooms)
	if len(p.ov) == 0 {
		return whole
	}
	for m := p.t.Node(n).Shareable; m != 0; m &= m - 1 {
		gi := bits.TrailingZeros64(m)
		rooms[gi] = p.shareRoom(n, gi)
		if rooms[gi] != topology.MilliGPU {
			whole &^= 1 << gi
		}
	}
	return whole
}

// emitShares appends count fractional pods of the current pod set on node
// n, each on the GPU pickShare picks, and books them in the overlay when
// later pod sets need them. It returns the GPUs that were free whole and
// are shared now, which the overlay marks as taken for whole-GPU pods.
func (p *Placer) emitShares(n int32, count int64, out []Assignment) ([]Assignment, uint64) {
	share := p.ps.Share
	node := p.t.Node(n)
	var rooms [topology.MaxNodeGPUs]int32
	whole := p.roomsOf(n, &rooms)
	var broken uint64
	for range count {
		gi := pickShare(node, &rooms, whole, share)
		if gi < 0 {
			break // the count said it fits: never reached
		}
		rooms[gi] -= share
		if whole&(1<<gi) != 0 {
			whole &^= 1 << gi
			broken |= 1 << gi
		}
		out = append(out, Assignment{Node: n, Share: share, GPUs: 1 << gi})
		if p.keep {
			p.ovShares = append(p.ovShares, ovShare{node: n, gpu: int32(gi), milli: share})
		}
	}
	return out, broken
}

// shareKey ranks node n for one fractional pod, lower first: the room a
// shared GPU would have left after it (0 to 999) where one holds it, else
// a thousand per GPU free whole on the node, so that a GPU is broken
// where the fewest whole ones are left; false when the node holds none,
// or when its key is not below beat (the best so far), which then spares
// asking whether the rest of the pod fits there.
func (p *Placer) shareKey(n int32, ns *topology.NodeState, beat int64) (int64, bool) {
	node := p.t.Node(n)
	if node.Shareable == 0 {
		return 0, false
	}
	rooms := p.roomBuf()
	whole := p.roomsOf(n, rooms)
	gi := pickShare(node, rooms, whole, p.ps.Share)
	if gi < 0 {
		return 0, false
	}
	key := topology.MilliGPU * int64(bits.OnesCount64(whole))
	if whole&(1<<gi) == 0 {
		key = int64(rooms[gi] - p.ps.Share)
	}
	if key >= beat {
		return 0, false
	}
	p.shareLater = true
	c := p.nodeCountOf(n, p.t.Node(n), ns)
	p.shareLater = false
	if c < 1 {
		return 0, false
	}
	if p.ps.AvoidStranding {
		// First the thousandths of the node's GPUs that pods of this
		// share could take but for another resource.
		free, pods := ns.Free, ns.Pods
		if i, ok := p.ovFind(n); ok {
			free, pods = free.Sub(p.ov[i].r), pods+p.ov[i].pods
		}
		if byGPUs, other := p.shareFits(n), p.otherFits(node, &free, pods); byGPUs > other {
			key += (byGPUs - other) * int64(p.ps.Share) << 32
			if key >= beat {
				return 0, false
			}
		}
	}
	return key, true
}

// shareHolder is the node of scope that takes one fractional pod best
// (shareKey, ties by path), -1 for none. A perfect fit ends the search.
func (p *Placer) shareHolder(scope int32) int32 {
	dom := &p.t.Domains[scope]
	best, bestKey := int32(-1), int64(math.MaxInt64)
	for n := dom.First; n < dom.End; {
		states := p.st.Nodes(n, dom.End)
		for i := range states {
			if k, ok := p.shareKey(n+int32(i), &states[i], bestKey); ok {
				best, bestKey = n+int32(i), k
				if k == 0 {
					return best
				}
			}
		}
		n += int32(len(states))
	}
	return best
}

// ShareGPU is the GPU of node n that one fractional pod of share
// thousandths takes on st, by the placer's rule (pickShare): for a running
// pod booked without its GPU named. -1 when none holds it.
func ShareGPU(st *topology.State, n int32, share int32) int {
	var rooms [topology.MaxNodeGPUs]int32
	whole := st.ShareRooms(n, &rooms)
	return pickShare(st.T.Node(n), &rooms, whole, share)
}

// roomBuf is the placer's buffer of GPU rooms, made once.
func (p *Placer) roomBuf() *[topology.MaxNodeGPUs]int32 {
	if p.rooms == nil {
		p.rooms = new([topology.MaxNodeGPUs]int32)
	}
	return p.rooms
}
