// Package topology is the cluster's shape and its free capacity.
//
// A Topology is static: levels from broad to narrow (say block, rack), then
// nodes, then GPU groups inside a node (NVLink or NUMA islands). Nodes are
// sorted by flavor and topology path, so every domain is a contiguous range of
// nodes. Each
// flavor has its own tree whose level 0 is a single root domain covering all of
// the flavor's nodes. A Node holds no pointer: names, labels and domains live
// in a few arrays shared by all nodes (NodeName, NodeLabel, NodeDomains) and a
// node's GPU islands are the bits where each starts, so that a cluster of tens
// of thousands of nodes is a handful of objects for the garbage collector.
//
// A State is the free capacity at one moment: per-node free resources, free
// GPUs (a mask per node), pods and node condition, and per-domain counters
// kept up to date incrementally: for every domain and every GPU count g, how
// many pods of g GPUs its available nodes can hold (GPU groups respected),
// plus the smallest free amount of every other resource over its nodes with
// free GPUs. The counters let placement read any domain's capacity in O(1)
// instead of rescanning its nodes. On every declared level of 128 domains
// or more a fit index orders the level's domains by those counts, for every
// g (Tightest, Largest, Descending): the tightest domain that holds a gang
// is a few word reads, not a scan of the level. It is built at a state's
// first Flush and kept by every change after it.
//
// A node's shareable GPUs (NodeSpec.Shareable) may hold fractional pods,
// thousandths of one GPU each: the state keeps each shareable GPU's share
// in a copy-on-write array beside the free-GPU mask (share.go), and a
// shared GPU is out of the mask, so that no whole-GPU pod and no counter
// sees it free; ShareRoom is the one rule of how much more it takes. A GPU
// split into MIG instances (NodeSpec.MIG) is out of the mask for good; its
// instances are counted in the node's capacity of each profile.
//
// States are copy-on-write: CloneInto and Fork share every page of per-node
// and per-domain data and copy only the pages the next version writes, so
// publishing a new snapshot after an admission costs a few pages, never a
// rebuild. A State that has been published is read-only; only the writer
// that cloned it may call the mutating methods, before publishing.
package topology
