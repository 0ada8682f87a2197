package trace

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// phillyColumns is the header of the Philly trace as the Pollux artifact
// derived it.
var phillyColumns = []string{"timestamp", "duration", "num_gpus", "gpu_time", "cluster"}

// phillyTimeLayout is the layout of Philly's timestamp column, in UTC.
const phillyTimeLayout = "2006-01-02 15:04:05"

// LoadPhilly reads the Microsoft Philly trace in the form the Pollux
// artifact published it (see ParsePhilly).
func LoadPhilly(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParsePhilly(f, path)
}

// ParsePhilly reads a Philly trace from r; name is used in errors and as
// the trace's name. The input is CSV with the header
// timestamp,duration,num_gpus,gpu_time,cluster: the submit time
// ("2006-01-02 15:04:05", UTC), the run time in seconds, the GPU count,
// the GPU-seconds and the virtual cluster.
//
// Each row becomes one job: its queue is the virtual cluster, its submit
// time counts seconds from the earliest timestamp, its duration is rounded
// up to whole seconds (at least 1) and its ID is "philly-" followed by the
// row's position in the file (from 0). Jobs keep Philly's defaults for the
// rest: priority 0, no class, not preemptible, no checkpoints. Rows equal
// to an earlier row are kept as jobs and counted in Duplicates. The jobs
// are sorted by submit time, then ID.
//
// A malformed row fails the whole load with a *RowError naming the line.
func ParsePhilly(r io.Reader, name string) (*Trace, error) {
	tab, err := newCSVTable(r, name, phillyColumns)
	if err != nil {
		return nil, err
	}
	t := &Trace{Name: name, Jobs: []Job{}}
	var stamps []int64
	seen := make(map[string]struct{})
	var key strings.Builder
	for {
		rec, err := tab.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		ts, err := time.ParseInLocation(phillyTimeLayout, strings.TrimSpace(rec[0]), time.UTC)
		if err != nil {
			return nil, tab.errorf("bad timestamp %q: want YYYY-MM-DD hh:mm:ss", rec[0])
		}
		dur, err := parseSeconds(rec[1])
		if err != nil {
			return nil, tab.errorf("bad duration %q: %s", rec[1], err)
		}
		gpus, err := strconv.ParseInt(strings.TrimSpace(rec[2]), 10, 32)
		if err != nil {
			return nil, tab.errorf("bad num_gpus %q: %s", rec[2], intReason(err))
		}
		if gpus <= 0 {
			return nil, tab.errorf("num_gpus %d is not positive", gpus)
		}
		gt, err := strconv.ParseFloat(strings.TrimSpace(rec[3]), 64)
		if err != nil || math.IsNaN(gt) || math.IsInf(gt, 0) {
			return nil, tab.errorf("bad gpu_time %q: not a number", rec[3])
		}
		if gt < 0 {
			return nil, tab.errorf("gpu_time %q is negative", rec[3])
		}
		cluster := strings.TrimSpace(rec[4])
		if cluster == "" {
			return nil, tab.errorf("empty cluster")
		}

		key.Reset()
		for _, f := range rec {
			key.WriteString(f)
			key.WriteByte(0)
		}
		if _, dup := seen[key.String()]; dup {
			t.Duplicates++
		} else {
			seen[key.String()] = struct{}{}
		}

		stamps = append(stamps, ts.Unix())
		t.Jobs = append(t.Jobs, Job{
			ID:       "philly-" + strconv.Itoa(len(t.Jobs)),
			Queue:    cluster,
			Duration: dur,
			GPUs:     int32(gpus),
		})
	}
	if len(stamps) > 0 {
		first := stamps[0]
		for _, s := range stamps {
			first = min(first, s)
		}
		for i := range t.Jobs {
			off := stamps[i] - first
			if off > maxDuration {
				return nil, &RowError{File: name, Reason: fmt.Sprintf("timestamps span more than %d seconds", int64(maxDuration))}
			}
			t.Jobs[i].Submit = off
		}
	}
	SortJobs(t.Jobs)
	return t, nil
}

// parseSeconds reads a duration in (possibly fractional) seconds and
// rounds it up to whole seconds, at least 1.
func parseSeconds(s string) (int64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, jobError("not a number")
	}
	if f < 0 {
		return 0, jobError("negative")
	}
	if f > maxDuration {
		return 0, jobError("too large")
	}
	return max(int64(math.Ceil(f)), 1), nil
}
