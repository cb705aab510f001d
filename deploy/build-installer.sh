#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes dist/install.yaml, the one file a cluster admin applies (kubebuilder's `make
# build-installer`): everything `kubectl apply -k deploy/` applies (the CRD, the namespace, RBAC for
# the operator and for AppService users, the leader-elected Deployment), rendered by kustomize.
# unit.install_manifest fails while the committed file differs from what this writes.
#   deploy/build-installer.sh [OUT]    (default dist/install.yaml)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/dist/install.yaml}
version=$(sed -n 's/^project(appservice-operator VERSION \([0-9][0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
rendered=$(kubectl kustomize "$root/deploy")
mkdir -p "$(dirname "$out")"
{
  echo "# appservice-operator $version: kubectl apply -f install.yaml (generated from deploy/ by"
  echo "# deploy/build-installer.sh; do not edit). Uninstall: delete the AppServices first, while the"
  echo "# operator runs to remove their finalizers, then kubectl delete -f install.yaml (docs/deploy.md)."
  echo "$rendered"
} >"$out"
