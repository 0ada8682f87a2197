package trace

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// Paths of the public traces, relative to this package's directory: the
// repository sits next to the shared trace directory.
const (
	phillyPath    = "../../../shared/traces/philly_adaptdl.csv"
	openbPodsPath = "../../../shared/traces/openb_pod_list_default.csv"
	openbNodePath = "../../../shared/traces/openb_node_list_gpu_node.csv"
)

// needFile skips the test when path does not exist.
func needFile(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not available: %v", path, err)
	}
}

// wantRowError checks that err is a *RowError for file and line whose
// reason contains reason.
func wantRowError(t *testing.T, err error, file string, line int, reason string) {
	t.Helper()
	var re *RowError
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T), want a *RowError", err, err)
	}
	if re.File != file || re.Line != line || !strings.Contains(re.Reason, reason) {
		t.Fatalf("error %q: want file %q, line %d, reason containing %q", err, file, line, reason)
	}
}

// checkInvariants fails the test when the trace breaks the invariants
// every loaded trace keeps.
func checkInvariants(t testing.TB, tr *Trace) {
	t.Helper()
	if err := tr.Validate(); err != nil {
		t.Fatalf("invalid trace: %v", err)
	}
	if tr.Jobs == nil {
		t.Fatalf("Jobs is nil, want an empty slice")
	}
}
