// Package raypg reads a Ray placement group as an allot request: its
// bundles as pod sets, its strategy as their topology request and
// placement policy.
//
// A placement group (ray.util.placement_group) reserves bundles, each a
// map of resources, all or nothing, under one of four strategies. allot
// admits a request's pod sets all or nothing too, so a placement group is
// one request: each run of identical consecutive bundles is one pod set
// named "bundle-i" after the index of its first bundle, so that pod k of
// it is bundle i+k. Ray's CPU is cpu in millicores, GPU is gpu (whole
// GPUs), memory is memory in bytes, and any other resource keeps its name
// and must be whole.
//
// The strategies:
//
//	STRICT_PACK    all bundles on one node: Topology.Required "node", one group
//	PACK           one node if one holds them all: Topology.Preferred "node", one group
//	STRICT_SPREAD  every bundle on its own node: Policy spread (one pod a node)
//	SPREAD         best effort in Ray; allot's spread policy is strict, so it is
//	               decided as STRICT_SPREAD, with a warning
//
// allot's spread policy keeps the pods of one pod set on distinct nodes, not
// the pods of different pod sets: STRICT_SPREAD over bundles of different
// shapes is refused (ErrNotExpressible) rather than decided with two bundles
// on one node.
package raypg
