#!/usr/bin/env bash
# Two operators with --leader-elect: exactly one reconciles; after SIGTERM the leader releases the
# Lease and the standby takes over within seconds; after SIGKILL a standby takes over once the
# lease expires (lease duration + retry period). Prints the measured takeover times.
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
ns=le-$RANDOM$RANDOM
trap 'stop_all_operators; kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT
kubectl apply -f crds/ >/dev/null
kubectl wait --for condition=Established crd/appservices.app.example.com --timeout=60s >/dev/null
kubectl create namespace "$ns" >/dev/null
eventually 60 kubectl get serviceaccount default -n "$ns"

flags=(--namespace "$ns" --leader-elect --leader-election-namespace "$ns" --leader-election-id le-test)
leading() { has_metric "$1" '^leader_election_master_status{.*} 1$'; }
leaders() { local n=0 p; for p in "$@"; do leading "$p" && n=$((n + 1)); done; echo $n; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

start_operator a "${flags[@]}"
start_operator b "${flags[@]}"
eventually 60 value_is 1 leaders "$OP_METRICS_a" "$OP_METRICS_b"
if leading "$OP_METRICS_a"; then
  leader=$OP_PID_a standby=$OP_METRICS_b leader_metrics=$OP_METRICS_a
else
  leader=$OP_PID_b standby=$OP_METRICS_a leader_metrics=$OP_METRICS_b
fi
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: web}
spec: {size: 1, image: nginx:1.27}
YAML
eventually 60 kubectl get deployment web -n "$ns"
# Only the leader reconciles: the standby made no write requests.
[ "$(writes "$standby")" = 0 ] || fail "the standby wrote to the API server"
[ "$(leaders "$OP_METRICS_a" "$OP_METRICS_b")" = 1 ] || fail "not exactly one leader"

t0=$(now_ms)
stop_operator "$leader" TERM || fail "leader did not exit 0 on SIGTERM"
eventually 30 leading "$standby"
term_ms=$(( $(now_ms) - t0 ))
echo "takeover after SIGTERM of the leader: ${term_ms} ms"
[ "$term_ms" -lt 5000 ] || echo "NOTE: takeover after SIGTERM took over 5 s"

# The new leader now gets SIGKILL; a third instance takes over when the lease expires.
new_leader=$([ "$standby" = "$OP_METRICS_a" ] && echo "$OP_PID_a" || echo "$OP_PID_b")
start_operator c "${flags[@]}"
leading "$OP_METRICS_c" && fail "c leads while the leader is alive"
t0=$(now_ms)
kill -KILL "$new_leader"
eventually 60 leading "$OP_METRICS_c"
kill_ms=$(( $(now_ms) - t0 ))
echo "takeover after SIGKILL of the leader: ${kill_ms} ms (lease 15 s + retry 2 s)"
kubectl patch appservice web -n "$ns" --type merge -p '{"spec":{"size":2}}' >/dev/null
eventually 60 value_is 2 kubectl get deployment web -n "$ns" -o jsonpath='{.spec.replicas}'
kubectl delete appservice web -n "$ns" --wait=true --timeout=60s >/dev/null
echo "PASS: operator_leader_election"
