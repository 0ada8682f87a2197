package kubetest

import (
	"context"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestResourceFlavor proves the harness: the API server serves Kueue's
// v1beta2 ResourceFlavor and lists back what was created, its CRD's schema
// refuses what Kueue refuses, and the Workload CRD (applied server-side)
// is served.
func TestResourceFlavor(t *testing.T) {
	c := Client(t, Config(t))
	ctx := context.Background()
	rf := &kueue.ResourceFlavor{
		ObjectMeta: metav1.ObjectMeta{Name: "kubetest-a100"},
		Spec:       kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"gpu": "a100"}},
	}
	if err := c.Create(ctx, rf); err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, rf) })
	var list kueue.ResourceFlavorList
	if err := c.List(ctx, &list); err != nil {
		t.Fatalf("list: %v", err)
	}
	found := false
	for _, it := range list.Items {
		if it.Name == rf.Name {
			found = true
			if it.Spec.NodeLabels["gpu"] != "a100" {
				t.Errorf("nodeLabels = %v, want gpu=a100", it.Spec.NodeLabels)
			}
		}
	}
	if !found {
		t.Fatalf("ResourceFlavor %s not listed among %d", rf.Name, len(list.Items))
	}
	// The CRD's schema allows at most 8 nodeLabels.
	bad := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "kubetest-bad"}, Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{}}}
	for i := range 9 {
		bad.Spec.NodeLabels[fmt.Sprintf("l%d", i)] = "v"
	}
	if err := c.Create(ctx, bad, client.DryRunAll); err == nil {
		t.Errorf("a ResourceFlavor with 9 nodeLabels was accepted")
	}
	var wls kueue.WorkloadList
	if err := c.List(ctx, &wls); err != nil {
		t.Fatalf("workloads: %v", err)
	}
	var nss corev1.NamespaceList
	if err := c.List(ctx, &nss); err != nil || len(nss.Items) == 0 {
		t.Fatalf("namespaces: %v (%d)", err, len(nss.Items))
	}
}
