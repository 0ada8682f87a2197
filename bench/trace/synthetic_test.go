package trace

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestSyntheticCalibration checks that a large synthetic trace reproduces
// the Philly statistics it is calibrated to.
func TestSyntheticCalibration(t *testing.T) {
	cfg := DefaultSynthetic()
	cfg.Jobs = 1_000_000
	tr := Synthetic(cfg)
	checkInvariants(t, tr)
	s := tr.Stats()

	var jobs [NumSizeClasses]float64
	var total float64
	for g, n := range phillyGPUCounts {
		jobs[SizeClass(g)] += float64(n)
		total += float64(n)
	}
	for c := range NumSizeClasses {
		if want := jobs[c] / total; math.Abs(s.JobShare[c]-want) > 0.002 {
			t.Errorf("size class %s: %.4f of jobs, want %.4f", SizeClassName(c), s.JobShare[c], want)
		}
		if want := phillyGPUTimeShares[c]; math.Abs(s.GPUTimeShare[c]-want) > 0.02 {
			t.Errorf("size class %s: %.4f of GPU-time, want %.3f ± 0.02", SizeClassName(c), s.GPUTimeShare[c], want)
		}
	}
	t.Logf("job shares %.4f, GPU-time shares %.4f", s.JobShare, s.GPUTimeShare)

	var single []int64
	for _, j := range tr.Jobs {
		if j.GPUs == 1 {
			single = append(single, j.Duration)
		}
		if j.Duration < 30 || j.Duration > maxSyntheticDuration {
			t.Fatalf("job %s runs %d s, outside 30 s to 60 days", j.ID, j.Duration)
		}
	}
	slices.Sort(single)
	for _, q := range []struct {
		q    float64
		want int64
	}{{0.5, 1144}, {0.9, 11266}, {0.99, 254884}} {
		got := Percentile(single, q.q)
		if math.Abs(float64(got-q.want))/float64(q.want) > 0.15 {
			t.Errorf("1-GPU duration p%g = %d s, want %d s ± 15%%", q.q*100, got, q.want)
		}
		t.Logf("1-GPU duration p%g = %d s (target %d s)", q.q*100, got, q.want)
	}
}

// TestSyntheticLoad checks that the work running inside the arrival
// window fills Load of the cluster, for the default trace and a long one.
func TestSyntheticLoad(t *testing.T) {
	inWindow := func(tr *Trace) float64 {
		last := tr.Jobs[len(tr.Jobs)-1].Submit
		var work float64
		for _, j := range tr.Jobs {
			work += float64(j.GPUs) * float64(min(j.Duration, last-j.Submit))
		}
		return work / float64(last)
	}
	for _, jobs := range []int{3000, 200_000} {
		cfg := DefaultSynthetic()
		cfg.Jobs = jobs
		tr := Synthetic(cfg)
		offered := inWindow(tr) / float64(cfg.ClusterGPUs)
		if math.Abs(offered-cfg.Load) > 0.01 {
			t.Errorf("%d jobs: offered load %.3f, want %.2f", jobs, offered, cfg.Load)
		}
		t.Logf("%d jobs: offered load %.3f over %.1f days", jobs, offered, float64(tr.Stats().Span)/86400)
	}
	// A load no arrival pattern reaches: every job at once gives the
	// tightest window, and still less than asked.
	cfg := DefaultSynthetic()
	cfg.Jobs, cfg.Load = 50, 40
	if tr := Synthetic(cfg); inWindow(tr)/float64(cfg.ClusterGPUs) >= 40 {
		t.Error("an impossible load was met")
	}

	cfg = DefaultSynthetic()
	cfg.Jobs = 200_000
	cfg.ArrivalsPerHour = 120
	s := Synthetic(cfg).Stats()
	if perHour := float64(s.Jobs-1) / (float64(s.Span) / 3600); math.Abs(perHour-120) > 3 {
		t.Errorf("%.1f arrivals per hour, want 120", perHour)
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	write := func(cfg SyntheticConfig) []byte {
		var buf bytes.Buffer
		if err := WriteJSON(&buf, Synthetic(cfg)); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	cfg := DefaultSynthetic()
	a, b := write(cfg), write(cfg)
	if !bytes.Equal(a, b) {
		t.Fatal("the same config gave different traces")
	}
	cfg.Seed++
	if bytes.Equal(a, write(cfg)) {
		t.Fatal("different seeds gave the same trace")
	}
}

func TestSyntheticDefault(t *testing.T) {
	tr := Synthetic(DefaultSynthetic())
	checkInvariants(t, tr)
	if len(tr.Jobs) != 3000 || tr.Name != "synthetic-philly" {
		t.Fatalf("got %d jobs named %q, want 3,000 named synthetic-philly", len(tr.Jobs), tr.Name)
	}
	if tr.Jobs[0].Submit != 0 || tr.Jobs[0].ID != "job-000000" {
		t.Errorf("first job %+v, want job-000000 at time 0", tr.Jobs[0])
	}
	queues := map[string]int{}
	classes := map[string]int{}
	for _, j := range tr.Jobs {
		queues[j.Queue]++
		classes[j.PriorityClass]++
		switch j.PriorityClass {
		case "high":
			if j.Priority != 100 || j.Preemptible || j.Checkpoint != 0 {
				t.Fatalf("high job %+v", j)
			}
		case "normal":
			if j.Priority != 50 || j.Preemptible || j.Checkpoint != 0 {
				t.Fatalf("normal job %+v", j)
			}
		case "low":
			if j.Priority != 0 || !j.Preemptible || j.Checkpoint != 1800 {
				t.Fatalf("low job %+v", j)
			}
		default:
			t.Fatalf("job %+v has an unknown class", j)
		}
		if j.GPUs > 8 && (j.GPUsPerPod == 0 || j.GPUsPerPod > 8 || j.GPUs%j.GPUsPerPod != 0) {
			t.Fatalf("job %+v: pods do not divide its GPUs into nodes of 8", j)
		}
		if j.GPUs <= 8 && j.GPUsPerPod != 0 {
			t.Fatalf("job %+v: single-node job with a pod size", j)
		}
	}
	if len(queues) != 8 || queues["team-00"] <= queues["team-07"]*4 {
		t.Errorf("queues %v, want 8 teams with team-00 much larger than team-07", queues)
	}
	for name, want := range map[string]float64{"high": 0.1, "normal": 0.6, "low": 0.3} {
		if got := float64(classes[name]) / 3000; math.Abs(got-want) > 0.03 {
			t.Errorf("class %s has %.3f of jobs, want %.1f", name, got, want)
		}
	}
}

func TestSyntheticSettings(t *testing.T) {
	tr := Synthetic(SyntheticConfig{
		Name:        "small",
		Seed:        7,
		Jobs:        2000,
		Teams:       120,
		ClusterGPUs: 16,
		Load:        0.5,
		Classes:     []SyntheticPriorityClass{{Name: "only", Priority: 9, Weight: 2}, {Name: "never", Weight: 0}},
		GPUsPerNode: 4,
	})
	checkInvariants(t, tr)
	for _, j := range tr.Jobs {
		if j.GPUs > 16 {
			t.Fatalf("job %+v asks for more than the cluster's 16 GPUs", j)
		}
		if j.PriorityClass != "only" || j.Priority != 9 {
			t.Fatalf("job %+v: want class only", j)
		}
		if !strings.HasPrefix(j.Queue, "team-") || len(j.Queue) != len("team-000") {
			t.Fatalf("job %+v: want a three-digit team", j)
		}
		if j.GPUs > 4 && j.GPUsPerPod != 4 {
			t.Fatalf("job %+v: want pods of 4 GPUs", j)
		}
	}
	// Invalid settings fall back to the defaults.
	tr = Synthetic(SyntheticConfig{Jobs: -1, Teams: -1, ClusterGPUs: -1, Load: math.NaN(), ArrivalsPerHour: math.Inf(1), GPUsPerNode: -1,
		Classes: []SyntheticPriorityClass{{Name: "bad", Weight: math.Inf(1)}}})
	checkInvariants(t, tr)
	if len(tr.Jobs) != 3000 || tr.Jobs[0].PriorityClass == "bad" {
		t.Fatalf("invalid settings did not fall back to the defaults: %d jobs, first %+v", len(tr.Jobs), tr.Jobs[0])
	}
}

func TestPodSize(t *testing.T) {
	for _, tt := range []struct{ gpus, perNode, want int32 }{
		{16, 8, 8}, {12, 8, 6}, {24, 8, 8}, {128, 8, 8}, {12, 5, 4}, {7, 8, 7}, {13, 8, 1},
	} {
		if got := podSize(tt.gpus, tt.perNode); got != tt.want {
			t.Errorf("podSize(%d, %d) = %d, want %d", tt.gpus, tt.perNode, got, tt.want)
		}
	}
}

func TestCappedMean(t *testing.T) {
	// The exact mean agrees with a numerical integral over quantiles.
	for _, scale := range []float64{1, 8, 22.5} {
		const n = 200_000
		var sum float64
		for i := range n {
			sum += min(scale*baseDuration((float64(i)+0.5)/n), maxSyntheticDuration)
		}
		if got, want := cappedMean(scale, maxSyntheticDuration), sum/n; math.Abs(got-want)/want > 0.001 {
			t.Errorf("cappedMean(%g) = %.1f, numerical %.1f", scale, got, want)
		}
	}
}
