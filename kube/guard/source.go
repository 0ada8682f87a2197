package guard

import (
	"fmt"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/cluster"
	"github.com/allot-sched/allot/kube/kueueconfig"
	"github.com/allot-sched/allot/kube/kueuejob"
)

// A Source is what the guard decides against: the snapshot of the cluster
// now, and the Kueue configuration that translates a job into its request
// (Request, as kueuejob.Request does). Ready is false until the source
// has the cluster (a live source's caches have synced); the guard does not
// call Snapshot or Request before. Its methods are called from many
// requests at once.
type Source interface {
	Ready() bool
	Snapshot() *allot.Snapshot
	Request(job any) (allot.Request, []kueueconfig.Warning, error)
}

// Static is a Source that never changes: a cluster described in files,
// for a dry-run guard or a simulator of a configuration.
type Static struct {
	cfg  *kueueconfig.Config
	snap *allot.Snapshot
}

// NewStatic builds the snapshot of a configuration.
func NewStatic(c *kueueconfig.Config) (*Static, []kueueconfig.Warning, error) {
	b, warns, err := c.Builder()
	if err != nil {
		return nil, nil, err
	}
	snap, err := b.Build()
	if err != nil {
		return nil, nil, fmt.Errorf("guard: the configuration's snapshot: %w", err)
	}
	return &Static{cfg: c, snap: snap}, warns, nil
}

// LoadStatic reads Kueue's objects and the cluster's from files or
// directories (see kueueconfig.ReadPaths) into a Static source.
func LoadStatic(opts kueueconfig.Options, paths ...string) (*Static, []kueueconfig.Warning, error) {
	objs, err := kueueconfig.ReadPaths(paths...)
	if err != nil {
		return nil, nil, err
	}
	c, err := kueueconfig.Import(objs, opts)
	if err != nil {
		return nil, nil, err
	}
	return NewStatic(c)
}

// Ready is always true: the files are read.
func (s *Static) Ready() bool { return true }

// Snapshot is the cluster of the files.
func (s *Static) Snapshot() *allot.Snapshot { return s.snap }

// Request translates job by the configuration of the files.
func (s *Static) Request(job any) (allot.Request, []kueueconfig.Warning, error) {
	return kueuejob.Request(s.cfg, job)
}

// Live is the Source of a live cluster: the snapshot its informers keep
// (kube/cluster), and its Kueue configuration as they last saw it. A job
// is translated with the cluster's handlers held off, so the
// configuration does not change under it; the snapshot may be an event
// older or newer than that configuration, as any webhook's view of a
// cluster is.
type Live struct{ c *cluster.Cluster }

// NewLive is the Source of c; c's Run keeps it current.
func NewLive(c *cluster.Cluster) *Live { return &Live{c: c} }

// Ready tells whether the informers' caches have synced and the first
// snapshot is built.
func (l *Live) Ready() bool { return l.c.Synced() }

// Snapshot is the cluster now.
func (l *Live) Snapshot() *allot.Snapshot { return l.c.Load() }

// Request translates job by the cluster's Kueue configuration.
func (l *Live) Request(job any) (req allot.Request, warns []kueueconfig.Warning, err error) {
	_ = l.c.WithConfig(func(c *kueueconfig.Config) error {
		req, warns, err = kueuejob.Request(c, job)
		return nil
	})
	return req, warns, err
}
