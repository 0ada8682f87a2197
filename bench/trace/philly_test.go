package trace

import (
	"math"
	"strings"
	"testing"
	"time"
)

const phillyHeader = "timestamp,duration,num_gpus,gpu_time,cluster\n"

func TestParsePhilly(t *testing.T) {
	in := phillyHeader +
		"2017-10-09 07:01:55,66.0,1,66.0,vc1\n" +
		"2017-10-09 06:13:03,2951.4,2,5902.8,vc2\n" +
		"2017-10-09 07:01:55,66.0,1,66.0,vc1\n" +
		"2017-10-09 06:13:03,0,4,0,vc3\n"
	tr, err := ParsePhilly(strings.NewReader(in), "p.csv")
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tr)
	want := []Job{
		{ID: "philly-1", Queue: "vc2", Submit: 0, Duration: 2952, GPUs: 2},
		{ID: "philly-3", Queue: "vc3", Submit: 0, Duration: 1, GPUs: 4},
		{ID: "philly-0", Queue: "vc1", Submit: 2932, Duration: 66, GPUs: 1},
		{ID: "philly-2", Queue: "vc1", Submit: 2932, Duration: 66, GPUs: 1},
	}
	if len(tr.Jobs) != len(want) {
		t.Fatalf("got %d jobs, want %d: %+v", len(tr.Jobs), len(want), tr.Jobs)
	}
	for i := range want {
		if tr.Jobs[i] != want[i] {
			t.Errorf("job %d = %+v, want %+v", i, tr.Jobs[i], want[i])
		}
	}
	if tr.Duplicates != 1 || tr.Name != "p.csv" {
		t.Errorf("duplicates %d name %q, want 1 and p.csv", tr.Duplicates, tr.Name)
	}
}

func TestParsePhillyEmpty(t *testing.T) {
	tr, err := ParsePhilly(strings.NewReader(phillyHeader), "p.csv")
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tr)
	if len(tr.Jobs) != 0 {
		t.Fatalf("got %d jobs from a header-only file", len(tr.Jobs))
	}
}

func TestParsePhillyErrors(t *testing.T) {
	const ok = "2017-10-09 07:01:55,66.0,1,66.0,vc1\n"
	tests := []struct {
		name   string
		in     string
		line   int
		reason string
	}{
		{"empty file", "", 1, "missing header"},
		{"wrong header", "timestamp,duration,gpus,gpu_time,cluster\n", 1, `header column 3 is "gpus"`},
		{"short header", "timestamp,duration\n", 1, "header has 2 columns"},
		{"too few fields", phillyHeader + ok + "2017-10-09 07:01:55,66.0,1,66.0\n", 3, "row has 4 fields, want 5"},
		{"too many fields", phillyHeader + "2017-10-09 07:01:55,66.0,1,66.0,vc1,x\n", 2, "row has 6 fields"},
		{"bad timestamp", phillyHeader + "2017-13-09 07:01:55,66.0,1,66.0,vc1\n", 2, "bad timestamp"},
		{"bad duration", phillyHeader + ok + ok + "2017-10-09 07:01:55,abc,1,66.0,vc1\n", 4, `bad duration "abc": not a number`},
		{"NaN duration", phillyHeader + "2017-10-09 07:01:55,NaN,1,66.0,vc1\n", 2, "bad duration"},
		{"infinite duration", phillyHeader + "2017-10-09 07:01:55,+Inf,1,66.0,vc1\n", 2, "bad duration"},
		{"negative duration", phillyHeader + "2017-10-09 07:01:55,-5,1,66.0,vc1\n", 2, `bad duration "-5": negative`},
		{"huge duration", phillyHeader + "2017-10-09 07:01:55,1e300,1,66.0,vc1\n", 2, "too large"},
		{"zero GPUs", phillyHeader + "2017-10-09 07:01:55,66.0,0,66.0,vc1\n", 2, "num_gpus 0 is not positive"},
		{"negative GPUs", phillyHeader + "2017-10-09 07:01:55,66.0,-2,66.0,vc1\n", 2, "num_gpus -2 is not positive"},
		{"fractional GPUs", phillyHeader + "2017-10-09 07:01:55,66.0,1.5,66.0,vc1\n", 2, "bad num_gpus"},
		{"GPUs out of range", phillyHeader + "2017-10-09 07:01:55,66.0,9999999999,66.0,vc1\n", 2, "out of range"},
		{"bad gpu_time", phillyHeader + "2017-10-09 07:01:55,66.0,1,x,vc1\n", 2, "bad gpu_time"},
		{"negative gpu_time", phillyHeader + "2017-10-09 07:01:55,66.0,1,-1,vc1\n", 2, "gpu_time \"-1\" is negative"},
		{"empty cluster", phillyHeader + "2017-10-09 07:01:55,66.0,1,66.0, \n", 2, "empty cluster"},
		{"bare quote", phillyHeader + "2017-10-09 07:01:55,6\"6,1,66.0,vc1\n", 2, "malformed CSV"},
		{"unterminated quote", phillyHeader + ok + "\"2017-10-09 07:01:55,66.0,1,66.0,vc1\n", 3, "malformed CSV"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePhilly(strings.NewReader(tt.in), "philly.csv")
			wantRowError(t, err, "philly.csv", tt.line, tt.reason)
		})
	}
}

func TestLoadPhillyMissingFile(t *testing.T) {
	if _, err := LoadPhilly("does-not-exist.csv"); err == nil {
		t.Fatal("loading a missing file succeeded")
	}
}

// TestPhillyFile checks the loaded Philly trace against the statistics
// measured on the file.
func TestPhillyFile(t *testing.T) {
	needFile(t, phillyPath)
	start := time.Now()
	tr, err := LoadPhilly(phillyPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d jobs in %v", len(tr.Jobs), time.Since(start))
	checkInvariants(t, tr)
	if len(tr.Jobs) != 82247 {
		t.Errorf("got %d jobs, want 82,247", len(tr.Jobs))
	}
	if tr.Duplicates != 65 {
		t.Errorf("got %d duplicates, want 65", tr.Duplicates)
	}
	if gh := tr.GPUSeconds() / 3600; math.Abs(gh-978078)/978078 > 0.001 {
		t.Errorf("got %.0f GPU-hours, want 978,078 ± 0.1%%", gh)
	}
	hist := map[int32]int{}
	queues := map[string]bool{}
	for _, j := range tr.Jobs {
		hist[j.GPUs]++
		queues[j.Queue] = true
	}
	if len(hist) != len(phillyGPUCounts) {
		t.Errorf("GPU counts %v, want %v", hist, phillyGPUCounts)
	}
	for g, n := range phillyGPUCounts {
		if hist[g] != n {
			t.Errorf("%d jobs of %d GPUs, want %d", hist[g], g, n)
		}
	}
	if len(queues) != 15 {
		t.Errorf("got %d queues, want 15 virtual clusters", len(queues))
	}
	if tr.Jobs[0].Submit != 0 {
		t.Errorf("first submit %d, want 0", tr.Jobs[0].Submit)
	}
	s := tr.Stats()
	if s.Median != 1144 || s.P90 != 11266 || s.P99 != 254884 {
		t.Errorf("duration percentiles %d/%d/%d, want 1144/11266/254884", s.Median, s.P90, s.P99)
	}
	for c, want := range phillyGPUTimeShares {
		if math.Abs(s.GPUTimeShare[c]-want) > 0.001 {
			t.Errorf("size class %s: GPU-time share %.4f, want %.3f", SizeClassName(c), s.GPUTimeShare[c], want)
		}
	}
}
