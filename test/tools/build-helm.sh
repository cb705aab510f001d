#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the real helm CLI from its Go module (helm.sh/helm/v4, pinned here) through the Go module
# proxy into a cache folder, as test/controlplane/build.sh does for the control plane. Prints the
# binary's path. A second run builds nothing.
set -euo pipefail
HELM_VERSION=v4.3.2
root=${APPSERVICE_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/appservice-operator}/helm-$HELM_VERSION
if [ -x "$root/helm" ]; then echo "$root/helm"; exit 0; fi
export PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "build-helm.sh: Go is not installed" >&2; exit 1; }
mkdir -p "$root.tmp"
start=$(date +%s)
# helm reports its version from these variables (`helm version`).
GOBIN=$root.tmp CGO_ENABLED=0 nice go install -trimpath \
  -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
  "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
rm -rf "$root" && mv "$root.tmp" "$root"
echo "build-helm.sh: built helm $HELM_VERSION in $(( $(date +%s) - start ))s" >&2
echo "$root/helm"
