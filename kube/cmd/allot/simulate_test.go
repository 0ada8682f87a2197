package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSimulateKueue replays the synthetic trace on the seeds' Kueue
// configurations, side by side: every job goes to a ClusterQueue of the
// configuration (none to the queue of the pods Kueue does not manage),
// submitted from a namespace the ClusterQueue admits, so jobs run.
func TestSimulateKueue(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"simulate", "-kueue", "../../testdata/seeds/team-a.yaml", "-kueue", "../../testdata/seeds/training-cq-fixed.yaml",
		"-cluster", "../../testdata/cluster", "-jobs", "100", "-policies", "config,fifo"}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	text := out.String()
	for _, want := range []string{
		"config team-a.yaml: ", "team-a-cq <- team-00",
		"config training-cq-fixed.yaml: 64 GPUs on 8 nodes, 1 queues (not replayed: 2 running workloads)",
		"training-cq <- team-00", "team-a.yaml config", "training-cq-fixed.yaml fifo",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "(unmanaged)") {
		t.Errorf("a trace queue went to the unmanaged pods' queue:\n%s", text)
	}
	// team-a-cq admits only the namespace team-a (its selector): the
	// jobs are submitted from it and complete, none refused.
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[0] == "team-a.yaml" && f[1] == "config" && f[2] == "team-a-cq" {
			if f[3] != "100" || f[4] != "100" || f[5] != "0" {
				t.Errorf("team-a-cq: jobs %s done %s rejected %s, want 100 100 0", f[3], f[4], f[5])
			}
			return
		}
	}
	t.Errorf("no per-queue row for team-a-cq:\n%s", text)
}

// TestSimulateKueueRefuses: a configuration Kueue refuses is refused,
// naming the object and its field.
func TestSimulateKueueRefuses(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"simulate", "-kueue", "../../testdata/seeds/training-cq.yaml", "-jobs", "10"}, &out, &errs)
	if code != 1 || !strings.Contains(errs.String(), "clusterqueues/training-cq: spec") {
		t.Fatalf("exit %d, stderr %q", code, errs.String())
	}
	code = run([]string{"simulate", "-h"}, &out, &errs)
	if code != 0 || !strings.Contains(errs.String(), "-kueue PATH") {
		t.Fatalf("-h: exit %d, usage lacks -kueue: %q", code, errs.String())
	}
}
