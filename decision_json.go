// A decision's JSON form: the decision with the request it answers, so that
// one process can decide and another commit.

package allot

import "encoding/json"

// decisionFields is Decision without its methods, for the JSON codec to
// walk its fields.
type decisionFields Decision

// decisionJSON is a decision's JSON form: its fields, then the request.
type decisionJSON struct {
	*decisionFields
	Request *Request `json:"request"`
}

// MarshalJSON renders the decision with the request it answers as
// "request": together with the version, flavors, placement and victims,
// everything Store.Commit needs. A webhook that decides can hand the JSON
// to a controller that commits.
func (d Decision) MarshalJSON() ([]byte, error) {
	return json.Marshal(decisionJSON{(*decisionFields)(&d), &d.request})
}

// UnmarshalJSON reads a decision MarshalJSON wrote. The decision it gives
// can be committed: Store.Commit checks it as it checks a decision made on
// an older version (its request validated again, its victims chosen again
// by Decide on the current snapshot, its quota, caps and placement checked
// against what is free), so a decision changed on the way is refused, never
// double-booked.
func (d *Decision) UnmarshalJSON(b []byte) error {
	var f decisionFields
	v := decisionJSON{&f, &f.request}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*d = Decision(f)
	return nil
}
