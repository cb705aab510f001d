#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The version is written once, in CMakeLists.txt's project(): the manifests' app.kubernetes.io/version
# label (deploy/labels/kustomization.yaml) and CHANGELOG.md's newest release must say the same, and
# every object kustomize renders from deploy/base, deploy/ and each overlay (the CRD, the
# components' objects and shard-b included) carries it and app.kubernetes.io/name, so
# `-l app.kubernetes.io/name=appservice-operator` finds everything an install made. (--version and the image's OCI
# label are checked against the binary in e2e.docker_image_test.)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
version=$(sed -n 's/^project(appservice-operator VERSION \([0-9][0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[ -n "$version" ] || fail "no project(appservice-operator VERSION ...) in CMakeLists.txt"
label=$(sed -n 's/^ *app.kubernetes.io\/version: "\(.*\)"$/\1/p' "$root/deploy/labels/kustomization.yaml")
[ "$label" = "$version" ] || fail "deploy/labels/kustomization.yaml says '$label', CMakeLists.txt $version"
released=$(sed -n 's/^## \([0-9][0-9.]*\) .*/\1/p' "$root/CHANGELOG.md" | sed -n 1p)
[ "$released" = "$version" ] || fail "CHANGELOG.md's newest release is '$released', CMakeLists.txt $version"
total=0
for dir in deploy/base deploy deploy/monitored deploy/cert-managed deploy/shards; do
  rendered=$(kubectl kustomize "$root/$dir") || fail "kubectl kustomize $dir"
  objects=$(grep -c '^kind:' <<<"$rendered")
  unlabelled=$(yq -r --arg v "$version" 'select(. != null)
    | select(.metadata.labels["app.kubernetes.io/name"] != "appservice-operator"
             or .metadata.labels["app.kubernetes.io/version"] != $v)
    | "\(.kind)/\(.metadata.name)"' <<<"$rendered")
  [ "$objects" -gt 0 ] && [ -z "$unlabelled" ] ||
    fail "$dir: without app.kubernetes.io/name=appservice-operator and app.kubernetes.io/version=$version:" $unlabelled
  total=$((total + objects))
done
echo "version $version: CMakeLists.txt, CHANGELOG.md and the $total objects of deploy/base, deploy/ and its overlays agree"
