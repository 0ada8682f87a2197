package labels

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Selector is a label selector in the shape of Kubernetes' LabelSelector.
// Read-only once in use: a snapshot keeps its own copy.
type Selector struct {
	MatchLabels      map[string]string `json:"matchLabels,omitempty"`
	MatchExpressions []Requirement     `json:"matchExpressions,omitempty"`
}

// Requirement is one of a selector's matchExpressions.
type Requirement struct {
	Key      string   `json:"key"`
	Operator Operator `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// Operator relates a requirement's key to its values.
type Operator string

// The operators of a selector's matchExpressions, as Kubernetes spells them.
const (
	In           Operator = "In"
	NotIn        Operator = "NotIn"
	Exists       Operator = "Exists"
	DoesNotExist Operator = "DoesNotExist"
)

// Error is a selector or label that Kubernetes would refuse: the field at
// fault, relative to the selector or label set (matchLabels.team,
// matchExpressions[1].values[0]), and why.
type Error struct {
	Field  string
	Reason string
}

func (e *Error) Error() string { return "labels: " + e.Field + ": " + e.Reason }

// Validate reports the first fault of s in field order (matchLabels by
// key, then matchExpressions in order); a nil selector is valid.
func (s *Selector) Validate() error {
	if s == nil {
		return nil
	}
	for _, k := range sortedKeys(s.MatchLabels) {
		f := "matchLabels" + fieldKey(k)
		if why := keyFault(k); why != "" {
			return &Error{Field: f, Reason: why}
		}
		if why := valueFault(s.MatchLabels[k]); why != "" {
			return &Error{Field: f, Reason: why}
		}
	}
	for i, r := range s.MatchExpressions {
		f := "matchExpressions[" + strconv.Itoa(i) + "]"
		if why := keyFault(r.Key); why != "" {
			return &Error{Field: f + ".key", Reason: why}
		}
		switch r.Operator {
		case In, NotIn:
			if len(r.Values) == 0 {
				return &Error{Field: f + ".values", Reason: "operator " + string(r.Operator) + " needs at least one value"}
			}
		case Exists, DoesNotExist:
			if len(r.Values) != 0 {
				return &Error{Field: f + ".values", Reason: "operator " + string(r.Operator) + " takes no values"}
			}
		default:
			return &Error{Field: f + ".operator", Reason: fmt.Sprintf("%q is not In, NotIn, Exists or DoesNotExist", r.Operator)}
		}
		for k, v := range r.Values {
			if why := valueFault(v); why != "" {
				return &Error{Field: f + ".values[" + strconv.Itoa(k) + "]", Reason: why}
			}
		}
	}
	return nil
}

// Matches reports whether labels satisfy every requirement of s. A nil
// selector matches nothing and an empty one everything. s must be valid.
func (s *Selector) Matches(labels map[string]string) bool {
	if s == nil {
		return false
	}
	for k, v := range s.MatchLabels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	for i := range s.MatchExpressions {
		if !s.MatchExpressions[i].Matches(labels) {
			return false
		}
	}
	return true
}

// Matches reports whether labels satisfy the requirement.
func (r *Requirement) Matches(labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Operator {
	case In:
		return ok && slices.Contains(r.Values, v)
	case NotIn:
		return !ok || !slices.Contains(r.Values, v)
	case Exists:
		return ok
	case DoesNotExist:
		return !ok
	case equals:
		return ok && v == r.Values[0]
	}
	return false
}

// equals is the operator of a matchLabels entry among a selector's
// requirements (requirements): no expression may use it.
const equals Operator = "="

// Mismatch names why labels do not match s: the first requirement, in the
// order String writes them, that they do not satisfy, written as String
// writes it, and true; "" and false when they match. A nil selector,
// which matches nothing, has no requirement to name: "" and true.
func (s *Selector) Mismatch(labels map[string]string) (req string, mismatched bool) {
	if s == nil {
		return "", true
	}
	for _, r := range s.requirements() {
		if !r.Matches(labels) {
			return r.String(), true
		}
	}
	return "", false
}

// String writes s as Kubernetes writes a selector: its requirements sorted
// by key (matchLabels as key=value, then the expressions, in order, among
// equal keys), joined by commas: "team=ml,tier in (a,b),!restricted". An
// empty selector is "" (Everything), and so is nil (Nothing).
func (s *Selector) String() string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	for i, r := range s.requirements() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(r.String())
	}
	return b.String()
}

// String writes the requirement as Kubernetes does: key in (a,b), key
// notin (a,b) with the values sorted, key for Exists, !key for
// DoesNotExist.
func (r *Requirement) String() string {
	values := func() string { return strings.Join(slices.Sorted(slices.Values(r.Values)), ",") }
	switch r.Operator {
	case In:
		return r.Key + " in (" + values() + ")"
	case NotIn:
		return r.Key + " notin (" + values() + ")"
	case Exists:
		return r.Key
	case DoesNotExist:
		return "!" + r.Key
	case equals:
		return r.Key + "=" + r.Values[0]
	}
	return r.Key + " " + string(r.Operator) + " (" + values() + ")"
}

// requirements lists s's requirements in String's order, each matchLabels
// entry as a requirement of operator equals.
func (s *Selector) requirements() []Requirement {
	out := make([]Requirement, 0, len(s.MatchLabels)+len(s.MatchExpressions))
	for _, k := range sortedKeys(s.MatchLabels) {
		out = append(out, Requirement{Key: k, Operator: equals, Values: []string{s.MatchLabels[k]}})
	}
	out = append(out, s.MatchExpressions...)
	slices.SortStableFunc(out, func(a, b Requirement) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// Clone copies s down to its maps and slices; nil stays nil.
func (s *Selector) Clone() *Selector {
	if s == nil {
		return nil
	}
	c := &Selector{MatchExpressions: slices.Clone(s.MatchExpressions)}
	if s.MatchLabels != nil {
		c.MatchLabels = make(map[string]string, len(s.MatchLabels))
		for k, v := range s.MatchLabels {
			c.MatchLabels[k] = v
		}
	}
	for i := range c.MatchExpressions {
		c.MatchExpressions[i].Values = slices.Clone(c.MatchExpressions[i].Values)
	}
	return c
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// fieldKey writes a map key into a field path: .key, or ["key"] when it
// would not read after a dot.
func fieldKey(k string) string {
	for _, c := range k {
		if !(c == '-' || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return "[" + strconv.Quote(k) + "]"
		}
	}
	if k == "" {
		return `[""]`
	}
	return "." + k
}
