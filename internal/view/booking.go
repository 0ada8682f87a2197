package view

import (
	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
)

// Pod is where one pod of an admitted workload runs: its node (-1 on a
// quota-only flavor) and its node-local GPU mask, as the placer assigned
// it.
type Pod = gang.Assignment

// Set is an admitted pod set.
type Set struct {
	Flavor int32
	Count  int32
	// Per is what each pod asks for, and Keys marks the resources the pod
	// set named, so that its owner can give the pod set's resources back
	// as they were given: a booking keeps no map, as thousands of small
	// maps cost the garbage collector more than all the rest of a
	// snapshot.
	Keys uint16
	Per  res.Vec
	// Tokens is each pod's token budget, charged to the tokens resource.
	Tokens int64
}

// Booking is an admitted workload as the store books it. It is shared
// between versions and never changed: a change makes a new one.
type Booking struct {
	ID   string
	Sets []Set // per pod set
	Pods []Pod // per pod, pod sets in order
	// SubmittedAt, AdmittedAt and LastCheckpoint are seconds on the
	// snapshot's clock.
	SubmittedAt    int64
	AdmittedAt     int64
	LastCheckpoint int64
	// Queue is the workload's queue: its node in the cohort tree.
	Queue    int32
	Priority int32
	// Checkpointable loses only the work since its last checkpoint.
	Checkpointable bool
	// Pinned is never a victim: of preemption class never, on no spot
	// flavor.
	Pinned bool
}

// NodeRes says, per flavor, which resources the flavor's nodes hold (bit r
// for resource r); the others are quota-only on that flavor.
type NodeRes []uint16

// Mask is v with only the resources that nodes of flavor f hold.
func (m NodeRes) Mask(f int32, v res.Vec) res.Vec {
	k := m[f]
	for r := range v {
		if k&(1<<r) == 0 {
			v[r] = 0
		}
	}
	return v
}

// Need is what pod set i charges to quota: its pods' resources and token
// budgets, tokens being the tokens resource's index (-1 when undeclared).
func (b *Booking) Need(i, tokens int) res.Vec { return b.Sets[i].Need(tokens) }

// Need is what the pod set charges to quota: its pods' resources and token
// budgets, tokens being the tokens resource's index (-1 when undeclared).
// A request's pod set charges what it would as admitted.
func (set *Set) Need(tokens int) res.Vec {
	c := set.Per
	if set.Tokens != 0 {
		c[tokens] += set.Tokens
	}
	if n := set.Count; n != 1 {
		c = c.Scale(int64(n))
	}
	return c
}

// Charged is what the workload charges to quota of resource k, over its pod
// sets: Total's component k, without building vectors (the preemption
// search asks it of every candidate).
func (b *Booking) Charged(k, tokens int) int64 {
	var t int64
	for i := range b.Sets {
		v := b.Sets[i].Per[k]
		if k == tokens {
			v += b.Sets[i].Tokens
		}
		t += res.MulSat(v, int64(b.Sets[i].Count))
	}
	return t
}

// Total is what the workload charges to quota, summed over its pod sets.
func (b *Booking) Total(tokens int) res.Vec {
	var t res.Vec
	for i := range b.Sets {
		t = t.Add(b.Need(i, tokens))
	}
	return t
}

// Book is what one pod of pod set i books on its node.
func (b *Booking) Book(i int, nodes NodeRes) res.Vec {
	return nodes.Mask(b.Sets[i].Flavor, b.Sets[i].Per)
}

// SetOf is the pod set of the pod at index pod of Pods.
func (b *Booking) SetOf(pod int) int {
	for i := range b.Sets {
		pod -= int(b.Sets[i].Count)
		if pod < 0 {
			return i
		}
	}
	return len(b.Sets) - 1
}
