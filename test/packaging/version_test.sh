#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The version is written once, in CMakeLists.txt's project(): the manifests' app.kubernetes.io/version
# label (deploy/base/kustomization.yaml) and CHANGELOG.md's newest release must say the same, and
# every object kustomize renders from deploy/ carries the label. (--version and the image's OCI
# label are checked against the binary in e2e.docker_image_test.)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
version=$(sed -n 's/^project(appservice-operator VERSION \([0-9][0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[ -n "$version" ] || fail "no project(appservice-operator VERSION ...) in CMakeLists.txt"
label=$(sed -n 's/^ *app.kubernetes.io\/version: "\(.*\)"$/\1/p' "$root/deploy/base/kustomization.yaml")
[ "$label" = "$version" ] || fail "deploy/base/kustomization.yaml says '$label', CMakeLists.txt $version"
released=$(sed -n 's/^## \([0-9][0-9.]*\) .*/\1/p' "$root/CHANGELOG.md" | sed -n 1p)
[ "$released" = "$version" ] || fail "CHANGELOG.md's newest release is '$released', CMakeLists.txt $version"
rendered=$(kubectl kustomize "$root/deploy/base") || fail "kubectl kustomize deploy/base"
objects=$(grep -c '^kind:' <<<"$rendered")
labelled=$(grep -cE "^    app.kubernetes.io/version: \"?$version\"?$" <<<"$rendered" || true)
[ "$objects" -gt 0 ] && [ "$labelled" = "$objects" ] ||
  fail "$labelled of $objects objects from deploy/base carry app.kubernetes.io/version=$version"
echo "version $version: CMakeLists.txt, CHANGELOG.md and all $objects objects of deploy/base agree"
