package fuzz

import (
	"bytes"
	"os"
	"regexp"

	"github.com/allot-sched/allot"
)

// Open bugs in non-test code that the fuzz targets found. Each has a
// minimal reproduction in regress_test.go; the fuzz targets skip what they
// break unless ALLOT_KNOWN_BUGS=1. Remove a helper with its bug.

// showKnownBugs, set by ALLOT_KNOWN_BUGS=1, checks the invariants that open
// bugs in non-test code break; by default they are skipped.
var showKnownBugs = os.Getenv("ALLOT_KNOWN_BUGS") == "1"

// gpulessBug reports whether a world may run into an open bug:
// topology.State.setGPUs writes the free-GPU word of a node's first GPU
// even when it books none, and a node without GPUs whose first index is
// the cluster's GPU count, a multiple of 64 (0 included), has no such word:
// booking a pod there (Build's running workloads, Store.Commit) panics with
// an index out of range.
func gpulessBug(b *allot.Builder) bool {
	total, gpuless := int64(0), false
	for _, n := range b.Nodes {
		g := n.Capacity["gpu"]
		total += max(g, 0)
		gpuless = gpuless || g <= 0
	}
	return gpuless && total%64 == 0
}

// neverFitsLevel is the part of a NeverFits message (the best domain's fit
// and its level) that an open bug makes depend on earlier decisions (see
// TestRegressDecideIndependentOfEarlierDecisions).
var neverFitsLevel = regexp.MustCompile(`fits only [0-9]+ of [0-9]+ pods at level [a-z0-9]+`)

// sameDecision compares two rendered decisions byte for byte, but for the
// level a NeverFits message names while that bug is open.
func sameDecision(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if showKnownBugs || !bytes.Contains(a, []byte(`"reason":"NeverFits"`)) {
		return false
	}
	return bytes.Equal(neverFitsLevel.ReplaceAll(a, nil), neverFitsLevel.ReplaceAll(b, nil))
}

// splitUnits reports whether the decider places r's pod sets in more than
// one unit (a unit is a pod set, or the pod sets of one group), and so may
// run into the open bug where a later unit does not see an earlier one's
// pods (gang.Placer.Place keeps a call's last pod set out of its overlay).
func splitUnits(r allot.Request) bool {
	units := 0
	seen := map[string]bool{}
	for _, ps := range r.PodSets {
		g := ps.Topology.Group
		if g == "" || !seen[g] {
			units++
		}
		if g != "" {
			seen[g] = true
		}
	}
	return units > 1
}

// knownSliceBug reports whether the placer's open slice bug applies: its
// descent pools the children of the chosen domains of a slice layer above
// the node level when the next layer's unit is one pod, splitting slices.
func knownSliceBug(t allot.TopologyRequest) bool {
	if t.Policy == allot.Balanced {
		return false
	}
	for i, sl := range t.Slices {
		if sl.Level != "node" && (i == len(t.Slices)-1 || t.Slices[i+1].Size == 1) {
			return true
		}
	}
	return false
}
