// Package examples is the embedder's contract told as a story, a module of
// its own that imports allot as any platform service would: a snapshot
// built from a Kubernetes cluster's objects (nodes, Kueue's ResourceFlavors
// and ClusterQueues, Workloads) in their JSON shapes, with nvidia.com/gpu
// and quantity strings; nodes added, removed and resized under a store;
// decisions made, sent as JSON and committed elsewhere; a preemption in
// two phases; and the audit log drained as JSON Lines.
//
// There is no code here to import: the story is embedder_test.go (a test
// that asserts every step) and its Example functions, and
// kubernetes_test.go turns the objects into allot's types.
package examples
