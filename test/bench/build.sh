#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the controller-runtime peer (appservice-peer) and the measuring tool (benchctl) from
# test/bench/peer through the Go module proxy, into a cache folder keyed by a hash of go.mod,
# go.sum and the sources. Prints that folder. A second run builds nothing.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=${APPSERVICE_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/appservice-operator}/bench
key=$(cd "$here/peer" && find . -name '*.go' -o -name go.mod -o -name go.sum | LC_ALL=C sort |
  xargs cat | sha256sum | cut -c1-12)
out=$root/peer-$key
if [ -x "$out/appservice-peer" ] && [ -x "$out/benchctl" ]; then echo "$out"; exit 0; fi

export PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "build.sh: Go is not installed (need go >= 1.26)" >&2; exit 1; }
mkdir -p "$out.tmp"
export GOFLAGS="${GOFLAGS:-} -mod=readonly -trimpath" CGO_ENABLED=0
start=$(date +%s)
(cd "$here/peer" && nice go build -ldflags "-s -w" -o "$out.tmp/appservice-peer" . &&
  nice go build -ldflags "-s -w" -o "$out.tmp/benchctl" ./benchctl)
rm -rf "$out" && mv "$out.tmp" "$out"
echo "build.sh: built in $(( $(date +%s) - start ))s into $out" >&2
echo "$out"
