#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Network blackhole: test/tools/blackhole_proxy sits between the operator and the API server and
# stops forwarding for 100 s without closing anything (connections stay established, TCP
# keepalive is still answered). AppServices are created, edited and deleted meanwhile. The operator
# must notice every dead watch within the documented bound (90 s: the API server sends a bookmark
# every minute, docs/architecture.md), stay healthy, and reconcile the changes once traffic flows.
# Only the operator's network is disturbed, so this runs on the shared control plane.
# No ASan twin: the fault is a timer (the idle deadline) and a reconnect, which every other fault
# test also drives; a second run under ASan only adds its 90 s of waiting.
source "$(dirname "$0")/lib.sh"
shared_controlplane fault-blackhole
blackhole_s=100 bound_s=90
start_proxy
start_operator main --namespace "$ns"
pid=$OP_PID_main
log=$OP_LOG_DIR/main.log
informers=$(grep -c 'informer=".*" synced' "$log")
[ "$informers" -ge 3 ] || fail "expected 3 informers, the log shows $informers"

for a in a1 a2 a3; do app $a 1 nginx:1.27; done
for a in a1 a2 a3; do eventually 60 converged $a nginx:1.27; done

lines_before=$(wc -l < "$log")
proxy stall >/dev/null
stall_ms=$(now_ms)
# Changes the operator cannot see until traffic flows again (kubectl bypasses the proxy).
app b1 1 nginx:1.27
app a1 1 nginx:1.28
k delete appservice a2 --wait=false >/dev/null

# Every informer notices its silent watch within the bound; the process stays up and healthy.
idle_lines() { tail -n +"$(( lines_before + 1 ))" "$log" | grep 'watch idle, reconnecting' || true; }
noticed() { [ "$(idle_lines | grep -o 'informer="[^"]*"' | sort -u | wc -l)" -ge "$informers" ]; }
until noticed; do
  [ $(( $(now_ms) - stall_ms )) -lt $(( (bound_s + 10) * 1000 )) ] ||
    fail "not every watch noticed the blackhole within ${bound_s}s: $(idle_lines)"
  running "$pid" || fail "operator died during the blackhole"
  sleep 0.5
done
detect_ms=0
while read -r line; do
  t=$(( $(glog_ms "$line") - stall_ms ))
  [ "$t" -gt "$detect_ms" ] && detect_ms=$t
done < <(idle_lines | sort -u -t'"' -k2,2)
# The deadline runs from the last byte before the stall, so 90 s is the worst case; 2 s more for
# the timer and the log line on a loaded machine.
[ "$detect_ms" -le $(( bound_s * 1000 + 2000 )) ] ||
  fail "a watch took $(secs "$detect_ms") to notice the blackhole (bound ${bound_s}s)"
while [ $(( $(now_ms) - stall_ms )) -lt $(( blackhole_s * 1000 )) ]; do
  running "$pid" || fail "operator died during the blackhole"
  curl -fsS --max-time 5 "127.0.0.1:$OP_HEALTH_main/healthz" >/dev/null ||
    fail "/healthz failed during the blackhole"
  sleep 1
done
proxy flow >/dev/null
flow_ms=$(now_ms)

for a in a1:nginx:1.28 b1:nginx:1.27 a3:nginx:1.27; do eventually 120 converged "${a%%:*}" "${a#*:}"; done
eventually 120 gone a2
recover_ms=$(( $(now_ms) - flow_ms ))
running "$pid" || fail "operator crashed (PID $pid is gone)"
leaked=$(leaks)
[ "$leaked" = 0 ] || fail "$leaked leaked children"
[ "$(stuck_finalizers)" = 0 ] || fail "finalizer stuck"

requests=$(metric "$OP_METRICS_main" rest_client_requests_total)
errors=$(metric "$OP_METRICS_main" controller_runtime_reconcile_errors_total)
echo "figures: recover=$(secs "$recover_ms") (after ${blackhole_s}s of blackhole) detection=$(secs "$detect_ms") (slowest of $informers watches; bound ${bound_s}s) requests=$requests errors=$errors leaks=$leaked"
echo "PASS: blackhole"
