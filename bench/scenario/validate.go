// Validating a scenario without running its checks: what allot validate
// does.

package scenario

import (
	"fmt"
	"strings"

	"github.com/allot-sched/allot"
)

// Validate checks that the scenario can run: its snapshot builds, the
// store takes every step's event and commit, and every request (the
// file's, and each decide step's on the snapshot of its step) is one
// Decide weighs: not rejected as malformed (InvalidRequest) or for naming
// no queue (UnknownQueue), unless its expect says it is (a Reject with
// that reason, or with none named). The steps are replayed as Run replays
// them; expectations are not compared. The first problem is an *Error
// naming the file and the JSON path of the value at fault.
func (s *Scenario) Validate() error {
	snap, err := s.replay(len(s.Steps), func(i int, st Step, cur *allot.Snapshot) error {
		return s.requestError(cur, st.Request, st.Expect, fmt.Sprintf("$.steps[%d].decide", i))
	})
	if err != nil {
		return err
	}
	if s.Request != nil {
		// A file with a request has no steps: it is decided on the
		// snapshot as built.
		return s.requestError(snap, *s.Request, s.Expect, "$.request")
	}
	return nil
}

// requestError is the *Error of request r, at JSON path at, when Decide on
// cur rejects it as malformed or for its queue and expect does not say it
// should: the path of the field Decide names.
func (s *Scenario) requestError(cur *allot.Snapshot, r allot.Request, expect *Expect, at string) error {
	d := allot.Decide(cur, r)
	if d.Reason != allot.InvalidRequest && d.Reason != allot.UnknownQueue {
		return nil
	}
	if expect != nil && (expect.Reason == d.Reason || expect.Reason == 0 && expect.Verdict == allot.VerdictReject) {
		return nil // a scenario about the rejection
	}
	// An InvalidRequest message starts with the request's field at fault
	// ("podSets[0].topology.required: ..."); UnknownQueue's is about the
	// queue.
	field, detail := "queue", d.Message
	if d.Reason == allot.InvalidRequest {
		if f, rest, ok := strings.Cut(d.Message, ": "); ok {
			field, detail = f, rest
		} else {
			field = ""
		}
	}
	path := at
	if field != "" {
		path += "." + field
	}
	return &Error{File: s.File, Path: path, Reason: fmt.Sprintf("Decide rejects the request (%v): %s", d.Reason, detail)}
}
