#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# API server throttling: an own control plane with --max-mutating-requests-inflight=1 and APF off,
# so concurrent writes are refused with 429 and "Retry-After: 1". 30 AppServices are created at
# once. The operator must honour Retry-After (it resends a refused write after the seconds asked,
# never in a tight loop), converge every AppService, and keep its error reconciles and Warning Events bounded.
# ctest: processors 2
# No ASan twin: resending after Retry-After is a timer; the ASan unit tests drive the same client
# code ("a write refused with 429 is sent again after Retry-After").
source "$(dirname "$0")/lib.sh"
APISERVER_EXTRA_ARGS="--enable-priority-and-fairness=false --max-mutating-requests-inflight=1" \
  own_controlplane
count=30 workers=4
# system:masters is never throttled: the operator runs as the ServiceAccount of deploy/base/rbac.yaml.
kubectl create namespace appservice-system >/dev/null
kubectl apply -f deploy/base/rbac.yaml >/dev/null
token=$(kubectl -n appservice-system create token appservice-operator --duration 1h)
export OP_KUBECONFIG=$OP_LOG_DIR/operator.kubeconfig
kubectl config view --minify --flatten > "$OP_KUBECONFIG"
user=$(kubectl config view --minify -o jsonpath='{.contexts[0].context.user}')
kubectl --kubeconfig "$OP_KUBECONFIG" config unset "users.$user" >/dev/null
kubectl --kubeconfig "$OP_KUBECONFIG" config set-credentials "$user" --token "$token" >/dev/null
start_operator main --max-concurrent-reconciles "$workers" -v=1
log=$OP_LOG_DIR/main.log

start_ms=$(now_ms)
for i in $(seq "$count"); do
  printf -- '---\napiVersion: app.example.com/v1\nkind: AppService\nmetadata: {name: app-%03d}\nspec: {size: 1, image: "nginx:1.27", ports: [{port: 80}]}\n' "$i"
done | k apply -f - >/dev/null
for i in $(seq "$count"); do eventually 180 converged "$(printf app-%03d "$i")" nginx:1.27; done
recover_ms=$(( $(now_ms) - start_ms ))
running "$OP_PID_main" || fail "operator crashed"

body=$(metrics "$OP_METRICS_main") || fail "no /metrics"
refused=$(awk '/^rest_client_requests_total\{/ && /code="429"/ {s += $NF} END {print s + 0}' <<<"$body")
[ "$refused" -gt 0 ] || fail "no request was refused with 429: the test throttled nothing"
# Honouring Retry-After: each refused request is resent only after the second the server asked
# for, and the log says so.
waits=$(grep -c 'retrying in 1 s (Retry-After)' "$log" || true)
[ "$waits" -gt 0 ] || fail "$refused requests refused with 429, but no wait for Retry-After in the log"
# A throttled write is retried inside the client, so a reconcile fails (and records a Warning
# Event) only when 10 retries in a row were refused: at most about one per AppService. (Without
# Retry-After handling, the same run had ~300 error reconciles.)
errors=$(metric "$OP_METRICS_main" controller_runtime_reconcile_errors_total)
[ "$errors" -le "$count" ] || fail "$errors error reconciles for $count AppServices: throttled writes not retried"
# Warnings as recorded: an aggregated Event counts each repeat in .count.
warnings=$(k get events --field-selector type=Warning,involvedObject.kind=AppService \
  -o jsonpath='{range .items[*]}{.count}{"\n"}{end}' | awk '{s += ($1 == "" ? 1 : $1)} END {print s + 0}')
[ "$warnings" -le "$count" ] || fail "$warnings Warning Events for $count AppServices"
requests=$(metric "$OP_METRICS_main" rest_client_requests_total)
leaked=$(leaks)
[ "$leaked" = 0 ] || fail "$leaked leaked children"
echo "figures: recover=$(secs "$recover_ms") ($count AppServices converged) requests=$requests errors=$errors leaks=$leaked refused_429=$refused retry_after_waits=$waits warning_events=$warnings (counting repeats)"
echo "PASS: throttling"
