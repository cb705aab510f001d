#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Restarts over 200 AppServices, as controller-runtime v0.23 handles them.
# 1. Nothing changed while the operator was down: the new process writes nothing, neither after
#    its initial list nor after a resync (--sync-period), though it reconciles every AppService.
# 2. Everything changed while it was down (a GitOps bulk image bump), and a user edits one as soon
#    as the new process is ready: the edit must not wait behind every key of the initial list. The initial list's keys are queued at low priority and the edit,
# seen live, at the normal one (controller-runtime's priority queue), so the edited AppService's
# Deployment is updated after only a few of the bulk changes. With one FIFO it came last.
# The order is read from the operator's own log ("updated Deployment NS/NAME"), not from timing.
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
new_namespace rp
trap 'stop_all_operators; kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT
kubectl apply -f crds/ >/dev/null
wait_established appservices.app.example.com

n=200
# Named so the API server lists them in order; the edit goes to the last one, which a FIFO serves last.
edited=app-$n
manifest() { appservices_manifest "$n" "$1"; }
images_at() { kubectl -n "$ns" get deployments -o jsonpath='{range .items[*]}{.spec.template.spec.containers[0].image}{"\n"}{end}' | grep -c "^$1\$" || true; }

manifest nginx:1.27 | kubectl -n "$ns" apply -f - >/dev/null
start_operator first --namespace "$ns"
eventually 180 value_is "$n" images_at nginx:1.27
# At rest first: the Deployment controller has reported on every Deployment (on a loaded machine it
# lags, and each late report is a real status change for the next process to write), then every
# status and Event of ours is written.
reported() {
  kubectl -n "$ns" get deployments -o jsonpath='{range .items[*]}{.metadata.generation} {.status.observedGeneration} {.status.conditions[?(@.type=="Progressing")].reason}{"\n"}{end}' |
    awk '$1 == $2 && $3 == "NewReplicaSetAvailable"' | wc -l
}
eventually 180 value_is "$n" reported
writes_settled "$OP_METRICS_first"
stop_operator "$OP_PID_first" || fail "the first operator did not exit cleanly"

# reconciles PORT: reconciles finished so far, whatever their result.
reconciles() { metrics "$1" | awk '/^controller_runtime_reconcile_total\{controller="appservice"/ {s+=$NF} END {print s+0}'; }
# idle_after PORT COUNT: at least COUNT reconciles done and nothing queued or in flight.
idle_after() {
  local body
  body=$(metrics "$1") || return 1
  awk -v want="$2" '/^controller_runtime_reconcile_total\{controller="appservice"/ {r+=$NF}
    /^workqueue_depth\{controller="appservice"/ {d+=$NF}
    /^controller_runtime_active_workers\{controller="appservice"/ {a+=$NF}
    END {exit !(r >= want && d == 0 && a == 0)}' <<<"$body"
}
start_operator idle --namespace "$ns" --sync-period 20s -v 1
eventually 120 idle_after "$OP_METRICS_idle" "$n"
[ "$(writes "$OP_METRICS_idle")" = 0 ] ||
  fail "a restart with nothing changed wrote $(writes "$OP_METRICS_idle") times: $(written "$OP_METRICS_idle")"
resynced() { grep -q "resync: queueing $n keys" "$OP_LOG_DIR/idle.log"; }
eventually 60 resynced
eventually 120 idle_after "$OP_METRICS_idle" $(( 2 * n ))
[ "$(writes "$OP_METRICS_idle")" = 0 ] ||
  fail "a resync with nothing changed wrote $(writes "$OP_METRICS_idle") times: $(written "$OP_METRICS_idle")"
echo "figures: restart and resync with nothing changed: $(reconciles "$OP_METRICS_idle") reconciles, 0 writes"
stop_operator "$OP_PID_idle" || fail "the idle operator did not exit cleanly"

# While it is down, every AppService changes.
manifest nginx:1.28 | kubectl -n "$ns" apply -f - >/dev/null

launch_operator second --namespace "$ns"
eventually 60 curl -fsS "127.0.0.1:$OP_HEALTH_second/readyz"
edit_ms=$(( $(date +%s%N) / 1000000 ))
kubectl -n "$ns" patch appservice "$edited" --type merge -p '{"spec":{"image":"nginx:1.29"}}' >/dev/null
edited_image() { kubectl -n "$ns" get deployment "$edited" -o jsonpath='{.spec.template.spec.containers[0].image}'; }
eventually 120 value_is nginx:1.29 edited_image
seen_ms=$(( $(date +%s%N) / 1000000 ))
eventually 180 value_is "$(( n - 1 ))" images_at nginx:1.28

log=$OP_LOG_DIR/second.log
# Deployment updates of other AppServices logged before the edited one's.
before=$(awk -v me="Deployment $ns/$edited " '
  / updated Deployment / { if (index($0, me)) { print n + 0; found = 1; exit } n++ }
  END { if (!found) print "none" }' "$log")
[ "$before" != none ] || fail "no 'updated Deployment $ns/$edited' line in $log"
echo "figures: bulk updates before the edit=$before of $((n - 1)) edit_to_deployment=$(( seen_ms - edit_ms ))ms"
# A FIFO serves the edit after all $((n - 1)) others; the priority queue after the few reconciles in
# flight and the live events seen before it. Half is far from both.
[ "$before" -lt $(( n / 2 )) ] ||
  fail "the edit waited behind $before of $((n - 1)) bulk changes: the initial list was not low priority"
has_metric "$OP_METRICS_second" '^workqueue_depth{controller="appservice",name="appservice",priority="-100"} ' ||
  fail "no workqueue_depth series for priority -100"
echo "PASS: operator_restart"
