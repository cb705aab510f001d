#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pin-kubernetes.sh VERSION DIR: writes DIR/go.mod and go.sum that pin k8s.io/kubernetes at VERSION
# (its staging modules at the matching v0.x) with kube-apiserver, kube-controller-manager,
# kube-scheduler and kubectl as tools. How modules/kubernetes-v1.*/ were made; rerun for a new patch.
set -euo pipefail
ver=$1; dir=$2; staging=v0.${ver#v1.}
export PATH=/usr/local/go/bin:$PATH GOFLAGS=-mod=mod
mkdir -p "$dir"; cd "$dir"; rm -f go.mod go.sum
src=$(go mod download -json "k8s.io/kubernetes@$ver" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
gover=$(sed -n 's/^go //p' "$src/go.mod")
{
  echo "// Pins the Kubernetes $ver control-plane binaries and kubectl used by the tests. Built by ../../build.sh."
  echo "module appservice-operator/controlplane/kubernetes"
  echo; echo "go $gover"; echo
  echo "require k8s.io/kubernetes $ver"; echo
  echo "tool ("
  for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do echo "	k8s.io/kubernetes/cmd/$c"; done
  echo ")"; echo; echo "replace ("
  sed -n '/^replace (/,/^)/p' "$src/go.mod" | sed -n 's#^\t\(k8s.io/[a-z0-9-]*\) => ./staging.*#\t\1 => \1 '"$staging"'#p'
  echo ")"
} > go.mod
go mod tidy
