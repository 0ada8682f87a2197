package sim

import (
	"cmp"
	"container/heap"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/bench/trace"
)

// Shape is a uniform cluster: nodes of GPUsPerNode GPUs, NodesPerRack
// nodes a rack, RacksPerBlock racks a block.
type Shape struct {
	Nodes         int `json:"nodes"`
	GPUsPerNode   int `json:"gpusPerNode"`
	NodesPerRack  int `json:"nodesPerRack"`
	RacksPerBlock int `json:"racksPerBlock"`
}

// DefaultShape is 1,024 GPUs: 128 nodes of 8 GPUs, 16 nodes a rack, 8 racks
// a block.
func DefaultShape() Shape {
	return Shape{Nodes: 128, GPUsPerNode: 8, NodesPerRack: 16, RacksPerBlock: 8}
}

// GPUs is the shape's GPU count.
func (s Shape) GPUs() int64 { return int64(s.Nodes) * int64(s.GPUsPerNode) }

// MaxNodes is the most nodes a run's cluster may have, from a Shape or a
// node list: 65,536 nodes take the simulator about 150 MB and a minute
// for a hundred jobs. MaxGPUsPerNode is the most GPUs a Shape's node may
// have.
const (
	MaxNodes       = 1 << 16
	MaxGPUsPerNode = 64
)

func (s Shape) check() error {
	if s.Nodes < 1 || s.GPUsPerNode < 1 || s.GPUsPerNode > MaxGPUsPerNode || s.NodesPerRack < 1 || s.RacksPerBlock < 1 {
		return fmt.Errorf("cluster shape %+v: every figure must be positive and at most %d GPUs a node", s, MaxGPUsPerNode)
	}
	if s.Nodes > MaxNodes {
		return fmt.Errorf("cluster shape %+v: %d nodes, more than the limit of %d", s, s.Nodes, MaxNodes)
	}
	return nil
}

// Options tune a run.
type Options struct {
	Shape Shape
	// Nodes, when set, replaces Shape with a trace's own node list; racks
	// and blocks are cut from it in order. When some node declares CPU or
	// memory, the run books them too: nodes hold what the list says and
	// every pod asks for its job's CPUMilli and MemoryMiB, so a node can
	// turn a pod away for lack of CPU with GPUs to spare.
	Nodes []trace.Node
	// QueueDepth bounds how many workloads that cannot be admitted one
	// scheduling loop looks at (allot.Options.QueueDepth; 0: all).
	QueueDepth int
	// SampleEvery is the sampling period of the time series, in simulated
	// seconds (0: 600).
	SampleEvery int64
	// Progress, when set, hears after every simulated instant how many
	// jobs have left the run (completed or rejected) out of all of them.
	Progress func(left, jobs int)
	// NodeMTBF, when positive, makes every node fail at random while jobs
	// arrive, with that mean time between failures in simulated seconds
	// (exponentially distributed). A failed node is down for RepairTime seconds on average
	// (0: an hour); the jobs on it lose the work since their last
	// checkpoint and wait again, as preemption victims do, but count as
	// interrupted, not preempted. FailureSeed seeds the draws: same seed,
	// same failures.
	// Both are at most MaxFailureSeconds.
	NodeMTBF    int64
	RepairTime  int64
	FailureSeed uint64
	// Config, when set, is the team's own cluster and queues in place of
	// the equal split among the trace's queues; its nodes, when it lists
	// them, replace Shape and Nodes. See Config.
	Config *Config
	// TerminationDelay is how long, in simulated seconds, a preemption's
	// victim takes to terminate. The store commits preemptions in two
	// phases (allot.Options.TwoPhasePreemption): until the victim has
	// terminated its GPUs stay booked, allocated but doing no useful work
	// (counted as lost), and its preemptor holds its room and waits. Zero
	// means DefaultTerminationDelay; a negative delay commits preemptions
	// in one phase, the victims gone at once. At most MaxFailureSeconds.
	TerminationDelay int64
	// ShareGPUs books a job with a GPU share (trace.Job.GPUMilli) as that
	// share of one GPU, packed with others onto it, when admission is
	// topology-aware: every node's GPUs are shareable, and the share is
	// charged to the resource ShareResource. Without it, or without
	// topology awareness, such a job holds one whole GPU. It applies to
	// the generated cluster and a trace's node list, not a Config's.
	ShareGPUs bool
	// measureEvery measures fragmentation at every sample, even where
	// nothing was written since the last (tests compare the two).
	measureEvery bool
}

// ShareResource is the resource a run with Options.ShareGPUs asks for
// GPU shares by, in thousandths of one GPU.
const ShareResource = "gpu-milli"

// DefaultTerminationDelay is Options.TerminationDelay's default: 30
// seconds, Kubernetes' default termination grace period.
const DefaultTerminationDelay = 30

// auditCapacity bounds the store's audit log in a run: more evictions and
// admissions than one instant ever makes. A run that overflows it fails.
const auditCapacity = 1 << 16

// MaxFailureSeconds bounds Options.NodeMTBF and Options.RepairTime: about
// 31 years, far beyond any trace's span, and small enough that no draw
// around it overflows the simulated clock.
const MaxFailureSeconds = 1_000_000_000

// event kinds, in the order they apply at one instant: completions free
// room before arrivals ask for it.
const (
	evFinish = iota
	evTerminate
	evCheckpoint
	evRepair
	evFail
	evArrive
	evSample
)

// An event is about a job (evArrive, evFinish, evTerminate, evCheckpoint: job indexes
// the run's job table) or a node (evFail, evRepair: node indexes its node
// table); the other field is unused. evSample is about neither.
type event struct {
	at   int64
	kind uint8
	job  int32
	node int32
	gen  int32
}

type events []event

func (h events) Len() int { return len(h) }
func (h events) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	if a.job != b.job {
		return a.job < b.job
	}
	return a.node < b.node
}
func (h events) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *events) Push(x any)   { *h = append(*h, x.(event)) }
func (h *events) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// job states
const (
	waiting = iota
	holding // admitted on quota, its pods not yet bound to nodes
	runningState
	terminating // a preemption's victim whose pods have yet to terminate
	done
	rejected
)

type jobState struct {
	j         *trace.Job
	state     uint8
	gen       int32
	remaining int64   // seconds of work left
	start     int64   // when the current run started
	saved     int64   // work of the current run kept by its last checkpoint
	firstRun  int64   // first start, -1 before
	end       int64   // completion
	boundTo   []int32 // the node of every bound pod
	boundGPUs []int32 // and its GPUs
	// queue is the run's queue of the job (Config.Assign); flavors, for a
	// job admitted on quota alone, the flavor of each pod set, which its
	// pods are bound to.
	queue   string
	flavors []int32
	// queued: counted among the waiting jobs (see run.queue).
	queued    bool
	evictions int
	// stopped is when a terminating job was preempted; busy, that its
	// pods held GPUs then, which they hold until they terminate.
	stopped int64
	busy    bool
}

type run struct {
	p      Policy
	o      Options
	jobs   []jobState
	byID   map[string]int32
	st     *allot.Store
	ev     events
	now    int64
	gpus   int64
	cpu    bool   // CPU is booked on nodes (see Options.Nodes)
	mem    bool   // and memory
	nodes  []room // capacity per node
	widest int32  // GPUs of the largest node
	free   []room // free room per node, for binding without topology awareness
	total  room   // the CPU and memory of the nodes that are up
	// names and nodeFlavor are each node's name and flavor (an index into
	// flavors); unusable marks the nodes the configuration has down or
	// cordoned, which never fail nor come up.
	names      []string
	nodeFlavor []int32
	flavors    []string
	unusable   []bool
	// gpuName is the GPU resource's name; topo that admission is
	// topology-aware; level the topology level multi-pod jobs prefer
	// ("": none); queueOf maps the trace's queues to the configuration's.
	gpuName string
	topo    bool
	// share says that fractional jobs are booked as GPU shares
	// (Options.ShareGPUs on a generated cluster).
	share   bool
	level   string
	queueOf map[string]string
	// wayIn is how a job is submitted to each queue of a configuration
	// whose queues admit only some namespaces: from a namespace it admits,
	// through a local queue of its where it has one (Snapshot.WayIn).
	wayIn map[string]way
	// queueBusy is each queue's GPUs running now and at most.
	queueBusy map[string]struct{ now, peak int64 }
	hold      []int32 // jobs holding quota in admission order
	open      int     // jobs not yet done or rejected
	// freed and arrived describe the current instant: whether room came
	// free (a completion) and which jobs arrived.
	freed   bool
	arrived []int32
	seen    []outcome // the decisions of this instant
	// decision is the memory of every decision of the run: its scratch,
	// and what its workspace remembers from loop to loop.
	decision allot.Decision
	mix      []shapeCount // the trace's pods by shape: FGD's target workload

	// busyGPUSec and windowLost count from the first arrival to the last,
	// where the cluster is in its steady state; lostGPUSec counts all.
	busyGPUs, busyGPUSec, lostGPUSec, windowLost int64
	firstArrival, lastArrival                    int64
	busyAll                                      int64 // GPU-seconds run over the whole span
	admissions                                   int
	decisions                                    int
	series                                       []Sample
	// activeEnd is the last start or rejection of a job; activeBusy and
	// activeLost the GPU-seconds run and lost until then (see activity).
	activeEnd, activeBusy, activeLost int64
	// waitingShapes counts the waiting jobs by shape (see queue); scratch
	// and scratch2 are shapeBlocked's buffers.
	waitingShapes     map[blockKey]int32
	scratch, scratch2 []room

	// writes counts what the run wrote to the store and to its own
	// binding but for time and checkpoints; sampledAt is the count the
	// last sample measured fragmentation at. timeless says that no node
	// has a cooldown, whose end would change what fits as time passes.
	writes, sampledAt uint64
	timeless          bool

	// delay is the victims' termination delay (0: one phase); audit the
	// store's records of an instant.
	delay int64
	audit []allot.AuditRecord

	// Node failures (Options.NodeMTBF): the draws, which nodes are down,
	// and what failures cost.
	rng                     *rand.Rand
	down                    []bool
	failures, interruptions int
	failLostGPUSec          int64
}

// Run replays tr on the cluster under policy p and reports what happened.
// The run is deterministic: same trace, policy and options, same result.
func Run(tr *trace.Trace, p Policy, o Options) (*Result, error) {
	if o.SampleEvery <= 0 {
		o.SampleEvery = 600
	}
	if o.NodeMTBF > MaxFailureSeconds || o.RepairTime > MaxFailureSeconds || o.TerminationDelay > MaxFailureSeconds {
		return nil, fmt.Errorf("node MTBF %d s, repair time %d s or termination delay %d s: more than the limit of %d s",
			o.NodeMTBF, o.RepairTime, o.TerminationDelay, MaxFailureSeconds)
	}
	r, err := newRun(tr, p, o)
	if err != nil {
		return nil, err
	}
	for i := range r.jobs {
		heap.Push(&r.ev, event{at: r.jobs[i].j.Submit, kind: evArrive, job: int32(i)})
	}
	r.open = len(tr.Jobs)
	if len(tr.Jobs) > 0 {
		bySubmit := func(a, b trace.Job) int { return cmp.Compare(a.Submit, b.Submit) }
		r.firstArrival = slices.MinFunc(tr.Jobs, bySubmit).Submit
		r.lastArrival = slices.MaxFunc(tr.Jobs, bySubmit).Submit
		r.now = r.firstArrival
		heap.Push(&r.ev, event{at: r.firstArrival, kind: evSample})
		if o.NodeMTBF > 0 {
			r.rng = rand.New(rand.NewPCG(o.FailureSeed, 0x6661696c))
			for n := range r.nodes {
				if r.unusable == nil || !r.unusable[n] {
					r.nextFailure(int32(n))
				}
			}
		}
	}
	if err := r.loop(); err != nil {
		return nil, fmt.Errorf("policy %s: %w", p.Name, err)
	}
	// Every job left: no victim is left evicting, no preemptor holding.
	if s := r.st.Load(); r.open == 0 && (len(s.EvictingIDs()) > 0 || len(s.HeldIDs()) > 0) {
		return nil, fmt.Errorf("policy %s: the run ended with %v evicting and %v holding", p.Name, s.EvictingIDs(), s.HeldIDs())
	}
	return r.result(), nil
}

// newRun builds the policy's cluster and store and takes in the trace's
// jobs: what Run and Pack share.
func newRun(tr *trace.Trace, p Policy, o Options) (*run, error) {
	if p.AsConfigured && o.Config == nil {
		return nil, fmt.Errorf("policy %s runs a configuration as written: it needs one", p.Name)
	}
	r := &run{p: p, o: o, byID: make(map[string]int32, len(tr.Jobs)), delay: o.TerminationDelay, queueBusy: map[string]struct{ now, peak int64 }{}}
	if r.delay == 0 {
		r.delay = DefaultTerminationDelay
	}
	r.delay = max(r.delay, 0)
	b, err := r.cluster(tr)
	if err != nil {
		return nil, err
	}
	b.Options.TwoPhasePreemption = r.delay > 0
	r.topo = b.Options.TopologyAware == nil || *b.Options.TopologyAware
	snap, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", p.Name, err)
	}
	if r.st, err = allot.NewStoreWith(snap, allot.StoreOptions{AuditCapacity: auditCapacity}); err != nil {
		return nil, err
	}
	// A node a configuration's flavor selects by its labels names no
	// flavor: the snapshot says which it serves.
	r.timeless = true
	for i, name := range r.names {
		if st, ok := snap.NodeStatus(name); ok {
			r.timeless = r.timeless && st.CooldownUntil == 0
			r.nodeFlavor[i] = int32(max(slices.Index(r.flavors, st.Flavor), 0))
		}
	}
	for _, q := range snap.Queues() {
		if tenant, lq, ok := snap.WayIn(q.Name); ok && (tenant != "" || lq != "") {
			if r.wayIn == nil {
				r.wayIn = map[string]way{}
			}
			r.wayIn[q.Name] = way{tenant, lq}
		}
	}
	if err := r.addJobs(tr); err != nil {
		return nil, err
	}
	return r, nil
}

// addJobs takes the trace's jobs into the run, refusing the ones it cannot
// replay.
func (r *run) addJobs(tr *trace.Trace) error {
	r.jobs = make([]jobState, len(tr.Jobs))
	for i := range tr.Jobs {
		j := &tr.Jobs[i]
		if _, dup := r.byID[j.ID]; dup {
			return fmt.Errorf("job %q twice in the trace", j.ID)
		}
		if j.GPUs < 1 || j.Duration < 1 || j.Submit < 0 {
			return fmt.Errorf("job %q: needs GPUs, a positive duration and a submit time", j.ID)
		}
		if j.CPUMilli < 0 || j.CPUMilli > maxAmount || j.MemoryMiB < 0 || j.MemoryMiB > maxAmount>>20 {
			return fmt.Errorf("job %q: CPU %d milli or memory %d MiB out of range", j.ID, j.CPUMilli, j.MemoryMiB)
		}
		r.byID[j.ID] = int32(i)
		r.jobs[i] = jobState{j: j, remaining: j.Duration, firstRun: -1, queue: j.Queue}
		if q, ok := r.queueOf[j.Queue]; ok {
			r.jobs[i].queue = q
		}
	}
	return nil
}

// way is a namespace and, if any, a local queue of its to submit from.
type way struct{ tenant, localQueue string }

// workload is the allot form of a job: pods of GPUsPerPod GPUs (8 by
// default), the remainder in a second, smaller pod set.
func (r *run) workload(js *jobState) allot.Workload {
	j := js.j
	per := r.podGPUs(j)
	w := allot.Workload{ID: j.ID, Queue: js.queue, Priority: j.Priority, SubmittedAt: j.Submit, ExpectedRuntime: js.remaining}
	if in, ok := r.wayIn[js.queue]; ok {
		w.Tenant, w.LocalQueue = in.tenant, in.localQueue
	}
	switch {
	case !j.Preemptible:
		w.Preemption.Class = allot.Never
	case j.Checkpoint > 0:
		w.Preemption.Class = allot.Checkpointable
	default:
		w.Preemption.Class = allot.Preemptible
	}
	full, rest := j.GPUs/per, j.GPUs%per
	topo := allot.TopologyRequest{}
	if r.level != "" && j.GPUs > per {
		topo.Preferred = r.level
		topo.Group = "job"
	}
	w.PodSets = append(w.PodSets, allot.PodSet{Name: "main", Count: full, PerPod: r.perPod(j, per), Topology: topo})
	if rest > 0 {
		w.PodSets = append(w.PodSets, allot.PodSet{Name: "rest", Count: 1, PerPod: r.perPod(j, rest), Topology: topo})
	}
	return w
}

// perPod is what one pod of j with gpus GPUs asks for, in allot's terms.
func (r *run) perPod(j *trace.Job, gpus int32) allot.Resources {
	p := r.podRoom(j, gpus)
	out := allot.Resources{r.gpuName: int64(gpus)}
	if p.milli > 0 {
		out = allot.Resources{ShareResource: int64(p.milli)}
	}
	if p.cpu > 0 {
		out["cpu"] = p.cpu
	}
	if p.mem > 0 {
		out["memory"] = p.mem
	}
	return out
}

// podGPUs is the GPUs of one full pod of j: GPUsPerPod (8 by default), at
// most the job and the largest node.
func (r *run) podGPUs(j *trace.Job) int32 {
	per := j.GPUsPerPod
	if per <= 0 {
		per = 8
	}
	return min(per, j.GPUs, r.widest)
}

// draw is an exponentially distributed span of the given mean, at least a
// second.
func (r *run) draw(mean int64) int64 {
	return max(1, int64(r.rng.ExpFloat64()*float64(mean)))
}

// loop runs the events in time order, one scheduling loop per instant,
// until every job is done or rejected (or the events run out).
func (r *run) loop() error {
	for r.ev.Len() > 0 && r.open > 0 {
		t := r.ev[0].at
		if t > r.now {
			r.busyAll += r.busyGPUs * (t - r.now)
			if r.now < r.lastArrival {
				r.busyGPUSec += r.busyGPUs * (min(t, r.lastArrival) - r.now)
			}
			if _, err := r.st.Apply(allot.AdvanceTime{Seconds: t - r.now}); err != nil {
				return err
			}
			r.now = t
		}
		sample := false
		r.freed, r.arrived = false, r.arrived[:0]
		for r.ev.Len() > 0 && r.ev[0].at == t {
			e := heap.Pop(&r.ev).(event)
			if err := r.apply(e, &sample); err != nil {
				return err
			}
		}
		var err error
		switch {
		case r.freed:
			// Room came free: the scheduling loop looks at every waiting
			// workload again.
			r.seen = r.seen[:0]
			allot.ScheduleInto(r.st, &r.decision, r.see)
			err = r.account(r.seen)
		case len(r.arrived) > 0:
			// Nothing came free, so what waited before still cannot start;
			// only the arrivals are decided, as an admission webhook does.
			err = r.admitArrivals()
		}
		if err != nil {
			return err
		}
		if sample {
			if err := r.sample(); err != nil {
				return err
			}
			if r.open > 0 && !r.drained() {
				heap.Push(&r.ev, event{at: r.now + r.o.SampleEvery, kind: evSample})
			}
		}
		if r.o.Progress != nil {
			r.o.Progress(len(r.jobs)-r.open, len(r.jobs))
		}
	}
	return nil
}

// drained reports whether the backlog has cleared for good: the arrivals
// are over, nothing waits, and no victim is terminating nor preemptor
// holding (a victim waits again once gone). Nothing can wait again then,
// so sampling stops: the rest is the longest jobs running out.
func (r *run) drained() bool {
	if r.now < r.lastArrival || len(r.series) == 0 || r.series[len(r.series)-1].Waiting > 0 {
		return false
	}
	s := r.st.Load()
	return len(s.EvictingIDs()) == 0 && len(s.HeldIDs()) == 0
}

func (r *run) apply(e event, sample *bool) error {
	if e.kind != evSample && e.kind != evCheckpoint {
		r.writes++
	}
	switch e.kind {
	case evSample:
		*sample = true
		return nil
	case evFail:
		return r.fail(e.node)
	case evRepair:
		return r.repair(e.node)
	}
	js := &r.jobs[e.job]
	switch e.kind {
	case evArrive:
		r.arrived = append(r.arrived, e.job)
		r.queue(js, true)
		_, err := r.st.Apply(allot.Submit{Workload: r.workload(js)})
		return err
	case evTerminate:
		if js.state != terminating || js.gen != e.gen {
			return nil
		}
		if _, err := r.st.Apply(allot.Terminated{ID: js.j.ID}); err != nil {
			return err
		}
		r.terminated(js)
		r.freed = true
	case evFinish:
		if js.state != runningState || js.gen != e.gen {
			return nil
		}
		if _, err := r.st.Apply(allot.Finish{ID: js.j.ID}); err != nil {
			return err
		}
		r.unbind(js)
		js.state, js.remaining = done, 0
		js.gen++
		r.busyGPUs -= int64(js.j.GPUs)
		r.queueRuns(js, -1)
		r.open--
		r.freed = true
		js.end = r.now
	case evCheckpoint:
		if js.state != runningState || js.gen != e.gen {
			return nil
		}
		if _, err := r.st.Apply(allot.Checkpoint{ID: js.j.ID}); err != nil {
			return err
		}
		js.saved = r.now - js.start
		r.checkpointAfter(js)
	}
	return nil
}

// repair brings node n back up and draws its next failure.
func (r *run) repair(n int32) error {
	r.down[n] = false
	if _, err := r.st.Apply(allot.NodeUp{Node: r.names[n]}); err != nil {
		return err
	}
	r.freed = true
	r.nextFailure(n)
	return nil
}

// nextFailure draws node n's next failure. Failures happen only while jobs
// arrive, the window the figures measure: a job longer than the time
// between failures and without checkpoints would otherwise start over
// forever.
func (r *run) nextFailure(n int32) {
	if at := r.now + r.draw(r.o.NodeMTBF); at <= r.lastArrival {
		heap.Push(&r.ev, event{at: at, kind: evFail, node: n})
	}
}

// fail takes node n down until its repair: the jobs on it are evicted
// (allot placed them, or, under quota-only admission, the simulator bound
// them there) and wait again.
func (r *run) fail(n int32) error {
	name := r.names[n]
	r.failures++
	r.down[n] = true
	if _, err := r.st.Apply(allot.NodeDown{Node: name}); err != nil {
		return err
	}
	var hit []int32
	if r.topo {
		for _, id := range r.st.Load().RunningOn(name) {
			if i, ok := r.byID[id]; ok {
				hit = append(hit, i)
			}
		}
	} else {
		for i := range r.jobs {
			if js := &r.jobs[i]; (js.state == runningState || js.state == terminating) && slices.Contains(js.boundTo, n) {
				hit = append(hit, int32(i))
			}
		}
	}
	for _, i := range hit {
		js := &r.jobs[i]
		if _, err := r.st.Apply(allot.Evict{ID: js.j.ID}); err != nil {
			return err
		}
		// A victim terminating there is gone: it lost its work when it
		// was preempted. The evictions are accounted for here, not as
		// preemptions (their audit records name no preemptor).
		if js.state == terminating {
			r.terminated(js)
		} else {
			r.interrupted(js, true)
		}
	}
	r.freed = true // the interrupted jobs wait again: schedule now
	repair := r.o.RepairTime
	if repair <= 0 {
		repair = 3600
	}
	heap.Push(&r.ev, event{at: r.now + r.draw(repair), kind: evRepair, node: n})
	return nil
}

func (r *run) checkpointAfter(js *jobState) {
	if c := js.j.Checkpoint; c > 0 && js.j.Preemptible {
		if next := r.now + c; next < js.start+js.remaining {
			heap.Push(&r.ev, event{at: next, kind: evCheckpoint, job: r.byID[js.j.ID], gen: js.gen})
		}
	}
}

// account takes note of what a round of decisions admitted, evicted and
// rejected.
func (r *run) account(ds []outcome) error {
	r.writes++ // admissions, evictions, rejections, bindings
	r.decisions += len(ds)
	s := r.st.Load()
	r.audit = r.st.DrainAudit(r.audit[:0])
	if n := r.st.AuditDropped(); n > 0 {
		return fmt.Errorf("the store's audit log dropped %d records in one instant", n)
	}
	// Admissions and evictions in the order the store made them: a
	// workload admitted, even one that started when its victims had
	// terminated, may be a victim the next moment.
	for _, rec := range r.audit {
		jid, ok := r.byID[rec.Workload]
		if !ok {
			continue
		}
		switch {
		case rec.Kind == allot.AuditAdmitted && r.jobs[jid].state == waiting:
			r.admitted(jid)
		case rec.Kind == allot.AuditEvicted && rec.Preemptor != "":
			r.evicted(&r.jobs[jid])
		case rec.Kind == allot.AuditHeld:
			r.queue(&r.jobs[jid], false)
		case rec.Kind == allot.AuditReleased && r.jobs[jid].state == waiting:
			r.queue(&r.jobs[jid], true)
		}
	}
	for _, d := range ds {
		jid, ok := r.byID[d.workload]
		if !ok || d.verdict != allot.VerdictReject {
			continue
		}
		if js := &r.jobs[jid]; js.state == waiting {
			if _, pending := s.Pending(js.j.ID); pending {
				r.withdraw(js.j.ID)
			}
			js.state = rejected
			r.queue(js, false)
			r.open--
			r.activity()
		}
	}
	clear(r.audit)
	if !r.topo {
		r.bindHolding()
	}
	return nil
}

// admitted starts job jid, which the store admitted, or, under quota-only
// admission, has it hold its quota until its pods are bound.
func (r *run) admitted(jid int32) {
	js := &r.jobs[jid]
	r.admissions++
	if r.topo {
		r.start(js)
		return
	}
	js.state = holding
	r.hold = append(r.hold, jid)
	r.queue(js, true) // it waits for nodes, as one that was held waited for its victims
	r.quotaFlavors(js)
}

// quotaFlavors notes the flavor of each pod set of js, admitted on quota
// alone, which its pods are bound to.
func (r *run) quotaFlavors(js *jobState) {
	js.flavors = js.flavors[:0]
	if len(r.flavors) > 1 {
		w, _ := r.st.Load().Running(js.j.ID)
		for _, ps := range w.PodSets {
			js.flavors = append(js.flavors, int32(slices.Index(r.flavors, ps.Flavor)))
		}
	}
}

// outcome is what the simulator keeps of a decision.
type outcome struct {
	workload string
	verdict  allot.Verdict
}

// see keeps a decision's outcome for account.
func (r *run) see(d *allot.Decision) {
	r.seen = append(r.seen, outcome{d.Workload, d.Verdict})
}

// admitArrivals decides this instant's arrivals in the queue order
// (priority, then submission) and commits what is admitted. A StrictFIFO
// queue keeps an arrival behind the work waiting ahead of it (Decide
// answers HigherPriorityPending).
func (r *run) admitArrivals() error {
	slices.SortFunc(r.arrived, func(a, b int32) int {
		ja, jb := r.jobs[a].j, r.jobs[b].j
		if ja.Priority != jb.Priority {
			return cmp.Compare(jb.Priority, ja.Priority)
		}
		return cmp.Compare(a, b)
	})
	r.seen = r.seen[:0]
	d := &r.decision
	for _, i := range r.arrived {
		w := r.workload(&r.jobs[i])
		allot.DecideInto(r.st.Load(), allot.Request(w), d)
		if d.Verdict == allot.VerdictAdmit || d.Verdict == allot.VerdictPreempt {
			// A refused commit leaves the job waiting for the next loop.
			_, _ = r.st.Commit(*d)
		}
		r.see(d)
	}
	return r.account(r.seen)
}

func (r *run) start(js *jobState) {
	js.state, js.start, js.saved = runningState, r.now, 0
	r.queue(js, false)
	js.gen++
	if js.firstRun < 0 {
		js.firstRun = r.now
	}
	r.activity()
	r.busyGPUs += int64(js.j.GPUs)
	r.queueRuns(js, 1)
	heap.Push(&r.ev, event{at: r.now + js.remaining, kind: evFinish, job: r.byID[js.j.ID], gen: js.gen})
	r.checkpointAfter(js)
}

// evicted accounts for a preemption victim. In one phase it waits again at
// once; in two its pods terminate first, holding their GPUs for the
// termination delay, unless it was a preemptor that had not started.
func (r *run) evicted(js *jobState) {
	switch {
	case js.state == waiting:
		// A preemptor evicted while it held its room never started: it
		// waits on.
		js.evictions++
		r.queue(js, true)
		return
	case r.delay == 0:
		r.interrupted(js, false)
		return
	}
	js.busy = js.state == runningState
	if js.busy {
		r.queueRuns(js, -1)
	}
	r.stop(js, false)
	js.state, js.stopped = terminating, r.now
	r.queue(js, false)
	heap.Push(&r.ev, event{at: r.now + r.delay, kind: evTerminate, job: r.byID[js.j.ID], gen: js.gen})
}

// terminated accounts for a victim whose pods are gone: the GPUs they held
// while terminating did no useful work. It waits again.
func (r *run) terminated(js *jobState) {
	if js.busy {
		gpus := int64(js.j.GPUs)
		r.lostGPUSec += (r.now - js.stopped) * gpus
		if end := min(r.now, r.lastArrival); end > js.stopped {
			r.windowLost += (end - js.stopped) * gpus
		}
		r.release(js)
	}
	js.state, js.busy = waiting, false
	r.queue(js, true)
	js.gen++
}

// interrupted accounts for a job stopped by preemption (in one phase) or,
// with failure set, by its node failing: it keeps the work up to its last
// checkpoint, loses the rest, frees its GPUs and waits again.
func (r *run) interrupted(js *jobState, failure bool) {
	wasRunning := js.state == runningState
	r.stop(js, failure)
	if wasRunning {
		r.release(js)
		r.queueRuns(js, -1)
	}
	js.state = waiting
	r.queue(js, true)
}

// stop accounts for the work a stopped job loses: a running one keeps the
// work up to its last checkpoint; one holding quota gives it up.
func (r *run) stop(js *jobState, failure bool) {
	switch js.state {
	case runningState:
		ran := r.now - js.start
		lost := ran - js.saved
		if !js.j.Preemptible || js.j.Checkpoint == 0 {
			lost = ran
		}
		if failure {
			r.failLostGPUSec += lost * int64(js.j.GPUs)
		} else {
			r.lostGPUSec += lost * int64(js.j.GPUs)
		}
		if r.now <= r.lastArrival {
			r.windowLost += lost * int64(js.j.GPUs)
		}
		js.remaining -= ran - lost
	case holding:
		r.hold = slices.DeleteFunc(r.hold, func(i int32) bool { return &r.jobs[i] == js })
	}
	js.saved = 0
	if failure {
		r.interruptions++
	} else {
		js.evictions++
	}
	js.gen++
}

// release frees the GPUs of a job that ran.
func (r *run) release(js *jobState) {
	r.busyGPUs -= int64(js.j.GPUs)
	r.unbind(js)
}

// queueRuns counts the GPUs of js running in its queue (sign 1) or no
// longer (-1), and keeps the queue's peak. A victim no longer runs once
// it starts terminating: its quota has gone to its preemptor.
func (r *run) queueRuns(js *jobState, sign int64) {
	g := sign * int64(js.j.GPUs)
	q := r.queueBusy[js.queue]
	q.now += g
	q.peak = max(q.peak, q.now)
	r.queueBusy[js.queue] = q
}

func (r *run) unbind(js *jobState) {
	for k, n := range js.boundTo {
		r.free[n] = r.free[n].plus(r.podRoom(js.j, js.boundGPUs[k]))
	}
	js.boundTo, js.boundGPUs = js.boundTo[:0], js.boundGPUs[:0]
}

func (r *run) withdraw(id string) {
	// The job is pending (checked by the caller), so this cannot fail.
	_, _ = r.st.Apply(allot.Withdraw{ID: id})
}

// bindHolding binds the pods of quota-admitted jobs to nodes, first fit,
// in admission order; a job whose pods do not all fit keeps waiting with
// its quota held.
func (r *run) bindHolding() {
	kept := r.hold[:0]
	for _, i := range r.hold {
		js := &r.jobs[i]
		if r.bind(js) {
			r.start(js)
			continue
		}
		kept = append(kept, i)
	}
	r.hold = kept
}

// bind places every pod of js first fit, or none: the nodes in order,
// as many pods on each as it holds before the next, and the pods of each
// pod set (workload's main and rest) on nodes of the flavor its quota was
// taken from.
func (r *run) bind(js *jobState) bool {
	per := r.podGPUs(js.j)
	left := js.j.GPUs
	got, gpus := js.boundTo[:0], js.boundGPUs[:0]
	n, flavor := 0, int32(-1)
	for left > 0 {
		want := min(per, left)
		if f := r.podFlavor(js, want == per); f != flavor {
			// Another flavor: its nodes are looked at from the first.
			n, flavor = 0, f
		}
		pod := r.podRoom(js.j, want)
		for n < len(r.free) && (r.down[n] || flavor >= 0 && r.nodeFlavor[n] != flavor || !r.free[n].holds(pod)) {
			n++
		}
		if n == len(r.free) {
			break
		}
		r.free[n] = r.free[n].minus(pod)
		left -= want
		got, gpus = append(got, int32(n)), append(gpus, want)
	}
	js.boundTo, js.boundGPUs = got, gpus
	if left > 0 {
		r.unbind(js)
		return false
	}
	return true
}

// podFlavor is the flavor a pod of js is bound to (-1: any): its main pod
// set's when full, else its rest's.
func (r *run) podFlavor(js *jobState, full bool) int32 {
	k := 0
	if !full {
		k = len(js.flavors) - 1
	}
	if k < 0 || k >= len(js.flavors) {
		return -1
	}
	return js.flavors[k]
}
