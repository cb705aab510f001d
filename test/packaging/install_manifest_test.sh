#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dist/install.yaml is what deploy/build-installer.sh writes from deploy/ today: an edit of deploy/
# or crds/ without regenerating it fails here.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp /tmp/asop-install.XXXXXX)
trap 'rm -f "$tmp"' EXIT
bash "$root/deploy/build-installer.sh" "$tmp"
if ! diff -u "$root/dist/install.yaml" "$tmp" >/dev/null; then
  diff -u "$root/dist/install.yaml" "$tmp" | sed -n 1,40p
  echo "FAIL: dist/install.yaml is stale: run deploy/build-installer.sh and commit it" >&2
  exit 1
fi
echo "dist/install.yaml matches deploy/ ($(grep -c '^kind:' "$tmp") objects)"
