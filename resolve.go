package allot

import (
	"slices"

	"github.com/allot-sched/allot/fairness"
	"github.com/allot-sched/allot/gang"
	"github.com/allot-sched/allot/internal/res"
)

// allowsFlavor reports whether every pod set of w may use the flavor named
// name.
func allowsFlavor(w *Workload, name string) bool {
	for _, ps := range w.PodSets {
		if len(ps.Flavors) > 0 && !slices.Contains(ps.Flavors, name) {
			return false
		}
	}
	return true
}

// podSetsInto resolves a valid workload's pod sets for the placer on
// flavor f, appending them to sets, and what it charges to quota there.
func (s *Snapshot) podSetsInto(w *Workload, f int32, sets []gang.PodSet) ([]gang.PodSet, res.Vec, bool) {
	var need res.Vec
	for _, ps := range w.PodSets {
		per, err := s.vector(ps.PerPod, "perPod")
		if err != nil {
			return nil, need, false
		}
		charge, err := s.podCharge(per, ps.Tokens, "tokens")
		if err != nil {
			return nil, need, false
		}
		need = need.Add(charge.Scale(int64(ps.Count)))
		sets = append(sets, s.gangPodSet(&ps, per, f))
	}
	return sets, need, true
}

// gangPodSet resolves one pod set, per pod vector per, for the placer on
// flavor f.
func (s *Snapshot) gangPodSet(ps *PodSet, per res.Vec, f int32) gang.PodSet {
	book := s.nodeRes.Mask(f, per)
	g := gang.PodSet{Flavor: f, Count: int64(ps.Count), Res: book, Mode: gang.Unconstrained, Policy: gang.Pack}
	if s.gpu >= 0 {
		g.GPUs = int(book[s.gpu])
	}
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

// firstFlavorCharges appends, for each pod set of pending workload w, the
// first flavor of w's queue the pod set allows and what the pod set
// charges there; pod sets whose resources do not resolve are left out.
func (s *Snapshot) firstFlavorCharges(w *Workload, out []fairness.Charge) []fairness.Charge {
	q := s.queueIdx[w.Queue]
	for i := range w.PodSets {
		ps := &w.PodSets[i]
		per, err := s.vector(ps.PerPod, "perPod")
		if err != nil {
			continue
		}
		charge, err := s.podCharge(per, ps.Tokens, "tokens")
		if err != nil {
			continue
		}
		for _, fq := range s.quota.Queues[q].Flavors {
			if len(ps.Flavors) == 0 || slices.Contains(ps.Flavors, s.flavors[fq.Flavor].Name) {
				out = append(out, fairness.Charge{Flavor: fq.Flavor, Need: charge.Scale(int64(ps.Count))})
				break
			}
		}
	}
	return out
}
