// The store's audit trail: a bounded log of what its writers admitted,
// evicted and held, which the embedder drains.

package allot

import "fmt"

// AuditKind says what an AuditRecord records.
type AuditKind uint8

const (
	// AuditAdmitted: a workload was admitted, by a commit or, with
	// two-phase preemption, once the last of its victims was gone. Victims
	// lists the workloads evicted for it.
	AuditAdmitted AuditKind = 1 + iota
	// AuditEvicted: a running workload was evicted. A preemption's victim
	// names its Preemptor, its victim Reason in Kueue's words, the Policy
	// that allowed it, the work it loses and the checkpoint it resumes
	// from; an Evict event's names none of the first three. With two-phase
	// preemption the victim starts evicting then, and AuditTerminated
	// follows when it is gone.
	AuditEvicted
	// AuditHeld: with two-phase preemption, a preemptor holds its room
	// until the Victims are gone.
	AuditHeld
	// AuditTerminated: an evicting victim is gone; Reason is the event that
	// said so: Terminated, Evicted (an Evict event) or Finished (it
	// completed while terminating).
	AuditTerminated
	// AuditReleased: a preemptor's hold was released before its victims
	// were all gone and it was not admitted; Reason says why, Victims the
	// ones still evicting.
	AuditReleased
)

var auditKindNames = [...]string{"", "admitted", "evicted", "held", "terminated", "released"}

func (k AuditKind) String() string {
	if int(k) < len(auditKindNames) {
		return auditKindNames[k]
	}
	return fmt.Sprintf("AuditKind(%d)", uint8(k))
}

// MarshalText renders the kind's name.
func (k AuditKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText parses a kind name.
func (k *AuditKind) UnmarshalText(b []byte) error {
	return parseEnum(k, b, auditKindNames[:], "audit kind")
}

// AuditRecord is one entry of a store's audit log: what happened to one
// workload, when, and why. A preemption's victim says who evicted it,
// under which policy, what work it lost and where it resumes, as the
// seed practice asks: every victim, reason and recovery point recorded.
type AuditRecord struct {
	// Seq numbers the store's records from 1 in the order they were made,
	// dropped ones included: a gap between two drained records is what
	// the log dropped.
	Seq  uint64    `json:"seq"`
	Kind AuditKind `json:"kind"`
	// Version is the snapshot version that the change published; At the
	// snapshot's clock then.
	Version uint64 `json:"version"`
	At      int64  `json:"at"`
	// Workload is the one the record is about: the victim of an eviction,
	// the admitted, held or released workload.
	Workload string `json:"workload"`
	Queue    string `json:"queue"`
	Priority int32  `json:"priority"`
	// Preemptor is the workload an evicted victim makes room for.
	Preemptor string `json:"preemptor,omitempty"`
	// Victims are the workloads evicted for an admitted or held
	// preemptor, or still evicting when its hold was released.
	Victims []string `json:"victims,omitempty"`
	// Reason is an eviction's victim reason (InClusterQueue,
	// InCohortReclamation, InCohortReclaimWhileBorrowing,
	// InCohortFairSharing) or "Evicted" for an Evict event; for the other
	// kinds, what ended the state (see AuditKind).
	Reason string `json:"reason,omitempty"`
	// Policy is the queue policy that allowed a preemption's eviction.
	Policy string `json:"policy,omitempty"`
	// LostGPUSeconds is the work an evicted workload loses: seconds since
	// its recovery point (or its admission) times its GPUs
	// (resource-seconds without GPUs).
	LostGPUSeconds int64 `json:"lostGpuSeconds,omitempty"`
	// RecoveryPoint is the last checkpoint an evicted checkpointable
	// workload resumes from; zero when it has none and starts over.
	RecoveryPoint int64 `json:"recoveryPoint,omitempty"`
}

// DefaultAuditCapacity is the audit log's capacity when StoreOptions leave
// it zero.
const DefaultAuditCapacity = 4096

// StoreOptions configure a Store. The zero value is the default.
type StoreOptions struct {
	// AuditCapacity bounds the store's audit log: it keeps at most that
	// many records until DrainAudit takes them, dropping (and counting)
	// the oldest beyond it. It bounds as well the evictions each snapshot
	// lists (Snapshot.Evictions). Zero means DefaultAuditCapacity.
	AuditCapacity int `json:"auditCapacity,omitempty"`
}

// Validate refuses options no store can take.
func (o StoreOptions) Validate() error {
	if o.AuditCapacity < 0 {
		return fmt.Errorf("%w: auditCapacity: %d is negative", ErrInvalid, o.AuditCapacity)
	}
	return nil
}

// capacity is the audit capacity in force.
func (o StoreOptions) capacity() int {
	if o.AuditCapacity == 0 {
		return DefaultAuditCapacity
	}
	return o.AuditCapacity
}

// auditLog is a ring of at most limit records. Its memory grows with the
// records it holds, up to the limit, and is kept for the next ones.
type auditLog struct {
	buf     []AuditRecord
	head    int // index in buf of the oldest record held
	n       int // records held
	limit   int
	seq     uint64 // records ever logged
	dropped uint64
}

// add logs r, numbering it; when the log is full the oldest record makes
// room.
func (l *auditLog) add(r AuditRecord) {
	l.seq++
	r.Seq = l.seq
	switch {
	case l.n < len(l.buf):
		l.buf[(l.head+l.n)%len(l.buf)] = r
		l.n++
	case len(l.buf) < l.limit:
		// Not yet at the limit: the ring grows. Its oldest record is
		// then at the start (head moves only once the ring is at the
		// limit, and a drain puts it back to 0).
		l.buf = append(l.buf, r)
		l.n++
	default:
		l.buf[l.head] = r
		l.head = (l.head + 1) % len(l.buf)
		l.dropped++
	}
}

// drain appends the records held to dst, oldest first, and empties the
// log.
func (l *auditLog) drain(dst []AuditRecord) []AuditRecord {
	for i := range l.n {
		k := (l.head + i) % len(l.buf)
		dst = append(dst, l.buf[k])
		l.buf[k] = AuditRecord{} // holds no strings for the garbage collector
	}
	l.head, l.n = 0, 0
	return dst
}

// DrainAudit appends the audit records logged since the last drain to dst,
// oldest first, empties the log and returns dst. Records are logged by
// every Commit and Apply that publishes a version (none by one refused):
// admissions, evictions and, with two-phase preemption, holds, victims
// gone and holds released. The log keeps at most StoreOptions'
// AuditCapacity records: an embedder that drains after each write (or
// often enough) loses none, and AuditDropped counts what it lost.
//
// There is no callback: nothing of the embedder's runs while the store's
// writers hold its lock. The writer that wants each record as it is made
// drains after its own Commit or Apply. DrainAudit takes the writers' lock
// and may be called from any goroutine.
func (st *Store) DrainAudit(dst []AuditRecord) []AuditRecord {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.log.drain(dst)
}

// AuditDropped is how many audit records the log dropped, full, before a
// drain took them.
func (st *Store) AuditDropped() uint64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.log.dropped
}

// note stages an audit record of the change being made to the store's
// master snapshot: the store logs it when it publishes the change, and
// drops it when the change is refused. Snapshots no store writes stage
// nothing.
func (s *Snapshot) note(r AuditRecord) {
	if s.staged == nil {
		return
	}
	r.Version, r.At = s.version+1, s.now
	*s.staged = append(*s.staged, r)
}
