package allot

import "github.com/allot-sched/allot/quota"

// TreeUsage exposes, to tests, the usage of every node of the cohort tree.
func (s *Snapshot) TreeUsage() ([]string, quota.Usage, int) {
	names := make([]string, s.rtree.Len())
	for i := range names {
		names[i] = s.rtree.Name(int32(i))
	}
	return names, s.usage, s.rtree.FRs()
}

// SameShape reports, to tests, whether snapshots a and b share their
// topology's domains: a node event in place (SetNode in place, a node
// taken out or put in a vacant slot) keeps them, a reshape makes new ones.
func SameShape(a, b *Snapshot) bool {
	return len(a.topo.Domains) > 0 && len(b.topo.Domains) > 0 && &a.topo.Domains[0] == &b.topo.Domains[0]
}
