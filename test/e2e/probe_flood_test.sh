#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The probe port survives a client that holds every connection slot: 500 connections opened and
# held (some with half a request), then a loop that keeps opening more while the kubelet's probes
# run. Every /healthz and /readyz answers 200 within a second; the operator keeps reconciling.
# Prints the probes' latency under the flood.
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
new_namespace flood
churn_pid=""
cleanup() {
  if [ -n "$churn_pid" ]; then kill "$churn_pid" 2>/dev/null || true; wait "$churn_pid" 2>/dev/null || true; fi
  stop_all_operators
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
[ "$(ulimit -n)" -ge 1100 ] || ulimit -n 4096 2>/dev/null || true

start_operator flood --namespace "$ns"
port=$OP_HEALTH_flood

# 500 connections held open by this shell; every tenth sends half a request line.
held=0
for i in $(seq 500); do
  exec {fd}<>"/dev/tcp/127.0.0.1/$port" || continue
  [ $((i % 10)) -ne 0 ] || printf 'GET /heal' >&"$fd" 2>/dev/null || true
  held=$((held + 1))
done
# And keeps opening more, 20 at a time, for as long as the probes run.
(
  while :; do
    fds=()
    for _ in $(seq 20); do exec {f}<>"/dev/tcp/127.0.0.1/$port" 2>/dev/null && fds+=("$f"); done
    for f in "${fds[@]}"; do exec {f}>&-; done
  done
) &
churn_pid=$!

latencies=()
for _ in $(seq 20); do
  for path in /healthz /readyz; do
    out=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 1 "http://127.0.0.1:$port$path") ||
      fail "$path did not answer within a second under the flood ($out)"
    [ "${out%% *}" = 200 ] || fail "$path answered ${out%% *} under the flood"
    latencies+=("${out#* }")
  done
done
sample_app | kubectl apply -n "$ns" -f - >/dev/null
eventually 120 kubectl wait -n "$ns" appservice/nginx-app --for condition=Available --timeout=5s
kill -0 "$OP_PID_flood" || fail "the operator died under the flood"
sorted=$(printf '%s\n' "${latencies[@]}" | sort -n)
echo "probe flood: $held connections held plus a reconnect loop; ${#latencies[@]} probes all 200," \
  "latency median $(sed -n 20p <<<"$sorted")s, max $(tail -n 1 <<<"$sorted")s"
echo "PASS: probes survive a connection flood"
