package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sampleTrace returns a small trace that uses every field.
func sampleTrace() *Trace {
	return &Trace{
		Name: "sample",
		Jobs: []Job{
			{ID: "a", Queue: "team-00", Submit: 0, Duration: 3600, GPUs: 8, Priority: 50, PriorityClass: "normal", CPUMilli: 32000, MemoryMiB: 131072},
			{ID: "b,quoted \"id\"", Queue: "team-01", Submit: 60, Duration: 600, GPUs: 16, GPUsPerPod: 8, Priority: -3, PriorityClass: "low", Preemptible: true, Checkpoint: 1800},
			{ID: "c", Queue: "", Submit: 60, Duration: 1, GPUs: 1, GPUMilli: 250, CPUMilli: 500},
		},
		Nodes:      []Node{{Name: "n0", GPUs: 8, CPUMilli: 64000, MemoryMiB: 1024, Model: "T4"}},
		Duplicates: 2,
		Skipped:    map[string]int{SkipPending: 3},
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, tr := range []*Trace{sampleTrace(), Synthetic(SyntheticConfig{Jobs: 200})} {
		var buf bytes.Buffer
		if err := WriteJSON(&buf, tr); err != nil {
			t.Fatal(err)
		}
		got, err := ReadJSON(bytes.NewReader(buf.Bytes()), "t.json")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tr) {
			t.Fatalf("round trip changed the trace:\n got %+v\nwant %+v", got, tr)
		}
	}
}

func TestJSONArray(t *testing.T) {
	in := `[{"id":"b","queue":"q","submit":5,"duration":10,"gpus":2},
	        {"id":"a","queue":"q","submit":5,"duration":10,"gpus":1}]`
	tr, err := ReadJSON(strings.NewReader(in), "jobs.json")
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tr)
	if tr.Name != "jobs.json" || len(tr.Jobs) != 2 || tr.Jobs[0].ID != "a" {
		t.Fatalf("got %+v, want jobs a then b named jobs.json", tr)
	}
}

func TestCSVRoundTrip(t *testing.T) {
	for _, tr := range []*Trace{sampleTrace(), Synthetic(SyntheticConfig{Jobs: 200})} {
		var buf bytes.Buffer
		if err := WriteCSV(&buf, tr); err != nil {
			t.Fatal(err)
		}
		got, err := ReadCSV(bytes.NewReader(buf.Bytes()), "t.csv")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Jobs, tr.Jobs) {
			t.Fatalf("round trip changed the jobs:\n got %+v\nwant %+v", got.Jobs, tr.Jobs)
		}
	}
}

// TestCSVOptionalColumns: the writer adds only the optional columns some
// job uses, and the reader takes any of them in their order.
func TestCSVOptionalColumns(t *testing.T) {
	tr := &Trace{Jobs: []Job{
		{ID: "a", Queue: "q", Duration: 10, GPUs: 1, MemoryMiB: 2048},
		{ID: "b", Queue: "q", Duration: 10, GPUs: 2},
	}}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, tr); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(buf.String(), "\n")
	if want := strings.Join(csvColumns, ",") + ",memoryMiB"; first != want {
		t.Fatalf("header %q, want %q", first, want)
	}
	got, err := ReadCSV(&buf, "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Jobs, tr.Jobs) {
		t.Fatalf("round trip changed the jobs:\n got %+v\nwant %+v", got.Jobs, tr.Jobs)
	}
	in := strings.Join(csvColumns, ",") + ",gpuMilli,cpuMilli\n" + "a,q,0,10,1,,,,,,,1500\n"
	got, err = ReadCSV(strings.NewReader(in), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Job{ID: "a", Queue: "q", Duration: 10, GPUs: 1, CPUMilli: 1500}); got.Jobs[0] != want {
		t.Fatalf("got %+v, want %+v", got.Jobs[0], want)
	}
}

func TestCSVHeaderWithoutShares(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, Synthetic(SyntheticConfig{Jobs: 3})); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(buf.String(), "\n")
	if want := strings.Join(csvColumns, ","); first != want {
		t.Fatalf("header %q, want %q", first, want)
	}
}

func TestReadCSVOptionalFields(t *testing.T) {
	in := "id,queue,submit,duration,gpus,gpusPerPod,priority,priorityClass,preemptible,checkpoint\n" +
		"b,q,7,10,2,,,,,\n" +
		"a,q,3,10,1,1,5,hi,1,60\n"
	tr, err := ReadCSV(strings.NewReader(in), "j.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: "a", Queue: "q", Submit: 3, Duration: 10, GPUs: 1, GPUsPerPod: 1, Priority: 5, PriorityClass: "hi", Preemptible: true, Checkpoint: 60},
		{ID: "b", Queue: "q", Submit: 7, Duration: 10, GPUs: 2},
	}
	if !reflect.DeepEqual(tr.Jobs, want) {
		t.Fatalf("got %+v, want %+v", tr.Jobs, want)
	}
}

func TestReadCSVErrors(t *testing.T) {
	const header = "id,queue,submit,duration,gpus,gpusPerPod,priority,priorityClass,preemptible,checkpoint\n"
	const ok = "a,q,0,10,1,0,0,,false,0\n"
	tests := []struct {
		name   string
		in     string
		line   int
		reason string
	}{
		{"empty", "", 1, "missing header"},
		{"wrong header", "id,queue\n", 1, "header has 2 columns"},
		{"misnamed column", strings.Replace(header, "gpus,", "gpu,", 1), 1, `header column 5 is "gpu"`},
		{"misnamed share column", strings.TrimSuffix(header, "\n") + ",milli\n", 1, `header column 11 is "milli"`},
		{"optional columns out of order", strings.TrimSuffix(header, "\n") + ",memoryMiB,cpuMilli\n", 1, `header column 12 is "cpuMilli", want one of gpuMilli, cpuMilli, memoryMiB`},
		{"optional column twice", strings.TrimSuffix(header, "\n") + ",cpuMilli,cpuMilli\n", 1, `header column 12 is "cpuMilli"`},
		{"too many columns", strings.TrimSuffix(header, "\n") + ",gpuMilli,cpuMilli,memoryMiB,disk\n", 1, "header has 14 columns"},
		{"bad cpu", strings.TrimSuffix(header, "\n") + ",cpuMilli\n" + "a,q,0,10,1,0,0,,false,0,lots\n", 2, `bad cpuMilli "lots"`},
		{"negative memory", strings.TrimSuffix(header, "\n") + ",memoryMiB\n" + "a,q,0,10,1,0,0,,false,0,-1\n", 2, "memory request -1 MiB outside"},
		{"wrong field count", header + ok + "b,q,0,10\n", 3, "row has 4 fields, want 10"},
		{"bad submit", header + "a,q,soon,10,1,0,0,,false,0\n", 2, `bad submit "soon": not an integer`},
		{"missing duration", header + "a,q,0,,1,0,0,,false,0\n", 2, `bad duration ""`},
		{"negative duration", header + "a,q,0,-10,1,0,0,,false,0\n", 2, "duration -10 is not positive"},
		{"zero GPUs", header + "a,q,0,10,0,0,0,,false,0\n", 2, "GPU count 0 is not positive"},
		{"GPUs out of range", header + "a,q,0,10,4294967296,0,0,,false,0\n", 2, "out of range"},
		{"negative submit", header + "a,q,-1,10,1,0,0,,false,0\n", 2, "negative submit time"},
		{"bad preemptible", header + "a,q,0,10,1,0,0,,maybe,0\n", 2, `bad preemptible "maybe"`},
		{"negative checkpoint", header + "a,q,0,10,1,0,0,,true,-5\n", 2, "negative checkpoint"},
		{"empty id", header + ",q,0,10,1,0,0,,false,0\n", 2, "empty id"},
		{"duplicate id", header + ok + ok, 3, `id "a" already used on line 2`},
		{"share on a multi-GPU job", strings.TrimSuffix(header, "\n") + ",gpuMilli\n" + "a,q,0,10,2,0,0,,false,0,500\n", 2, "GPU share 500 milli on a job of 2 GPUs"},
		{"bad share", strings.TrimSuffix(header, "\n") + ",gpuMilli\n" + "a,q,0,10,1,0,0,,false,0,half\n", 2, `bad gpuMilli "half"`},
		{"malformed quote", header + ok + "\"a,q,0,10,1,0,0,,false,0\n", 3, "malformed CSV"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(tt.in), "jobs.csv")
			wantRowError(t, err, "jobs.csv", tt.line, tt.reason)
		})
	}
}

func TestReadJSONErrors(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		line   int
		reason string
	}{
		{"empty", "  \n", 1, "empty file"},
		{"not an object", "\n\n42", 3, "want a JSON object or array"},
		{"syntax error", "{\n\"name\": \"x\",\n\"jobs\": [,]\n}", 3, "malformed JSON"},
		{"wrong type", "{\n\"jobs\": [\n{\"id\": \"a\", \"gpus\": \"eight\"}]}", 3, "malformed JSON"},
		{"unknown field", `{"jobs": [], "colour": "red"}`, 0, "unknown field"},
		{"truncated", "{\"jobs\": [\n", 2, "unexpected end"},
		{"trailing data", "[]\n[]", 2, "unexpected data"},
		{"zero GPUs", `[{"id":"a","submit":0,"duration":5,"gpus":0}]`, 0, "GPU count 0 is not positive"},
		{"duplicate id", `[{"id":"a","duration":5,"gpus":1},{"id":"a","duration":5,"gpus":1}]`, 0, `duplicate id "a"`},
		{"negative duration", `{"jobs":[{"id":"a","duration":-5,"gpus":1}]}`, 0, "duration -5 is not positive"},
		{"negative CPU", `[{"id":"a","duration":5,"gpus":1,"cpuMilli":-1}]`, 0, "CPU request -1 milli outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadJSON(strings.NewReader(tt.in), "t.json")
			wantRowError(t, err, "t.json", tt.line, tt.reason)
		})
	}
}

func TestLoadByExtension(t *testing.T) {
	dir := t.TempDir()
	tr := sampleTrace()
	var js, cs bytes.Buffer
	if err := WriteJSON(&js, tr); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&cs, tr); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "t.JSON")
	csvPath := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(jsonPath, js.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csvPath, cs.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Load(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, tr) {
		t.Errorf("Load(json) = %+v, want %+v", got, tr)
	}
	got, err = Load(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != csvPath || !reflect.DeepEqual(got.Jobs, tr.Jobs) {
		t.Errorf("Load(csv) = %+v, want the jobs of %+v", got, tr)
	}
	_, err = Load(filepath.Join(dir, "t.txt"))
	wantRowError(t, err, filepath.Join(dir, "t.txt"), 0, "unknown trace format")
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("loading a missing file succeeded")
	}
}

func TestRowErrorMessage(t *testing.T) {
	if got := (&RowError{File: "f.csv", Line: 3, Reason: "bad"}).Error(); got != "f.csv:3: bad" {
		t.Errorf("got %q", got)
	}
	if got := (&RowError{File: "f.json", Reason: "bad"}).Error(); got != "f.json: bad" {
		t.Errorf("got %q", got)
	}
}

func TestStats(t *testing.T) {
	if s := (&Trace{}).Stats(); s != (Stats{}) {
		t.Errorf("empty trace stats %+v, want zero", s)
	}
	tr := &Trace{Jobs: []Job{
		{ID: "a", Submit: 10, Duration: 100, GPUs: 1},
		{ID: "b", Submit: 20, Duration: 10, GPUs: 8},
		{ID: "c", Submit: 30, Duration: 1000, GPUs: 1, GPUMilli: 500},
		{ID: "d", Submit: 40, Duration: 1, GPUs: 4},
	}}
	s := tr.Stats()
	want := Stats{
		Jobs:         4,
		GPUHours:     (100 + 80 + 500 + 4) / 3600.0,
		Median:       10,
		P90:          1000,
		P99:          1000,
		JobShare:     [NumSizeClasses]float64{0.5, 0.25, 0.25, 0},
		GPUTimeShare: [NumSizeClasses]float64{600 / 684.0, 4 / 684.0, 80 / 684.0, 0},
		Span:         30,
	}
	if s != want {
		t.Errorf("stats %+v, want %+v", s, want)
	}
	if got := Percentile[int64](nil, 0.5); got != 0 {
		t.Errorf("Percentile(nil) = %d, want 0", got)
	}
}

// TestDocExamples reads the examples of the package documentation.
func TestDocExamples(t *testing.T) {
	js := `{
  "name": "example",
  "jobs": [
    {"id": "a", "queue": "team-00", "submit": 0, "duration": 3600, "gpus": 8,
     "priority": 50, "priorityClass": "normal"},
    {"id": "b", "queue": "team-01", "submit": 60, "duration": 600, "gpus": 16,
     "gpusPerPod": 8, "priority": 0, "priorityClass": "low",
     "preemptible": true, "checkpoint": 1800}
  ],
  "nodes": [{"name": "n0", "gpus": 8}],
  "duplicates": 0,
  "skipped": {"pending": 3}
}`
	cs := `id,queue,submit,duration,gpus,gpusPerPod,priority,priorityClass,preemptible,checkpoint
a,team-00,0,3600,8,0,50,normal,false,0
b,team-01,60,600,16,8,0,low,true,1800
`
	fromJSON, err := ReadJSON(strings.NewReader(js), "example.json")
	if err != nil {
		t.Fatal(err)
	}
	fromCSV, err := ReadCSV(strings.NewReader(cs), "example.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromJSON.Jobs, fromCSV.Jobs) || len(fromJSON.Jobs) != 2 {
		t.Fatalf("the examples differ:\nJSON %+v\n CSV %+v", fromJSON.Jobs, fromCSV.Jobs)
	}
}
