#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The image's org.opencontainers.image.source label (test/docker/image-source.sh): the checkout's
# origin remote as a browsable https URL, whatever form the remote takes, never with a credential;
# IMAGE_SOURCE wins; nothing (no label) for a remote that is a local path or for no remote.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
git -C "$repo" init -q
source_of() { env -u IMAGE_SOURCE bash "$root/test/docker/image-source.sh" "$repo"; }
[ -z "$(source_of)" ] || fail "no remote gave '$(source_of)'"
git -C "$repo" remote add origin /srv/git/appservice-operator
[ -z "$(source_of)" ] || fail "a local path gave '$(source_of)'"
want=https://github.com/acme/appservice-operator
for remote in https://github.com/acme/appservice-operator.git https://github.com/acme/appservice-operator \
  https://x-access-token:secret@github.com/acme/appservice-operator.git \
  git@github.com:acme/appservice-operator.git ssh://git@github.com/acme/appservice-operator.git \
  ssh://git@github.com:22/acme/appservice-operator; do
  git -C "$repo" remote set-url origin "$remote"
  got=$(source_of)
  [ "$got" = "$want" ] || fail "origin $remote gave '$got', want $want"
done
got=$(IMAGE_SOURCE=https://git.example.org/ops/asop bash "$root/test/docker/image-source.sh" "$repo")
[ "$got" = https://git.example.org/ops/asop ] || fail "IMAGE_SOURCE did not win: '$got'"
grep -q 'image-source.sh' "$root/test/docker/build-image.sh" || fail "build-image.sh does not use image-source.sh"
echo "the source label follows origin in 6 remote forms, IMAGE_SOURCE wins, a local path gives none"
