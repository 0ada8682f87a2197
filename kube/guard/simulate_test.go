package guard_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/allot-sched/allot/kube/guard"
)

func simulate(t *testing.T, src guard.Source, method, accept, body string) *httptest.ResponseRecorder {
	t.Helper()
	g, err := guard.New(src, guard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(method, "/simulate", strings.NewReader(body))
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	g.Simulate().ServeHTTP(rec, r)
	return rec
}

func read(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile("../testdata/jobs/" + file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSimulate(t *testing.T) {
	src := source(t)
	for _, c := range []struct {
		name, accept, body string
		code               int
		// want is in the body; verdict and reason the JSON's.
		want, verdict, reason, contentType string
	}{
		{name: "YAML Job as JSON", body: read(t, "block-4x8.yaml"), code: 200, verdict: "Admit", reason: "Fits", contentType: "application/json"},
		{name: "JSON Job", body: string(job(t, "rack-4x8-low.yaml", nil)), code: 200, verdict: "Queue", reason: "TopologyUnsatisfiable", contentType: "application/json"},
		{name: "never fits", body: string(job(t, "rack-4x8.yaml", parallelism(5))), code: 200, verdict: "Reject", reason: "NeverFits", contentType: "application/json"},
		{name: "text for a person", accept: "text/plain", body: read(t, "block-4x8.yaml"), code: 200,
			want: "verdict: Admit (Fits)\n", contentType: "text/plain; charset=utf-8"},
		{name: "pod group", accept: "text/html, text/plain;q=0.9", body: read(t, "podgroup.yaml"), code: 200, want: "ml-training/group → ClusterQueue training-cq"},
		{name: "Kueue's no", body: read(t, "no-queue.yaml"), code: 200, verdict: "Queue", reason: "NoQueueName"},
		{name: "empty", body: "  ", code: 400, want: "empty body"},
		{name: "not YAML", body: "{{{", code: 400, want: "simulate: "},
		{name: "not a job", body: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n", code: 400, want: "no single job"},
		{name: "two jobs", body: read(t, "block-4x8.yaml") + "\n---\n" + read(t, "rack-4x8.yaml"), code: 400, want: "2 jobs"},
		{name: "unknown field", body: "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: x\nspec:\n  parallelizm: 2\n", code: 400, want: "parallelizm"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := simulate(t, src, http.MethodPost, c.accept, c.body)
			if rec.Code != c.code || !strings.Contains(rec.Body.String(), c.want) {
				t.Fatalf("HTTP %d %s, want %d with %q", rec.Code, rec.Body, c.code, c.want)
			}
			if c.contentType != "" && rec.Header().Get("Content-Type") != c.contentType {
				t.Errorf("Content-Type %q, want %q", rec.Header().Get("Content-Type"), c.contentType)
			}
			if c.verdict != "" {
				var d struct{ Verdict, Reason string }
				if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil || d.Verdict != c.verdict || d.Reason != c.reason {
					t.Errorf("%v: %s, want %s (%s)", err, rec.Body, c.verdict, c.reason)
				}
			}
		})
	}
	if rec := simulate(t, src, http.MethodGet, "", ""); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: HTTP %d, want 405", rec.Code)
	}
	if rec := simulate(t, flaky{Source: src}, http.MethodPost, "", read(t, "block-4x8.yaml")); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("not ready: HTTP %d, want 503", rec.Code)
	}
}
