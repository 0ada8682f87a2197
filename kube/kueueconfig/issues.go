// What the importer says about the objects it reads: warnings for what
// allot does not model, errors for what it refuses.

package kueueconfig

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Errors of the importer, checked with errors.Is.
var (
	// ErrInvalid: an object Kueue's own validation refuses (its CRD's rules
	// or its webhook's). The error is an *ObjectError.
	ErrInvalid = errors.New("kueueconfig: invalid object")
	// ErrNotModelled: an object or field allot cannot represent without
	// changing the answer (a ClusterQueue with two resource groups).
	ErrNotModelled = errors.New("kueueconfig: not modelled")
	// ErrDuplicate: two objects of one kind with the same name.
	ErrDuplicate = errors.New("kueueconfig: duplicate object")
)

// A Warning names an object and a field whose setting allot does not
// model, or models only in part, and says what allot does instead:
//
//	clusterqueues/team-a-cq: spec.admissionChecksStrategy: not modelled: admission checks are not run
type Warning struct {
	// Object is the kubectl-style name: "clusterqueues/team-a-cq",
	// "pods/team-a/worker-0".
	Object string
	// Field is the field's path ("spec.stopPolicy"), empty for the object
	// as a whole.
	Field   string
	Message string
}

func (w Warning) String() string {
	if w.Field == "" {
		return w.Object + ": " + w.Message
	}
	return w.Object + ": " + w.Field + ": " + w.Message
}

// An ObjectError is an object the importer refuses, with every error found
// in it. Its Error text is the API server's: the object, then each field's
// error.
type ObjectError struct {
	// Object is the kubectl-style name; Source is where it was read.
	Object, Source string
	Errs           field.ErrorList
	// Err is ErrInvalid or ErrNotModelled.
	Err error
}

func (e *ObjectError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, fe := range e.Errs {
		msgs[i] = fe.Error()
	}
	s := e.Object + ": " + strings.Join(msgs, "; ")
	if e.Source != "" {
		s = e.Source + ": " + s
	}
	return s
}

func (e *ObjectError) Unwrap() error { return e.Err }

// notModelled is the error of a field allot cannot represent.
func notModelled(object, source string, p *field.Path, format string, args ...any) *ObjectError {
	return &ObjectError{Object: object, Source: source, Err: ErrNotModelled,
		Errs: field.ErrorList{field.Forbidden(p, "not modelled: "+fmt.Sprintf(format, args...))}}
}
