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
# counted the hold-backs. Printed: the writes, hold-backs and time. Then the same for 20 Greetings
# of docs/library.md's controller (examples/greeting): one CleanupComplete each, no 404 or 409,
# two writes per deletion (the Event and the finalizer's removal).
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
# cleanup_events KIND: "NAME COUNT" of each CleanupComplete Event on an object of KIND.
cleanup_events() {
  k get events --field-selector "reason=CleanupComplete,involvedObject.kind=$1" \
    -o jsonpath='{range .items[*]}{.involvedObject.name} {.count}{"\n"}{end}'
}
cleanup_event_count() { local out; out=$(cleanup_events "$1"); grep -c . <<<"$out" || true; }
# delete_all PLURAL KIND N PORT CONTROLLER [COUNTER...]: deletes every PLURAL of the namespace at
# once (the operator on metrics PORT, its controller CONTROLLER, cleans them up), waits until they
# are gone, each COUNTER (a command printing a count) is 0 and N CleanupComplete Events exist, then
# fails unless no write answered 404 or 409 and each of the N has one CleanupComplete counting 1.
# Prints the figures; sets deletion_writes, holds and from (the log line where the deletion began).
delete_all() {
  local plural=$1 kind=$2 want=$3 port=$4 controller=$5 c
  shift 5
  writes_settled "$port"
  from=$(log_lines "$port")
  local writes_before holds_before e404_before e409_before start
  writes_before=$(writes "$port") holds_before=$(stale_holds "$port" "$controller")
  e404_before=$(answered "$port" 404) e409_before=$(answered "$port" 409)
  start=$(date +%s)
  k delete "$plural" --all --wait=false >/dev/null
  eventually 180 value_is 0 count "$plural"
  for c in "$@"; do eventually 120 value_is 0 $c; done  # a counter is a command and its words
  eventually 60 value_is "$want" cleanup_event_count "$kind"
  writes_settled "$port"
  local took=$(( $(date +%s) - start )) e404 e409 events names counted
  e404=$(( $(answered "$port" 404) - e404_before ))
  e409=$(( $(answered "$port" 409) - e409_before ))
  holds=$(( $(stale_holds "$port" "$controller") - holds_before ))
  deletion_writes=$(( $(writes "$port") - writes_before ))
  events=$(cleanup_events "$kind")
  names=$(awk '{print $1}' <<<"$events" | sort -u | grep -c . || true)
  counted=$(awk '{s += $2} END {print s+0}' <<<"$events")
  echo "figures: $want ${kind}s deleted at once, watch delayed ${delay_ms} ms: $deletion_writes writes (404: $e404, 409: $e409), $holds stale-cache holds, CleanupComplete for $names ${kind}s counting $counted, ${took} s"
  [ "$e404" = 0 ] || fail "$e404 writes answered 404 (a cleanup ran again on a deleted object): $(written "$port" "$from")"
  [ "$e409" = 0 ] || fail "$e409 writes answered 409: $(written "$port" "$from")"
  [ "$names" = "$want" ] || fail "CleanupComplete for $names ${kind}s, want $want: $events"
  [ "$counted" = "$want" ] || fail "CleanupComplete counted $counted times for $want ${kind}s (a cleanup ran twice): $events"
}

start_slow_watch_proxy "$delay_ms"

appservices_manifest "$n" nginx:1.27 | k apply -f - >/dev/null
OP_KUBECONFIG=$slow_kubeconfig start_operator slow --namespace "$ns" -v 1
port=$OP_METRICS_slow
eventually 180 value_is "$n" settled
eventually 180 value_is "$n" count deployments
eventually 180 value_is "$n" count services
delete_all appservices AppService "$n" "$port" appservice "count deployments" "count services"
[ "$holds" -gt 0 ] || fail "no reconcile was held back while the deletions' events were ${delay_ms} ms late"
stop_operator "$OP_PID_slow" || fail "the operator did not exit cleanly"

# The same for docs/library.md's controller (examples/greeting, on the public runtime API): m
# Greetings, each owning a ConfigMap, deleted at once behind the same delay.
m=20
kubectl apply -f "${ASOP_SOURCE_DIR:?}/examples/greeting/crd.yaml" >/dev/null
wait_established greetings.demo.example.com
for i in $(seq -w 1 "$m"); do
  printf -- '---\napiVersion: demo.example.com/v1\nkind: Greeting\nmetadata: {name: hello-%s}\nspec: {message: "hello %s"}\n' "$i" "$i"
done | k apply -f - >/dev/null
OP_KUBECONFIG=$slow_kubeconfig ASOP_BINARY=${ASOP_GREETING_EXAMPLE:?} \
  start_operator greeting --namespace "$ns" -v 1
port=$OP_METRICS_greeting
ready_greetings() {
  k get greetings -o jsonpath='{range .items[*]}{.metadata.finalizers[0]} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
    awk '$1 == "demo.example.com/cleanup" && $2 == "True"' | wc -l
}
children() { local out; out=$(k get configmaps -l app.kubernetes.io/managed-by=greeting -o name); grep -c . <<<"$out" || true; }
eventually 120 value_is "$m" ready_greetings
eventually 60 value_is "$m" children
delete_all greetings Greeting "$m" "$port" greeting children
[ "$deletion_writes" = $(( 2 * m )) ] ||
  fail "$m deletions took $deletion_writes writes, not $(( 2 * m )) (an Event and a finalizer removal each): $(written "$port" "$from")"
echo "PASS: finalizer_once"
