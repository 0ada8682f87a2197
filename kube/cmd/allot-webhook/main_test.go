package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/kube/cluster"
)

var files = []string{"--kueue", "../../testdata/seeds/training-cq-fixed.yaml", "--kueue", "../../testdata/seeds/team-a.yaml", "--cluster", "../../testdata/cluster"}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in the error; "" for none
	}{
		{files, ""},
		{append([]string{"--dry-run", "--require-topology", "--small-pod-min-free-share", "0.2"}, files...), ""},
		{nil, ""}, // the live cluster
		{[]string{"--cluster", "../../testdata/cluster"}, "--cluster describes a cluster in files with --kueue"},
		{append([]string{"--small-pod-min-free-share", "2"}, files...), "SmallPodMinFreeShare 2"},
		{append([]string{"--cache-size", "-3"}, files...), "CacheSize -3"},
		{[]string{"--node-room", "0"}, ""},
		{[]string{"--node-room", "65"}, "--node-room 65"},
		{[]string{"--node-room", "-1"}, "--node-room -1"},
		{append(files, "extra"), "unexpected arguments"},
		{[]string{"--no-such-flag"}, "no-such-flag"},
	} {
		_, err := parse(c.args, io.Discard)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("parse(%q) = %v, want %q", c.args, err, c.want)
		}
	}
	c, err := parse(append([]string{"--disabled", "--fail-closed", "--deny-undecodable"}, files...), io.Discard)
	if err != nil || !c.guard.Disabled || !c.guard.FailClosed || !c.guard.DenyUndecodable || c.guard.CacheSize != 4096 || c.nodeRoom != cluster.DefaultNodeRoom {
		t.Errorf("parse: %+v, %v", c, err)
	}
}

// TestServe runs the webhook on the files' cluster with a certificate of
// the test's and asks each of its endpoints.
func TestServe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the manager")
	}
	dir := t.TempDir()
	pool := writeCert(t, dir)
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	hook := startWebhook(t, context.Background(), 30*time.Second, func(port int, metricsAddr, probeAddr string) []string {
		return append([]string{"--cert-dir", dir, "--port", fmt.Sprint(port), "--metrics-bind-address", metricsAddr, "--health-probe-bind-address", probeAddr}, files...)
	})
	defer hook.stop(t)
	port, metricsAddr, probeAddr := hook.port, hook.metricsAddr, hook.probeAddr
	if code, body := get("http://" + probeAddr + "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d %s", code, body)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}}
	job, err := os.ReadFile("../../testdata/jobs/block-4x8.yaml")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Post(fmt.Sprintf("https://127.0.0.1:%d/simulate", port), "application/yaml", bytes.NewReader(job))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"reason": "Fits"`) {
		t.Errorf("/simulate: %d %s", resp.StatusCode, body)
	}
	resp, err = client.Post(fmt.Sprintf("https://127.0.0.1:%d/validate", port), "application/json", strings.NewReader("{"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("/validate of a malformed review: %d, want 400", resp.StatusCode)
	}
	code, m := get("http://" + metricsAddr + "/metrics")
	for _, name := range []string{"allot_gpu_utilization ", "allot_fragmentation_node_share ", "allot_fragmentation_stranded_share ",
		`allot_queue_admitted_workloads{queue="training-cq"}`, `allot_webhook_duration_seconds_count{handler="simulate"} 1`} {
		if !strings.Contains(m, name) {
			t.Errorf("/metrics (%d) lacks %s", code, name)
		}
	}
}

// testWebhook is a webhook started by startWebhook.
type testWebhook struct {
	port                   int
	metricsAddr, probeAddr string
	logs                   *syncWriter
	cancel                 context.CancelFunc
	done                   chan int
}

// startWebhook runs the webhook with the arguments args gives for its
// ports, until ctx ends or stop, and waits up to timeout for /readyz.
// A port found free may be taken before the webhook binds it (the API
// servers that other packages' tests start pick theirs meanwhile): the
// webhook then exits at once, saying so, and starts again on others.
func startWebhook(t *testing.T, ctx context.Context, timeout time.Duration, args func(port int, metricsAddr, probeAddr string) []string) *testWebhook {
	t.Helper()
	for attempt := 1; ; attempt++ {
		h := &testWebhook{port: freePort(t), metricsAddr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), probeAddr: fmt.Sprintf("127.0.0.1:%d", freePort(t)),
			logs: &syncWriter{w: new(bytes.Buffer)}, done: make(chan int, 1)}
		var runCtx context.Context
		runCtx, h.cancel = context.WithCancel(ctx)
		a := args(h.port, h.metricsAddr, h.probeAddr)
		go func() { h.done <- run(runCtx, a, h.logs) }()
		ready, exited := h.waitReady(timeout)
		if ready {
			return h
		}
		h.cancel()
		if exited && strings.Contains(h.logs.String(), "address already in use") && attempt < 5 {
			continue
		}
		t.Fatalf("not ready in %v (exited %v):\n%s", timeout, exited, h.logs.String())
	}
}

// waitReady polls /readyz until it answers 200 (ready), the webhook
// exits first (exited) or timeout passes.
func (h *testWebhook) waitReady(timeout time.Duration) (ready, exited bool) {
	deadline := time.Now().Add(timeout)
	for {
		if resp, err := http.Get("http://" + h.probeAddr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true, false
			}
		}
		select {
		case c := <-h.done:
			h.done <- c
			return false, true
		default:
		}
		if time.Now().After(deadline) {
			return false, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends the webhook and checks that it exited cleanly.
func (h *testWebhook) stop(t *testing.T) {
	t.Helper()
	h.cancel()
	if code := <-h.done; code != 0 {
		t.Errorf("exit %d:\n%s", code, h.logs.String())
	}
}

// writeCert writes a self-signed serving certificate for 127.0.0.1 as
// tls.crt and tls.key, and returns the pool that trusts it.
func writeCert(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "allot-webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
