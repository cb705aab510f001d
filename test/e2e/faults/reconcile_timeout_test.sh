#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --reconcile-timeout through the binary, as controller-runtime's ReconciliationTimeout: each
# reconcile's API requests carry its deadline. With 1 ms, no reconcile that writes can finish in
# time (one PATCH is a TLS round trip, admission and an etcd write): its request is cut with
# "deadline exceeded", the overrun is counted in controller_runtime_reconcile_timeouts_total, and
# the key is retried with the error backoff (no hot loop), while the operator stays healthy. The
# same AppServices then converge under an operator started without the flag. Only the operator is
# disturbed, so this runs on the shared control plane.
source "$(dirname "$0")/lib.sh"
shared_controlplane fault-timeout
start_operator main --namespace "$ns" --reconcile-timeout 1ms
pid=$OP_PID_main
log=$OP_LOG_DIR/main.log
app t1 1 nginx:1.27
app t2 1 nginx:1.27
timeouts() { metric "$OP_METRICS_main" controller_runtime_reconcile_timeouts_total; }
at_least_two_timeouts() { [ "$(timeouts)" -ge 2 ]; }
eventually 30 at_least_two_timeouts
grep -q 'reconcile timed out after [0-9]* ms (--reconcile-timeout 1 ms)' "$log" ||
  fail "no log line for the overrun: $(tail -n 20 "$log")"
grep -q 'deadline exceeded' "$log" || fail "no request was cut at the deadline: $(tail -n 20 "$log")"
# Backoff, not a hot loop: 20 s of per-key error backoff (5 ms doubling) is about 12 tries per key.
t0=$(metric "$OP_METRICS_main" controller_runtime_reconcile_total)
sleep_until=$(( $(date +%s) + 20 ))
while [ "$(date +%s)" -lt "$sleep_until" ]; do running "$pid" || fail "operator died"; sleep 1; done
t1=$(metric "$OP_METRICS_main" controller_runtime_reconcile_total)
tries=$(( t1 - t0 ))
[ "$tries" -le 40 ] || fail "$tries reconciles in 20 s with every one timing out: not backing off"
code=$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$OP_HEALTH_main/readyz" || true)
[ "$code" = 200 ] || fail "/readyz answered $code: a reconcile timeout is not a health problem"
overruns=$(timeouts)
stop_operator "$pid" TERM || fail "the operator did not exit 0 on SIGTERM"

# Without the flag the same AppServices converge, and nothing times out.
start_operator plain --namespace "$ns"
for a in t1 t2; do eventually 90 converged $a nginx:1.27; done
[ "$(metric "$OP_METRICS_plain" controller_runtime_reconcile_timeouts_total)" = 0 ] ||
  fail "timeouts counted without --reconcile-timeout"
echo "figures: timeouts=$overruns reconciles_in_20s=$tries"
echo "PASS: reconcile_timeout"
