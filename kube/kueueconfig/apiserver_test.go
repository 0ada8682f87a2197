package kueueconfig_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/allot-sched/allot/kube/internal/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// documents reads a file's objects as written (unstructured: what kubectl
// would send), the comments and empty documents left out.
func documents(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if s := strings.TrimSpace(string(js)); s == "" || s == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if u.IsList() {
			items, _ := u.ToList()
			for i := range items.Items {
				out = append(out, &items.Items[i])
			}
			continue
		}
		out = append(out, u)
	}
}

// dryRun creates an object with a server-side dry run (nothing is
// stored), first creating its namespace for real if it has one.
func dryRun(ctx context.Context, t *testing.T, cl client.Client, u *unstructured.Unstructured) error {
	t.Helper()
	if ns := u.GetNamespace(); ns != "" {
		err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("namespace %s: %v", ns, err)
		}
	}
	u = u.DeepCopy()
	u.SetResourceVersion("")
	u.SetUID("")
	return cl.Create(ctx, u, client.DryRunAll)
}

// TestExamplesDryRun: every example the importer reads, as written, is
// accepted by a real API server with Kueue's CRDs (a server-side dry
// run), and the seed's training-cq, which sets a borrowingLimit without a
// cohort, is refused by the CEL rule the importer applies. Kinds whose
// CRDs are not installed (JobSet, RayJob) are skipped, named.
func TestExamplesDryRun(t *testing.T) {
	cl := kubetest.Client(t, kubetest.Config(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var files []string
	for _, dir := range []string{"seeds", "cluster", "jobs"} {
		fs, err := filepath.Glob(filepath.Join("..", "testdata", dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	if len(files) < 10 {
		t.Fatalf("%d example files", len(files))
	}
	// Namespaces first, before a namespaced object's dry run creates its
	// namespace for real.
	for _, namespaces := range []bool{true, false} {
		for _, path := range files {
			dryRunFile(ctx, t, cl, path, namespaces)
		}
	}
}

// dryRunFile dry-runs a file's Namespaces, or its other objects.
func dryRunFile(ctx context.Context, t *testing.T, cl client.Client, path string, namespaces bool) {
	t.Helper()
	refused := filepath.Base(path) == "training-cq.yaml"
	for _, u := range documents(t, path) {
		if (u.GetKind() == "Namespace") != namespaces {
			continue
		}
		{
			name := filepath.Base(path) + "/" + u.GetKind() + "/" + u.GetName()
			t.Run(name, func(t *testing.T) {
				err := dryRun(ctx, t, cl, u)
				switch {
				case meta.IsNoMatchError(err):
					t.Skipf("%s: no CRD of %s is installed (only Kueue's are)", name, u.GetAPIVersion())
				case refused && u.GetKind() == "ClusterQueue":
					if err == nil || !strings.Contains(err.Error(), "borrowingLimit must be nil when cohort is empty") {
						t.Fatalf("training-cq without a cohort: %v, want Kueue's CEL refusal", err)
					}
				case err != nil:
					t.Fatalf("refused by the API server: %v", err)
				}
			})
		}
	}
}

// TestRulesAgainstAPIServer: each rule fixture (one object breaking one of
// Kueue's validation rules, which the importer refuses) sent to a real
// API server with Kueue's CRDs. A rule of the CRD (schema or CEL) is
// refused by the API server too, with the fixture's message; a webhook
// rule is accepted, since Kueue's webhook is not running — those the
// importer alone refuses here (the list is logged).
func TestRulesAgainstAPIServer(t *testing.T) {
	cl := kubetest.Client(t, kubetest.Config(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var webhookOnly []string
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			path := filepath.Join("..", "testdata", "rules", r.name+".yaml")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.TrimPrefix(strings.SplitN(string(data), "\n", 3)[1], "# want: ")
			docs := documents(t, path)
			if len(docs) != 1 {
				t.Fatalf("%d objects, want 1", len(docs))
			}
			err = dryRun(ctx, t, cl, docs[0])
			if r.source == "webhook" {
				if err != nil {
					t.Fatalf("a webhook rule, refused by the API server without Kueue's webhook: %v", err)
				}
				webhookOnly = append(webhookOnly, r.name)
				return
			}
			if err == nil {
				t.Fatalf("a %s rule, accepted by the API server; the importer refuses it: %s", r.source, want)
			}
			if r.source == "CRD CEL" {
				// The API server of Kubernetes 1.37 no longer names the
				// type of the value a CEL rule judged, where the importer
				// writes it as earlier releases did (`spec: Invalid value:
				// "object": borrowingLimit must be nil ...`), and it puts
				// the evaluation's error before the message of a rule
				// that reads a field left out (rf-topology-needs-node-labels:
				// "no such key: nodeLabels evaluating rule: ..."): the
				// field and the rule's message are compared.
				path, msg, ok := strings.Cut(want, ": Invalid value: ")
				if _, after, typed := strings.Cut(msg, `": `); typed && strings.HasPrefix(msg, `"`) {
					msg = after
				}
				if !ok || !strings.Contains(err.Error(), path+": Invalid value: ") || !strings.Contains(err.Error(), msg) {
					t.Errorf("the API server's refusal\n  %v\ndoes not say the importer's\n  %s", err, want)
				}
				return
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the API server's refusal\n  %v\ndoes not say the importer's\n  %s", err, want)
			}
		})
	}
	t.Logf("%d of %d rules are Kueue's webhook's, not its CRDs': the API server without the webhook accepts them, the importer refuses them: %s",
		len(webhookOnly), len(rules), strings.Join(webhookOnly, ", "))
}
