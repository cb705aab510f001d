#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# down.sh DIR: stops every process up.sh started for DIR and returns once none of them exists any
# more (not even as a zombie). Keeps DIR (logs, data) for inspection; --purge deletes it too.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: $0 DIR [--purge]" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -d "$1" ] || exit 0
dir=$(cd "$1" && pwd)
source "$here/lib.sh"

# Reverse start order: clients first, etcd last.
pids=()
for name in kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
  if alive "$name" "$dir"; then
    pid=$(cat "$dir/run/$name.pid")
    kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
  fi
  rm -f "$dir/run/$name.pid"
done
deadline=$(( $(date +%s) + 20 ))
for pid in "${pids[@]}"; do
  while [ -d "/proc/$pid" ]; do
    [ "$(date +%s)" -ge "$deadline" ] && kill -KILL "$pid" 2>/dev/null
    sleep 0.1
  done
done
[ "${2:-}" = "--purge" ] && rm -rf "$dir"
exit 0
