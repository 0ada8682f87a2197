// Command allot-webhook runs allot's GPU fragmentation guard: a
// validating admission webhook for clusters that run Kueue (package
// guard), the pre-submission simulator at /simulate on the same server,
// and the health numbers on the metrics endpoint (package metrics).
//
//	allot-webhook [--kubeconfig FILE] [--cert-dir DIR] [flags]
//	allot-webhook --kueue DIR --cluster FILE|DIR [--cert-dir DIR] [flags]
//
// It decides against the live cluster it runs in (or the one --kubeconfig
// names): client-go informers keep its snapshot in step with the cluster's
// Nodes, Pods, Namespaces and Kueue's objects (package cluster), and
// nothing on the decision path calls the API server. With --kueue it
// decides against a cluster described in files instead: Kueue's objects
// (--kueue) and the cluster's Nodes, Namespaces and Pods (--cluster), as
// `allot decide` reads them — a dry-run guard and simulator for a cluster
// in files. The webhook server serves TLS from tls.crt and tls.key in
// --cert-dir and reloads them when they change (controller-runtime's
// certwatcher); /healthz and /readyz are the manager's probes, /readyz
// failing until the source is ready. No leader election: every replica
// decides on its own snapshot and keeps its own cache, and decisions are
// deterministic, so replicas agree.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/cluster"
	"github.com/allot-sched/allot/kube/guard"
	"github.com/allot-sched/allot/kube/kueueconfig"
	"github.com/allot-sched/allot/kube/metrics"
)

func main() {
	ctx := ctrl.SetupSignalHandler()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

// paths is a flag that may be given more than once.
type paths []string

func (p *paths) String() string     { return strings.Join(*p, ",") }
func (p *paths) Set(s string) error { *p = append(*p, s); return nil }

// config is the command line.
type config struct {
	kueue, cluster paths
	kubeconfig     string
	fairSharing    bool
	certDir        string
	port           int
	metricsAddr    string
	probeAddr      string
	nodeRoom       int
	guard          guard.Options
}

func parse(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("allot-webhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{}
	fs.Var(&c.kueue, "kueue", "file or directory of the Kueue configuration (repeatable): decide against files, not the live cluster")
	fs.Var(&c.cluster, "cluster", "file or directory of the cluster's Nodes, Namespaces and Pods (repeatable)")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to watch (default: the cluster it runs in, else KUBECONFIG or ~/.kube/config)")
	fs.BoolVar(&c.fairSharing, "fair-sharing", false, "Kueue's fairSharing is enabled in its Configuration")
	fs.StringVar(&c.certDir, "cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory of the serving certificate, tls.crt and tls.key (reloaded when they change)")
	fs.IntVar(&c.port, "port", webhook.DefaultPort, "port of the webhook server (/validate, /simulate)")
	fs.StringVar(&c.metricsAddr, "metrics-bind-address", ":8080", "address of the metrics endpoint (/metrics); 0 disables it")
	fs.StringVar(&c.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.IntVar(&c.nodeRoom, "node-room", cluster.DefaultNodeRoom, "vacant node slots the snapshot keeps in each rack, so that a Node created there is put in place (0 to 64)")
	fs.BoolVar(&c.guard.Disabled, "disabled", false, "kill switch: allow everything, undecided")
	fs.BoolVar(&c.guard.DryRun, "dry-run", false, "decide and log what would be denied, but allow it")
	fs.BoolVar(&c.guard.FailClosed, "fail-closed", false, "deny when the view of the cluster is not ready or deciding fails (default: allow)")
	fs.BoolVar(&c.guard.DenyUndecodable, "deny-undecodable", false, "deny an object the guard cannot decode (default: allow with a warning)")
	fs.BoolVar(&c.guard.RequireTopology, "require-topology", false, "deny gangs that declare no required or preferred topology")
	fs.Float64Var(&c.guard.SmallPodMinFreeShare, "small-pod-min-free-share", 0, "deny a lone 1-GPU pod on a flavor with less than this share (0..1) of its GPUs free; 0 disables")
	fs.IntVar(&c.guard.CacheSize, "cache-size", 4096, "gangs whose answers are cached")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if len(c.kueue) == 0 && len(c.cluster) > 0 {
		return nil, errors.New("--cluster describes a cluster in files with --kueue, its Kueue configuration")
	}
	if c.nodeRoom < 0 || c.nodeRoom > 64 {
		return nil, fmt.Errorf("--node-room %d: 0 to 64 vacant slots a rack", c.nodeRoom)
	}
	if err := c.guard.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	c, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "allot-webhook: %v\n", err)
		return 2
	}
	log := zap.New(zap.WriteTo(stderr))
	ctrl.SetLogger(log)
	if err := serve(ctx, c, log); err != nil {
		fmt.Fprintf(stderr, "allot-webhook: %v\n", err)
		return 1
	}
	return 0
}

// serve runs the manager until ctx ends.
func serve(ctx context.Context, c *config, log logr.Logger) error {
	kopts := kueueconfig.Options{FairSharing: allot.FairSharing{Enabled: c.fairSharing}}
	if len(c.kueue) == 0 {
		// The live cluster: the manager's client configuration (in the
		// cluster, its service account; else --kubeconfig or
		// KUBECONFIG), its informers run by the manager.
		rc, err := liveConfig(c.kubeconfig)
		if err != nil {
			return err
		}
		cl, err := cluster.New(rc, cluster.Options{Kueue: kopts, Log: log.WithName("cluster"), NodeRoom: cmp.Or(c.nodeRoom, -1)})
		if err != nil {
			return err
		}
		mgr, unregister, err := newManager(c, rc, guard.NewLive(cl), log)
		if err != nil {
			return err
		}
		defer unregister()
		if err := mgr.Add(manager.RunnableFunc(cl.Run)); err != nil {
			return err
		}
		return mgr.Start(ctx)
	}
	src, warns, err := guard.LoadStatic(kopts, append(c.kueue, c.cluster...)...)
	if err != nil {
		return err
	}
	for _, w := range warns {
		log.Info("not modelled", "warning", w.String())
	}
	mgr, unregister, err := newManager(c, filesConfig(), src, log)
	if err != nil {
		return err
	}
	defer unregister()
	return mgr.Start(ctx)
}

// newManager wires the guard, the simulator and the metrics into a
// controller-runtime manager.
func newManager(c *config, rc *rest.Config, src guard.Source, log logr.Logger) (mgr manager.Manager, unregister func(), err error) {
	rec := metrics.NewRecorder()
	opts := c.guard
	opts.Observer, opts.Log = rec, log.WithName("guard")
	g, err := guard.New(src, opts)
	if err != nil {
		return nil, nil, err
	}
	// The manager serves controller-runtime's registry; what is
	// registered here leaves it when the manager stops (a process may run
	// one guard after another: the tests do).
	var registered []prometheus.Collector
	unregister = func() {
		for _, col := range registered {
			ctrlmetrics.Registry.Unregister(col)
		}
	}
	for _, col := range []prometheus.Collector{rec, metrics.NewHealth(src)} {
		if err := ctrlmetrics.Registry.Register(col); err != nil {
			unregister()
			return nil, nil, err
		}
		registered = append(registered, col)
	}
	mgr, err = ctrl.NewManager(rc, ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: c.metricsAddr},
		HealthProbeBindAddress: c.probeAddr,
		// The server reloads tls.crt and tls.key from CertDir when they
		// change.
		WebhookServer: webhook.NewServer(webhook.Options{Port: c.port, CertDir: c.certDir}),
		// Each replica keeps its own snapshot and cache; answers agree
		// because decisions are deterministic.
		LeaderElection: false,
	})
	if err != nil {
		unregister()
		return nil, nil, err
	}
	// Asking for the server adds it to the manager's runnables.
	srv := mgr.GetWebhookServer()
	srv.Register("/validate", rec.Instrument("validate", g))
	srv.Register("/simulate", rec.Instrument("simulate", g.Simulate()))
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		unregister()
		return nil, nil, err
	}
	if err := mgr.AddReadyzCheck("webhook", srv.StartedChecker()); err != nil {
		unregister()
		return nil, nil, err
	}
	if err := mgr.AddReadyzCheck("source", func(*http.Request) error {
		if !src.Ready() {
			return errors.New("the view of the cluster is not ready")
		}
		return nil
	}); err != nil {
		unregister()
		return nil, nil, err
	}
	return mgr, unregister, nil
}

// liveConfig is the client configuration of the cluster to watch: the
// kubeconfig named, else controller-runtime's search (in the cluster, its
// service account; KUBECONFIG; ~/.kube/config).
func liveConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return ctrl.GetConfig()
}

// filesConfig is the manager's client configuration for a guard of a
// cluster in files, which calls no API server: the manager connects only
// when a client or cache is used, and none is.
func filesConfig() *rest.Config {
	return &rest.Config{Host: "https://127.0.0.1:1"}
}
