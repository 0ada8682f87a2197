package allot

// Reservation is, for tests, one backfill reservation: the blocked
// workload, when it starts, and per pod the node and its GPUs.
type Reservation struct {
	ID    string
	Start int64
	Pods  []PodPlacement
}

// Reservations exposes, to tests, the backfill reservations ahead of
// request r on the snapshot.
func (s *Snapshot) Reservations(r Request) []Reservation {
	var work workspace
	p := s.reservationPlan(&r, &work)
	n, self := p.aheadOf((*Workload)(&r))
	var out []Reservation
	for i, rv := range p.rs[:n] {
		if i == self {
			continue
		}
		res := Reservation{ID: rv.w.ID, Start: rv.start}
		for _, a := range rv.pods {
			res.Pods = append(res.Pods, PodPlacement{Node: s.topo.NodeName(a.Node), GPUs: GPUSet(a.GPUs)})
		}
		out = append(out, res)
	}
	return out
}
