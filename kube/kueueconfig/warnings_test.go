package kueueconfig_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/allot-sched/allot/kube/kueueconfig"
)

const flavor = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: f
---
`

func cqYAML(extra string) string {
	return flavor + `apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq
spec:
  cohortName: co
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: f
      resources:
      - name: cpu
        nominalQuota: 8
` + extra
}

// TestWarnings holds every warned decision to a warning naming the object
// and the field.
func TestWarnings(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"admission checks", cqYAML("  admissionChecksStrategy:\n    admissionChecks:\n    - name: prov\n"),
			"clusterqueues/cq: spec.admissionChecksStrategy: not modelled: admission checks are not run"},
		{"hold and drain", cqYAML("  stopPolicy: HoldAndDrain\n"), "clusterqueues/cq: spec.stopPolicy: HoldAndDrain: held"},
		{"preference", cqYAML("  flavorFungibility:\n    whenCanBorrow: TryNextFlavor\n    whenCanPreempt: TryNextFlavor\n    preference: PreemptionOverBorrowing\n"),
			"clusterqueues/cq: spec.flavorFungibility.preference: PreemptionOverBorrowing not modelled"},
		{"admission scope", cqYAML("  admissionScope:\n    admissionMode: UsageBasedAdmissionFairSharing\n"),
			"clusterqueues/cq: spec.admissionScope: UsageBasedAdmissionFairSharing not modelled"},
		{"no namespace selector", strings.Replace(cqYAML(""), "  namespaceSelector: {}\n", "", 1),
			"clusterqueues/cq: spec.namespaceSelector: not set: Kueue admits workloads from no namespace"},
		{"selector matches nothing", strings.Replace(cqYAML(""), "  namespaceSelector: {}\n", "  namespaceSelector:\n    matchLabels: {team: x}\n", 1),
			"clusterqueues/cq: spec.namespaceSelector: team=x selects none of the 0 namespaces read: nothing is admitted"},
		{"flavor not found", strings.Replace(cqYAML(""), "    - name: f\n", "    - name: missing\n", 1),
			`clusterqueues/cq: spec.resourceGroups[0].flavors[0].name: ResourceFlavor "missing" not found: Kueue keeps the ClusterQueue inactive (FlavorNotFound); held`},
		{"local queue fair sharing", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec:\n  clusterQueue: cq\n  fairSharing: {weight: 2}\n",
			"localqueues/ns/lq: spec.fairSharing: not modelled"},
		{"local queue drain", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec:\n  clusterQueue: cq\n  stopPolicy: HoldAndDrain\n",
			"localqueues/ns/lq: spec.stopPolicy: HoldAndDrain"},
		{"admission check object", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {name: prov}\nspec:\n  controllerName: x\n",
			"admissionchecks/prov: not modelled: admission checks are not run"},
		{"limit range", "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr, namespace: ns}\nspec: {}\n",
			"limitranges/ns/lr: not modelled: its container defaults are not applied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := kueueconfig.Decode(tc.name, []byte(flavor+tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			c, err := kueueconfig.Import(objs, kueueconfig.Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, warns, err := c.Builder()
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, w := range warns {
				if strings.Contains(w.String(), tc.want) {
					return
				}
				all = append(all, w.String())
			}
			t.Errorf("no warning %q among\n%s", tc.want, strings.Join(all, "\n"))
		})
	}
}

// TestRefusals holds what allot cannot represent without changing the
// answer to an error naming the object and the field.
func TestRefusals(t *testing.T) {
	twoGroups := flavor + `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: g
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: f
      resources: [{name: cpu, nominalQuota: 8}]
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: g
      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
`
	twoGPUs := strings.Replace(cqYAML(""), "[cpu]", "[nvidia.com/gpu, amd.com/gpu]", 1)
	twoGPUs = strings.Replace(twoGPUs, "      - name: cpu\n        nominalQuota: 8\n", "      - {name: nvidia.com/gpu, nominalQuota: 8}\n      - {name: amd.com/gpu, nominalQuota: 8}\n", 1)
	unknownField := strings.Replace(cqYAML(""), "  cohortName: co\n", "  cohortName: co\n  colour: blue\n", 1)
	for _, tc := range []struct{ name, yaml, want string }{
		{"second resource group", twoGroups, "clusterqueues/cq: spec.resourceGroups[1]: Forbidden: not modelled: a second resource group"},
		{"two GPU resources", twoGPUs, "clusterqueues/cq: spec.resourceGroups: Forbidden: not modelled: amd.com/gpu and nvidia.com/gpu both look like GPUs"},
		{"unknown field", unknownField, `clusterqueues/cq: unknown field "spec.colour"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := kueueconfig.Decode(tc.name, []byte(tc.yaml))
			if err == nil {
				_, err = kueueconfig.Import(objs, kueueconfig.Options{})
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if tc.name != "unknown field" && !errors.Is(err, kueueconfig.ErrNotModelled) {
				t.Errorf("%v is not ErrNotModelled", err)
			}
		})
	}
}
