package cluster

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/allot-sched/allot/kube/internal/kubetest"
	"github.com/allot-sched/allot/kube/kueueconfig"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// TestAPIServer runs a Cluster against a real API server: the examples'
// objects created with client-go (Kueue's as v1beta2, as the importer
// converted them: without Kueue's conversion webhook the API server
// cannot convert v1beta1), then each step made by the API; after the
// informers deliver each change, the live snapshot equals a fresh import
// of the objects read back from the API server, and the admission probes
// answer as the configuration says.
func TestAPIServer(t *testing.T) {
	cl := kubetest.Client(t, kubetest.Config(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	objs := readExamples(t)
	kubetest.CreateAll(ctx, t, cl, kubetest.Objects(t, objs))
	c, err := New(kubetest.Config(t), Options{Log: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	kubetest.Run(ctx, t, "Run", c.Run)
	if !c.WaitForSync(ctx) {
		t.Fatal("not synced")
	}
	converge(ctx, t, "synced", c, cl)
	done := map[string]bool{}
	checkAdmission(t, c, done)
	for _, s := range exampleSteps() {
		cur := readObject(ctx, t, cl, s.object, objs)
		if s.delete {
			if err := cl.Delete(ctx, cur); err != nil {
				t.Fatalf("%s: delete %s: %v", s.name, s.object, err)
			}
		} else {
			next := s.edit(cur).(client.Object)
			if next.GetName() != cur.GetName() {
				kubetest.Create(ctx, t, cl, next)
			} else {
				kubetest.Update(ctx, t, cl, next)
			}
		}
		converge(ctx, t, s.name, c, cl)
		done[s.name] = true
		checkAdmission(t, c, done)
	}
	if st := c.Stats(); st.Rebuilds != 1 || st.Refused != 0 || st.Invalid != 0 {
		t.Fatalf("stats %+v, want the first snapshot's build only", st)
	}
}

// converge waits until the live snapshot is a fresh import of what the API
// server holds, and fails the test with the difference if it does not come.
func converge(ctx context.Context, t *testing.T, what string, c *Cluster, cl client.Client) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		objs := readBack(ctx, t, cl)
		got, want := canonical(t, c.Load().Builder()), freshImport(t, objs)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the live snapshot differs from a fresh import of the API server's objects:\n%s", what, lineDiff(want, got))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readObject reads the current version of one of the examples' objects.
func readObject(ctx context.Context, t *testing.T, cl client.Client, name string, objs []kueueconfig.Object) client.Object {
	t.Helper()
	for _, o := range objs {
		if o.Name() == name {
			obj := o.Value.(client.Object).DeepCopyObject().(client.Object)
			if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				t.Fatalf("get %s: %v", name, err)
			}
			return obj
		}
	}
	t.Fatalf("no example object %s", name)
	return nil
}

// readBack lists every kind a Cluster watches.
func readBack(ctx context.Context, t *testing.T, cl client.Client) []kueueconfig.Object {
	t.Helper()
	var out []kueueconfig.Object
	for _, l := range []client.ObjectList{&corev1.NamespaceList{}, &corev1.NodeList{}, &corev1.PodList{}, &batchv1.JobList{},
		&schedulingv1.PriorityClassList{}, &kueue.ResourceFlavorList{}, &kueue.TopologyList{}, &kueue.CohortList{},
		&kueue.ClusterQueueList{}, &kueue.LocalQueueList{}, &kueue.WorkloadPriorityClassList{}} {
		if err := cl.List(ctx, l); err != nil {
			t.Fatalf("list %T: %v", l, err)
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			t.Fatalf("items of %T: %v", l, err)
		}
		for _, v := range items {
			out = append(out, kueueconfig.Object{Source: source, Value: v})
		}
	}
	return out
}
