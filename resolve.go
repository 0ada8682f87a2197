package allot

import (
	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
)

// gangPodSet resolves one pod set, per pod vector per, for the placer on
// flavor f.
func (s *Snapshot) gangPodSet(ps *PodSet, per res.Vec, f int32) gang.PodSet {
	book := s.nodeRes.Mask(f, per)
	g := gang.PodSet{Flavor: f, Count: int64(ps.Count), Res: book, Mode: gang.Unconstrained, Policy: gang.Pack}
	if s.gpu >= 0 {
		g.GPUs = int(book[s.gpu])
	}
	g.Share = s.shareOf(per)
	g.Exclude = s.untolerated(ps, f)
	// allot's addition to Kueue's least free (gang.PodSet.AvoidStranding).
	g.AvoidStranding = !s.kueueExact()
	t := &ps.Topology
	switch {
	case t.Required != "":
		g.Mode = gang.Required
		g.Level, _ = s.topo.LevelIndex(t.Required)
	case t.Preferred != "":
		g.Mode = gang.Preferred
		g.Level, _ = s.topo.LevelIndex(t.Preferred)
	}
	switch t.Policy {
	case Spread:
		g.Policy = gang.Spread
	case Balanced:
		g.Policy = gang.Balanced
	}
	if len(t.Slices) > 0 {
		g.Slices = make([]gang.SliceSpec, len(t.Slices))
		for j, sl := range t.Slices {
			lvl, _ := s.topo.LevelIndex(sl.Level)
			g.Slices[j] = gang.SliceSpec{Level: lvl, Size: int64(sl.Size)}
		}
	}
	return g
}
