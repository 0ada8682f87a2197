package scenario

import (
	"errors"
	"fmt"
	"slices"

	"github.com/allot-sched/allot"
)

// errDrainDecide: allot decide shows one decision, and a drain makes many.
var errDrainDecide = errors.New("drain: a drain makes many decisions; use allot check")

// Result is the outcome of running one scenario.
type Result struct {
	Name string
	File string
	// Passed is true when Failures is empty.
	Passed bool
	// Failures has one readable line per problem, like
	//	step 3 (decide "gang"): reason: want TopologyUnsatisfiable, got InsufficientCapacity (message: ...)
	Failures []string
	// Err is what kept the scenario from running at all, its snapshot
	// refused by allot.Builder.Build: an *Error naming the file and the
	// JSON path of the value at fault. Failures then holds it alone.
	Err error
}

// Run builds the scenario's snapshot, puts it in a Store and checks the
// scenario against it: the request against its expectation, or the steps
// in order. A step that cannot be carried out (a commit or event error, a
// drain) ends the run; a mismatch does not.
func (s *Scenario) Run() (r Result) {
	r = Result{Name: s.Name, File: s.File}
	fail := func(format string, args ...any) { r.Failures = append(r.Failures, fmt.Sprintf(format, args...)) }
	where := "build" // what runs now, for a panic's failure line
	defer func() {
		// A panic in allot fails this scenario, not the whole run.
		if v := recover(); v != nil {
			fail("%s: panic: %v", where, v)
		}
		r.Passed = len(r.Failures) == 0
	}()

	snap, err := s.Build()
	if err != nil {
		var serr *Error
		errors.As(err, &serr)
		r.Err = err
		fail("build: %s: %s", serr.Path, serr.Reason)
		return r
	}
	if s.ExpectOrder != nil {
		if got := allot.Order(snap); !slices.Equal(got, s.ExpectOrder) {
			fail("expectOrder: want %v, got %v", s.ExpectOrder, got)
		}
	}
	if s.Request != nil {
		where = fmt.Sprintf("request %q", s.Request.ID)
		d := allot.Decide(snap, *s.Request)
		if s.Expect != nil {
			for _, m := range s.Expect.Mismatches(snap, &d) {
				fail("%s: %s", where, m)
			}
		}
	}

	where = "store"
	store := allot.NewStore(snap)
	for i, st := range s.Steps {
		label := fmt.Sprintf("step %d (%v)", i+1, st)
		where = label
		switch st.Kind {
		case StepDecide:
			cur := store.Load()
			d := allot.Decide(cur, st.Request)
			if st.Expect != nil {
				for _, m := range st.Expect.Mismatches(cur, &d) {
					fail("%s: %s", label, m)
				}
			}
			if st.Commit && (d.Verdict == allot.VerdictAdmit || d.Verdict == allot.VerdictPreempt) {
				if _, err := store.Commit(d); err != nil {
					fail("%s: commit: %s", label, trimAllot(err.Error()))
					return r
				}
			}
		case StepDrain:
			allot.Schedule(store)
		case StepExpectState:
			for _, m := range st.State.Mismatches(store.Load()) {
				fail("%s: %s", label, m)
			}
		default:
			ev, _ := st.Event()
			if _, err := store.Apply(ev); err != nil {
				e := s.stepError(i, st, err)
				fail("%s: %s: %s", label, e.Path, e.Reason)
				return r
			}
		}
	}
	return r
}

// Decide returns the decision on the scenario's request. For a scenario
// with steps it applies the events before the first decide step and decides
// that step's request. Expectations are not checked.
func (s *Scenario) Decide() (allot.Decision, error) {
	snap, err := s.Build()
	if err != nil {
		return allot.Decision{}, err
	}
	if s.Request != nil {
		return allot.Decide(snap, *s.Request), nil
	}
	store := allot.NewStore(snap)
	for i, st := range s.Steps {
		switch st.Kind {
		case StepDecide:
			return allot.Decide(store.Load(), st.Request), nil
		case StepDrain:
			return allot.Decision{}, fmt.Errorf("%s: step %d: %w", s.File, i+1, errDrainDecide)
		case StepExpectState:
			// Nothing to check here.
		default:
			ev, _ := st.Event()
			if _, err := store.Apply(ev); err != nil {
				return allot.Decision{}, s.stepError(i, st, err)
			}
		}
	}
	return allot.Decision{}, fmt.Errorf("%s: no request to decide", s.File)
}

// DecideStep returns the decision of step n (from 1), which must be a
// decide step, on the snapshot the steps before it leave: they are
// replayed as Run replays them (decide steps committing where they say
// commit, drains running the loop, events applied), without checking
// expectations. allot decide -step N prints it.
func (s *Scenario) DecideStep(n int) (allot.Decision, error) {
	if n < 1 || n > len(s.Steps) {
		return allot.Decision{}, &Error{File: s.File, Path: "$.steps", Reason: fmt.Sprintf("no step %d: the file has %d", n, len(s.Steps))}
	}
	st := s.Steps[n-1]
	if st.Kind != StepDecide {
		return allot.Decision{}, &Error{File: s.File, Path: fmt.Sprintf("$.steps[%d]", n-1), Reason: fmt.Sprintf("step %d is %v, not a decide step", n, st)}
	}
	snap, err := s.replay(n-1, nil)
	if err != nil {
		return allot.Decision{}, err
	}
	return allot.Decide(snap, st.Request), nil
}
