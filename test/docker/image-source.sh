#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prints the URL for the image's org.opencontainers.image.source label: $IMAGE_SOURCE when set,
# else the git remote `origin` of the checkout as a browsable https URL (an scp-like
# git@host:owner/repo.git or ssh:// remote becomes https://host/owner/repo; a token in an https
# remote is dropped). Prints nothing when neither names a web address (a clone of a local path, no
# remote): the label is then left off rather than made up.
#
#   test/docker/image-source.sh [CHECKOUT]
set -euo pipefail
dir=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
if [ -n "${IMAGE_SOURCE:-}" ]; then
  printf '%s\n' "$IMAGE_SOURCE"
  exit 0
fi
url=$(git -C "$dir" remote get-url origin 2>/dev/null) || exit 0
case $url in
  https://* | http://*) url=$(sed -E 's#^(https?://)[^/@]*@#\1#' <<<"$url") ;;
  ssh://*) url=$(sed -E 's#^ssh://([^@/]*@)?([^/:]*)(:[0-9]+)?/#https://\2/#' <<<"$url") ;;
  *@*:*) url=$(sed -E 's#^[^@]*@([^:]*):#https://\1/#' <<<"$url") ;;
  *) exit 0 ;;
esac
printf '%s\n' "${url%.git}"
