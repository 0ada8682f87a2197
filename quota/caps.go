package quota

import (
	"maps"

	"github.com/allot-sched/allot/internal/res"
)

// Cap bounds what a group of workloads of one queue holds together, summed
// over flavors: Slurm's MaxTRESPerUser for one user's workloads, or allot's
// non-preemptible cap for the queue's never-preemptible work. Bit r of Mask
// is set when resource r is capped at Limit[r].
type Cap struct {
	Limit res.Vec
	Mask  uint16
}

// Set reports whether any resource is capped.
func (c *Cap) Set() bool { return c.Mask != 0 }

// Over finds the first capped resource r that need breaks, what a request
// charges summed over its pod sets, given used, what the group holds: alone
// (need[r] is above the limit by itself, checked on every resource first)
// or together with used. Resources the request does not ask for are never
// over, whatever is held.
func (c *Cap) Over(used, need res.Vec) (r int, over, alone bool) {
	for r := range c.Limit {
		if c.Mask&(1<<r) == 0 || need[r] == 0 {
			continue
		}
		if need[r] > c.Limit[r] {
			return r, true, true
		}
	}
	// need[r] ≤ Limit[r] now, so the difference cannot overflow, however
	// much the group holds.
	for r := range c.Limit {
		if c.Mask&(1<<r) != 0 && need[r] > 0 && used[r] > c.Limit[r]-need[r] {
			return r, true, false
		}
	}
	return 0, false, false
}

// UserUsage is what each user's admitted workloads hold in one queue, summed
// over flavors: what a per-user Cap bounds. A map is never written after it
// is shared: With returns a new one.
type UserUsage map[string]res.Vec

// With is u with v added to user's usage (sign 1) or taken from it (sign
// -1); a user left holding nothing is dropped. u is not changed.
func (u UserUsage) With(user string, v res.Vec, sign int64) UserUsage {
	next := maps.Clone(u)
	if next == nil {
		next = UserUsage{}
	}
	cur := Held(next[user], v, sign)
	if cur.IsZero() {
		delete(next, user)
	} else {
		next[user] = cur
	}
	return next
}

// Held is what a group holds, held, with v added (sign 1) or taken (sign
// -1), saturating as AddAmount and SubAmount do: a group's holding sums a
// resource over flavors, each within MaxQuantity, so it may pass what an
// int64 holds, where it saturates rather than wraps.
func Held(held, v res.Vec, sign int64) res.Vec {
	for i := range held {
		if sign > 0 {
			held[i] = AddAmount(held[i], v[i])
		} else {
			held[i] = SubAmount(held[i], v[i])
		}
	}
	return held
}
