package trace

import (
	"math"
	"strings"
	"testing"
)

const (
	openbPodHeader  = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	openbNodeHeader = "sn,cpu_milli,memory_mib,gpu,model\n"
)

// openbPods is a small pod list with one pod of each kind.
const openbPods = openbPodHeader +
	"p0,12000,16384,1,1000,,LS,Running,0,1000,0\n" +
	"p1,6000,12288,1,460,,BE,Failed,10,500,20\n" +
	"p2,6000,12288,8,1000,,Guaranteed,Succeeded,5,100,100\n" +
	"p3,6000,12288,0,0,,Burstable,Running,7,90,8\n" +
	"p4,6000,12288,2,1000,,Burstable,Pending,9,50,\n" +
	"p5,6000,12288,0,0,,BE,Pending,9,50,\n"

const openbNodes = openbNodeHeader +
	"n0,64000,262144,2,P100\n" +
	"n1,96000,786432,8,V100M32\n"

func TestParseOpenB(t *testing.T) {
	tr, err := ParseOpenB(strings.NewReader(openbPods), "pods.csv", strings.NewReader(openbNodes), "nodes.csv", OpenBOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tr)
	want := []Job{
		{ID: "p0", Queue: "openb", Submit: 0, Duration: 1000, GPUs: 1, GPUsPerPod: 1, Priority: 3, PriorityClass: "LS", CPUMilli: 12000, MemoryMiB: 16384},
		{ID: "p2", Queue: "openb", Submit: 5, Duration: 1, GPUs: 8, GPUsPerPod: 8, Priority: 2, PriorityClass: "Guaranteed", CPUMilli: 6000, MemoryMiB: 12288},
		{ID: "p1", Queue: "openb", Submit: 10, Duration: 480, GPUs: 1, GPUsPerPod: 1, Priority: 0, PriorityClass: "BE", Preemptible: true, CPUMilli: 6000, MemoryMiB: 12288},
	}
	if len(tr.Jobs) != len(want) {
		t.Fatalf("got %d jobs, want %d: %+v", len(tr.Jobs), len(want), tr.Jobs)
	}
	for i := range want {
		if tr.Jobs[i] != want[i] {
			t.Errorf("job %d = %+v, want %+v", i, tr.Jobs[i], want[i])
		}
	}
	if tr.Skipped[SkipPending] != 2 || tr.Skipped[SkipCPUOnly] != 1 || len(tr.Skipped) != 2 {
		t.Errorf("skipped %v, want 2 pending and 1 cpu-only", tr.Skipped)
	}
	wantNodes := []Node{
		{Name: "n0", GPUs: 2, CPUMilli: 64000, MemoryMiB: 262144, Model: "P100"},
		{Name: "n1", GPUs: 8, CPUMilli: 96000, MemoryMiB: 786432, Model: "V100M32"},
	}
	if len(tr.Nodes) != 2 || tr.Nodes[0] != wantNodes[0] || tr.Nodes[1] != wantNodes[1] {
		t.Errorf("nodes %+v, want %+v", tr.Nodes, wantNodes)
	}
}

func TestParseOpenBOptions(t *testing.T) {
	tr, err := ParseOpenB(strings.NewReader(openbPods), "pods.csv", strings.NewReader(openbNodes), "nodes.csv",
		OpenBOptions{SharedGPUs: true, QueueByQoS: true})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tr)
	milli := map[string]int32{}
	for _, j := range tr.Jobs {
		milli[j.ID] = j.GPUMilli
		if j.Queue != j.PriorityClass {
			t.Errorf("job %s in queue %q, want its qos %q", j.ID, j.Queue, j.PriorityClass)
		}
	}
	if milli["p0"] != 0 || milli["p1"] != 460 || milli["p2"] != 0 {
		t.Errorf("GPU shares %v, want p1 at 460 milli and whole GPUs elsewhere", milli)
	}
}

// TestParseOpenBKeepUnscheduled: the pending GPU pod becomes a job that
// lasts from its creation to its deletion; the pending CPU-only pod is
// left out as CPU-only.
func TestParseOpenBKeepUnscheduled(t *testing.T) {
	tr, err := ParseOpenB(strings.NewReader(openbPods), "pods.csv", strings.NewReader(openbNodes), "nodes.csv", OpenBOptions{KeepUnscheduled: true})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tr)
	if len(tr.Jobs) != 4 {
		t.Fatalf("got %d jobs, want 4: %+v", len(tr.Jobs), tr.Jobs)
	}
	want := Job{ID: "p4", Queue: "openb", Submit: 9, Duration: 41, GPUs: 2, GPUsPerPod: 2, Priority: 1, PriorityClass: "Burstable", CPUMilli: 6000, MemoryMiB: 12288}
	if tr.Jobs[2] != want {
		t.Errorf("job 2 = %+v, want %+v", tr.Jobs[2], want)
	}
	if tr.Skipped[SkipCPUOnly] != 2 || len(tr.Skipped) != 1 {
		t.Errorf("skipped %v, want 2 cpu-only", tr.Skipped)
	}
	_, err = ParseOpenB(strings.NewReader(openbPodHeader+"p,1,1,1,1000,,BE,Pending,9,5,\n"), "pods.csv", strings.NewReader(openbNodes), "nodes.csv", OpenBOptions{KeepUnscheduled: true})
	wantRowError(t, err, "pods.csv", 2, "negative duration: deletion_time 5 before creation_time 9")
}

func TestParseOpenBErrors(t *testing.T) {
	const ok = "p0,12000,16384,1,1000,,LS,Running,0,1000,0\n"
	tests := []struct {
		name   string
		pods   string
		nodes  string
		file   string
		line   int
		reason string
	}{
		{"empty pods", "", openbNodes, "pods.csv", 1, "missing header"},
		{"wrong pod header", openbNodeHeader, openbNodes, "pods.csv", 1, "header has 5 columns"},
		{"wrong field count", openbPodHeader + ok + "p1,1,1,1,1000,,LS,Running,0,1000\n", openbNodes, "pods.csv", 3, "row has 10 fields, want 11"},
		{"bad cpu", openbPodHeader + "p1,x,1,1,1000,,LS,Running,0,1000,0\n", openbNodes, "pods.csv", 2, `bad cpu_milli "x"`},
		{"negative GPUs", openbPodHeader + "p1,1,1,-1,1000,,LS,Running,0,1000,0\n", openbNodes, "pods.csv", 2, "num_gpu -1 is negative"},
		{"memory too large", openbPodHeader + "p1,1,1099511627777,1,1000,,LS,Running,0,1000,0\n", openbNodes, "pods.csv", 2, "memory_mib 1099511627777 too large"},
		{"GPU share above one", openbPodHeader + "p1,1,1,1,1500,,LS,Running,0,1000,0\n", openbNodes, "pods.csv", 2, "gpu_milli 1500 above 1000"},
		{"unknown qos", openbPodHeader + "p1,1,1,1,1000,,Gold,Running,0,1000,0\n", openbNodes, "pods.csv", 2, `unknown qos "Gold"`},
		{"bad creation", openbPodHeader + "p1,1,1,1,1000,,LS,Running,x,1000,0\n", openbNodes, "pods.csv", 2, "bad creation_time"},
		{"missing deletion", openbPodHeader + "p1,1,1,1,1000,,LS,Running,0,,0\n", openbNodes, "pods.csv", 2, "bad deletion_time"},
		{"negative scheduled", openbPodHeader + "p1,1,1,1,1000,,LS,Running,0,10,-1\n", openbNodes, "pods.csv", 2, "bad scheduled_time \"-1\": negative"},
		{"negative duration", openbPodHeader + "p1,1,1,1,1000,,LS,Running,0,10,20\n", openbNodes, "pods.csv", 2, "negative duration"},
		{"duplicate name", openbPodHeader + ok + ok, openbNodes, "pods.csv", 3, `pod name "p0" already used on line 2`},
		{"empty name", openbPodHeader + " ,1,1,1,1000,,LS,Running,0,10,0\n", openbNodes, "pods.csv", 2, "empty name"},
		{"empty nodes", openbPodHeader + ok, "", "nodes.csv", 1, "missing header"},
		{"bad node GPUs", openbPodHeader + ok, openbNodeHeader + "n0,1,1,two,T4\n", "nodes.csv", 2, `bad gpu "two"`},
		{"negative node GPUs", openbPodHeader + ok, openbNodeHeader + "n0,1,1,-2,T4\n", "nodes.csv", 2, "gpu -2 is negative"},
		{"bad node memory", openbPodHeader + ok, openbNodes + "n2,1,-1,8,T4\n", "nodes.csv", 4, "bad memory_mib"},
		{"empty node name", openbPodHeader + ok, openbNodeHeader + ",1,1,8,T4\n", "nodes.csv", 2, "empty sn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseOpenB(strings.NewReader(tt.pods), "pods.csv", strings.NewReader(tt.nodes), "nodes.csv", OpenBOptions{})
			wantRowError(t, err, tt.file, tt.line, tt.reason)
		})
	}
}

// TestOpenBFile checks the loaded openb trace against the counts measured
// on the files.
func TestOpenBFile(t *testing.T) {
	needFile(t, openbPodsPath)
	needFile(t, openbNodePath)
	for _, shared := range []bool{false, true} {
		tr, err := LoadOpenB(openbPodsPath, openbNodePath, OpenBOptions{SharedGPUs: shared})
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, tr)
		if tr.Skipped[SkipPending] != 897 {
			t.Errorf("%d pending pods skipped, want 897", tr.Skipped[SkipPending])
		}
		rows := len(tr.Jobs)
		for _, n := range tr.Skipped {
			rows += n
		}
		if rows != 8152 {
			t.Errorf("%d jobs + %v skipped = %d rows, want 8,152", len(tr.Jobs), tr.Skipped, rows)
		}
		byGPUs := map[int32]int{}
		total := 0
		for _, n := range tr.Nodes {
			byGPUs[n.GPUs]++
			total += int(n.GPUs)
		}
		if len(tr.Nodes) != 1213 || total != 6212 {
			t.Errorf("%d nodes with %d GPUs, want 1,213 with 6,212", len(tr.Nodes), total)
		}
		want := map[int32]int{8: 617, 2: 518, 4: 54, 1: 24}
		for g, n := range want {
			if byGPUs[g] != n {
				t.Errorf("%d nodes of %d GPUs, want %d", byGPUs[g], g, n)
			}
		}
		shares := 0
		var requested float64
		for _, j := range tr.Jobs {
			if j.GPUMilli > 0 {
				shares++
				requested += float64(j.GPUMilli) / 1000
			} else {
				requested += float64(j.GPUs)
			}
		}
		// All 8,152 pods request 6,086.8 GPUs counting shares fractionally;
		// the pods that were scheduled request 5,484.93 of them.
		if shared && math.Abs(requested-5484.93) > 0.01 {
			t.Errorf("scheduled GPU pods request %.2f GPUs, want 5,484.93", requested)
		}
		if shared && shares == 0 || !shared && shares != 0 {
			t.Errorf("SharedGPUs %v: %d jobs with a GPU share", shared, shares)
		}
	}
}

// TestOpenBFileKeepUnscheduled checks the whole pod list's demand against
// the figures of SOURCES.md: 7,433 whole GPUs, 6,086.8 with shares.
func TestOpenBFileKeepUnscheduled(t *testing.T) {
	needFile(t, openbPodsPath)
	needFile(t, openbNodePath)
	tr, err := LoadOpenB(openbPodsPath, openbNodePath, OpenBOptions{SharedGPUs: true, KeepUnscheduled: true})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tr)
	if len(tr.Jobs) != 7064 || tr.Skipped[SkipCPUOnly] != 1088 || len(tr.Skipped) != 1 {
		t.Errorf("%d jobs, skipped %v; want 7,064 GPU pods and 1,088 CPU-only ones", len(tr.Jobs), tr.Skipped)
	}
	var whole int64
	var shared float64
	for _, j := range tr.Jobs {
		whole += int64(j.GPUs)
		if j.GPUMilli > 0 {
			shared += float64(j.GPUMilli) / 1000
		} else {
			shared += float64(j.GPUs)
		}
		if j.CPUMilli <= 0 {
			t.Fatalf("job %+v: no CPU request", j)
		}
	}
	if whole != 7433 || math.Abs(shared-6086.8) > 0.01 {
		t.Errorf("the pods request %d whole GPUs and %.2f with shares, want 7,433 and 6,086.8", whole, shared)
	}
}
