#!/usr/bin/env bash
# Makes a folder holding a real kube-apiserver and etcd, for the bridge's
# integration tests (controller-runtime's envtest reads it from
# KUBEBUILDER_ASSETS), and prints its path.
#
#   kube-apiserver: built from Kubernetes' published module by the nested
#     module tools/kube-apiserver, into a cache outside the clone named by
#     version (ALLOT_CACHE, default ~/.cache/allot). A machine that built it
#     once pays nothing; a fresh one pays the build (10 to 30 minutes on two
#     cores).
#   etcd: Debian's etcd-server package, installed with apt-get when no etcd
#     is on the machine (it starts no daemon; the tests start their own).
#     Nothing else is installed.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
version=v1.37.2
cache="${ALLOT_CACHE:-$HOME/.cache/allot}"
assets="$cache/kube-assets-$version"
mkdir -p "$assets"

if [ ! -x "$assets/kube-apiserver" ]; then
  echo "building kube-apiserver $version into $assets (once per machine)" >&2
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags="$ldflags -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=37"
  done
  (cd "$here/tools/kube-apiserver" && go build -trimpath -ldflags "$ldflags" -o "$assets/kube-apiserver.tmp" .)
  mv "$assets/kube-apiserver.tmp" "$assets/kube-apiserver"
fi

if [ ! -x "$assets/etcd" ]; then
  etcd="$(command -v etcd || true)"
  if [ -z "$etcd" ]; then
    echo "installing Debian's etcd-server (the integration tests' etcd)" >&2
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
    $sudo apt-get install -y etcd-server >&2 || { $sudo apt-get update >&2 && $sudo apt-get install -y etcd-server >&2; }
    etcd="$(command -v etcd)"
  fi
  ln -sf "$etcd" "$assets/etcd"
fi

echo "$assets"
