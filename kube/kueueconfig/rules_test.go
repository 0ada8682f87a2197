package kueueconfig_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/allot-sched/allot/kube/kueueconfig"
)

// rules are Kueue's validation rules that can refuse an object on
// create, one row each: its fixture testdata/rules/NAME.yaml holds one
// object that breaks the rule alone, and the line "# want: ..." the
// error text (Kueue's message, at Kueue's field path). The fixtures are
// also what a server-side dry run against a real API server with Kueue's
// CRDs and webhooks is to be compared with.
//
// Not rows, because they cannot refuse a create: the CEL transition rules
// (LocalQueue spec.clusterQueue and Topology spec.levels "field is
// immutable"; ResourceFlavor "nodeLabels/tolerations/topologyName are
// immutable when topologyName is set"; the Workload's "... is immutable
// while workload quota reserved" rules) and the rules on a Workload's
// status (podSetAssignments, clusterName, admission checks' tolerations),
// which the API server drops on create.
var rules = []struct{ name, source string }{
	{"cohort-flavor-resources-count", "CRD CEL"},
	{"cohort-parent-name-pattern", "CRD schema pattern"},
	{"cohort-webhook-borrowing-without-parent", "webhook"},
	{"cohort-webhook-fair-sharing-negative", "webhook"},
	{"cohort-webhook-lending-without-parent", "webhook"},
	{"cq-admission-check-duplicate", "CRD schema list-map keys"},
	{"cq-admission-checks-min-items", "CRD schema minItems"},
	{"cq-admission-mode-enum", "CRD schema enum"},
	{"cq-admission-mode-required", "CRD schema required"},
	{"cq-borrow-within-policy-enum", "CRD schema enum"},
	{"cq-borrowinglimit-without-cohort", "CRD CEL"},
	{"cq-cohort-name-pattern", "CRD schema pattern"},
	{"cq-covered-resources-min-items", "CRD schema minItems"},
	{"cq-flavor-duplicate", "CRD schema list-map keys"},
	{"cq-flavor-name-pattern", "CRD schema pattern"},
	{"cq-flavor-resources-count", "CRD CEL"},
	{"cq-flavors-min-items", "CRD schema minItems"},
	{"cq-nominal-quota-required", "CRD schema required"},
	{"cq-preference-enum", "CRD schema enum"},
	{"cq-preference-needs-trynextflavor", "CRD CEL"},
	{"cq-queueing-strategy-enum", "CRD schema enum"},
	{"cq-reclaim-enum", "CRD schema enum"},
	{"cq-reclaim-never-borrow-within", "CRD CEL"},
	{"cq-resource-duplicate", "CRD schema list-map keys"},
	{"cq-resource-groups-max-items", "CRD schema maxItems"},
	{"cq-resources-min-items", "CRD schema minItems"},
	{"cq-stop-policy-enum", "CRD schema enum"},
	{"cq-webhook-borrowing-negative", "webhook"},
	{"cq-webhook-covered-duplicate", "webhook"},
	{"cq-webhook-fair-sharing-negative", "webhook"},
	{"cq-webhook-fair-sharing-tiny", "webhook"},
	{"cq-webhook-flavor-in-two-groups", "webhook"},
	{"cq-webhook-flavor-resource-combinations", "webhook"},
	{"cq-webhook-lending-above-nominal", "webhook"},
	{"cq-webhook-lending-negative", "webhook"},
	{"cq-webhook-lending-without-cohort", "webhook"},
	{"cq-webhook-namespace-selector", "webhook"},
	{"cq-webhook-nominal-negative", "webhook"},
	{"cq-webhook-resource-name-mismatch", "webhook"},
	{"cq-webhook-resource-name", "webhook"},
	{"cq-webhook-total-covered", "webhook"},
	{"cq-webhook-total-flavors", "webhook"},
	{"cq-when-can-borrow-enum", "CRD schema enum"},
	{"cq-when-can-preempt-enum", "CRD schema enum"},
	{"cq-within-cluster-queue-enum", "CRD schema enum"},
	{"lq-cluster-queue-pattern", "CRD schema pattern"},
	{"lq-stop-policy-enum", "CRD schema enum"},
	{"rf-node-labels-max-properties", "CRD schema maxProperties"},
	{"rf-node-taint-effect-required", "CRD schema required"},
	{"rf-node-taint-effect", "CRD CEL"},
	{"rf-node-taint-key-required", "CRD schema required"},
	{"rf-node-taints-max-items", "CRD schema maxItems"},
	{"rf-toleration-effect", "CRD CEL"},
	{"rf-toleration-empty-key-needs-exists", "CRD CEL"},
	{"rf-toleration-exists-no-value", "CRD CEL"},
	{"rf-toleration-operator", "CRD CEL"},
	{"rf-toleration-seconds-need-noexecute", "CRD CEL"},
	{"rf-tolerations-max-items", "CRD schema maxItems"},
	{"rf-topology-name-pattern", "CRD schema pattern"},
	{"rf-topology-needs-node-labels", "CRD CEL"},
	{"rf-webhook-node-labels", "webhook"},
	{"rf-webhook-taint-duplicate", "webhook"},
	{"rf-webhook-taint-key", "webhook"},
	{"rf-webhook-taint-value", "webhook"},
	{"rf-webhook-toleration-key", "webhook"},
	{"topology-hostname-lowest", "CRD CEL"},
	{"topology-levels-max-items", "CRD schema maxItems"},
	{"topology-levels-required", "CRD schema required"},
	{"topology-levels-unique", "CRD CEL"},
	{"topology-node-label-pattern", "CRD schema pattern"},
	{"workload-count-minimum", "CRD schema minimum"},
	{"workload-max-execution-time-minimum", "CRD schema minimum"},
	{"workload-min-count-le-count", "CRD CEL"},
	{"workload-min-count-minimum", "CRD schema minimum"},
	{"workload-pod-set-name-pattern", "CRD schema pattern"},
	{"workload-pod-sets-max-items", "CRD schema maxItems"},
	{"workload-pod-sets-min-items", "CRD schema minItems"},
	{"workload-priority-with-ref", "CRD CEL"},
	{"workload-ref-group-enum", "CRD schema enum"},
	{"workload-ref-kueue-kind", "CRD CEL"},
	{"workload-ref-scheduling-kind", "CRD CEL"},
	{"workload-webhook-one-min-count", "webhook"},
	{"workload-webhook-pods-reserved", "webhook"},
	{"wpc-description-max-length", "CRD schema maxLength"},
	{"wpc-value-required", "CRD schema required"},
}

func TestKueueValidationRules(t *testing.T) {
	files, err := filepath.Glob("../testdata/rules/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(rules) {
		t.Errorf("%d fixtures, %d rules: every rule has one fixture", len(files), len(rules))
	}
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			path := filepath.Join("..", "testdata", "rules", r.name+".yaml")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			header := strings.SplitN(string(data), "\n", 3)
			if len(header) < 3 || header[0] != "# "+r.source || !strings.HasPrefix(header[1], "# want: ") {
				t.Fatalf("fixture starts %q, want \"# %s\" then \"# want: ...\"", header[:2], r.source)
			}
			want := strings.TrimPrefix(header[1], "# want: ")
			objs, err := kueueconfig.Decode(path, data)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != 1 {
				t.Fatalf("%d objects, want 1", len(objs))
			}
			errs := kueueconfig.Validate(objs[0])
			if len(errs) == 0 {
				t.Fatalf("accepted; want %q", want)
			}
			if got := errs.ToAggregate().Error(); !strings.Contains(got, want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			// The importer refuses it, naming the object and the field.
			_, err = kueueconfig.Import(objs, kueueconfig.Options{})
			var oe *kueueconfig.ObjectError
			if !errors.As(err, &oe) || !errors.Is(err, kueueconfig.ErrInvalid) || !strings.Contains(err.Error(), objs[0].Name()+": ") {
				t.Errorf("Import: %v, want an *ObjectError naming %s", err, objs[0].Name())
			}
		})
	}
}

// TestValidObjectsPass holds the example manifests to Kueue's rules: each
// is accepted (a rule that refused valid objects would fail here).
func TestValidObjectsPass(t *testing.T) {
	objs, err := kueueconfig.ReadPaths("../testdata/seeds/training-cq-fixed.yaml", "../testdata/seeds/team-a.yaml", "../testdata/jobs/workload.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if errs := kueueconfig.Validate(o); len(errs) > 0 {
			t.Errorf("%s: %v", o.Name(), errs.ToAggregate())
		}
	}
}
