// Command kube-apiserver is Kubernetes' API server, built from its published
// module so the bridge's integration tests run against the real thing. It is
// a module of its own, outside every module the project's users import:
// k8s.io/kubernetes pins its k8s.io dependencies with replace directives,
// which would pin theirs too. scripts/kube-assets.sh builds it into a cache
// outside the clone.
package main

import (
	"os"
	_ "time/tzdata"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
