// Package explain renders an allot decision on a Kueue job for a person
// (the verdict and reason, the message with its figures, the flavors, the
// placement by topology domain, what is borrowed and the victims) and as
// JSON, and Kueue's own no given before quota and placement
// (kueueconfig.InadmissibleError). The allot command's decide and the
// guard's /simulate endpoint both print through it.
package explain
