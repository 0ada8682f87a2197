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
