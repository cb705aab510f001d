#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the linters a cluster admin runs over our manifests, kubeconform and kube-score, from their
# Go modules (pinned here) through the Go module proxy into a cache folder, as build-helm.sh does
# for helm. Prints the folder holding both binaries. A second run builds nothing.
set -euo pipefail
KUBECONFORM_VERSION=v0.8.0
KUBE_SCORE_VERSION=v1.20.0
root=${APPSERVICE_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/appservice-operator}/lint-tools-kubeconform-$KUBECONFORM_VERSION-kube-score-$KUBE_SCORE_VERSION
if [ -x "$root/kubeconform" ] && [ -x "$root/kube-score" ]; then echo "$root"; exit 0; fi
export PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "build-lint-tools.sh: Go is not installed" >&2; exit 1; }
mkdir -p "$root.tmp"
start=$(date +%s)
# kubeconform reports its version from main.version (`kubeconform -v`).
GOBIN=$root.tmp CGO_ENABLED=0 nice go install -trimpath -ldflags "-s -w -X main.version=$KUBECONFORM_VERSION" \
  "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION"
# kube-score reports its version from main.version (`kube-score version`).
GOBIN=$root.tmp CGO_ENABLED=0 nice go install -trimpath -ldflags "-s -w -X main.version=$KUBE_SCORE_VERSION" \
  "github.com/zegl/kube-score/cmd/kube-score@$KUBE_SCORE_VERSION"
rm -rf "$root" && mv "$root.tmp" "$root"
echo "build-lint-tools.sh: built kubeconform $KUBECONFORM_VERSION and kube-score $KUBE_SCORE_VERSION in $(( $(date +%s) - start ))s" >&2
echo "$root"
