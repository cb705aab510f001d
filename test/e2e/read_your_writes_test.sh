#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Read your own writes (issue 36, Kubernetes 1.36's KEP-5647) with a slowed watch. 100
# AppServices converged, then every image changed at once (a bulk change), measured twice on one
# namespace: first with the operator talking to the API server directly, then through
# test/tools/slow_watch_proxy, which delays every watch response's bytes by 1.5 s and passes every
# other request at once. With the delay, each reconcile that an event of our own write brings
# starts before the other caches have seen the rest of that reconcile's writes (the Deployment's
# event arrives while the AppService cache still lacks our status write); the write tracker holds
# those back (controller_runtime_reconcile_stale_cache_total > 0) instead of writing the same
# status again. Asserted: the writes per AppService of the bulk change are the same with and without
# the delay (none made twice, nothing reverted), every Deployment ends at the new image and every
# status at the new generation, and the metric counted hold-backs with the delay. Printed: both
# figures and the metric's counts. Then several keys writing one shared object behind the same
# delay (test/tools/registry_controller): each registers once, one write and one Event each.
# ctest: processors 2
# ctest: timeout 600
# On a control plane of its own: its 300 rollouts would otherwise hold the shared
# kube-controller-manager (20 QPS) and slow every other test's rollout behind them.
source "$(dirname "$0")/faults/lib.sh"
proxy_pid=""
own_controlplane  # KUBECONFIG, namespace $ns; the EXIT trap stops the operators, proxy and all

n=100
delay_ms=1500
manifest() { appservices_manifest "$n" "$1"; }
images_at() { kubectl -n "$ns" get deployments -o jsonpath='{range .items[*]}{.spec.template.spec.containers[0].image}{"\n"}{end}' | grep -c "^$1\$" || true; }
# Deployments the Deployment controller has reported on at their current generation.
reported() {
  kubectl -n "$ns" get deployments -o jsonpath='{range .items[*]}{.metadata.generation} {.status.observedGeneration} {.status.conditions[?(@.type=="Progressing")].reason}{"\n"}{end}' |
    awk '$1 == $2 && $3 == "NewReplicaSetAvailable"' | wc -l
}
# AppServices whose status describes their current generation, rolled out.
observed() {
  kubectl -n "$ns" get appservices -o jsonpath='{range .items[*]}{.metadata.generation} {.status.observedGeneration} {.status.conditions[?(@.type=="Progressing")].reason}{"\n"}{end}' |
    awk '$1 == $2 && $3 == "RolloutComplete"' | wc -l
}
# bulk NAME IMAGE: every AppService to IMAGE; waits until applied, reported, observed and our
# writes settled; sets per_app (writes per AppService of the change) and holds (what the metric
# counted during it).
bulk() {
  local port_var="OP_METRICS_$1" before after held_before
  before=$(writes "${!port_var}")
  held_before=$(stale_holds "${!port_var}")
  manifest "$2" | kubectl -n "$ns" apply -f - >/dev/null
  eventually 180 value_is "$n" images_at "$2"
  eventually 180 value_is "$n" reported
  eventually 180 value_is "$n" observed
  writes_settled "${!port_var}"
  after=$(writes "${!port_var}")
  per_app=$(awk -v w="$(( after - before ))" -v n="$n" 'BEGIN {printf "%.2f", w / n}')
  holds=$(( $(stale_holds "${!port_var}") - held_before ))
}

start_slow_watch_proxy "$delay_ms"

start=$(date +%s)
manifest nginx:1.27 | kubectl -n "$ns" apply -f - >/dev/null
# 1. Directly: the figure of docs/benchmarks.md (no delay).
start_operator direct --namespace "$ns" -v 1
stale_holds "$OP_METRICS_direct" >/dev/null # on /metrics (it may have counted already: it creates)
eventually 180 value_is "$n" images_at nginx:1.27
eventually 180 value_is "$n" reported
eventually 180 value_is "$n" observed
writes_settled "$OP_METRICS_direct"
bulk direct nginx:1.28
direct_per_app=$per_app direct_holds=$holds
stop_operator "$OP_PID_direct" || fail "the direct operator did not exit cleanly"

# 2. Through the proxy: every watch 1.5 s late.
OP_KUBECONFIG=$slow_kubeconfig start_operator slow --namespace "$ns" -v 1
# A restart over settled AppServices writes nothing, so nothing is held back yet.
[ "$(stale_holds "$OP_METRICS_slow")" = 0 ] || fail "the stale-cache metric does not start at 0"
grep -q '^watch ' "$OP_LOG_DIR/proxy.log" || fail "the operator's watches do not pass the proxy"
writes_settled "$OP_METRICS_slow"
[ "$(writes "$OP_METRICS_slow")" = 0 ] ||
  fail "a restart through the proxy wrote $(writes "$OP_METRICS_slow") times: $(written "$OP_METRICS_slow")"
bulk slow nginx:1.29
slow_per_app=$per_app slow_holds=$holds

held_logged=$(grep -c 'cache behind our last write' "$OP_LOG_DIR/slow.log" || true)
echo "figures: N=$n bulk change, writes per AppService: direct $direct_per_app (stale-cache holds during it $direct_holds), watch delayed ${delay_ms} ms $slow_per_app (holds $slow_holds; $held_logged logged at -v=1 by that process); $(( $(date +%s) - start )) s"
[ "$slow_per_app" = "$direct_per_app" ] ||
  fail "writes per AppService with the watch delayed ($slow_per_app) differ from without ($direct_per_app)"
[ "$slow_holds" -gt 0 ] || fail "no reconcile was held back with the watch delayed ${delay_ms} ms"
[ "$held_logged" -gt 0 ] || fail "no hold-back was logged at -v=1"

# 3. Several keys, one shared object (issue 44): test/tools/registry_controller, on the public
# runtime API, registers each member ConfigMap in one registry ConfigMap (a merge patch and a
# Registered Event per member), behind the same delayed watch. Each registry change queues every
# member, and the first ones arrive while the cache lacks the later members' own writes: each
# member must be held until the cache has its own entry, or it registers twice.
members=8 reg_ns=registry-e2e
kubectl create namespace "$reg_ns" >/dev/null
kubectl -n "$reg_ns" create configmap registry >/dev/null
kubectl -n "$reg_ns" label configmap registry registry.example.com/registry=true >/dev/null
OP_KUBECONFIG=$slow_kubeconfig ASOP_BINARY=${ASOP_REGISTRY_CONTROLLER:?} \
  start_operator registry --namespace "$reg_ns" -v 1
for i in $(seq 1 "$members"); do
  printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: member-%s, labels: {registry.example.com/member: "true"}}\n' "$i"
done | kubectl -n "$reg_ns" apply -f - >/dev/null
registered() { kubectl -n "$reg_ns" get configmap registry -o json | jq '.data // {} | length'; }
eventually 60 value_is "$members" registered
writes_settled "$OP_METRICS_registry"
reg_writes=$(writes "$OP_METRICS_registry") reg_holds=$(stale_holds "$OP_METRICS_registry" registry)
# Every Registered Event of the namespace and its count: one each, never a repeat.
reg_events=$(kubectl -n "$reg_ns" get events --field-selector reason=Registered -o json |
  jq -r '[.items[] | "\(.involvedObject.name)=\(.count // 1)"] | sort | join(" ")')
echo "figures: $members members registering in one shared ConfigMap, watch delayed ${delay_ms} ms: $reg_writes writes, $reg_holds stale-cache holds; Events: $reg_events"
[ "$reg_writes" = $(( 2 * members )) ] ||
  fail "$members registrations took $reg_writes writes, not $(( 2 * members )) (a patch and an Event each): $(written "$OP_METRICS_registry")"
want_events=$(for i in $(seq 1 "$members"); do echo "member-$i=1"; done | sort | paste -sd' ')
[ "$reg_events" = "$want_events" ] || fail "Registered Events: $reg_events, want $want_events"
[ "$reg_holds" -gt 0 ] || fail "no registration was held back behind the delayed watch"
stop_operator "$OP_PID_registry" || fail "registry_controller did not exit cleanly"
echo "PASS: read_your_writes"
