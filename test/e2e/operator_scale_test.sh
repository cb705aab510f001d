#!/usr/bin/env bash
# 200 AppServices converge. The first list is one request served by the API server's watch cache
# (resourceVersion=0, as client-go's reflector asks; the cache ignores the page size, so standby
# replicas and restarts do not read etcd); paging of quorum lists is proven in
# faults/compaction_test.sh. Prints the time to converge and the operator's peak RSS.
# ctest: processors 2
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
count=${SCALE_COUNT:-200}
ns=scale-$RANDOM$RANDOM
trap 'stop_all_operators; kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT
kubectl apply -f crds/ >/dev/null
kubectl wait --for condition=Established crd/appservices.app.example.com --timeout=60s >/dev/null
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
grep -q 'synced objects='"$count" "$OP_LOG_DIR/scale.log" || fail "the AppService informer did not list all $count"
# The first list of AppServices: one request, served from the watch cache.
first=$(grep -E "GET /apis/app\.example\.com/v1/namespaces/$ns/appservices\?[^ ]* -> 200" "$OP_LOG_DIR/scale.log" | grep -v 'watch=' | head -n 1)
echo "first list: $first"
grep -q 'resourceVersion=0' <<<"$first" || fail "the first list is not served from the watch cache: $first"
[ "$(kubectl get deployments -n "$ns" -o name | wc -l)" = "$count" ] || fail "not $count Deployments"

# Clean up while the operator runs, so the finalizers are removed.
kubectl delete appservices --all -n "$ns" --wait=true --timeout=300s >/dev/null
echo "PASS: operator_scale"
