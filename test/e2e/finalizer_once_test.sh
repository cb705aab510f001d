#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A finalizer's cleanup runs once (issue 44). Removing the last finalizer of an object being
# deleted is answered with the resourceVersion the cache already holds; a reconcile that an
# event brings before the object's DELETED event reaches the cache saw the finalizer still there
# and ran the cleanup again (a second finalizer PATCH, answered 404). 50 AppServices are deleted at
# once while the operator's watches pass test/tools/slow_watch_proxy (every watch response 1.5 s
# late), so the children's DELETED events, which queue their owner, arrive while the owner's cache
# still shows it with our finalizer. Asserted: every AppService and child is gone, one
# CleanupComplete Event per AppService (count 1), no write of the operator answered 404 or 409
# (rest_client_requests_total by code and method) and controller_runtime_reconcile_stale_cache_total
# counted the hold-backs. Printed: the writes, hold-backs and time.
# ctest: processors 2
# ctest: timeout 600
source "$(dirname "$0")/faults/lib.sh"
proxy_pid=""
own_controlplane  # KUBECONFIG, namespace $ns; the EXIT trap stops the operator, proxy and all

n=50
delay_ms=1500
# answered PORT CODE: the operator's requests other than GET answered CODE.
answered() {
  local body
  body=$(metrics "$1") || fail "no /metrics on port $1"
  grep -q '^rest_client_requests_total{' <<<"$body" || fail "rest_client_requests_total missing on port $1"
  awk -v c="code=\"$2\"" '/^rest_client_requests_total/ && !/method="GET"/ && index($0, c) {s+=$NF} END {print s+0}' <<<"$body"
}
count() { local out; out=$(k get "$1" -o name); grep -c . <<<"$out" || true; }
# AppServices that hold our finalizer and whose status describes their generation.
settled() {
  k get appservices -o jsonpath='{range .items[*]}{.metadata.finalizers[0]} {.metadata.generation} {.status.observedGeneration}{"\n"}{end}' |
    awk '$1 == "app.example.com/cleanup" && $2 == $3' | wc -l
}
# cleanup_events: "NAME COUNT" of each CleanupComplete Event.
cleanup_events() {
  k get events --field-selector reason=CleanupComplete \
    -o jsonpath='{range .items[*]}{.involvedObject.name} {.count}{"\n"}{end}'
}
cleanup_event_count() { local out; out=$(cleanup_events); grep -c . <<<"$out" || true; }

start_slow_watch_proxy "$delay_ms"

appservices_manifest "$n" nginx:1.27 | k apply -f - >/dev/null
OP_KUBECONFIG=$slow_kubeconfig start_operator slow --namespace "$ns" -v 1
port=$OP_METRICS_slow
eventually 180 value_is "$n" settled
eventually 180 value_is "$n" count deployments
eventually 180 value_is "$n" count services
writes_settled "$port"
from=$(log_lines "$port")
writes_before=$(writes "$port") holds_before=$(stale_holds "$port")
e404_before=$(answered "$port" 404) e409_before=$(answered "$port" 409)

start=$(date +%s)
k delete appservices --all --wait=false >/dev/null
eventually 180 value_is 0 count appservices
eventually 120 value_is 0 count deployments
eventually 120 value_is 0 count services
eventually 60 value_is "$n" cleanup_event_count
writes_settled "$port"
took=$(( $(date +%s) - start ))

e404=$(( $(answered "$port" 404) - e404_before ))
e409=$(( $(answered "$port" 409) - e409_before ))
holds=$(( $(stale_holds "$port") - holds_before ))
deletion_writes=$(( $(writes "$port") - writes_before ))
events=$(cleanup_events)
names=$(awk '{print $1}' <<<"$events" | sort -u | grep -c . || true)
counted=$(awk '{s += $2} END {print s+0}' <<<"$events")
echo "figures: N=$n deleted at once, watch delayed ${delay_ms} ms: $deletion_writes writes (404: $e404, 409: $e409), $holds stale-cache holds, CleanupComplete for $names AppServices counting $counted, ${took} s"
[ "$e404" = 0 ] || fail "$e404 writes answered 404 (a cleanup ran again on a deleted object): $(written "$port" "$from")"
[ "$e409" = 0 ] || fail "$e409 writes answered 409: $(written "$port" "$from")"
[ "$names" = "$n" ] || fail "CleanupComplete for $names AppServices, want $n: $events"
[ "$counted" = "$n" ] || fail "CleanupComplete counted $counted times for $n AppServices (a cleanup ran twice): $events"
[ "$holds" -gt 0 ] || fail "no reconcile was held back while the deletions' events were ${delay_ms} ms late"
echo "PASS: finalizer_once"
