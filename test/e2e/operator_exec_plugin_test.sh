#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A slow exec credential plugin does not stall the operator. The leader authenticates with a plugin
# whose credential lasts 60 s; its refresh (run 2, due once half the lifetime is gone) sleeps 20 s.
# Throughout that run the Lease's renewTime keeps advancing, /healthz answers within 1 s, the
# operator keeps running, and an AppService created during the run converges. Prints the renewals
# seen and the slowest /healthz.
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
exec_dir=$(mktemp -d /tmp/asop-e2e-exec-slow.XXXXXX)
trap 'stop_all_operators; rm -rf "$exec_dir"; kubectl delete namespace "${ns:-none}" --wait=false >/dev/null 2>&1 || true' EXIT
kubectl apply -f crds/ >/dev/null
wait_established appservices.app.example.com
ns=exec-$RANDOM$RANDOM
kubectl create namespace "$ns" >/dev/null
eventually 60 kubectl get serviceaccount default -n "$ns"

sleep_s=20
log=$exec_dir/runs
exec_kubeconfig "$exec_dir" --exec-env=ASOP_E2E_EXEC_EXPIRY=60 --exec-env=ASOP_E2E_EXEC_SLOW_RUN=2 \
  --exec-env="ASOP_E2E_EXEC_SLEEP=$sleep_s"

OP_KUBECONFIG=$exec_dir/kubeconfig start_operator leader --namespace "$ns" --leader-elect \
  --leader-election-namespace "$ns" --leader-election-id exec-le
eventually 60 has_metric "$OP_METRICS_leader" '^leader_election_master_status{.*} 1$'

# The refresh starts about 30 s after start-up, in the background.
eventually 90 grep -q '^start 2 ' "$log"
renew_times() { kubectl get lease exec-le -n "$ns" -o jsonpath='{.spec.renewTime}'; }
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: during}
spec: {size: 1, image: nginx:1.27}
YAML
renewals=()
max_ms=0
converged_during=no
deadline=$(( $(date +%s) + sleep_s + 15 ))
until grep -q '^end 2 ' "$log"; do
  [ "$(date +%s)" -lt "$deadline" ] || fail "the plugin's slow run did not end"
  kill -0 "$OP_PID_leader" 2>/dev/null || fail "the operator exited during the plugin run: $(tail -n 3 "$OP_LOG_DIR/leader.log")"
  t=$(curl -fsS -o /dev/null --max-time 1 -w '%{time_total}' "127.0.0.1:$OP_HEALTH_leader/healthz") ||
    fail "/healthz did not answer within 1 s during the plugin run"
  ms=$(awk -v t="$t" 'BEGIN { printf "%d", t * 1000 }')
  [ "$ms" -le "$max_ms" ] || max_ms=$ms
  r=$(renew_times)
  if [ "${#renewals[@]}" = 0 ] || [ "${renewals[-1]}" != "$r" ]; then renewals+=("$r"); fi
  if [ "$converged_during" = no ] && kubectl get deployment during -n "$ns" >/dev/null 2>&1; then
    converged_during=yes
  fi
  sleep 0.5
done
read -r _ _ t_start < <(grep '^start 2 ' "$log")
read -r _ _ t_end < <(grep '^end 2 ' "$log")
echo "plugin refresh run: $(( t_end - t_start )) ms; Lease renewTime values seen during it: ${#renewals[@]}; slowest /healthz: ${max_ms} ms; AppService converged during the run: $converged_during"
# The first value may predate the run; the leader renews every 2 s, so 20 s hold about 10.
[ "${#renewals[@]}" -ge 6 ] || fail "the Lease was renewed only $(( ${#renewals[@]} - 1 )) times during the ${sleep_s} s plugin run: ${renewals[*]}"
[ "$converged_during" = yes ] || fail "the AppService created during the plugin run did not converge during it"
kill -0 "$OP_PID_leader" 2>/dev/null || fail "the operator exited"
has_metric "$OP_METRICS_leader" '^leader_election_master_status{.*} 1$' || fail "the operator lost the lease"
runs=$(grep -c '^run$' "$log")
[ "$runs" = 2 ] || fail "the exec plugin ran $runs times, want 2 (start-up and one refresh)"

# The refreshed credential is used: the operator keeps reconciling.
kubectl patch appservice during -n "$ns" --type merge -p '{"spec":{"size":2}}' >/dev/null
eventually 60 value_is 2 kubectl get deployment during -n "$ns" -o jsonpath='{.spec.replicas}'
kubectl delete appservice during -n "$ns" --wait=true --timeout=60s >/dev/null
stop_operator "$OP_PID_leader" TERM || fail "the operator did not exit 0 on SIGTERM"
echo "PASS: operator_exec_plugin"
