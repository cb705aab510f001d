#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# 200 AppServices converge. The caches fill by streaming lists (a watch with
# sendInitialEvents=true, client-go's default since v0.35): no list request at all, so no list
# body is held whole; the fallback to paginated lists is proven in faults/watch_list_off_test.sh.
# Prints the time to converge and the operator's peak RSS.
# ctest: processors 2
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
count=${SCALE_COUNT:-200}
ns=scale-$RANDOM$RANDOM
trap 'stop_all_operators; kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT
kubectl apply -f crds/ >/dev/null
wait_established appservices.app.example.com
kubectl create namespace "$ns" >/dev/null
eventually 60 kubectl get serviceaccount default -n "$ns"

for i in $(seq "$count"); do
  printf -- '---\napiVersion: app.example.com/v1\nkind: AppService\nmetadata: {name: app-%03d}\nspec: {size: 1, image: "nginx:1.27", ports: [{port: 80}]}\n' "$i"
done | kubectl apply -n "$ns" -f - >/dev/null

available() {
  kubectl get appservices -n "$ns" -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Available")].status}{"\n"}{end}' |
    grep -c '^True$' || true
}
start=$(date +%s%N)
start_operator scale --namespace "$ns" -v 4
eventually 600 value_is "$count" available
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
rss_kb=$(awk '/VmHWM/ {print $2}' "/proc/$OP_PID_scale/status")
echo "converged: $count AppServices in $(( elapsed_ms / 1000 )).$(printf %03d $(( elapsed_ms % 1000 )))s (operator start included); peak RSS $(( rss_kb / 1024 )) MiB"
log=$OP_LOG_DIR/scale.log
grep -q 'informer="app.example.com/v1 appservices" synced objects='"$count"' lists=1 via=watch-list' "$log" ||
  fail "the AppService informer did not stream all $count: $(grep synced "$log")"
for informer in 'apps/v1 deployments' 'v1 services'; do
  grep -q "informer=\"$informer\" synced objects=[0-9]* lists=1 via=watch-list" "$log" ||
    fail "informer $informer did not sync by a streaming list: $(grep synced "$log")"
done
# One stream per informer, and not one list request.
streams=$(grep -cE "GET /apis?/[^ ]*/namespaces/$ns/[a-z]+\?watch=1[^ ]*sendInitialEvents=true[^ ]* on [^ ]* -> 200" "$log" || true)
lists=$(grep -E "GET /apis?/[^ ]*/namespaces/$ns/[a-z]+\?[^ ]* -> " "$log" | grep -cv 'watch=1' || true)
echo "streaming lists: $streams, list requests: $lists"
[ "$streams" = 3 ] || fail "want 3 streaming lists, got $streams"
[ "$lists" = 0 ] || fail "$lists list requests: $(grep -E "GET /apis?/[^ ]*/namespaces/$ns/[a-z]+\?" "$log" | grep -v 'watch=1')"
[ "$(kubectl get deployments -n "$ns" -o name | wc -l)" = "$count" ] || fail "not $count Deployments"

# Clean up while the operator runs, so the finalizers are removed.
kubectl delete appservices --all -n "$ns" --wait=true --timeout=300s >/dev/null
echo "PASS: operator_scale"
