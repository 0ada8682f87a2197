package allot

// AuditMemory exposes, to tests, how many records a store's audit log
// holds and how many its memory has room for.
func (st *Store) AuditMemory() (held, room int) { return st.log.n, cap(st.log.buf) }

// EvictionsKept exposes, to tests, how many evictions a snapshot keeps in
// memory.
func (s *Snapshot) EvictionsKept() int { return len(s.evictions) }
