#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kit-soak.sh [PROCESSES] [REPEATS]: the test kit's shared control plane under parallel test
# binaries (docs/testing.md). Each repeat starts PROCESSES copies (default 8) of build/test/
# e2e_tests "[kit]~[private]" at once on the kit's own shared control plane (no $ASOP_CONTROLPLANE_DIR);
# REPEATS (default 20) times. A lock holder keeps the plane up between repeats, so the first
# process of the first repeat starts it and every other one attaches. Prints: failures, the most
# etcd and kube-apiserver processes seen at once, start and attach times, namespace ready times
# (p50, p95, max), garbage collection times; then stops the plane and checks no process is left.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
procs=${1:-8} repeats=${2:-20}
tests=${ASOP_E2E_TESTS:-$root/build/test/e2e_tests}
[ -x "$tests" ] || { echo "kit-soak: no $tests: build first" >&2; exit 2; }
export PATH=$PATH:/usr/local/go/bin
runtime=$(mktemp -d)
base=$runtime/asop-testing-$(id -u) dir=$runtime/asop-testing-$(id -u)/shared
mkdir -p "$base"
holder=""
cleanup() {
  [ -z "$holder" ] || kill "$holder" 2>/dev/null || true
  bash "$root/test/controlplane/down.sh" "$dir" --purge || true
  rm -rf "$runtime"
}
trap cleanup EXIT
# Holds a shared lock on users.lock: no test process sees itself as the last user.
flock -s "$base/users.lock" sleep infinity &
holder=$!

failures=0 most_etcd=0 most_apiservers=0
for r in $(seq 1 "$repeats"); do
  pids=()
  for p in $(seq 1 "$procs"); do
    env -u ASOP_CONTROLPLANE_DIR -u KUBECONFIG XDG_RUNTIME_DIR="$runtime" \
      ASOP_CONTROLPLANE_SCRIPTS="$root/test/controlplane" ASOP_TESTING_REQUIRE_CONTROLPLANE=1 \
      "$tests" "[kit]~[private]" >"$runtime/r$r-p$p.log" 2>&1 &
    pids+=($!)
  done
  while :; do
    running=0
    for pid in "${pids[@]}"; do [ -d "/proc/$pid" ] && running=$((running + 1)); done
    e=$(pgrep -fc "etcd --name default --data-dir $dir/etcd" || true)
    a=$(pgrep -fc "kube-apiserver.*$dir/" || true)
    [ "$e" -gt "$most_etcd" ] && most_etcd=$e
    [ "$a" -gt "$most_apiservers" ] && most_apiservers=$a
    [ "$running" = 0 ] && break
    sleep 0.5
  done
  for i in "${!pids[@]}"; do
    if ! wait "${pids[$i]}"; then
      failures=$((failures + 1))
      echo "repeat $r process $((i + 1)) failed: $runtime/r$r-p$((i + 1)).log"
      tail -n 30 "$runtime/r$r-p$((i + 1)).log"
    fi
  done
  echo "repeat $r/$repeats: $procs processes done, $failures failed so far"
done

figures() {  # PATTERN: the numbers (ms) it captures, sorted
  sed -n "s/$1/\1/p" "$runtime"/r*-p*.log | sort -n
}
pct() {  # P: the P-th percentile of stdin's sorted numbers
  awk -v p="$1" '{v[NR] = $1} END {if (NR == 0) {print "-"; exit} i = int((NR * p + 99) / 100); if (i < 1) i = 1; print v[i]}'
}
starts=$(figures '.*started the shared control plane in .* in \([0-9]*\) ms.*')
attaches=$(figures '.*attached to the shared control plane in .* in \([0-9]*\) ms.*')
namespaces=$(figures '.*namespace .* ready in \([0-9]*\) ms.*')
collected=$(figures '.*child collected \([0-9]*\) ms.*')
echo "kit soak: $procs processes x $repeats repeats, $(grep -h -o 'test cases: [0-9]*\|All tests passed ([0-9]* assertions in [0-9]* test cases)' "$runtime"/r*-p*.log | wc -l) binaries reported"
echo "  failures: $failures"
echo "  most processes at once: etcd $most_etcd, kube-apiserver $most_apiservers"
echo "  control plane started: $(echo "$starts" | tr '\n' ' ')ms"
echo "  attached: $(echo "$attaches" | grep -c .) times, p50 $(echo "$attaches" | pct 50) ms, p95 $(echo "$attaches" | pct 95) ms, max $(echo "$attaches" | pct 100) ms"
echo "  namespace ready: $(echo "$namespaces" | grep -c .) namespaces, p50 $(echo "$namespaces" | pct 50) ms, p95 $(echo "$namespaces" | pct 95) ms, max $(echo "$namespaces" | pct 100) ms"
echo "  child collected after its owner's deletion: p50 $(echo "$collected" | pct 50) ms, max $(echo "$collected" | pct 100) ms"
kill "$holder"; holder=""
bash "$root/test/controlplane/down.sh" "$dir" --purge
left=$(pgrep -fa -- "$runtime/" || true)
[ -z "$left" ] || { echo "left behind: $left"; exit 1; }
echo "  no process left behind"
[ "$failures" = 0 ]
