#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# unit.architecture: the tree follows docs/architecture.md's Rooms table, and the check fails when
# it does not (an include across a line, a circle, a folder without a row).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bash "$here/check_arrows.sh" "$root"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect_refused() {  # WHAT TEXT: the check must fail on the copy and name TEXT
  local what=$1 text=$2 out
  if out=$(bash "$here/check_arrows.sh" "$tmp"); then
    echo "FAIL: check_arrows passed a tree with $what"; exit 1
  fi
  grep -qF -- "$text" <<<"$out" || { echo "FAIL: $what: no '$text' in: $out"; exit 1; }
  echo "ok: refused $what"
}
fresh_copy() { rm -rf "$tmp"/*; mkdir -p "$tmp/docs"; cp -r "$root/src" "$tmp/"; cp "$root/docs/architecture.md" "$tmp/docs/"; }

fresh_copy
echo '#include "kube/http/http_transport.h"' >>"$tmp/src/ctrl/queue/work_queue.cpp"
expect_refused "a queue include of the transport" "src/ctrl/queue/ may not use src/kube/http/"

fresh_copy
echo '#include "ctrl/base/clock.h"' >>"$tmp/src/kube/core/url_query.cpp"
expect_refused "an arrow back up from kube to ctrl" "src/kube/core/ may not use src/ctrl/base/"

fresh_copy
sed -i 's#^| `src/kube/core/` |\(.*\)| `src/asop/` |$#| `src/kube/core/` |\1| `src/asop/`, `src/kube/api/` |#' "$tmp/docs/architecture.md"
expect_refused "a circle in the table" "src/kube/core/ may use src/kube/api/, which is not a row above it"

fresh_copy
mkdir -p "$tmp/src/ctrl/stray" && echo '// nothing' >"$tmp/src/ctrl/stray/x.cpp"
expect_refused "a folder without a row" "its folder src/ctrl/stray/ has no row"

fresh_copy
sed -i 's#^// src/kube/config/, src/kube/core/ (the Rooms#// src/kube/config/ (the Rooms#' "$tmp/src/kube/http/http_transport.h"
expect_refused "a Room comment that disagrees with the table" "its Room comment says src/kube/http/ may use (kube/config), the table says (kube/config, kube/core)"
