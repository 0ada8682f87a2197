// Package gang places the pods of a workload all together or not at all.
//
// Placement follows Kueue's topology-aware scheduling where Kueue has an
// answer. For each pod set the placer counts, per node, how many pods of its
// shape fit (GPU islands, every resource and the node's pod limit
// respected), sums the counts up the topology tree, then:
//
//   - required level: the tightest domain of that level that holds the whole
//     pod set (best fit), ties by domain path; none means wait;
//   - preferred level: the same, then one domain of each broader level, then
//     a split across the whole cluster;
//   - unconstrained: Kueue's least free capacity, among the nodes directly
//     (no domain above them is weighed): the whole pod set on the node that
//     holds it with the fewest pods to spare, ties by path; when no single
//     node holds it, the nodes with the fewest free slots first, each
//     filled before the next (fragmentation-averse). PodSet.AvoidStranding
//     (allot's default mode) chooses among the nodes that hold the whole
//     pod set the one that strands the fewest free GPUs for want of CPU,
//     memory or pod slots first.
//
// From the chosen domain it descends level by level: the children of the
// chosen domains are pooled and taken greedily from the largest, the last one
// by best fit (Kueue's BestFit). Slices ([{rack,16},{node,4}]) round every
// child's count down to the slice size at its level and distribute in those
// units. Policy spread allows one pod per node; balanced splits a domain's
// pods as evenly as the minimal set of children allows. Pod sets sharing a
// group are co-located in one domain of the narrowest level they require.
// Inside a node, a pod smaller than the node sits in the GPU island with the
// fewest free GPUs that holds it.
//
// A fractional pod set (PodSet.Share, thousandths of one GPU a pod) packs
// each pod onto one shareable GPU, never across two: a node holds as many
// as its GPUs' rooms do, GPU by GPU; one pod goes to the shared GPU it
// fits most tightly anywhere in scope (best fit), else to a free whole
// GPU on the node with the fewest of them, so that whole GPUs stay whole
// for whole-GPU pods; several go through the counts as other pods do,
// each landing on its node by the same rule (share.go). Under
// AvoidStranding one goes first to the node whose shareable GPUs pods of
// its share could take but for CPU, memory or pod slots the least.
//
// Domain counts come from the state's incremental per-domain counters when
// they are exact for the pod's shape (no slices, no spread, no other resource
// tighter than GPUs on any node with free GPUs); otherwise the placer counts
// the domain's nodes. Where they are exact on every node, the search of a
// declared level with a fit index (topology.State.Tightest) and the
// descent from the whole cluster read the index instead of the level's
// domains, counting apart only the few domains earlier pod sets of the
// request touched. Either way the answer is the same; only the time
// differs.
//
// A Placer reads a topology.State and never writes it: earlier pod sets of
// the same request are kept in a small overlay, so many goroutines may place
// on one published state at once, each with its own Placer.
package gang
