package trace

// Job is one workload of a trace, in the simulator's terms: when it
// arrives, how much work it holds and what it asks for.
type Job struct {
	// ID is unique within the trace.
	ID string `json:"id"`
	// Queue is the team's queue (Philly's virtual cluster, Alibaba's
	// namespace or a synthetic team).
	Queue string `json:"queue"`
	// Submit is the arrival time in seconds from the trace's start.
	Submit int64 `json:"submit"`
	// Duration is the run time in seconds on its GPUs, without
	// interruptions.
	Duration int64 `json:"duration"`
	// GPUs is the job's total GPU count; GPUsPerPod splits it into pods
	// (0 means min(GPUs, 8) per pod).
	GPUs       int32 `json:"gpus"`
	GPUsPerPod int32 `json:"gpusPerPod,omitempty"`
	// Priority orders jobs; PriorityClass names the class it reports under.
	Priority      int32  `json:"priority"`
	PriorityClass string `json:"priorityClass,omitempty"`
	// Preemptible jobs may be evicted; Checkpoint is the interval in
	// seconds between checkpoints (0: none, an eviction loses everything
	// since the start).
	Preemptible bool  `json:"preemptible,omitempty"`
	Checkpoint  int64 `json:"checkpoint,omitempty"`
	// GPUMilli is the share of one GPU a fractional job uses, in
	// thousandths (1 to 999), when the trace models shared GPUs; 0 means
	// the job uses its GPUs whole. A fractional job has GPUs 1.
	GPUMilli int32 `json:"gpuMilli,omitempty"`
	// CPUMilli (thousandths of a core) and MemoryMiB are what each pod of
	// the job asks for besides its GPUs; 0 means the trace does not say.
	// They are per pod, as a Kubernetes request is, so that a job split
	// into pods asks every node it lands on for the same amounts. A replay
	// books them only on a cluster whose nodes declare CPU and memory
	// (the openb node list), where a node can run out of CPU before it
	// runs out of GPUs.
	CPUMilli  int64 `json:"cpuMilli,omitempty"`
	MemoryMiB int64 `json:"memoryMiB,omitempty"`
}

// Node is one machine of a trace that brings its own cluster (Alibaba's
// node list).
type Node struct {
	Name      string `json:"name"`
	GPUs      int32  `json:"gpus"`
	CPUMilli  int64  `json:"cpuMilli,omitempty"`
	MemoryMiB int64  `json:"memoryMiB,omitempty"`
	Model     string `json:"model,omitempty"`
}

// Trace is a loaded workload: jobs sorted by submit time then ID, the
// cluster it brings (if any), and what loading counted.
type Trace struct {
	Name  string `json:"name"`
	Jobs  []Job  `json:"jobs"`
	Nodes []Node `json:"nodes,omitempty"`
	// Duplicates counts rows identical to an earlier one; they are kept
	// as separate jobs (the trace records them twice) and reported.
	Duplicates int `json:"duplicates,omitempty"`
	// Skipped counts the input rows that were not turned into jobs, by
	// reason (for example "pending" or "cpu-only"). Every row of a loaded
	// file is either a job or counted here.
	Skipped map[string]int `json:"skipped,omitempty"`
}
