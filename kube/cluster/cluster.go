// The Cluster: its informers, its readiness, and what it lends readers.

package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	kueueclient "sigs.k8s.io/kueue/client-go/clientset/versioned"
	kueueinformers "sigs.k8s.io/kueue/client-go/informers/externalversions"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// Options configure a Cluster. The zero value is the default: Kueue's
// defaults, no logging, no resync, the store's default options.
type Options struct {
	// Kueue are the settings of Kueue's own Configuration that change its
	// answers (fair sharing).
	Kueue kueueconfig.Options
	// Store are the options of the Store the first snapshot starts.
	Store allot.StoreOptions
	// Log receives the refused store events, the first build, and the
	// objects Kueue's validation refuses. The zero
	// Logger discards.
	Log logr.Logger
	// OnEvent, if set, is called after each store event with its error
	// (nil when applied), on the goroutine that applied it, with the
	// cluster's lock held: for metrics, it must not call back into the
	// Cluster.
	OnEvent func(ev allot.Event, err error)
	// Resync is the informers' resync period; 0, the default, never
	// resyncs (every change comes as an event).
	Resync time.Duration
	// NodeRoom is how many vacant node slots the snapshot keeps in each
	// rack (allot.Options.NodeRoom), so that a Node created in a rack, or
	// relabelled into one, is put in place in microseconds rather than
	// renumbering the cluster's nodes in milliseconds; a deleted Node
	// leaves its slot. 0 means DefaultNodeRoom; a negative value keeps
	// none.
	NodeRoom int
}

// DefaultNodeRoom is Options.NodeRoom's default: two vacant slots a rack.
const DefaultNodeRoom = 2

// A Cluster keeps an allot Store in step with a Kubernetes cluster. Its
// methods are safe for concurrent use.
type Cluster struct {
	opts Options
	log  logr.Logger

	kube      informers.SharedInformerFactory
	kueue     kueueinformers.SharedInformerFactory
	hasSynced []cache.InformerSynced

	// mu serialises the handlers: cfg and the descriptions applied are
	// the writer's.
	mu     sync.Mutex
	cfg    *kueueconfig.Config
	live   *state // nil until the first snapshot
	broken bool   // the store is behind the configuration: resync on the next change
	// startedFlag: Start has run; changes before it only fill cfg.
	startedFlag bool

	store    atomic.Pointer[allot.Store]
	ready    chan struct{}
	readyOne sync.Once

	refused, rebuilds, invalid atomic.Int64
}

// New returns a Cluster watching the API server of cfg. It starts nothing:
// Run does.
func New(cfg *rest.Config, opts Options) (*Cluster, error) {
	if cfg == nil {
		return nil, errors.New("cluster: no rest.Config")
	}
	if err := opts.Store.Validate(); err != nil {
		return nil, fmt.Errorf("cluster: Options.Store: %w", err)
	}
	if opts.Resync < 0 {
		return nil, fmt.Errorf("cluster: Options.Resync: %v is negative", opts.Resync)
	}
	if opts.NodeRoom > 64 {
		return nil, fmt.Errorf("cluster: Options.NodeRoom: %d slots a rack, at most 64", opts.NodeRoom)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	qc, err := kueueclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	c := newCluster(opts)
	c.kube = informers.NewSharedInformerFactory(kc, opts.Resync)
	c.kueue = kueueinformers.NewSharedInformerFactory(qc, opts.Resync)
	kq := c.kueue.Kueue().V1beta2()
	for _, inf := range []cache.SharedIndexInformer{
		c.kube.Core().V1().Nodes().Informer(),
		c.kube.Core().V1().Pods().Informer(),
		// Jobs for their pods' owner chains: a Kueue-managed Job carries
		// the queue-name label its pods do not.
		c.kube.Batch().V1().Jobs().Informer(),
		c.kube.Core().V1().Namespaces().Informer(),
		c.kube.Scheduling().V1().PriorityClasses().Informer(),
		kq.ResourceFlavors().Informer(),
		kq.Topologies().Informer(),
		kq.Cohorts().Informer(),
		kq.ClusterQueues().Informer(),
		kq.LocalQueues().Informer(),
		kq.WorkloadPriorityClasses().Informer(),
	} {
		reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.Upsert(obj) },
			UpdateFunc: func(_, obj any) { c.Upsert(obj) },
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				c.Delete(obj)
			},
		})
		if err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		c.hasSynced = append(c.hasSynced, reg.HasSynced)
	}
	return c, nil
}

// newCluster is a Cluster without informers: objects come through Upsert
// and Delete, the first snapshot with Start.
func newCluster(opts Options) *Cluster {
	log := opts.Log
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	return &Cluster{opts: opts, log: log, cfg: kueueconfig.New(opts.Kueue), ready: make(chan struct{})}
}

// Run starts the informers, builds the first snapshot once their caches
// have synced, and keeps the store in step until ctx is done. It returns
// nil when ctx ends, or why the caches did not sync.
func (c *Cluster) Run(ctx context.Context) error {
	if c.kube == nil {
		return errors.New("cluster: Run of a Cluster not made by New")
	}
	c.kube.Start(ctx.Done())
	c.kueue.Start(ctx.Done())
	defer c.kube.Shutdown()
	defer c.kueue.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), c.hasSynced...) {
		return fmt.Errorf("cluster: the informers' caches did not sync: %w", context.Cause(ctx))
	}
	// A first snapshot that cannot be built (no ResourceFlavor yet, say)
	// is logged by Start and tried again on every change.
	_ = c.Start()
	<-ctx.Done()
	return nil
}

// Start builds the first snapshot from the objects read so far and makes
// every later Upsert and Delete an event. Run calls it once the caches
// have synced.
func (c *Cluster) Start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live != nil {
		return nil
	}
	return c.rebuild("the first snapshot")
}

// Synced tells whether the caches have synced and the first snapshot is
// built.
func (c *Cluster) Synced() bool {
	select {
	case <-c.ready:
		return true
	default:
		return false
	}
}

// WaitForSync waits until Synced, or ctx is done; it returns Synced.
func (c *Cluster) WaitForSync(ctx context.Context) bool {
	select {
	case <-c.ready:
		return true
	case <-ctx.Done():
		return c.Synced()
	}
}

// Store returns the current store, nil before the first snapshot. Once
// there it stays: every change after the first snapshot is a store
// event.
func (c *Cluster) Store() *allot.Store { return c.store.Load() }

// Load returns the current snapshot, nil before the first.
func (c *Cluster) Load() *allot.Snapshot {
	if st := c.store.Load(); st != nil {
		return st.Load()
	}
	return nil
}

// WithConfig calls fn with the current Kueue configuration (for
// kueuejob.Request and Config.WorkloadRequest), the handlers held off
// until it returns. fn must not keep the Config or change it.
func (c *Cluster) WithConfig(fn func(*kueueconfig.Config) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fn(c.cfg)
}

// Stats are the Cluster's counters.
type Stats struct {
	// Refused counts the store events the store refused.
	Refused int64
	// Rebuilds counts the snapshots built from the whole configuration:
	// the first, or its retries while the objects did not build; 1 once
	// the cluster runs.
	Rebuilds int64
	// Invalid counts the objects Kueue's validation refuses, left out.
	Invalid int64
}

// Stats returns the counters.
func (c *Cluster) Stats() Stats {
	return Stats{Refused: c.refused.Load(), Rebuilds: c.rebuilds.Load(), Invalid: c.invalid.Load()}
}
