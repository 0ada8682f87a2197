// The Store: it publishes versions, applies events and commits decisions,
// re-checking a decision made on an older version than the current one.

package allot

import (
	"fmt"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/allot-sched/allot/internal/res"
	"github.com/allot-sched/allot/internal/view"
	"github.com/allot-sched/allot/quota"
)

// Store holds the current snapshot and turns events into new versions.
//
// Load is wait-free: readers get the published snapshot from an
// atomic.Pointer and never block. Writers (Commit and Apply) are serialised;
// each keeps working on a private master copy and publishes a fork of it
// that shares every B-tree node and every page of per-node and per-domain
// state (free-GPU bitset words included) until the master writes one, never
// a full rebuild — but for the rare changes of the configuration (flavors,
// levels, resources: events_config.go), whose next version is built anew
// from the master's description and shares nothing with the last. A
// published snapshot is never written again.
type Store struct {
	mu     sync.Mutex
	cur    atomic.Pointer[Snapshot]
	master *Snapshot
	// log is the audit log; stage holds the records of the change under
	// way (the master's staged), logged when it is published.
	log   auditLog
	stage []AuditRecord
}

// NewStore starts a store at snapshot s with the default options. s itself
// stays valid and unchanged, and any number of goroutines may start stores
// from one snapshot at once.
func NewStore(s *Snapshot) *Store {
	st, _ := NewStoreWith(s, StoreOptions{})
	return st
}

// NewStoreWith starts a store at snapshot s with options o, refused by
// o.Validate.
func NewStoreWith(s *Snapshot, o StoreOptions) (*Store, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	st := &Store{log: auditLog{limit: o.capacity()}}
	st.masterFrom(s, o.capacity())
	st.cur.Store(s)
	return st, nil
}

// masterFrom makes the master a private copy of s, as a store starts.
func (st *Store) masterFrom(s *Snapshot, evictionCap int) {
	st.master = s.masterCopy()
	st.master.staged, st.master.evictionCap = &st.stage, evictionCap
}

// masterCopy is a private copy of s made to be a store's master: with
// spare blocks, as a master publishes again and again, and no preemption
// index until a search wants one.
func (s *Snapshot) masterCopy() *Snapshot {
	m := s.private()
	m.state.Spare()    // a private copy has none: the master publishes again and again
	m.running.unkeep() // kept once a search wants it
	return m
}

// Load returns the current snapshot.
func (st *Store) Load() *Snapshot { return st.cur.Load() }

// publish makes the master's state the next version.
func (st *Store) publish() *Snapshot {
	m := st.master
	for _, r := range st.stage {
		st.log.add(r)
	}
	st.stage = st.stage[:0]
	m.trimEvictions()
	m.version++
	m.state.Flush()
	m.running.catchUp() // a search on a version wanted the preemption index
	snap := m.fork()
	m.shared = allRows
	st.cur.Store(snap)
	return snap
}

// Apply applies one event and publishes the next version.
func (st *Store) Apply(ev Event) (*Snapshot, error) {
	if ev == nil {
		return nil, fmt.Errorf("%w: no event", ErrInvalid)
	}
	if v := reflect.ValueOf(ev); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("%w: a nil %T event", ErrInvalid, ev)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := ev.apply(st.master); err != nil {
		st.dropStaged()
		if err, ok := err.(masterWritten); ok {
			// The event wrote the master before it found the refusal:
			// the master starts again from the current version, which
			// it equalled.
			st.masterFrom(st.cur.Load(), st.master.evictionCap)
			return nil, err.err
		}
		return nil, err
	}
	return st.publish(), nil
}

// masterWritten is the refusal of an event that wrote the master before it
// found it: Apply restores the master from the current version and
// returns err. An event that checks before it writes is spared a trial
// copy for the refusals it finds late.
type masterWritten struct{ err error }

func (e masterWritten) Error() string { return e.err.Error() }

// Commit admits a decision made by Decide. The request it carries is
// validated again, as Decide validates it, and every commit checks the
// decision against the current snapshot: quota, the queue's caps, hold,
// tenancy, that each pod set may use its flavor, and that every GPU and
// resource it places on is still free on a usable node. A decision that no
// longer holds is refused with a *ConflictError and changes nothing.
//
// A Preempt decision evicts only the victims Decide chooses on the current
// snapshot. One Decide made in this process on the current version is
// taken as it is; any other, made on an older version or decoded from JSON
// (perhaps in another process, on another store's versions), is decided
// again and refused unless that evicts exactly its victims, each in the
// admission it had: deciding again admits the workload with fewer victims
// or none, or evicts others. Nothing is ever double-booked, and no workload
// is evicted that the preemption policies do not allow.
//
// Commit trusts a decision's placement to keep its request's topology
// constraints (one domain of a required level, slices, groups): where the
// pods go within what is free is Decide's to choose, and a placement
// changed on the way that still books only free GPUs of the right flavor
// double-books nothing.
//
// With Options.TwoPhasePreemption a Preempt decision's victims start
// evicting and the workload holds its room until they are gone (see
// Terminated); otherwise they are evicted and the workload admitted at
// once.
func (st *Store) Commit(d Decision) (*Snapshot, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	// A refused commit logs nothing: what it staged goes (a published one
	// has logged it already).
	defer st.dropStaged()
	m := st.master
	if d.Verdict != VerdictAdmit && d.Verdict != VerdictPreempt {
		return nil, fmt.Errorf("%w: only an Admit or Preempt decision can be committed, got %v", ErrInvalid, d.Verdict)
	}
	if err := checkDecision(m, &d); err != nil {
		return nil, err
	}
	conflict := func(format string, args ...any) error {
		return &ConflictError{Workload: d.Workload, DecidedOn: d.Version, Current: m.version, Detail: fmt.Sprintf(format, args...)}
	}
	var victims []*running
	chosen := d.Victims
	if d.Verdict == VerdictPreempt {
		for _, v := range d.Victims {
			vr, ok := m.runningByID(v.ID)
			if !ok {
				return nil, conflict("victim %q no longer runs", v.ID)
			}
			if vr.AdmittedAt != v.AdmittedAt {
				return nil, conflict("victim %q was admitted again since the decision", v.ID)
			}
			victims = append(victims, vr)
		}
		if !d.decided || d.Version != m.version {
			var err error
			if chosen, err = st.victimsChosen(&d, conflict); err != nil {
				return nil, err
			}
		}
	}
	if len(victims) > 0 && m.options.TwoPhasePreemption {
		return st.commitTwoPhase(&d, victims, chosen, conflict)
	}
	// The victims are evicted first; if the preemptor then does not fit
	// after all, the evictions are undone.
	debt, shared, evictions := m.debt, m.shared&rowDebt, m.evictions
	if len(victims) > 0 {
		// Evictions add to the debt: on a copy, so undo can put it back.
		m.debt = slices.Clone(debt)
		m.shared &^= rowDebt
		for i, vr := range victims {
			v := &chosen[i]
			m.evictFor(vr, Eviction{ID: v.ID, Queue: v.Queue, Preemptor: d.Workload, Reason: v.Reason, LostGPUSeconds: v.LostGPUSeconds, At: m.now}, v.Policy)
		}
	}
	r, err := admission(m, &d, conflict)
	if err != nil {
		for i := len(victims) - 1; i >= 0; i-- {
			m.unevict(victims[i])
		}
		m.evictions = evictions
		m.debt, m.shared = debt, m.shared&^rowDebt|shared
		return nil, err
	}
	if m.pending.Len() > 0 {
		m.dequeue(r.ID)
	}
	m.insertRunning(r)
	m.note(AuditRecord{Kind: AuditAdmitted, Workload: r.ID, Queue: d.Queue, Priority: r.Priority, Victims: runningIDs(victims)})
	return st.publish(), nil
}

// commitTwoPhase commits Preempt decision d, its victims found running,
// in two phases (Options.TwoPhasePreemption): on a private copy of the
// master, which becomes the master only if the preemptor fits with its
// victims evicted and the orphans on its nodes gone (a refused commit
// leaves the master as it was), the victims start evicting and the
// preemptor holds its room (startHold).
func (st *Store) commitTwoPhase(d *Decision, victims []*running, chosen []Victim, conflict func(string, ...any) error) (*Snapshot, error) {
	m := st.master
	c := m.trial()
	// A victim that holds its room itself has not started: it is only
	// pending again. The others start evicting.
	var evicting []*running
	for i, vr := range victims {
		if !c.isHeld(vr.ID) {
			evicting = append(evicting, vr)
		}
		v := &chosen[i]
		c.evictFor(vr, Eviction{ID: v.ID, Queue: v.Queue, Preemptor: d.Workload, Reason: v.Reason, LostGPUSeconds: v.LostGPUSeconds, At: c.now}, v.Policy)
	}
	adopted := c.adoptOrphans(d)
	r, err := admission(c, d, conflict)
	if err != nil {
		return nil, err
	}
	c.startHold(r, evicting, runningIDs(victims), adopted)
	st.master = c
	return st.publish(), nil
}

// runningIDs lists the IDs of rs (nil for none).
func runningIDs(rs []*running) []string {
	if len(rs) == 0 {
		return nil
	}
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return ids
}

// dropStaged forgets the audit records a refused change staged.
func (st *Store) dropStaged() { st.stage = st.stage[:0] }

// checkDecision refuses a decision Decide could not have made: its request
// invalid (validated as Decide validates it, in case it was changed since),
// or its workload, queue, flavors or victims not matching the request and
// the verdict.
func checkDecision(s *Snapshot, d *Decision) error {
	req := &d.request
	if msg, field := s.validate(req); msg != "" {
		return fmt.Errorf("%w: the decision's request: %s: %s", ErrInvalid, field, msg)
	}
	if req.ID != d.Workload || req.Queue != d.Queue || len(d.Flavors) != len(req.PodSets) {
		return fmt.Errorf("%w: the decision was not made by Decide: its workload, queue or flavors do not match its request", ErrInvalid)
	}
	switch {
	case d.Verdict == VerdictAdmit && len(d.Victims) > 0:
		return fmt.Errorf("%w: an Admit decision with victims", ErrInvalid)
	case d.Verdict == VerdictPreempt && len(d.Victims) == 0:
		return fmt.Errorf("%w: a Preempt decision without victims", ErrInvalid)
	}
	for i := range req.PodSets {
		ps := &req.PodSets[i]
		if n, ok := ps.admittedCount(d.Flavors[i]); !ok {
			return fmt.Errorf("%w: pod set %q admitted at %d pods, its count is %d and its minCount %d", ErrInvalid, ps.Name, n, ps.Count, ps.MinCount)
		}
	}
	for i, v := range d.Victims {
		if v.ID == req.ID {
			return fmt.Errorf("%w: workload %q is its own victim", ErrInvalid, v.ID)
		}
		if i > 0 && d.Victims[i-1].ID >= v.ID {
			return fmt.Errorf("%w: victims must be sorted by ID, each once, as Decide lists them; %q follows %q", ErrInvalid, v.ID, d.Victims[i-1].ID)
		}
	}
	return nil
}

// victimsChosen decides d's request again on the current snapshot and
// refuses the Preempt decision d unless that evicts exactly d's victims,
// each in the admission d names: the decision was made on an older
// version, or elsewhere, so only Decide now may say whom it evicts. The
// room the victims were to free may have come free another way, which the
// decision's placement (on the victims' nodes) cannot show; the victims'
// queues may have stopped borrowing; the decision may have been changed on
// the way. A partial admission is decided again at the counts d admits.
// It returns the victims as Decide chooses them now, with their
// reasons, policies and lost work as of now.
func (st *Store) victimsChosen(d *Decision, conflict func(string, ...any) error) ([]Victim, error) {
	now := Decide(st.cur.Load(), d.fixedRequest())
	switch now.Verdict {
	case VerdictAdmit:
		return nil, conflict("the workload fits now without evicting %s: decide again", victimList(d.Victims))
	case VerdictPreempt:
	default:
		return nil, conflict("deciding again gives %v %v: %s", now.Verdict, now.Reason, now.Message)
	}
	if spare, extra := victimsDiffer(d.Victims, now.Victims); len(extra) > 0 {
		return nil, conflict("deciding again evicts %s, which the decision does not: decide again", victimList(extra))
	} else if len(spare) > 0 {
		return nil, conflict("evicting %s is no longer needed: decide again", victimList(spare))
	}
	return now.Victims, nil
}

// victimsDiffer compares the victims of a decision, was, with those Decide
// chooses now: spare are was's that now spares, extra now's that was does
// not evict, a victim admitted again since counting as another. Both lists
// are sorted by ID, as Decide sorts them.
func victimsDiffer(was, now []Victim) (spare, extra []Victim) {
	i, j := 0, 0
	for i < len(was) || j < len(now) {
		switch {
		case j == len(now) || i < len(was) && was[i].ID < now[j].ID:
			spare = append(spare, was[i])
			i++
		case i == len(was) || now[j].ID < was[i].ID:
			extra = append(extra, now[j])
			j++
		default:
			if was[i].AdmittedAt != now[j].AdmittedAt {
				spare, extra = append(spare, was[i]), append(extra, now[j])
			}
			i++
			j++
		}
	}
	return spare, extra
}

// victimList names victims for a message.
func victimList(vs []Victim) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(v.ID))
	}
	return b.String()
}

// admission re-checks decision d on s and builds the admitted workload,
// its pods booked on their nodes.
func admission(s *Snapshot, d *Decision, conflict func(string, ...any) error) (*running, error) {
	req := d.request
	if s.isHeld(req.ID) {
		return nil, conflict("workload holds its room while its victims terminate")
	}
	if _, ok := s.runningByID(req.ID); ok {
		return nil, conflict("workload is already admitted")
	}
	e := s.enter(&req)
	if e.fault != entryOK {
		return nil, conflict("%s", s.entryConflict(&e, &req))
	}
	q, qc := e.q, &s.quota.Queues[e.q]
	req.Queue = e.queue // its local queue's, for a request that names only that
	if qc.Hold {
		return nil, conflict("queue %q is on hold", req.Queue)
	}
	r := new(running)
	newRunning(r, (*Workload)(&req), q)
	r.AdmittedAt = s.now
	w := &r.w
	if len(req.PodSets) == 1 {
		r.one.ps[0] = req.PodSets[0]
		w.PodSets, r.Sets = r.one.ps[:], r.one.set[:]
	} else {
		w.PodSets, r.Sets = slices.Clone(req.PodSets), make([]view.Set, len(req.PodSets))
	}
	for i := range w.PodSets {
		ps := &w.PodSets[i]
		f, ok := s.flavorIdx[d.Flavors[i].Flavor]
		if !ok || d.Flavors[i].PodSet != ps.Name {
			return nil, fmt.Errorf("%w: pod set %q has no flavor in the decision", ErrInvalid, ps.Name)
		}
		if !s.serves(ps, f) {
			return nil, fmt.Errorf("%w: pod set %q may not use flavor %q", ErrInvalid, ps.Name, s.flavors[f].Name)
		}
		ps.Flavor = s.flavors[f].Name
		ps.Count, _ = ps.admittedCount(d.Flavors[i]) // checked by checkDecision
		per, keys, err := s.podVector(ps.PerPod, "perPod")
		if err != nil {
			return nil, err
		}
		tokens, err := s.podTokens(per, ps.Tokens, "tokens")
		if err != nil {
			return nil, err
		}
		r.Sets[i] = view.Set{Flavor: f, Count: ps.Count, Per: per, Keys: keys, Tokens: tokens}
		ps.PerPod = nil // kept as Per and Keys
	}
	r.Pinned = s.neverPreempted(r)
	if s.limits[q].capped(req.Preemption.Class) {
		if b, over := s.checkCaps(q, req.User, req.Preemption.Class, r.Total(s.tokens)); over {
			return nil, conflict("caps: %v: %s", b.reason, s.appendCapBreach(nil, b, req.User, req.Queue))
		}
	}
	// Quota, flavor by flavor: the pod sets on one flavor together.
	for i := range r.Sets {
		f := r.Sets[i].Flavor
		if slices.IndexFunc(r.Sets[:i], func(o view.Set) bool { return o.Flavor == f }) >= 0 {
			continue
		}
		var need res.Vec
		for j := i; j < len(r.Sets); j++ {
			if r.Sets[j].Flavor == f {
				need = need.Add(r.Need(j, s.tokens))
			}
		}
		fq, ok := qc.Quota(f)
		if !ok {
			return nil, conflict("queue %q has no quota on %q any more", req.Queue, s.flavors[f].Name)
		}
		if c := s.fitQuota(q, fq, res.Vec{}, need); c.verdict != quota.Fit {
			return nil, conflict("quota: %v on %s: %s %d in use, the workload needs %d, %d available",
				c.reason, s.flavors[f].Name, s.resources[c.res], c.used, c.need, c.avail)
		}

	}
	if err := bookPods(s, r, d, conflict); err != nil {
		return nil, err
	}
	return r, nil
}

// bookPods resolves the decision's placement and books it on the nodes,
// checking each pod against what is free once the workload's earlier pods
// are booked: a commit costs the same for every pod, however many share a
// node. On an error it releases what it booked.
func bookPods(s *Snapshot, r *running, d *Decision, conflict func(string, ...any) error) error {
	total := 0
	for i := range r.w.PodSets {
		total += int(r.w.PodSets[i].Count)
	}
	if total == 1 {
		r.Pods = r.one.pod[:0]
	} else {
		r.Pods = make([]view.Pod, 0, total)
	}
	// Pods of one node come one after another: the current run of them is
	// booked at once, when the next pod is on another node. The pods
	// before it are booked already.
	run, booked := podRun{node: -1}, 0
	fail := func(err error) error {
		s.holdPods(r, booked, -1)
		return err
	}
	k := 0
	for i := range r.w.PodSets {
		ps := &r.w.PodSets[i]
		book := r.Book(i, s.nodeRes)
		if !s.flavorHasNodes(r.Sets[i].Flavor) {
			for range ps.Count {
				r.Pods = append(r.Pods, view.Pod{Node: -1})
			}
			continue
		}
		for p := range ps.Count {
			if k >= len(d.Placement) || d.Placement[k].PodSet != ps.Name || d.Placement[k].Pod != p {
				return fail(fmt.Errorf("%w: the decision places no pod %d of pod set %q", ErrInvalid, p, ps.Name))
			}
			pa, err := checkPod(s, r, i, book, d.Placement[k], p, &run, d.Version != s.version, conflict)
			if err != nil {
				return fail(err)
			}
			k++
			if pa.Share > 0 {
				// A fractional pod books its GPU's share on its own,
				// after the run before it.
				s.hold(run, 1)
				r.Pods = append(r.Pods, pa)
				s.state.AllocateShare(pa.Node, bits.TrailingZeros64(pa.GPUs), pa.Share, book, 1)
				run, booked = podRun{node: -1}, len(r.Pods)
				continue
			}
			if pa.Node != run.node {
				s.hold(run, 1)
				run, booked = podRun{node: pa.Node}, len(r.Pods)
			}
			run.add(pa.GPUs, book)
			r.Pods = append(r.Pods, pa)
		}
	}
	s.hold(run, 1)
	booked = len(r.Pods)
	if k != len(d.Placement) {
		return fail(fmt.Errorf("%w: the decision places %d pods, its request has %d on nodes", ErrInvalid, len(d.Placement), k))
	}
	return nil
}

// checkPod checks that pod p of pod set i of r, booking book, fits where
// placement pl puts it, with the workload's earlier pods booked on their
// nodes, those of run still to be.
func checkPod(s *Snapshot, r *running, i int, book res.Vec, pl PodPlacement, p int32, run *podRun, stale bool, conflict func(string, ...any) error) (view.Pod, error) {
	ps := &r.w.PodSets[i]
	// On a decision of an older version the node may have gone or changed
	// since (RemoveNode, SetNode): that is a conflict, not a malformed
	// decision.
	shape := func(format string, args ...any) error {
		if stale {
			return conflict(format, args...)
		}
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	n, ok := run.node, run.node >= 0 && s.topo.NodeName(run.node) == pl.Node
	if !ok {
		n, ok = s.topo.NodeIndex(pl.Node)
	}
	if !ok || s.topo.Node(n).Flavor != r.Sets[i].Flavor {
		return view.Pod{}, shape("node %q is not a node of flavor %q", pl.Node, ps.Flavor)
	}
	node := s.topo.Node(n)
	mask := uint64(pl.GPUs)
	if node.GPUs < 64 && mask>>node.GPUs != 0 {
		return view.Pod{}, shape("GPUs %v on node %q with %d GPUs", pl.GPUs, pl.Node, node.GPUs)
	}
	share := s.shareOf(r.Sets[i].Per)
	if share > 0 {
		if err := checkSharePod(s, n, mask, share, run, shape, conflict); err != nil {
			return view.Pod{}, err
		}
		mask = 0 // the share's GPU stays out of the whole-GPU checks below
	}
	if s.gpu >= 0 && int64(bits.OnesCount64(mask)) != book[s.gpu] {
		return view.Pod{}, shape("pod %d of %q gets %d GPUs, asks for %d", p, ps.Name, bits.OnesCount64(mask), book[s.gpu])
	}
	ns := s.state.Node(n)
	if !ns.Usable(s.now) {
		return view.Pod{}, conflict("node %q is no longer usable", pl.Node)
	}
	freeMask, free, pods := s.state.FreeMask(n), ns.Free, ns.Pods
	if run.node == n {
		freeMask, free, pods = freeMask&^run.gpus, free.Sub(run.booked), pods+run.pods
	}
	if mask&^freeMask != 0 {
		return view.Pod{}, conflict("GPUs %v of node %q are no longer free", pl.GPUs, pl.Node)
	}
	if !book.LessEq(free) {
		earlier, _ := bookedOn(s, r, n)
		return view.Pod{}, conflict("node %q no longer has room: free %s, the workload books %s", pl.Node, s.fmtVec(free.Add(earlier)), s.fmtVec(earlier.Add(book)))
	}
	if node.MaxPods > 0 && pods >= node.MaxPods {
		_, earlier := bookedOn(s, r, n)
		return view.Pod{}, conflict("node %q no longer has room for %d more pods", pl.Node, earlier+1)
	}
	if share > 0 {
		return view.Pod{Node: n, Share: share, GPUs: uint64(pl.GPUs)}, nil
	}
	return view.Pod{Node: n, GPUs: mask}, nil
}

// bookedOn is what the pods of r so far hold on node n: resources and pod
// count. Only a conflict's message needs it.
func bookedOn(s *Snapshot, r *running, n int32) (res.Vec, int32) {
	var booked res.Vec
	pods := int32(0)
	for j, pa := range r.Pods {
		if pa.Node == n {
			booked = booked.Add(r.Book(r.SetOf(j), s.nodeRes))
			pods++
		}
	}
	return booked, pods
}
