// Starting the package's API server on first use, installing Kueue's CRDs,
// and stopping it when the tests end.

package kubetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// SkipEnv is the environment variable that, set to 1, turns a missing API
// server from a failure into a skip.
const SkipEnv = "ALLOT_SKIP_KUBE"

// KueueModule is the module whose CRDs are installed.
const KueueModule = "sigs.k8s.io/kueue"

// fieldOwner is the field manager of the CRDs' server-side apply.
const fieldOwner = "allot-kubetest"

var (
	once    sync.Once
	mu      sync.Mutex
	env     *envtest.Environment
	cfg     *rest.Config
	started error
)

// Main runs a package's tests and stops the API server, if a test started
// it, when they end. It returns the exit code for os.Exit.
func Main(m *testing.M) int {
	code := m.Run()
	mu.Lock()
	e := env
	mu.Unlock()
	if e != nil {
		if err := e.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "kubetest: stopping the API server: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Config returns the configuration of the package's API server (a copy the
// test may change), starting the server on the first call. Without an API
// server it fails the test, or skips it when ALLOT_SKIP_KUBE=1. Every
// test of the package shares the server: each names its objects so that
// they do not meet another test's.
func Config(t testing.TB) *rest.Config {
	t.Helper()
	once.Do(func() {
		e, c, err := start()
		mu.Lock()
		env, cfg, started = e, c, err
		mu.Unlock()
	})
	mu.Lock()
	c, err := cfg, started
	mu.Unlock()
	if err != nil {
		if os.Getenv(SkipEnv) == "1" {
			t.Skipf("no API server (%s=1): %v", SkipEnv, err)
		}
		t.Fatalf("no API server (set %s=1 to skip the integration tests): %v", SkipEnv, err)
	}
	return rest.CopyConfig(c)
}

// Scheme is the scheme of the objects the tests create: client-go's
// built-in kinds, apiextensions, and Kueue's v1beta1 and v1beta2.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, kueue.AddToScheme, kueuev1beta1.AddToScheme} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("kubetest: scheme: %v", err)) // fixed schemes: a failure is a build fault
		}
	}
	return s
}

// Client returns a controller-runtime client of cfg with Scheme.
func Client(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatalf("kubetest: client: %v", err)
	}
	return c
}

// start starts the API server and installs Kueue's CRDs.
func start() (*envtest.Environment, *rest.Config, error) {
	assets, err := Assets()
	if err != nil {
		return nil, nil, err
	}
	crdDir, err := KueueCRDs()
	if err != nil {
		return nil, nil, err
	}
	e := &envtest.Environment{BinaryAssetsDirectory: assets, ControlPlaneStartTimeout: time.Minute}
	c, err := e.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("kubetest: starting the API server from %s: %w", assets, err)
	}
	if err := installCRDs(c, crdDir); err != nil {
		_ = e.Stop()
		return nil, nil, err
	}
	return e, c, nil
}

// installCRDs applies the CRDs of a folder server-side and waits until the
// API server serves them.
func installCRDs(c *rest.Config, dir string) error {
	opts := envtest.CRDInstallOptions{Paths: []string{dir}, ErrorIfPathMissing: true, MaxTime: time.Minute}
	if err := envtest.ReadCRDFiles(&opts); err != nil {
		return fmt.Errorf("kubetest: reading Kueue's CRDs: %w", err)
	}
	if len(opts.CRDs) == 0 {
		return fmt.Errorf("kubetest: no CRD in %s", dir)
	}
	cl, err := client.New(c, client.Options{Scheme: Scheme()})
	if err != nil {
		return fmt.Errorf("kubetest: client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, crd := range opts.CRDs {
		crd.APIVersion, crd.Kind = apiextensionsv1.SchemeGroupVersion.String(), "CustomResourceDefinition"
		crd.ResourceVersion = ""
		js, err := json.Marshal(crd)
		if err != nil {
			return fmt.Errorf("kubetest: CRD %s: %w", crd.Name, err)
		}
		obj := &apiextensionsv1.CustomResourceDefinition{}
		obj.Name = crd.Name
		if err := cl.Patch(ctx, obj, client.RawPatch(client.Apply.Type(), js), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("kubetest: applying CRD %s server-side: %w", crd.Name, err)
		}
	}
	if err := envtest.WaitForCRDs(c, opts.CRDs, opts); err != nil {
		return fmt.Errorf("kubetest: waiting for Kueue's CRDs: %w", err)
	}
	return nil
}

// Assets returns the folder holding kube-apiserver and etcd:
// KUBEBUILDER_ASSETS, else what scripts/kube-assets.sh prints (found in
// the working directory or a parent; it builds the API server once per
// machine).
func Assets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	script, err := findUp(filepath.Join("scripts", "kube-assets.sh"))
	if err != nil {
		return "", fmt.Errorf("kubetest: KUBEBUILDER_ASSETS is unset and %w", err)
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command("bash", script)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kubetest: %s: %w: %s", script, err, strings.TrimSpace(errOut.String()))
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	dir := strings.TrimSpace(lines[len(lines)-1])
	if dir == "" {
		return "", fmt.Errorf("kubetest: %s printed no folder", script)
	}
	return dir, nil
}

// findUp finds a path relative to the working directory or one of its
// parents.
func findUp(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no %s in the working directory or a parent", rel)
		}
		dir = parent
	}
}

// KueueCRDs returns the folder of Kueue's CRDs in the module cache, of the
// version this module requires.
func KueueCRDs() (string, error) {
	var out, errOut bytes.Buffer
	cmd := exec.Command("go", "list", "-m", "-json", KueueModule)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kubetest: go list -m %s: %w: %s", KueueModule, err, strings.TrimSpace(errOut.String()))
	}
	var m struct{ Version, Dir string }
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		return "", fmt.Errorf("kubetest: go list -m %s: %w", KueueModule, err)
	}
	if m.Dir == "" {
		return "", errors.New("kubetest: " + KueueModule + "@" + m.Version + " is not in the module cache (go mod download " + KueueModule + ")")
	}
	dir := filepath.Join(m.Dir, "config", "components", "crd", "bases")
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("kubetest: Kueue's CRDs: %w", err)
	}
	return dir, nil
}

// Run runs a component (a live cluster's Run, a manager's Start) in the
// background until the test ends: then its context is cancelled and an
// error it returns fails the test.
func Run(ctx context.Context, t testing.TB, name string, run func(context.Context) error) {
	t.Helper()
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-ran; err != nil {
			t.Errorf("%s: %v", name, err)
		}
	})
}
