#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A real Prometheus (Debian's package) scrapes the operator's secure metrics (HTTPS, the bearer
# token of a ServiceAccount bound to appservice-operator-metrics-reader, as the ServiceMonitor in
# deploy/monitoring does) with deploy/monitoring's alerting rules loaded: the operator's series arrive, every rule evaluates with health "ok", every PromQL
# expression of the rules and the dashboard evaluates without error, and the main panels (reconcile
# rate, queue depth, REST requests, leader, memory, AppServices by condition) return data.
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
command -v prometheus >/dev/null || fail "prometheus is not installed (test/deps.sh installs it)"
new_namespace prom
tmp=$(mktemp -d)
prom_pid=""
binding=prom-$ns
cleanup() {
  stop_all_operators
  kubectl delete clusterrolebinding "$binding" --ignore-not-found >/dev/null 2>&1 || true
  if [ -n "$prom_pid" ]; then kill "$prom_pid" 2>/dev/null || true; wait "$prom_pid" 2>/dev/null || true; fi
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

kubectl apply -f deploy/base/namespace.yaml -f deploy/base/rbac.yaml >/dev/null
kubectl -n "$ns" create serviceaccount prometheus >/dev/null
kubectl create clusterrolebinding "$binding" --clusterrole=appservice-operator-metrics-reader \
  --serviceaccount="$ns:prometheus" >/dev/null
kubectl -n "$ns" create token prometheus --duration 1h >"$tmp/token"
start_operator prom --namespace "$ns" --leader-elect --leader-election-namespace "$ns" --metrics-secure
sample_app | kubectl apply -n "$ns" -f - >/dev/null

awk 'found { sub(/^  /, ""); print } /^spec:/ { found = 1 }' \
  deploy/monitoring/prometheusrule.yaml >"$tmp/rules.yaml"
port=$(free_port)
cat >"$tmp/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [$tmp/rules.yaml]
scrape_configs:
- job_name: appservice-operator-metrics   # the job a ServiceMonitor on that Service gets
  scheme: https
  authorization: {credentials_file: $tmp/token}
  tls_config: {insecure_skip_verify: true}   # the operator's self-signed certificate
  static_configs:
  - targets: ["127.0.0.1:$OP_METRICS_prom"]
YAML
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$port" >"$OP_LOG_DIR/prometheus.log" 2>&1 &
prom_pid=$!
api="http://127.0.0.1:$port/api/v1"

# query EXPR: the JSON answer of an instant query; fails unless Prometheus says "success".
query() {
  local out
  out=$(curl -sS --data-urlencode "query=$1" "$api/query") || return 1
  jq -e '.status == "success"' <<<"$out" >/dev/null || { echo "$out"; return 1; }
  echo "$out"
}
# has_data EXPR: the query returns at least one series.
has_data() { query "$1" | jq -e '.data.result | length > 0' >/dev/null; }

eventually 60 has_data 'controller_runtime_reconcile_total{job="appservice-operator-metrics",controller="appservice"}'
eventually 120 kubectl wait -n "$ns" appservice/nginx-app --for condition=Available --timeout=5s
eventually 60 value_is 1 bash -c "curl -sS --data-urlencode 'query=appservice_conditions{condition=\"Available\",status=\"True\"}' $api/query | jq -r '.data.result[0].value[1]'"

# Rules: all six loaded and evaluated without error.
rules_ok() {
  curl -sS "$api/rules" | jq -e '[.data.groups[].rules[]] | length == 6 and all(.health == "ok")' >/dev/null
}
eventually 60 rules_ok

# Every expression of the rules and the dashboard is valid PromQL over the real series names.
mapfile -t exprs < <(curl -sS "$api/rules" | jq -r '.data.groups[].rules[].query';
  jq -r '.panels[].targets[].expr' deploy/monitoring/dashboard.json)
[ "${#exprs[@]}" -ge 20 ] || fail "expected at least 20 expressions, got ${#exprs[@]}"
for e in "${exprs[@]}"; do
  query "$e" >/dev/null || fail "does not evaluate: $e"
done

# The main panels return data once rates have two samples.
panel_has_data() { has_data "$(jq -r --arg t "$1" '.panels[] | select(.title == $t) | .targets[0].expr' deploy/monitoring/dashboard.json)"; }
for title in "Reconciles per second by result" "Work queue depth" \
  "API requests per second by code and method" "Leader" "Memory (RSS)" "AppServices by condition" \
  "Reconcile latency (p50, p90, p99)"; do
  eventually 60 panel_has_data "$title"
done
# A healthy operator fires no alert.
firing=$(curl -sS "$api/alerts" | jq '[.data.alerts[] | select(.state == "firing")] | length')
[ "$firing" = 0 ] || fail "$firing alerts firing on a healthy operator"
echo "PASS: Prometheus scraped the operator; ${#exprs[@]} expressions evaluate, 6 rules ok, main panels have data"
