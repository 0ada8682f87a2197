// Package kubetest is the harness of the kube module's integration tests:
// one real kube-apiserver and etcd per test package, started by
// controller-runtime's envtest library, with Kueue v0.17.0's CRDs
// installed.
//
// A test package starts it once, lazily, and stops it when its tests end:
//
//	func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		cfg := kubetest.Config(t) // the first call starts the API server
//		...
//	}
//
// The binaries come from KUBEBUILDER_ASSETS (a folder holding
// kube-apiserver and etcd) or, when it is unset, from the project's
// scripts/kube-assets.sh, which builds kube-apiserver from Kubernetes'
// published module once per machine (10 to 30 minutes) and caches it
// outside the clone. Kueue's CRDs are read from the module cache
// (config/components/crd/bases of the sigs.k8s.io/kueue this module
// requires) and applied server-side, as Kueue's install instructions
// say: the Workload CRD is too large for a client-side apply's
// last-applied annotation.
//
// When the API server cannot be had, Config fails the test, so that CI
// cannot pass without running the integration tests; with
// ALLOT_SKIP_KUBE=1 in the environment it skips it instead.
package kubetest
