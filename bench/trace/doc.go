// Package trace loads and generates the GPU workloads the simulator
// replays: public cluster traces, allot's own trace format, and synthetic
// workloads calibrated to the Philly trace.
//
// # Traces
//
// A Trace is a list of jobs sorted by submit time, then ID, with the
// cluster the trace brings (Nodes, possibly empty) and what loading
// counted: Duplicates (rows identical to an earlier one, kept as jobs)
// and Skipped (rows left out, by reason). Every job has a unique,
// non-empty ID, a submit time of at least 0, and a duration and GPU count
// of at least 1; Trace.Validate checks these invariants.
//
// # Sources
//
//   - LoadPhilly / ParsePhilly read the Microsoft Philly trace (2017) in
//     the form the Pollux artifact published it.
//   - LoadOpenB / ParseOpenB read the Alibaba openb trace
//     (cluster-trace-gpu-v2023): its pod list and GPU node list.
//   - Load / ReadJSON / ReadCSV read allot's own format, below;
//     WriteJSON and WriteCSV write it.
//   - Synthetic generates a workload from a SyntheticConfig;
//     DefaultSynthetic is the simulation's default.
//
// Loading never panics on bad input: a malformed row fails the load with
// a *RowError that names the file, the line and the reason.
//
// # allot's JSON format
//
// A file is either a Trace object or a bare array of jobs:
//
//	{
//	  "name": "example",
//	  "jobs": [
//	    {"id": "a", "queue": "team-00", "submit": 0, "duration": 3600, "gpus": 8,
//	     "priority": 50, "priorityClass": "normal"},
//	    {"id": "b", "queue": "team-01", "submit": 60, "duration": 600, "gpus": 16,
//	     "gpusPerPod": 8, "priority": 0, "priorityClass": "low",
//	     "preemptible": true, "checkpoint": 1800}
//	  ],
//	  "nodes": [{"name": "n0", "gpus": 8}],
//	  "duplicates": 0,
//	  "skipped": {"pending": 3}
//	}
//
// Job fields: id (string, unique), queue (string), submit (seconds from the
// trace's start, at least 0), duration (seconds of uninterrupted run time,
// at least 1), gpus (at least 1), gpusPerPod (GPUs per pod; 0 or absent
// means min(gpus, 8)), priority (integer, higher first), priorityClass
// (name), preemptible (boolean), checkpoint (seconds between checkpoints;
// 0 or absent means none), gpuMilli (thousandths of one shared GPU,
// 1 to 999, on single-GPU jobs only; 0 or absent means whole GPUs), and
// cpuMilli and memoryMiB (what each pod asks for besides its GPUs, in
// thousandths of a core and in MiB; 0 or absent means not given).
// Unknown fields are errors. Jobs may appear in any order; they are sorted
// on load.
//
// # allot's CSV format
//
// The CSV form holds the jobs only, one per row, under the header
//
//	id,queue,submit,duration,gpus,gpusPerPod,priority,priorityClass,preemptible,checkpoint
//
// optionally followed by any of the columns gpuMilli, cpuMilli and
// memoryMiB, in that order (a writer adds each only when some job uses
// it). The fields mean what they mean in JSON; preemptible is true or
// false, and empty gpusPerPod, priority, priorityClass, preemptible,
// checkpoint, gpuMilli, cpuMilli and memoryMiB fields read as 0, "" or
// false. For example:
//
//	id,queue,submit,duration,gpus,gpusPerPod,priority,priorityClass,preemptible,checkpoint
//	a,team-00,0,3600,8,0,50,normal,false,0
//	b,team-01,60,600,16,8,0,low,true,1800
package trace
