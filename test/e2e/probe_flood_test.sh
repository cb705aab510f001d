#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The probe port survives a client that holds every connection slot: 500 connections opened and
# held (some with half a request), then a loop that keeps opening more while the kubelet's probes
# run. The kubelet would neither restart the Pod nor take it out of its Service: no path fails
# failureThreshold probes in a row (200 within the probe's timeoutSeconds, deploy/base/operator.yaml;
# a single slow answer on a loaded machine is not a failure the kubelet acts on); the operator keeps
# reconciling. Prints the probes' latency under the flood and how many were slow.
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
declare -A in_a_row=([/healthz]=0 [/readyz]=0)
failed=0
for _ in $(seq 20); do
  for path in /healthz /readyz; do
    if t=$(kubelet_probe "$port" "$path"); then
      in_a_row[$path]=0
    else
      failed=$(( failed + 1 )) in_a_row[$path]=$(( in_a_row[$path] + 1 ))
      [ "${in_a_row[$path]}" -lt "$PROBE_FAILURE_THRESHOLD" ] ||
        fail "$path failed ${in_a_row[$path]} probes in a row under the flood (200 within ${PROBE_TIMEOUT_S} s wanted): the kubelet would act"
    fi
    latencies+=("$t")
  done
done
sample_app | kubectl apply -n "$ns" -f - >/dev/null
eventually 120 kubectl wait -n "$ns" appservice/nginx-app --for condition=Available --timeout=5s
kill -0 "$OP_PID_flood" || fail "the operator died under the flood"
sorted=$(printf '%s\n' "${latencies[@]}" | sort -n)
echo "probe flood: $held connections held plus a reconnect loop; ${#latencies[@]} probes, $failed of them" \
  "over ${PROBE_TIMEOUT_S} s or not 200, latency median $(sed -n 20p <<<"$sorted")s, max $(tail -n 1 <<<"$sorted")s"
echo "PASS: probes survive a connection flood"
