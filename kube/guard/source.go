package guard

import (
	"fmt"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// A Source is what the guard decides against: the snapshot of the cluster
// now and the Kueue configuration that translates jobs into requests.
// Ready is false until the source has the cluster (a live source's caches
// have synced); the guard does not call Snapshot or Config before. Its
// methods are called from many requests at once.
type Source interface {
	Ready() bool
	Snapshot() *allot.Snapshot
	Config() *kueueconfig.Config
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

// Config is the configuration of the files.
func (s *Static) Config() *kueueconfig.Config { return s.cfg }
