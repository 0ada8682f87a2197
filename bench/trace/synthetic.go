package trace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// phillyGPUCounts is the number of jobs of each GPU count in the Philly
// trace (82,247 jobs); Synthetic draws GPU counts in these proportions.
var phillyGPUCounts = map[int32]int{1: 76627, 2: 1818, 4: 1870, 8: 1643, 12: 7, 16: 199, 24: 7, 32: 67, 64: 6, 128: 3}

// phillySizes lists the keys of phillyGPUCounts in increasing order, so
// that draws do not depend on map iteration order.
var phillySizes = []int32{1, 2, 4, 8, 12, 16, 24, 32, 64, 128}

// phillyGPUTimeShares is the share of Philly's GPU-time spent by jobs of
// each size class (in the order of SizeClassNames). Synthetic lengthens the
// jobs of the larger classes so that its traces spend GPU-time in the same
// proportions.
var phillyGPUTimeShares = [NumSizeClasses]float64{0.181, 0.199, 0.484, 0.136}

// NumSizeClasses is the number of job-size classes the Philly statistics
// are quoted in: 1 GPU, 2–4 GPUs, 5–8 GPUs and more than 8 GPUs.
const NumSizeClasses = 4

// SizeClassName returns the label of size class c: "1", "2-4", "5-8" or
// ">8" (and "" outside 0..NumSizeClasses-1).
func SizeClassName(c int) string {
	switch c {
	case 0:
		return "1"
	case 1:
		return "2-4"
	case 2:
		return "5-8"
	case 3:
		return ">8"
	}
	return ""
}

// SizeClass returns the size class (0..NumSizeClasses-1) of a job of gpus
// GPUs.
func SizeClass(gpus int32) int {
	switch {
	case gpus <= 1:
		return 0
	case gpus <= 4:
		return 1
	case gpus <= 8:
		return 2
	}
	return 3
}

// The base duration distribution of synthetic jobs is piecewise
// log-uniform: a draw's quantile u picks the segment between two anchors
// (durationQuantiles[i], durationQuantiles[i+1]), and the duration is
// spread uniformly on a log scale between their durations. The anchors
// reproduce Philly's median (1,144 s), 90th (11,266 s), 99th (254,884 s)
// and 99.9th (1,185,672 s) percentiles, from 30 seconds to 30 days.
var (
	durationQuantiles = []float64{0, 0.5, 0.9, 0.99, 0.999, 1}
	durationAnchors   = []float64{30, 1144, 11266, 254884, 1185672, 30 * 86400}
)

// maxSyntheticDuration caps scaled durations at 60 days, a little above
// Philly's longest job (about 53.6 days).
const maxSyntheticDuration = 60 * 86400

// classScales are the factors the base durations of each size class are
// multiplied by (before the cap).
var classScales = calibrateScales()

// baseDuration maps a quantile u in [0, 1) to a base duration in seconds.
func baseDuration(u float64) float64 {
	for i := 1; i < len(durationQuantiles); i++ {
		if u < durationQuantiles[i] || i == len(durationQuantiles)-1 {
			u0, u1 := durationQuantiles[i-1], durationQuantiles[i]
			a, b := durationAnchors[i-1], durationAnchors[i]
			f := min(max((u-u0)/(u1-u0), 0), 1)
			return a * math.Pow(b/a, f)
		}
	}
	return durationAnchors[len(durationAnchors)-1]
}

// cappedMean returns the mean of min(scale × base duration, limit) over the
// base distribution, integrating each log-uniform segment exactly.
func cappedMean(scale, limit float64) float64 {
	var mean float64
	xc := math.Log(limit / scale) // log of the base duration the cap binds at
	for i := 1; i < len(durationQuantiles); i++ {
		m := durationQuantiles[i] - durationQuantiles[i-1]
		a, b := durationAnchors[i-1], durationAnchors[i]
		la, lb := math.Log(a), math.Log(b)
		switch {
		case xc >= lb: // the cap never binds in this segment
			mean += m * scale * (b - a) / (lb - la)
		case xc <= la: // the cap always binds
			mean += m * limit
		default:
			mean += m / (lb - la) * (limit - scale*a + limit*(lb-xc))
		}
	}
	return mean
}

// calibrateScales finds, for each size class, the duration factor that
// gives the class its share of GPU-time in phillyGPUTimeShares, 1-GPU jobs
// keeping the base distribution. With p the class's share of jobs and g
// its mean GPU count (from phillyGPUCounts), the class's mean duration
// must be mean1 × (share / share1) × (p1 / (p × g)); the factor reaching
// that mean under the cap is found by bisection.
func calibrateScales() (scales [NumSizeClasses]float64) {
	var jobs, gpus [NumSizeClasses]float64
	var total float64
	for g, n := range phillyGPUCounts {
		c := SizeClass(g)
		jobs[c] += float64(n)
		gpus[c] += float64(n) * float64(g)
		total += float64(n)
	}
	mean1 := cappedMean(1, maxSyntheticDuration)
	scales[0] = 1
	for c := 1; c < len(scales); c++ {
		p, g := jobs[c]/total, gpus[c]/jobs[c]
		target := mean1 * (phillyGPUTimeShares[c] / phillyGPUTimeShares[0]) * (jobs[0] / total) / (p * g)
		lo, hi := 1.0, 1e6
		for range 200 {
			mid := math.Sqrt(lo * hi)
			if cappedMean(mid, maxSyntheticDuration) < target {
				lo = mid
			} else {
				hi = mid
			}
		}
		scales[c] = math.Sqrt(lo * hi)
	}
	return scales
}

// SyntheticPriorityClass is one priority class of a synthetic workload.
type SyntheticPriorityClass struct {
	// Name is the class's name, copied to Job.PriorityClass.
	Name string
	// Priority is copied to Job.Priority.
	Priority int32
	// Weight is the class's relative share of jobs.
	Weight float64
	// Preemptible and Checkpoint are copied to the class's jobs.
	Preemptible bool
	Checkpoint  int64
}

// SyntheticConfig describes a synthetic workload calibrated to the Philly
// trace. Zero fields take the value of DefaultSynthetic, except Seed, for
// which 0 is a seed like any other.
type SyntheticConfig struct {
	// Name is the trace's name.
	Name string
	// Seed makes the workload: the same config always gives the same trace.
	Seed uint64
	// Jobs is the number of jobs.
	Jobs int
	// Teams is the number of queues, named "team-00", "team-01" and so on;
	// team i receives jobs in proportion to 1/(i+1), so a few teams submit
	// most of the work.
	Teams int
	// ClusterGPUs is the size of the cluster the workload is meant for. Jobs
	// never ask for more GPUs than this: GPU counts above it are left out of
	// the mix.
	ClusterGPUs int
	// Load is the offered GPU demand as a fraction of ClusterGPUs: jobs
	// arrive as a Poisson process whose rate makes the GPU-seconds the
	// generated jobs run between the first arrival and the last, divided by
	// that window, equal Load × ClusterGPUs (see Synthetic).
	Load float64
	// ArrivalsPerHour, when positive, sets the Poisson arrival rate
	// directly instead of Load.
	ArrivalsPerHour float64
	// Classes are the priority classes jobs are drawn from.
	Classes []SyntheticPriorityClass
	// GPUsPerNode is the largest pod: a job of more GPUs is split into pods
	// of the largest divisor of its GPU count not above GPUsPerNode.
	GPUsPerNode int32
}

// DefaultSynthetic returns the default workload of the simulation: 3,000
// jobs from 8 teams offered to a 1,024-GPU cluster at a load of 0.9, with
// the priority classes "high" (10% of jobs, priority 100), "normal" (60%,
// priority 50) and "low" (30%, priority 0, preemptible, checkpointing
// every 1,800 seconds), and nodes of 8 GPUs.
func DefaultSynthetic() SyntheticConfig {
	return SyntheticConfig{
		Name:        "synthetic-philly",
		Seed:        1,
		Jobs:        3000,
		Teams:       8,
		ClusterGPUs: 1024,
		Load:        0.9,
		Classes: []SyntheticPriorityClass{
			{Name: "high", Priority: 100, Weight: 0.1},
			{Name: "normal", Priority: 50, Weight: 0.6},
			{Name: "low", Priority: 0, Weight: 0.3, Preemptible: true, Checkpoint: 1800},
		},
		GPUsPerNode: 8,
	}
}

// Synthetic generates a workload shaped like the Philly trace:
//   - GPU counts follow Philly's mix (limited to ClusterGPUs): of its
//     82,247 jobs, 76,627 use 1 GPU, 1,818 use 2, 1,870 use 4, 1,643 use 8,
//     7 use 12, 199 use 16, 7 use 24, 67 use 32, 6 use 64 and 3 use 128.
//   - A 1-GPU job's duration follows a piecewise log-uniform distribution
//     through Philly's duration percentiles (median 1,144 s, p90 11,266 s,
//     p99 254,884 s), from 30 seconds to 30 days.
//   - Larger jobs run longer: their durations are drawn the same way, then
//     multiplied by a factor per size class (about 8.8 for 2–4 GPUs, 22.5
//     for 5–8 and 11.1 above 8) and capped at 60 days. The factors are
//     solved for so that, in expectation, the classes' shares of GPU-time
//     match Philly's (18.1%, 19.9%, 48.4% and 13.6%).
//   - The jobs of each GPU count draw their duration quantiles in shuffled
//     blocks of 100 that take one value from every percentile band, which
//     damps the sway a few very long jobs have on the GPU-time shares;
//     each single draw is still distributed as above.
//   - Arrivals are Poisson; the first job arrives at time 0. The rate
//     is ArrivalsPerHour when set; otherwise it is solved for, once every
//     job is drawn, so that the work falling inside the arrival window
//     fills Load of the cluster on average. (The expected demand per job
//     would not do: a trace of a few thousand jobs draws few of Philly's
//     month-long jobs, and most of their work lands after the last
//     arrival.)
//
// Jobs are named "job-000000" onwards in arrival order, which is also the
// trace's order. Negative or out-of-range settings are replaced by their
// defaults, so Synthetic always returns a valid trace.
func Synthetic(cfg SyntheticConfig) *Trace {
	def := DefaultSynthetic()
	if cfg.Name == "" {
		cfg.Name = def.Name
	}
	if cfg.Jobs <= 0 {
		cfg.Jobs = def.Jobs
	}
	if cfg.Teams <= 0 {
		cfg.Teams = def.Teams
	}
	if cfg.ClusterGPUs <= 0 {
		cfg.ClusterGPUs = def.ClusterGPUs
	}
	if !(cfg.Load > 0) || math.IsInf(cfg.Load, 0) {
		cfg.Load = def.Load
	}
	if cfg.GPUsPerNode <= 0 {
		cfg.GPUsPerNode = def.GPUsPerNode
	}
	classes, classTotal := cfg.Classes, 0.0
	for _, c := range classes {
		if c.Weight > 0 && !math.IsInf(c.Weight, 0) {
			classTotal += c.Weight
		}
	}
	if classTotal == 0 {
		classes, classTotal = def.Classes, 1
	}

	// The GPU-count mix, restricted to the cluster, and the expected
	// GPU-seconds of one job under it.
	var sizes []int32
	var sizeWeights []float64
	var sizeTotal float64
	for _, g := range phillySizes {
		if int(g) > cfg.ClusterGPUs {
			continue
		}
		w := float64(phillyGPUCounts[g])
		sizes = append(sizes, g)
		sizeWeights = append(sizeWeights, w)
		sizeTotal += w
	}

	rate := cfg.ArrivalsPerHour / 3600

	teamWeights := make([]float64, cfg.Teams)
	var teamTotal float64
	for i := range teamWeights {
		teamWeights[i] = 1 / float64(i+1)
		teamTotal += teamWeights[i]
	}
	teamDigits := max(2, len(strconv.Itoa(cfg.Teams-1)))
	idDigits := max(6, len(strconv.Itoa(cfg.Jobs-1)))

	r := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	strata := make([]stratified, len(sizes))
	t := &Trace{Name: cfg.Name, Jobs: make([]Job, 0, cfg.Jobs)}
	// Arrivals are drawn at unit rate and scaled once every job is known.
	at := make([]float64, cfg.Jobs)
	var now float64
	for i := range cfg.Jobs {
		if i > 0 {
			now += r.ExpFloat64()
		}
		at[i] = now
		k := pick(r, sizeWeights, sizeTotal)
		g := sizes[k]
		dur := min(classScales[SizeClass(g)]*baseDuration(strata[k].draw(r)), maxSyntheticDuration)
		team := pick(r, teamWeights, teamTotal)
		c := classes[pickClass(r, classes, classTotal)]
		j := Job{
			ID:            fmt.Sprintf("job-%0*d", idDigits, i),
			Queue:         fmt.Sprintf("team-%0*d", teamDigits, team),
			Duration:      max(int64(math.Round(dur)), 1),
			GPUs:          g,
			Priority:      c.Priority,
			PriorityClass: c.Name,
			Preemptible:   c.Preemptible,
			Checkpoint:    max(c.Checkpoint, 0),
		}
		if g > cfg.GPUsPerNode {
			j.GPUsPerPod = podSize(g, cfg.GPUsPerNode)
		}
		t.Jobs = append(t.Jobs, j)
	}
	scale := 1 / rate
	if !(rate > 0) || math.IsInf(rate, 0) {
		scale = loadScale(t.Jobs, at, cfg.Load*float64(cfg.ClusterGPUs))
	}
	for i := range t.Jobs {
		t.Jobs[i].Submit = min(int64(at[i]*scale), maxDuration)
	}
	return t
}

// loadScale is the factor that stretches unit-rate arrival times at so
// that the jobs offer gpus of work on average over the arrival window, the
// window counting only the work that falls inside it: a trace of a few
// thousand jobs holds few of Philly's month-long ones, and most of their
// work would land after the last arrival, so the expected demand per job
// alone would leave the window nearly idle. The work inside the window,
// divided by its length, falls as the window stretches, so a bisection
// finds the factor; a load the jobs cannot offer even all at once gives
// the tightest window.
func loadScale(jobs []Job, at []float64, gpus float64) float64 {
	last := at[len(at)-1]
	if len(jobs) < 2 || last <= 0 || !(gpus > 0) {
		return 1
	}
	offered := func(scale float64) float64 {
		span := last * scale
		var work float64
		for i := range jobs {
			work += float64(jobs[i].GPUs) * min(float64(jobs[i].Duration), span-at[i]*scale)
		}
		return work / span
	}
	// Windows from one second per arrival to as long as the longest job
	// allows; offered falls from lo to hi.
	lo, hi := 1/last, float64(maxSyntheticDuration)*float64(len(jobs))/last
	if offered(lo) <= gpus {
		return lo
	}
	for range 100 {
		mid := math.Sqrt(lo * hi)
		if offered(mid) > gpus {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// durationStrata is the number of equal quantile bands the duration draws
// of one GPU count are stratified over.
const durationStrata = 100

// stratified draws quantiles in shuffled blocks: each block of
// durationStrata draws takes one value from every band
// [k/durationStrata, (k+1)/durationStrata), in random order. Every draw is
// still uniform on [0, 1), but the durations of one GPU count cover the
// distribution, its heavy tail included, evenly; without it, a trace's
// GPU-time shares would swing by several points with the handful of very
// long jobs it happens to draw.
type stratified struct {
	bands []int
	next  int
}

// draw returns the next quantile.
func (s *stratified) draw(r *rand.Rand) float64 {
	if s.bands == nil {
		s.bands = make([]int, durationStrata)
		for i := range s.bands {
			s.bands[i] = i
		}
		s.next = durationStrata
	}
	if s.next == durationStrata {
		r.Shuffle(durationStrata, func(i, j int) { s.bands[i], s.bands[j] = s.bands[j], s.bands[i] })
		s.next = 0
	}
	b := s.bands[s.next]
	s.next++
	return (float64(b) + r.Float64()) / durationStrata
}

// pick draws an index with probability proportional to its weight.
func pick(r *rand.Rand, weights []float64, total float64) int {
	x := r.Float64() * total
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

// pickClass draws a priority class in proportion to the classes' weights,
// ignoring classes whose weight is not a positive finite number.
func pickClass(r *rand.Rand, classes []SyntheticPriorityClass, total float64) int {
	x := r.Float64() * total
	last := 0
	for i, c := range classes {
		if !(c.Weight > 0) || math.IsInf(c.Weight, 0) {
			continue
		}
		if x < c.Weight {
			return i
		}
		x -= c.Weight
		last = i
	}
	return last
}

// podSize returns the largest divisor of gpus that is at most perNode.
func podSize(gpus, perNode int32) int32 {
	for d := min(perNode, gpus); d > 1; d-- {
		if gpus%d == 0 {
			return d
		}
	}
	return 1
}
