#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test kit's shared control plane (docs/testing.md): two test binaries started at once with no
# control plane given (no $ASOP_CONTROLPLANE_DIR) start exactly one (one etcd, one kube-apiserver)
# under the kit's file lock, both pass their kit cases on it (a namespace that really goes, the
# garbage collector, requeue_after(1h) at advance(1h) 100 times), and when the last one exits the
# control plane is stopped: no process of it is left. Then the [private] cases: an API server restart
# and an etcd compaction, each on a control plane of its own, removed at the end.
# ctest: processors 2
# ctest: timeout 900
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
tests=$(dirname "${ASOP_BINARY:?}")/test/e2e_tests
[ -x "$tests" ] || fail "no e2e_tests binary at $tests"
runtime=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  # Whatever a failed run left: stop it, so no process outlives the test.
  bash test/controlplane/down.sh "$runtime/asop-testing-$(id -u)/shared" --purge || true
  rm -rf "$runtime"
}
trap cleanup EXIT

kit() {  # LOG TEST-SPEC: one test binary on the kit's own shared control plane
  env -u ASOP_CONTROLPLANE_DIR -u KUBECONFIG XDG_RUNTIME_DIR="$runtime" \
    ASOP_CONTROLPLANE_SCRIPTS="$ASOP_SOURCE_DIR/test/controlplane" ASOP_TESTING_REQUIRE_CONTROLPLANE=1 \
    "$tests" "$2" >"$runtime/$1" 2>&1
}
kit a.log "kit: deleting an owner removes its child (the garbage collector runs)" & pids+=($!)
kit b.log "kit: requeue_after(1h) runs again at advance(1h)*" & pids+=($!)  # "," splits specs

dir=$runtime/asop-testing-$(id -u)/shared
count() { pgrep -fc -- "$1" || true; }
both_running() { [ -d "/proc/${pids[0]}" ] && [ -d "/proc/${pids[1]}" ]; }
up() { [ "$(count "kube-apiserver.*$dir/")" -ge 1 ]; }
eventually 300 up
etcds=$(count "etcd --name default --data-dir $dir/etcd") apiservers=$(count "kube-apiserver.*$dir/")
[ "$etcds" = 1 ] && [ "$apiservers" = 1 ] || fail "the two binaries run $etcds etcd and $apiservers kube-apiserver processes, want 1 each"
echo "ok: one etcd and one kube-apiserver for both test binaries$(both_running && echo ', both running')"

for i in 0 1; do
  code=0; wait "${pids[$i]}" || code=$?
  log=$runtime/$([ $i = 0 ] && echo a || echo b).log
  [ "$code" = 0 ] || { cat "$log"; fail "kit test binary $i exited $code"; }
  grep -F "All tests passed" "$log" >/dev/null || { cat "$log"; fail "kit test binary $i ran no test"; }
done
pids=()
echo "ok: both test binaries passed on the shared control plane"
sed -n 's/.*\(100 rounds of advance(1h) in [0-9]* ms of real time\).*/\1/p; s/.*\(child collected [0-9]* ms.*\)/\1/p' \
  "$runtime/a.log" "$runtime/b.log"

gone() { [ "$(count "$dir/")" = 0 ]; }
eventually 30 gone || fail "processes of the shared control plane outlived its last user: $(pgrep -fa -- "$dir/")"
[ ! -e "$dir" ] || fail "the shared control plane's folder $dir was left behind"
echo "ok: the last test binary to exit stopped the shared control plane: no process left"

# Private control planes (ControlPlane::start_private): an API server restart and an etcd
# compaction, each on a control plane of the test's own, removed when the test ends.
kit private.log "[private]" || { cat "$runtime/private.log"; fail "the [private] kit cases failed"; }
grep -F "All tests passed" "$runtime/private.log" >/dev/null || { cat "$runtime/private.log"; fail "no [private] case ran"; }
sed -n 's/.*\(started a private control plane\).* in \([0-9]* ms\)/\1 in \2/p' "$runtime/private.log"
left=$(pgrep -fa -- "$runtime/" || true)
[ -z "$left" ] || fail "processes of the private control planes outlived their tests: $left"
[ -z "$(find "$runtime/asop-testing-$(id -u)" -maxdepth 1 -name 'private-*')" ] || fail "a private control plane's folder was left behind"
echo "ok: an API server restart and an etcd compaction on private control planes; nothing left"
