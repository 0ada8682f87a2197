package trace

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/allot-sched/allot/health"
)

// maxDuration bounds job durations and submit times read from files (about
// 31,700 years), and the CPU and memory amounts, so that sums over a trace
// cannot overflow.
const maxDuration = 1 << 40

// SortJobs orders jobs by submit time, then by ID, the order every Trace
// keeps. Jobs that share both (which a valid trace never holds) end up in
// an unspecified order.
func SortJobs(jobs []Job) {
	slices.SortFunc(jobs, compareJobs)
}

// compareJobs orders two jobs by submit time, then by ID.
func compareJobs(a, b Job) int {
	if c := cmp.Compare(a.Submit, b.Submit); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Validate checks the invariants every loaded trace holds: jobs sorted by
// submit time then ID, IDs non-empty and unique, submit times not negative,
// durations and GPU counts positive, pod sizes, checkpoint intervals, CPU
// and memory not negative, and GPUMilli within 0..999 (and only on
// single-GPU jobs). It returns the first violation found.
func (t *Trace) Validate() error {
	seen := make(map[string]struct{}, len(t.Jobs))
	for i := range t.Jobs {
		j := &t.Jobs[i]
		if err := validateJob(j); err != nil {
			return fmt.Errorf("job %d (%q): %s", i, j.ID, err)
		}
		if _, dup := seen[j.ID]; dup {
			return fmt.Errorf("job %d: duplicate id %q", i, j.ID)
		}
		seen[j.ID] = struct{}{}
		if i > 0 && compareJobs(t.Jobs[i-1], *j) > 0 {
			return fmt.Errorf("job %d (%q): not sorted by submit time then id", i, j.ID)
		}
	}
	for i, n := range t.Nodes {
		if n.GPUs < 0 {
			return fmt.Errorf("node %d (%q): negative GPU count %d", i, n.Name, n.GPUs)
		}
	}
	return nil
}

// jobError is a reason a single job is invalid.
type jobError string

func (e jobError) Error() string { return string(e) }

// validateJob checks the fields of one job on its own.
func validateJob(j *Job) error {
	switch {
	case j.ID == "":
		return jobError("empty id")
	case j.Submit < 0:
		return jobError(fmt.Sprintf("negative submit time %d", j.Submit))
	case j.Submit > maxDuration:
		return jobError(fmt.Sprintf("submit time %d too large", j.Submit))
	case j.Duration <= 0:
		return jobError(fmt.Sprintf("duration %d is not positive", j.Duration))
	case j.Duration > maxDuration:
		return jobError(fmt.Sprintf("duration %d too large", j.Duration))
	case j.GPUs <= 0:
		return jobError(fmt.Sprintf("GPU count %d is not positive", j.GPUs))
	case j.GPUsPerPod < 0:
		return jobError(fmt.Sprintf("negative GPUs per pod %d", j.GPUsPerPod))
	case j.Checkpoint < 0:
		return jobError(fmt.Sprintf("negative checkpoint interval %d", j.Checkpoint))
	case j.GPUMilli < 0 || j.GPUMilli >= 1000:
		return jobError(fmt.Sprintf("GPU share %d milli outside 0..999", j.GPUMilli))
	case j.GPUMilli > 0 && j.GPUs != 1:
		return jobError(fmt.Sprintf("GPU share %d milli on a job of %d GPUs", j.GPUMilli, j.GPUs))
	case j.CPUMilli < 0 || j.CPUMilli > maxDuration:
		return jobError(fmt.Sprintf("CPU request %d milli outside 0..2^40", j.CPUMilli))
	case j.MemoryMiB < 0 || j.MemoryMiB > maxDuration:
		return jobError(fmt.Sprintf("memory request %d MiB outside 0..2^40", j.MemoryMiB))
	}
	return nil
}

// GPUSeconds returns the trace's total work: the sum over jobs of
// duration times GPUs (a fractional job counts its share of one GPU).
func (t *Trace) GPUSeconds() float64 {
	var s float64
	for i := range t.Jobs {
		j := &t.Jobs[i]
		g := float64(j.GPUs)
		if j.GPUMilli > 0 {
			g = float64(j.GPUMilli) / 1000
		}
		s += g * float64(j.Duration)
	}
	return s
}

// addSkipped counts one input row left out of the trace for reason.
func (t *Trace) addSkipped(reason string) {
	if t.Skipped == nil {
		t.Skipped = make(map[string]int)
	}
	t.Skipped[reason]++
}

// Stats summarises a trace the way the Philly statistics are quoted.
type Stats struct {
	// Jobs is the number of jobs and GPUHours their total work in
	// GPU-hours (see Trace.GPUSeconds).
	Jobs     int
	GPUHours float64
	// Median, P90 and P99 are percentiles of the job durations in seconds
	// (nearest rank; 0 for an empty trace).
	Median, P90, P99 int64
	// JobShare and GPUTimeShare are, per size class (see SizeClass), the
	// fraction of the jobs and of the GPU-time; they are 0 for an empty
	// trace.
	JobShare, GPUTimeShare [NumSizeClasses]float64
	// Span is the time in seconds from the first submission to the last.
	Span int64
}

// Stats computes the trace's summary statistics.
func (t *Trace) Stats() Stats {
	s := Stats{Jobs: len(t.Jobs)}
	if len(t.Jobs) == 0 {
		return s
	}
	durations := make([]int64, len(t.Jobs))
	var total float64
	var work [NumSizeClasses]float64
	var count [NumSizeClasses]int
	first, last := t.Jobs[0].Submit, t.Jobs[0].Submit
	for i := range t.Jobs {
		j := &t.Jobs[i]
		durations[i] = j.Duration
		g := float64(j.GPUs)
		if j.GPUMilli > 0 {
			g = float64(j.GPUMilli) / 1000
		}
		w := g * float64(j.Duration)
		c := SizeClass(j.GPUs)
		work[c] += w
		count[c]++
		total += w
		first, last = min(first, j.Submit), max(last, j.Submit)
	}
	slices.Sort(durations)
	s.Median = Percentile(durations, 0.5)
	s.P90 = Percentile(durations, 0.9)
	s.P99 = Percentile(durations, 0.99)
	s.GPUHours = total / 3600
	for c := range NumSizeClasses {
		s.JobShare[c] = float64(count[c]) / float64(len(t.Jobs))
		if total > 0 {
			s.GPUTimeShare[c] = work[c] / total
		}
	}
	s.Span = last - first
	return s
}

// Percentile returns the nearest-rank q-quantile (0 < q <= 1) of sorted,
// a slice in increasing order; it returns 0 for an empty slice.
func Percentile[T int64 | float64](sorted []T, q float64) T {
	return health.Percentile(sorted, q)
}
