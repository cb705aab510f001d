#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A slow exec credential plugin does not stall the operator. The leader authenticates with a plugin
# whose credential lasts 60 s; its refresh (run 2, due once half the lifetime is gone) sleeps 20 s.
# Throughout that run the operator keeps what a user depends on: it keeps running and keeps the
# Lease (same holder, never older than its lease duration: no standby could take over), the kubelet
# would not restart it (never failureThreshold /healthz probes in a row over the probe's
# timeoutSeconds, as deploy/base/operator.yaml sets them), and an AppService created during the run
# converges. How often the Lease was renewed and how fast /healthz answered depend on the
# machine's load: printed, not asserted.
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
# holder renewTime leaseDurationSeconds
lease() { kubectl get lease exec-le -n "$ns" -o jsonpath='{.spec.holderIdentity} {.spec.renewTime} {.spec.leaseDurationSeconds}'; }
ms_of() { date -d "$1" +%s%3N; }
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: during}
spec: {size: 1, image: nginx:1.27}
YAML
l=$(lease)
read -r holder last_renew lease_s <<<"$l"  # (jsonpath ends without a newline: a here-string adds it)
[ -n "$holder" ] && [ -n "$lease_s" ] || fail "the Lease has no holder or duration: $(lease)"
last_renew_ms=$(ms_of "$last_renew")
renewals=0 max_gap_ms=0 probes=0 failed_probes=0 in_a_row=0 max_ms=0
converged_during=no
deadline=$(( $(date +%s) + sleep_s + 15 ))
until grep -q '^end 2 ' "$log"; do
  [ "$(date +%s)" -lt "$deadline" ] || fail "the plugin's slow run did not end"
  kill -0 "$OP_PID_leader" 2>/dev/null || fail "the operator exited during the plugin run: $(tail -n 3 "$OP_LOG_DIR/leader.log")"
  # /healthz as the kubelet probes it (a probe every 0.5 s here, every periodSeconds there).
  probes=$(( probes + 1 ))
  if t=$(kubelet_probe "$OP_HEALTH_leader" /healthz); then
    in_a_row=0
  else
    failed_probes=$(( failed_probes + 1 )) in_a_row=$(( in_a_row + 1 ))
    [ "$in_a_row" -lt "$PROBE_FAILURE_THRESHOLD" ] ||
      fail "/healthz failed $in_a_row probes in a row (timeout ${PROBE_TIMEOUT_S} s each) during the plugin run: the kubelet would restart the Pod"
  fi
  ms=$(awk -v t="$t" 'BEGIN { printf "%d", t * 1000 }')
  [ "$ms" -le "$max_ms" ] || max_ms=$ms
  if l=$(lease); then
    read -r h r _ <<<"$l"
    [ "$h" = "$holder" ] || fail "the Lease changed hands during the plugin run: $holder -> '$h'"
    if [ "$r" != "$last_renew" ]; then
      r_ms=$(ms_of "$r")
      gap=$(( r_ms - last_renew_ms ))
      [ "$gap" -le "$max_gap_ms" ] || max_gap_ms=$gap
      renewals=$(( renewals + 1 )) last_renew=$r last_renew_ms=$r_ms
    fi
    # Past renewTime + leaseDurationSeconds a standby may take the Lease: that is losing it.
    age=$(( $(date +%s%3N) - last_renew_ms ))
    [ "$age" -lt $(( lease_s * 1000 )) ] && [ "$max_gap_ms" -lt $(( lease_s * 1000 )) ] ||
      fail "the Lease lapsed during the plugin run: renewed last at $last_renew ($age ms ago), longest gap ${max_gap_ms} ms, lease ${lease_s} s"
  fi
  if [ "$converged_during" = no ] && kubectl get deployment during -n "$ns" >/dev/null 2>&1; then
    converged_during=yes
  fi
  sleep 0.5
done
read -r _ _ t_start < <(grep '^start 2 ' "$log")
read -r _ _ t_end < <(grep '^end 2 ' "$log")
echo "plugin refresh run: $(( t_end - t_start )) ms; Lease renewed $renewals times during it (longest gap ${max_gap_ms} ms, lease ${lease_s} s, holder unchanged); /healthz: $probes probes, $failed_probes over ${PROBE_TIMEOUT_S} s or failed, slowest ${max_ms} ms; AppService converged during the run: $converged_during"
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
