package guard_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/allot-sched/allot"
	"github.com/allot-sched/allot/kube/guard"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

// The seeds' Kueue objects and the cluster of eight A100 nodes in two
// racks, as the allot command's tests read them.
var paths = []string{"../testdata/seeds/training-cq-fixed.yaml", "../testdata/seeds/team-a.yaml", "../testdata/cluster"}

var (
	staticOnce sync.Once
	static     *guard.Static
	staticErr  error
)

func source(t testing.TB) *guard.Static {
	t.Helper()
	staticOnce.Do(func() { static, _, staticErr = guard.LoadStatic(kueueconfig.Options{}, paths...) })
	if staticErr != nil {
		t.Fatal(staticErr)
	}
	return static
}

// flaky is a source whose readiness the test sets.
type flaky struct {
	guard.Source
	ready bool
}

func (f flaky) Ready() bool { return f.ready }

// counter is an Observer that keeps every outcome.
type counter struct {
	mu  sync.Mutex
	out []guard.Outcome
}

func (c *counter) Observe(o guard.Outcome) {
	c.mu.Lock()
	c.out = append(c.out, o)
	c.mu.Unlock()
}

// job reads a test job and edits it: YAML in, the JSON the API server
// sends.
func job(t testing.TB, file string, edit func(map[string]any)) []byte {
	t.Helper()
	data, err := os.ReadFile("../testdata/jobs/" + file)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(data), "\n---\n")
	var m map[string]any
	if err := yaml.Unmarshal([]byte(docs[0]), &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	js, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// parallelism sets a Job's pods.
func parallelism(n int) func(map[string]any) {
	return func(m map[string]any) {
		spec := m["spec"].(map[string]any)
		spec["parallelism"], spec["completions"] = n, n
	}
}

// named renames an object.
func named(name string) func(map[string]any) {
	return func(m map[string]any) { m["metadata"].(map[string]any)["name"] = name }
}

func review(t testing.TB, kind string, op admissionv1.Operation, obj []byte) []byte {
	t.Helper()
	group, version := "", "v1"
	switch kind {
	case "Job":
		group = "batch"
	case "Workload":
		group, version = "kueue.x-k8s.io", "v1beta2"
	}
	r := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: types.UID("uid-1"), Operation: op, Namespace: "ml-training",
			Kind:   metav1.GroupVersionKind{Group: group, Version: version, Kind: kind},
			Object: runtime.RawExtension{Raw: obj}},
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// post sends body to the guard and decodes its answer.
func post(t testing.TB, h http.Handler, body []byte) (*admissionv1.AdmissionResponse, int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body)))
	if rec.Code != http.StatusOK {
		return nil, rec.Code, rec.Body.String()
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	var sent admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &sent); err != nil || sent.Request == nil {
		t.Fatalf("HTTP 200 for a malformed review: %s", rec.Body)
	}
	if out.Response == nil || out.Response.UID != sent.Request.UID || out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" {
		t.Fatalf("answer %s: want the request's uid in an admission.k8s.io/v1 AdmissionReview", rec.Body)
	}
	return out.Response, rec.Code, ""
}

func TestReview(t *testing.T) {
	src := source(t)
	// Five 8-GPU pods in one rack of four 8-GPU nodes: no rack can ever
	// hold them.
	tooBig := job(t, "rack-4x8.yaml", parallelism(5))
	// Six 8-GPU pods with no topology fit the eight nodes.
	loose := job(t, "rack-4x8.yaml", func(m map[string]any) {
		parallelism(2)(m)
		tmpl := m["spec"].(map[string]any)["template"].(map[string]any)
		delete(tmpl, "metadata")
	})
	single := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"one","namespace":"ml-training","labels":{"kueue.x-k8s.io/queue-name":"training"}},
		"spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"nvidia.com/gpu":"1"}}}],"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]}}`)
	owned := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"rack-4x8-abcde","namespace":"ml-training",
		"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"rack-4x8","uid":"u","controller":true}]},
		"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	for _, c := range []struct {
		name    string
		src     guard.Source
		opts    guard.Options
		kind    string
		op      admissionv1.Operation
		obj     []byte
		allowed bool
		// reason is the outcome's; message a part of the denial's
		// message, warning of a warning's.
		reason, message, warning string
		dryRun                   bool
	}{
		{name: "fits", kind: "Job", obj: job(t, "block-4x8.yaml", nil), allowed: true, reason: "Fits"},
		{name: "preempts", kind: "Job", obj: job(t, "rack-4x8.yaml", nil), allowed: true, reason: "PriorityPreemption"},
		{name: "waits for its rack to free", kind: "Job", obj: job(t, "rack-4x8-low.yaml", nil), allowed: true, reason: "TopologyUnsatisfiable"},
		{name: "never fits its required rack", kind: "Job", obj: tooBig, reason: "NeverFits", message: "allot: NeverFits: "},
		{name: "pod group", kind: "Pod", obj: job(t, "podgroup.yaml", nil), allowed: true, reason: "Fits"},
		{name: "workload", kind: "Workload", obj: job(t, "workload.yaml", nil), allowed: true, reason: "Fits"},
		{name: "not managed by Kueue", kind: "Job", obj: job(t, "no-queue.yaml", nil), allowed: true, reason: guard.ReasonUnmanaged},
		{name: "a Job's pod", kind: "Pod", obj: owned, allowed: true, reason: guard.ReasonOwned},
		{name: "not a CREATE", kind: "Job", op: admissionv1.Update, obj: tooBig, allowed: true, reason: guard.ReasonNotCreate},
		{name: "kill switch", opts: guard.Options{Disabled: true}, kind: "Job", obj: tooBig, allowed: true, reason: guard.ReasonDisabled},
		{name: "dry-run", opts: guard.Options{DryRun: true}, kind: "Job", obj: tooBig, allowed: true, reason: "NeverFits",
			warning: "dry-run: allot would deny: allot: NeverFits: ", dryRun: true},
		{name: "not ready: fail-open", src: flaky{Source: src}, kind: "Job", obj: tooBig, allowed: true, reason: guard.ReasonNotReady, warning: "fail-open"},
		{name: "not ready: fail-closed", src: flaky{Source: src}, opts: guard.Options{FailClosed: true}, kind: "Job", obj: tooBig,
			reason: guard.ReasonNotReady, message: "not ready"},
		{name: "undecodable: allowed", kind: "Job", obj: []byte(`{"apiVersion":"batch/v1","kind":"Job","spec":{"parallelism":"many"}}`),
			allowed: true, reason: guard.ReasonUndecodable, warning: "cannot decode"},
		{name: "undecodable: denied", opts: guard.Options{DenyUndecodable: true}, kind: "Job", obj: []byte(`{"apiVersion":"batch/v1","kind":"Job","spec":{"parallelism":"many"}}`),
			reason: guard.ReasonUndecodable, message: "cannot decode"},
		{name: "topology required: declared", opts: guard.Options{RequireTopology: true}, kind: "Job", obj: job(t, "block-4x8.yaml", nil), allowed: true, reason: "Fits"},
		{name: "topology required: none", opts: guard.Options{RequireTopology: true}, kind: "Job", obj: loose,
			reason: guard.ReasonTopologyRequired, message: "pod set main declares no topology"},
		{name: "topology required: a lone pod", opts: guard.Options{RequireTopology: true}, kind: "Pod", obj: single, allowed: true, reason: "Fits"},
		// 39 of the 64 GPUs are free: 60.9%.
		{name: "1-GPU pod, flavor free enough", opts: guard.Options{SmallPodMinFreeShare: 0.5}, kind: "Pod", obj: single, allowed: true, reason: "Fits"},
		{name: "1-GPU pod, flavor nearly full", opts: guard.Options{SmallPodMinFreeShare: 0.8}, kind: "Pod", obj: single,
			reason: guard.ReasonSmallPod, message: "a 1-GPU pod on flavor a100-80gb, whose free GPUs are 39 of 64 (60.9%, below the 80.0% kept for gangs)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.src == nil {
				c.src = src
			}
			if c.op == "" {
				c.op = admissionv1.Create
			}
			obs := &counter{}
			c.opts.Observer = obs
			g, err := guard.New(c.src, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			resp, code, body := post(t, g, review(t, c.kind, c.op, c.obj))
			if resp == nil {
				t.Fatalf("HTTP %d: %s", code, body)
			}
			if resp.Allowed != c.allowed {
				t.Fatalf("allowed %v, want %v: %+v", resp.Allowed, c.allowed, resp.Result)
			}
			if !c.allowed {
				if resp.Result == nil || resp.Result.Code != 403 || !strings.Contains(resp.Result.Message, c.message) {
					t.Errorf("denial %+v, want 403 with %q", resp.Result, c.message)
				}
			}
			if c.warning != "" && !strings.Contains(strings.Join(resp.Warnings, "\n"), c.warning) {
				t.Errorf("warnings %q, want one with %q", resp.Warnings, c.warning)
			}
			if len(obs.out) != 1 {
				t.Fatalf("%d outcomes observed, want 1", len(obs.out))
			}
			o := obs.out[0]
			if o.Reason != c.reason || o.Denied == c.allowed && !c.dryRun || o.DryRun != c.dryRun || o.Kind != c.kind {
				t.Errorf("outcome %+v, want reason %s, denied %v, dry-run %v, kind %s", o, c.reason, !c.allowed, c.dryRun, c.kind)
			}
		})
	}
}

// The rest of a pod group's pods get the answer of its first from the
// cache while the snapshot stays the same; a new version decides anew.
func TestGangCached(t *testing.T) {
	src := &storeSource{Static: source(t)}
	src.store = allot.NewStore(src.Static.Snapshot())
	obs := &counter{}
	g, err := guard.New(src, guard.Options{Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../testdata/jobs/podgroup.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pods [][]byte
	for _, doc := range strings.Split(string(data), "\n---\n") {
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		pods = append(pods, js)
	}
	send := func(pod []byte) {
		t.Helper()
		if resp, code, body := post(t, g, review(t, "Pod", admissionv1.Create, pod)); resp == nil || !resp.Allowed {
			t.Fatalf("HTTP %d %s: %+v", code, body, resp)
		}
	}
	send(pods[0])
	send(pods[1])
	if _, err := src.store.Apply(allot.AdvanceTime{Seconds: 1}); err != nil {
		t.Fatal(err)
	}
	send(pods[1])
	want := []bool{false, true, false}
	if len(obs.out) != len(want) {
		t.Fatalf("outcomes %+v", obs.out)
	}
	for i, o := range obs.out {
		if o.Cached != want[i] || o.Reason != "Fits" {
			t.Errorf("pod %d: outcome %+v, want Fits, cached %v", i, o, want[i])
		}
	}
}

// storeSource is the files' configuration with a store's snapshot, which
// the test moves on.
type storeSource struct {
	*guard.Static
	store *allot.Store
}

func (s *storeSource) Snapshot() *allot.Snapshot { return s.store.Load() }

func TestMalformed(t *testing.T) {
	g, err := guard.New(source(t), guard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, body, want string }{
		{"not JSON", "{", "malformed AdmissionReview"},
		{"no request", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, "without a request"},
		{"no uid", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE"}}`, "without a request and its uid"},
		{"v1beta1", `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u"}}`, "want admission.k8s.io/v1 AdmissionReview"},
		{"a Job", `{"apiVersion":"batch/v1","kind":"Job"}`, "want admission.k8s.io/v1 AdmissionReview"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, code, body := post(t, g, []byte(c.body))
			if code != http.StatusBadRequest || !strings.Contains(body, c.want) {
				t.Errorf("HTTP %d %q, want 400 with %q", code, body, c.want)
			}
		})
	}
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/validate", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: HTTP %d, want 405", rec.Code)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []guard.Options{{SmallPodMinFreeShare: -0.1}, {SmallPodMinFreeShare: 1.5}, {CacheSize: -1}} {
		if _, err := guard.New(source(t), o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	if _, err := guard.New(nil, guard.Options{}); err == nil {
		t.Error("New without a source accepted")
	}
}
