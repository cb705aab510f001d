#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the operator image: makes sure the base image exists (base-image.sh), then
# `docker build -t appservice-operator:dev .` from the repository root. Prints the image size and
# the build time. On this project's machines build containers reach Debian's mirror over the
# default bridge network; where they cannot (a proxy, a firewall, a DNS setup the bridge does not
# get), set DOCKER_BUILD_NETWORK=host to build with `--network host`.
#
# Environment: IMAGE (default appservice-operator:dev), DOCKER_BUILD_NETWORK (e.g. host),
# DOCKER_BUILD_ARGS (extra arguments, e.g. --no-cache), IMAGE_SOURCE (the repository's web address
# for the org.opencontainers.image.source label; default: the origin remote, see image-source.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
image=${IMAGE:-appservice-operator:dev}
bash "$root/test/docker/base-image.sh"
# The version is CMake's project version, the one place it is written.
version=$(sed -n 's/^project(appservice-operator VERSION \([0-9][0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[ -n "$version" ] || { echo "build-image.sh: no project version in CMakeLists.txt" >&2; exit 1; }
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
args=(-t "$image" --build-arg "VERSION=$version" --build-arg "REVISION=$revision")
# The source URL comes from IMAGE_SOURCE or the checkout's origin remote; without either the label
# is left off, not made up.
source_url=$(bash "$root/test/docker/image-source.sh" "$root")
[ -z "$source_url" ] || args+=(--label "org.opencontainers.image.source=$source_url")
[ -z "${DOCKER_BUILD_NETWORK:-}" ] || args+=(--network "$DOCKER_BUILD_NETWORK")
# shellcheck disable=SC2206 # word splitting of the extra arguments is intended
[ -z "${DOCKER_BUILD_ARGS:-}" ] || args+=($DOCKER_BUILD_ARGS)
start=$(date +%s)
docker build "${args[@]}" "$root" >&2
# Each rebuild after a source change leaves the previous build stage (~600 MB) and final image
# untagged: keep the newest build stage as cache, drop the rest.
stale=$(docker images -q --no-trunc --filter dangling=true --filter label=io.appservice-operator.stage=build | tail -n +2)
stale+=" $(docker images -q --no-trunc --filter dangling=true --filter label=io.appservice-operator.stage=final)"
for id in $stale; do docker rmi "$id" >/dev/null 2>&1 || true; done
size=$(docker image inspect -f '{{.Size}}' "$image")
echo "build-image.sh: $image built in $(( $(date +%s) - start )) s, $(awk -v s="$size" 'BEGIN {printf "%.1f MB (%d bytes)", s/1e6, s}') uncompressed" >&2
