package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// RowError reports input that could not be loaded: the file (or the name
// the caller gave the reader), the 1-based line the problem is on (0 when
// it is not tied to one line) and what is wrong.
type RowError struct {
	File   string
	Line   int
	Reason string
}

// Error formats the error as "file:line: reason", leaving the line out
// when it is unknown.
func (e *RowError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Reason)
}

// csvTable reads a CSV file whose first record is a header, checking the
// header and the field count of every row and turning the reader's own
// errors into RowErrors.
type csvTable struct {
	name   string
	r      *csv.Reader
	header []string
	line   int
}

// newCSVTable reads the header from r and checks that it holds exactly the
// wanted columns, in order.
func newCSVTable(r io.Reader, name string, want []string) (*csvTable, error) {
	t, err := openCSVTable(r, name)
	if err != nil {
		return nil, err
	}
	if len(t.header) != len(want) {
		return nil, t.errorf("header has %d columns, want %d (%s)", len(t.header), len(want), strings.Join(want, ","))
	}
	for i, w := range want {
		if t.header[i] != w {
			return nil, t.errorf("header column %d is %q, want %q", i+1, t.header[i], w)
		}
	}
	return t, nil
}

// openCSVTable reads the header from r without checking its columns.
func openCSVTable(r io.Reader, name string) (*csvTable, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	t := &csvTable{name: name, r: cr, line: 1}
	rec, err := cr.Read()
	if err == io.EOF {
		return nil, &RowError{File: name, Line: 1, Reason: "empty file, missing header"}
	}
	if err != nil {
		return nil, t.readError(err)
	}
	t.header = make([]string, len(rec))
	for i, f := range rec {
		f = strings.TrimSpace(f)
		if i == 0 {
			f = strings.TrimPrefix(f, "\ufeff")
		}
		t.header[i] = f
	}
	return t, nil
}

// next returns the next row, or io.EOF at the end of the input. The slice
// is reused by the following call. Rows with a field count other than the
// header's are errors.
func (t *csvTable) next() ([]string, error) {
	rec, err := t.r.Read()
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, t.readError(err)
	}
	t.line, _ = t.r.FieldPos(0)
	if len(rec) != len(t.header) {
		return nil, t.errorf("row has %d fields, want %d", len(rec), len(t.header))
	}
	return rec, nil
}

// errorf returns a RowError on the line of the last record read.
func (t *csvTable) errorf(format string, args ...any) *RowError {
	return &RowError{File: t.name, Line: t.line, Reason: fmt.Sprintf(format, args...)}
}

// intReason explains why strconv could not read an integer.
func intReason(err error) string {
	if errors.Is(err, strconv.ErrRange) {
		return "integer out of range"
	}
	return "not an integer"
}

// readError converts an error from the CSV reader into a RowError.
func (t *csvTable) readError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		line := pe.Line
		if line == 0 {
			line = pe.StartLine
		}
		return &RowError{File: t.name, Line: line, Reason: "malformed CSV: " + pe.Err.Error()}
	}
	return &RowError{File: t.name, Line: t.line, Reason: "read failed: " + err.Error()}
}
