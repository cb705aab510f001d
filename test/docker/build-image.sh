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
# for the org.opencontainers.image.source label; default: the origin remote, see image-source.sh),
# ASOP_CCACHE_SHARE (a ccache `file:` remote storage folder, as test/run-all.sh's Release build
# fills: it is served read-only on loopback port 61873, outside the ephemeral range, and the build
# stage reads it over `--network host`, so its compile is a cache hit; without it, or with the
# port taken, the build compiles as a user's does).
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
share_pid=""
trap '[ -z "$share_pid" ] || kill "$share_pid" 2>/dev/null || true' EXIT
if [ -n "${ASOP_CCACHE_SHARE:-}" ] && [ -d "$ASOP_CCACHE_SHARE" ] && command -v python3 >/dev/null &&
  [ "${DOCKER_BUILD_NETWORK:-host}" = host ] && [ -z "$(ss -Htan 'sport = :61873')" ]; then
  python3 -m http.server 61873 --bind 127.0.0.1 --directory "$ASOP_CCACHE_SHARE" >/dev/null 2>&1 &
  share_pid=$!
  for _ in $(seq 50); do
    curl -fsS -o /dev/null http://127.0.0.1:61873/ 2>/dev/null && break
    kill -0 "$share_pid" 2>/dev/null || break
    sleep 0.1
  done
  if curl -fsS -o /dev/null http://127.0.0.1:61873/ 2>/dev/null; then
    # A fixed value, so the build stage's layer cache keys stay the same from run to run.
    args+=(--build-arg "CCACHE_REMOTE=http://127.0.0.1:61873|read-only=true")
    [ -n "${DOCKER_BUILD_NETWORK:-}" ] || args+=(--network host)
    echo "build-image.sh: the build stage reads the compile cache in $ASOP_CCACHE_SHARE" >&2
  fi
fi
start=$(date +%s)
docker build "${args[@]}" "$root" >&2
# Each rebuild after a source change leaves the previous build stage (~600 MB) and final image
# untagged: keep the newest build stage as cache, drop the rest.
stale=$(docker images -q --no-trunc --filter dangling=true --filter label=io.appservice-operator.stage=build | tail -n +2)
stale+=" $(docker images -q --no-trunc --filter dangling=true --filter label=io.appservice-operator.stage=final)"
for id in $stale; do docker rmi "$id" >/dev/null 2>&1 || true; done
size=$(docker image inspect -f '{{.Size}}' "$image")
echo "build-image.sh: $image built in $(( $(date +%s) - start )) s, $(awk -v s="$size" 'BEGIN {printf "%.1f MB (%d bytes)", s/1e6, s}') uncompressed" >&2
