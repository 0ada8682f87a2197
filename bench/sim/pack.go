package sim

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/trace"
	"github.com/allot-sched/allot/gang"
)

// PackResult is one policy's packing replay (see Pack).
type PackResult struct {
	Policy string `json:"policy"`
	// Config names the configuration (Options.Config), empty without one.
	Config string `json:"config,omitempty"`
	// GPUs is the cluster's capacity.
	GPUs int64 `json:"gpus"`
	// Shared says that fractional jobs were booked as shares of one GPU
	// (Options.ShareGPUs under a topology-aware policy).
	Shared bool `json:"shared,omitempty"`
	// Pods counts the arrivals, one per job of the trace (a pod of openb;
	// a job of several pods arrives, and is placed or fails, whole).
	// Placed + Failed == Pods.
	Pods   int `json:"pods"`
	Placed int `json:"placed"`
	Failed int `json:"failed"`
	// RequestedGPUs is what all the jobs ask for, in whole GPUs;
	// AllocatedGPUs is what the placed ones hold at the end and
	// UnallocatedGPUs the rest of the capacity.
	// With Options.ShareGPUs a fractional job counts as its share; the
	// whole-GPU figures then round the allocated down (and the
	// unallocated up), and Unallocated gives them to the thousandth.
	RequestedGPUs   int64   `json:"requestedGpus"`
	AllocatedGPUs   int64   `json:"allocatedGpus"`
	UnallocatedGPUs int64   `json:"unallocatedGpus"`
	Unallocated     float64 `json:"unallocated"`
	// Full is the replay just after the arrival that first brought the
	// arrived demand to the cluster's capacity, the 100% point of FGD's
	// figure; nil when the whole trace asks for less.
	Full *PackMoment `json:"full,omitempty"`
	// Fragmentation is the cluster at the end, measured against the
	// trace's own mix of pod shapes (FGD's target workload) by both of
	// allot's definitions.
	Fragmentation gang.Fragmentation `json:"fragmentation"`
	// Curve samples the replay each time the arrived demand passes
	// another whole percent of the capacity, and once more at the end.
	Curve []PackPoint `json:"curve"`
}

// PackMoment is the packing replay at one arrival.
type PackMoment struct {
	// Pods have arrived so far, bringing ArrivedPct percent of the
	// capacity in demand; Placed of them hold AllocatedGPUs.
	Pods            int     `json:"pods"`
	ArrivedPct      float64 `json:"arrivedPct"`
	Placed          int     `json:"placed"`
	AllocatedGPUs   int64   `json:"allocatedGpus"`
	UnallocatedGPUs int64   `json:"unallocatedGpus"`
	Unallocated     float64 `json:"unallocated"`
	// Fragmentation is measured as PackResult.Fragmentation is.
	Fragmentation gang.Fragmentation `json:"fragmentation"`
}

// PackPoint is one sample of a packing replay's curve: the arrived demand
// and the unallocated GPUs as percentages of the capacity, beside the GPUs
// allocated.
type PackPoint struct {
	ArrivedPct     float64 `json:"arrivedPct"`
	AllocatedGPUs  int64   `json:"allocatedGpus"`
	UnallocatedPct float64 `json:"unallocatedPct"`
}

// Pack replays tr the way FGD's experiment does (Weng et al., ATC'23):
// every job arrives once, in trace order (submit time, then ID), and never
// leaves, so the cluster only fills. Each arrival is submitted to the
// store, decided on the cluster the earlier ones left and, when admitted,
// committed. A job that cannot be placed when it arrives is withdrawn and
// counted as failed: nothing ever leaves, so it could never fit later, and
// kept pending it would hold back everything behind it in a StrictFIFO
// queue. Under a policy without topology awareness (kueue), admission
// checks quota alone and the pods are then bound first fit as Run binds
// them; a job no node can hold fails too and gives its quota back.
//
// The clock stands still: there are no completions, checkpoints or time
// samples, and no job is ever a victim, since an eviction would be a
// departure. The cluster and the quotas are Run's (including CPU and
// memory when o.Nodes declares them); o.Progress hears after every
// arrival. Without o.ShareGPUs GPUs are booked whole, so a job with a GPU
// share (trace.Job.GPUMilli) holds, and counts in the demand as, one whole
// GPU; with it the job holds, and counts as, its share of one GPU, packed
// with other shares onto it (FGD's setting).
//
// The figures of merit are the GPUs left unallocated when the arrived
// demand first reaches the capacity and at the end, and the fragmentation
// then, measured against the trace's own pod mix. Same trace, policy and
// options, same result.
func Pack(tr *trace.Trace, p Policy, o Options) (*PackResult, error) {
	pk, err := newPacker(tr, p, o)
	if err != nil {
		return nil, err
	}
	if err := pk.replay(); err != nil {
		return nil, err
	}
	return pk.finish(), nil
}

// newPacker builds the cluster and takes in the jobs, in arrival order.
func newPacker(tr *trace.Trace, p Policy, o Options) (*packer, error) {
	if len(tr.Jobs) == 0 {
		return nil, fmt.Errorf("the trace has no jobs to pack")
	}
	r, err := newRun(tr, p, o)
	if err != nil {
		return nil, err
	}
	pk := &packer{run: r, out: &PackResult{Policy: p.Name, Config: r.configName(), GPUs: r.gpus, Pods: len(r.jobs), Shared: r.share && r.topo}}
	pk.mix = pk.targetMix()
	pk.order = make([]int32, len(r.jobs))
	for i := range pk.order {
		pk.order[i] = int32(i)
	}
	slices.SortFunc(pk.order, func(a, b int32) int {
		ja, jb := r.jobs[a].j, r.jobs[b].j
		return cmp.Or(cmp.Compare(ja.Submit, jb.Submit), cmp.Compare(ja.ID, jb.ID))
	})
	return pk, nil
}

// replay lets every job arrive in turn.
func (pk *packer) replay() error {
	for k, i := range pk.order {
		if err := pk.arrive(&pk.jobs[i]); err != nil {
			return fmt.Errorf("policy %s: job %q: %w", pk.p.Name, pk.jobs[i].j.ID, err)
		}
		pk.observe(k + 1)
		if pk.o.Progress != nil {
			pk.o.Progress(k+1, len(pk.order))
		}
	}
	return nil
}

// finish completes the result once every job has arrived.
func (pk *packer) finish() *PackResult {
	out := pk.out
	out.AllocatedGPUs = pk.allocMilli / 1000
	out.UnallocatedGPUs = pk.gpus - out.AllocatedGPUs
	out.Unallocated = float64(1000*pk.gpus-pk.allocMilli) / 1000
	out.RequestedGPUs = (pk.requestedMilli + 999) / 1000
	if pk.sampled < len(pk.order) {
		out.Curve = append(out.Curve, pk.point())
	}
	out.Fragmentation = pk.mixFragmentation(pk.mix)
	return out
}

// packer is the state of one packing replay beside the run's.
type packer struct {
	*run
	out *PackResult
	// order lists the jobs by arrival: submit time, then ID.
	order []int32
	// arrived is the demand arrived so far, allocMilli what the placed
	// jobs hold and requestedMilli what all ask for, in thousandths of a
	// GPU; nextPct the percentage of the capacity whose crossing takes the
	// next sample, and sampled the arrivals the last sample had seen.
	arrived        int64
	allocMilli     int64
	requestedMilli int64
	nextPct        int64
	sampled        int
	d              allot.Decision
}

// arrive submits, decides and places one job, or withdraws it.
func (pk *packer) arrive(js *jobState) error {
	j := js.j
	w := pk.workload(js)
	// The clock stands at 0; the arrival order is the trace's.
	w.SubmittedAt = 0
	w.Preemption.Class = allot.Never
	demand := 1000 * int64(j.GPUs)
	if pk.out.Shared && j.GPUMilli > 0 {
		demand = int64(j.GPUMilli)
	}
	pk.arrived += demand
	pk.requestedMilli += demand
	if _, err := pk.st.Apply(allot.Submit{Workload: w}); err != nil {
		return err
	}
	allot.DecideInto(pk.st.Load(), allot.Request(w), &pk.d)
	if pk.d.Verdict != allot.VerdictAdmit {
		// No departure will ever make room, so it fails now.
		_, err := pk.st.Apply(allot.Withdraw{ID: j.ID})
		pk.out.Failed++
		return err
	}
	if _, err := pk.st.Commit(pk.d); err != nil {
		// One writer and no clock: a refused commit is a simulator bug.
		return err
	}
	if !pk.topo {
		pk.quotaFlavors(js)
	}
	if !pk.topo && !pk.bind(js) {
		// Admitted on quota, but no node holds its pods: it fails and
		// its quota goes back.
		_, err := pk.st.Apply(allot.Finish{ID: j.ID})
		pk.out.Failed++
		return err
	}
	js.state = runningState
	pk.out.Placed++
	pk.allocMilli += demand
	return nil
}

// observe takes the curve's samples and the 100% moment after the pods-th
// arrival.
func (pk *packer) observe(pods int) {
	out, capacity := pk.out, pk.gpus
	if out.Full == nil && pk.arrived >= 1000*capacity {
		alloc := pk.allocMilli / 1000
		out.Full = &PackMoment{
			Pods: pods, ArrivedPct: pk.arrivedPct(), Placed: out.Placed,
			AllocatedGPUs: alloc, UnallocatedGPUs: capacity - alloc,
			Unallocated:   float64(1000*capacity-pk.allocMilli) / 1000,
			Fragmentation: pk.mixFragmentation(pk.mix),
		}
	}
	// One sample however many percents one arrival passes (a large job
	// on a small cluster).
	if pct := pk.arrived / 10 / capacity; pct >= pk.nextPct {
		out.Curve = append(out.Curve, pk.point())
		pk.nextPct, pk.sampled = pct+1, pods
	}
}

func (pk *packer) arrivedPct() float64 { return float64(pk.arrived) / 10 / float64(pk.gpus) }

func (pk *packer) point() PackPoint {
	alloc := pk.allocMilli / 1000
	return PackPoint{ArrivedPct: pk.arrivedPct(), AllocatedGPUs: alloc, UnallocatedPct: float64(1000*pk.gpus-pk.allocMilli) / 10 / float64(pk.gpus)}
}
