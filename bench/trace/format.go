package trace

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// csvColumns is the header of allot's CSV trace format; csvOptional may
// follow it.
var csvColumns = []string{"id", "queue", "submit", "duration", "gpus", "gpusPerPod", "priority", "priorityClass", "preemptible", "checkpoint"}

// optionalColumn is one optional column of allot's CSV format: its name,
// the bit size of its field and how to read and set that field.
type optionalColumn struct {
	name string
	bits int
	get  func(*Job) int64
	set  func(*Job, int64)
}

// csvOptional are the optional last columns of allot's CSV format, in the
// order they must come in. They are optional so that a file written before
// they existed, or of a trace that does not use them, stays as it was.
var csvOptional = []optionalColumn{
	{"gpuMilli", 32, func(j *Job) int64 { return int64(j.GPUMilli) }, func(j *Job, v int64) { j.GPUMilli = int32(v) }},
	{"cpuMilli", 64, func(j *Job) int64 { return j.CPUMilli }, func(j *Job, v int64) { j.CPUMilli = v }},
	{"memoryMiB", 64, func(j *Job) int64 { return j.MemoryMiB }, func(j *Job, v int64) { j.MemoryMiB = v }},
}

// csvOptionalNames lists the names of csvOptional, for messages.
func csvOptionalNames() string {
	names := make([]string, len(csvOptional))
	for k, c := range csvOptional {
		names[k] = c.name
	}
	return strings.Join(names, ", ")
}

// Load reads a trace in allot's own format, choosing by the file's
// extension: ".json" for JSON (ReadJSON), ".csv" for CSV (ReadCSV).
func Load(path string) (*Trace, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".json" && ext != ".csv" {
		return nil, &RowError{File: path, Reason: fmt.Sprintf("unknown trace format %q: want .json or .csv", ext)}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if ext == ".json" {
		return ReadJSON(f, path)
	}
	return ReadCSV(f, path)
}

// ReadJSON reads a trace in allot's JSON format from r: either a Trace
// object or a bare array of jobs, in which case the trace is named after
// name. Unknown fields are errors. The jobs are sorted by submit time then
// ID, and must satisfy Trace.Validate; errors are *RowErrors.
func ReadJSON(r io.Reader, name string) (*Trace, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &RowError{File: name, Reason: "read failed: " + err.Error()}
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	t := &Trace{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	switch {
	case len(trimmed) == 0:
		return nil, &RowError{File: name, Line: 1, Reason: "empty file, want a JSON object or array"}
	case trimmed[0] == '[':
		err = dec.Decode(&t.Jobs)
		t.Name = name
	case trimmed[0] == '{':
		err = dec.Decode(t)
	default:
		off := len(data) - len(trimmed)
		return nil, &RowError{File: name, Line: lineAt(data, int64(off)), Reason: "want a JSON object or array"}
	}
	if err != nil {
		return nil, jsonError(name, data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &RowError{File: name, Line: lineAt(data, dec.InputOffset()), Reason: "unexpected data after the trace"}
	}
	if t.Jobs == nil {
		t.Jobs = []Job{}
	}
	SortJobs(t.Jobs)
	if err := t.Validate(); err != nil {
		return nil, &RowError{File: name, Reason: err.Error()}
	}
	return t, nil
}

// jsonError converts a JSON decoding error into a RowError with the line
// where decoding stopped.
func jsonError(name string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &RowError{File: name, Line: lineAt(data, se.Offset), Reason: "malformed JSON: " + se.Error()}
	case errors.As(err, &te):
		return &RowError{File: name, Line: lineAt(data, te.Offset), Reason: "malformed JSON: " + te.Error()}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &RowError{File: name, Line: lineAt(data, int64(len(data))), Reason: "malformed JSON: unexpected end of input"}
	}
	return &RowError{File: name, Reason: "malformed JSON: " + err.Error()}
}

// lineAt returns the 1-based line holding byte offset off of data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte{'\n'})
}

// ReadCSV reads a trace in allot's CSV format from r; name is used in
// errors and as the trace's name. The header must be
// id,queue,submit,duration,gpus,gpusPerPod,priority,priorityClass,preemptible,checkpoint
// optionally followed by any of gpuMilli, cpuMilli and memoryMiB, in that
// order. Empty gpusPerPod, priority, priorityClass, preemptible,
// checkpoint, gpuMilli, cpuMilli and memoryMiB fields read as zero values.
// The jobs are sorted by submit time then ID; a malformed row, an invalid
// job or a repeated ID fails with a *RowError naming the line.
func ReadCSV(r io.Reader, name string) (*Trace, error) {
	tab, err := openCSVTable(r, name)
	if err != nil {
		return nil, err
	}
	if n := len(tab.header); n < len(csvColumns) || n > len(csvColumns)+len(csvOptional) {
		return nil, tab.errorf("header has %d columns, want %d (%s) followed by up to %d of %s",
			n, len(csvColumns), strings.Join(csvColumns, ","), len(csvOptional), csvOptionalNames())
	}
	for i, w := range csvColumns {
		if tab.header[i] != w {
			return nil, tab.errorf("header column %d is %q, want %q", i+1, tab.header[i], w)
		}
	}
	// optional[i] is the index in csvOptional of column len(csvColumns)+i.
	var optional []int
	for i, h := range tab.header[len(csvColumns):] {
		k := slices.IndexFunc(csvOptional, func(c optionalColumn) bool { return c.name == h })
		if k < 0 || len(optional) > 0 && k <= optional[len(optional)-1] {
			return nil, tab.errorf("header column %d is %q, want one of %s, each at most once and in that order",
				len(csvColumns)+i+1, h, csvOptionalNames())
		}
		optional = append(optional, k)
	}
	t := &Trace{Name: name, Jobs: []Job{}}
	seen := make(map[string]int)
	for {
		rec, err := tab.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		j, err := parseCSVJob(rec, optional)
		if err != nil {
			return nil, tab.errorf("%s", err)
		}
		if prev, dup := seen[j.ID]; dup {
			return nil, tab.errorf("id %q already used on line %d", j.ID, prev)
		}
		seen[j.ID] = tab.line
		t.Jobs = append(t.Jobs, j)
	}
	SortJobs(t.Jobs)
	return t, nil
}

// parseCSVJob reads one row of allot's CSV format and validates the job;
// optional lists the optional columns the row holds (see ReadCSV).
func parseCSVJob(rec []string, optional []int) (Job, error) {
	j := Job{ID: rec[0], Queue: rec[1], PriorityClass: rec[7]}
	var err error
	field := func(i int, blankOK bool, bits int) int64 {
		s := strings.TrimSpace(rec[i])
		if err != nil || (blankOK && s == "") {
			return 0
		}
		v, e := strconv.ParseInt(s, 10, bits)
		if e != nil {
			var name string
			if i < len(csvColumns) {
				name = csvColumns[i]
			} else {
				name = csvOptional[optional[i-len(csvColumns)]].name
			}
			err = fmt.Errorf("bad %s %q: %s", name, rec[i], intReason(e))
		}
		return v
	}
	j.Submit = field(2, false, 64)
	j.Duration = field(3, false, 64)
	j.GPUs = int32(field(4, false, 32))
	j.GPUsPerPod = int32(field(5, true, 32))
	j.Priority = int32(field(6, true, 32))
	j.Checkpoint = field(9, true, 64)
	for i, k := range optional {
		c := &csvOptional[k]
		c.set(&j, field(len(csvColumns)+i, true, c.bits))
	}
	if err != nil {
		return j, err
	}
	if s := strings.TrimSpace(rec[8]); s != "" {
		b, e := strconv.ParseBool(s)
		if e != nil {
			return j, fmt.Errorf("bad preemptible %q: want true or false", rec[8])
		}
		j.Preemptible = b
	}
	if err := validateJob(&j); err != nil {
		return j, err
	}
	return j, nil
}

// WriteJSON writes t in allot's JSON format: the Trace object, indented,
// followed by a newline. The output depends only on t.
func WriteJSON(w io.Writer, t *Trace) error {
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	_, err = w.Write(data)
	return err
}

// WriteCSV writes the jobs of t in allot's CSV format, in the trace's
// order. Each optional column (gpuMilli, cpuMilli, memoryMiB) is added only
// when some job has a value in it, so a trace that uses none of them
// writes the ten-column form. The trace's name, nodes and counts are not
// part of the CSV format.
func WriteCSV(w io.Writer, t *Trace) error {
	var optional []int
	for k := range csvOptional {
		for i := range t.Jobs {
			if csvOptional[k].get(&t.Jobs[i]) != 0 {
				optional = append(optional, k)
				break
			}
		}
	}
	cw := csv.NewWriter(w)
	header := slices.Clone(csvColumns)
	for _, k := range optional {
		header = append(header, csvOptional[k].name)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(header))
	for i := range t.Jobs {
		j := &t.Jobs[i]
		rec[0] = j.ID
		rec[1] = j.Queue
		rec[2] = strconv.FormatInt(j.Submit, 10)
		rec[3] = strconv.FormatInt(j.Duration, 10)
		rec[4] = strconv.FormatInt(int64(j.GPUs), 10)
		rec[5] = strconv.FormatInt(int64(j.GPUsPerPod), 10)
		rec[6] = strconv.FormatInt(int64(j.Priority), 10)
		rec[7] = j.PriorityClass
		rec[8] = strconv.FormatBool(j.Preemptible)
		rec[9] = strconv.FormatInt(j.Checkpoint, 10)
		for i, k := range optional {
			rec[len(csvColumns)+i] = strconv.FormatInt(csvOptional[k].get(j), 10)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
