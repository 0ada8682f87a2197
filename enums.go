package allot

import "fmt"

// PreemptionClass says whether and how a workload may be preempted.
type PreemptionClass uint8

const (
	// Preemptible (the default, as in Kueue) is a victim whenever its queue's
	// policy allows; it loses all work since admission.
	Preemptible PreemptionClass = 1 + iota
	// Checkpointable loses only the work since its last checkpoint.
	Checkpointable
	// Never is nobody's victim.
	Never
)

var preemptionClassNames = [...]string{"", "preemptible", "checkpointable", "never"}

func (c PreemptionClass) String() string {
	if int(c) < len(preemptionClassNames) {
		return preemptionClassNames[c]
	}
	return fmt.Sprintf("PreemptionClass(%d)", uint8(c))
}

// MarshalText renders the class's name.
func (c PreemptionClass) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText parses a class name; the empty string is the zero value.
func (c *PreemptionClass) UnmarshalText(b []byte) error {
	return parseEnum(c, b, preemptionClassNames[:], "preemption class")
}

// PlacementPolicy says how pods spread over the domains chosen for them.
type PlacementPolicy uint8

const (
	// Pack uses the fewest and tightest domains (the default).
	Pack PlacementPolicy = 1 + iota
	// Spread puts at most one pod on a node (Ray's STRICT_SPREAD).
	Spread
	// Balanced splits pods as evenly as the chosen domains allow.
	Balanced
)

var policyNames = [...]string{"", "pack", "spread", "balanced"}

func (p PlacementPolicy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("PlacementPolicy(%d)", uint8(p))
}

// MarshalText renders the policy's name.
func (p PlacementPolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses a policy name; the empty string is the zero value.
func (p *PlacementPolicy) UnmarshalText(b []byte) error {
	return parseEnum(p, b, policyNames[:], "placement policy")
}

// Verdict is the outcome of a decision.
type Verdict uint8

const (
	// VerdictAdmit: place the workload now, as the decision says.
	VerdictAdmit Verdict = 1 + iota
	// VerdictPreempt: admit the workload once the listed victims are evicted.
	VerdictPreempt
	// VerdictQueue: wait; it may be admitted later without the request
	// changing.
	VerdictQueue
	// VerdictReject: it cannot be admitted as submitted.
	VerdictReject
)

var verdictNames = [...]string{"", "Admit", "Preempt", "Queue", "Reject"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// MarshalText renders the verdict's name.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText parses a verdict name.
func (v *Verdict) UnmarshalText(b []byte) error { return parseEnum(v, b, verdictNames[:], "verdict") }

func parseEnum[T ~uint8](dst *T, b []byte, names []string, what string) error {
	s := string(b)
	for i, n := range names {
		if n == s {
			*dst = T(i)
			return nil
		}
	}
	return fmt.Errorf("allot: unknown %s %q", what, s)
}
