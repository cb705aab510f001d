#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The API server is stopped for 30 s on the fault test's own control plane, with AppServices
# created, edited and deleted right before the stop and right after the restart. The operator must
# survive (same PID), back off instead of hot-looping during the outage, and then converge every
# AppService and leave no children of deleted ones.
# ctest: processors 2
# ctest: asan
source "$(dirname "$0")/lib.sh"
own_controlplane
start_operator main
pid=$OP_PID_main
log=$OP_LOG_DIR/main.log

for a in a1 a2 a3; do app $a 1 nginx:1.27; done
for a in a1 a2 a3; do eventually 60 converged $a nginx:1.27; done

# Changes right before the stop: whether the operator saw them or not, they must end up done.
app b1 1 nginx:1.27
app a1 1 nginx:1.28
k delete appservice a2 --wait=false >/dev/null
lines_before=$(wc -l < "$log")
stop_apiserver
down_at=$(date +%s)
while [ $(( $(date +%s) - down_at )) -lt 30 ]; do
  running "$pid" || fail "operator died during the outage"
  sleep 1
done
outage_log=$(tail -n +"$(( lines_before + 1 ))" "$log")
retries=$(grep -c 'retrying in' <<<"$outage_log" || true)
outage_lines=$(wc -l <<<"$outage_log")
start_apiserver
up_ms=$(now_ms)

# Changes right after the restart.
app c1 1 nginx:1.27
app b1 2 nginx:1.29
k delete appservice a3 --wait=false >/dev/null

for a in a1:nginx:1.28 b1:nginx:1.29 c1:nginx:1.27; do eventually 120 converged "${a%%:*}" "${a#*:}"; done
for a in a2 a3; do eventually 120 gone $a; done
recover_ms=$(( $(now_ms) - up_ms ))
[ "$(k get deployment b1 -o jsonpath='{.spec.replicas}')" = 2 ] || fail "b1 not scaled to 2"
running "$pid" || fail "operator crashed (PID $pid is gone)"
leaked=$(leaks)
[ "$leaked" = 0 ] || fail "$leaked leaked children"
[ "$(stuck_finalizers)" = 0 ] || fail "finalizer stuck"

# Backoff, not a hot loop: three informers at client-go's 0.8 s..30 s exponential backoff retry
# about 5 times each in 30 s (0.8+1.6+3.2+6.4+12.8); allow 3x that, and bound the whole log of the
# outage too. 30 s is enough to see the delays double; a longer outage only waits at the cap.
informers=$(grep -o 'informer="[^"]*" retrying' <<<"$outage_log" | sort -u | wc -l)
[ "$informers" -ge 1 ] || fail "no informer reported the outage: $outage_log"
[ "$retries" -le $(( informers * 15 )) ] || fail "$retries informer retries in 30 s: hot loop"
[ "$outage_lines" -le 150 ] || fail "$outage_lines log lines in 30 s of outage: hot loop"

requests=$(metric "$OP_METRICS_main" rest_client_requests_total)
errors=$(metric "$OP_METRICS_main" controller_runtime_reconcile_errors_total)
echo "figures: recover=$(secs "$recover_ms") requests=$requests errors=$errors leaks=$leaked outage_retries=$retries (over $informers informers) outage_log_lines=$outage_lines"
echo "PASS: apiserver_down"
