package cluster

import (
	"testing"
)

// TestPodEventAllocs pins what a pod's events allocate on a cluster of
// the benchmark's shape (BenchmarkEvent's pod rows, a smaller cluster: the
// count does not grow with it), each pair of events as one run: a pod
// created bound and deleted (described — its role hash, its request —,
// SetRunning, then Finish), a pod bound by the scheduler and succeeded
// (SetRunning, Finish: its description kept), a running pod's status
// heartbeat (nothing applied). The copy-on-write pages a published
// version's writes take come from blocks, so a run's count is an average.
func TestPodEventAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocates")
	}
	probe, pending, bound, done, beat := podEvents()
	for _, tc := range []struct {
		name  string
		setup func(*Cluster)
		pair  func(*Cluster)
		id    string
		max   float64
	}{
		{"created bound, deleted", nil, func(c *Cluster) { c.Upsert(probe); c.Delete(probe) }, "ml/probe", 18},
		{"bound, succeeded", func(c *Cluster) { c.Upsert(pending) }, func(c *Cluster) { c.Upsert(bound); c.Upsert(done) }, "ml/bind", 16},
		{"heartbeat", func(c *Cluster) { c.Upsert(beat[0]) }, func(c *Cluster) { c.Upsert(beat[1]); c.Upsert(beat[0]) }, "ml/run-0", 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := benchCluster(t, 1024)
			if tc.setup != nil {
				tc.setup(c)
			}
			n := testing.AllocsPerRun(200, func() { tc.pair(c) })
			if st := c.Stats(); st.Rebuilds != 1 || st.Refused != 0 {
				t.Fatalf("stats %+v: an event was refused or rebuilt", st)
			}
			if tc.id == "ml/run-0" {
				if err := runsIn(c.Load(), tc.id, "train"); err != nil {
					t.Fatal(err)
				}
			} else if _, ok := c.Load().Running(tc.id); ok {
				t.Fatalf("%s runs after its pod ended", tc.id)
			}
			t.Logf("%.1f allocations a pair of events", n)
			if n > tc.max {
				t.Errorf("a pair of events allocates %.1f times, want at most %v", n, tc.max)
			}
		})
	}
}
