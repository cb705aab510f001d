#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/monitoring without a cluster: the PrometheusRule's spec is a valid rules file, every alert
# passes its promtool unit tests (fires when it should, silent on a healthy series), the dashboard
# is valid JSON whose panels all have queries, and the component renders with kustomize.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Everything under spec: of the PrometheusRule, de-indented: a plain rules file.
awk 'found { sub(/^  /, ""); print } /^spec:/ { found = 1 }' \
  "$root/deploy/monitoring/prometheusrule.yaml" >"$tmp/rules.yaml"
promtool check rules "$tmp/rules.yaml" || fail "promtool check rules"
alerts=$(grep -c '^ *- alert:' "$tmp/rules.yaml")
[ "$alerts" -ge 6 ] || fail "expected 6 alerts, found $alerts"
# Each alert has a test that expects it to fire.
for a in $(sed -n 's/^ *- alert: //p' "$tmp/rules.yaml"); do
  grep -q "alertname: $a\$" "$root/test/monitoring/alerts_test.yaml" || fail "no firing test for $a"
done
sed "s#^evaluation_interval#rule_files: [$tmp/rules.yaml]\nevaluation_interval#" \
  "$root/test/monitoring/alerts_test.yaml" >"$tmp/alerts_test.yaml"
promtool test rules "$tmp/alerts_test.yaml" || fail "promtool test rules"

dashboard=$root/deploy/monitoring/dashboard.json
jq -e '.panels | length >= 10' "$dashboard" >/dev/null || fail "dashboard: fewer than 10 panels"
jq -e '[.panels[] | (.targets | length) > 0 and all(.targets[]; .expr | length > 0)] | all' \
  "$dashboard" >/dev/null || fail "dashboard: a panel without a query"

rendered=$(kubectl kustomize "$root/deploy/monitored") || fail "kubectl kustomize deploy/monitored"
for kind in ServiceMonitor PrometheusRule NetworkPolicy ConfigMap Deployment CustomResourceDefinition; do
  grep -q "^kind: $kind\$" <<<"$rendered" || fail "deploy/monitored renders no $kind"
done
grep -q 'grafana_dashboard: "1"' <<<"$rendered" || fail "dashboard ConfigMap without the sidecar label"
echo "PASS: monitoring ($alerts alerts, $(jq '.panels | length' "$dashboard") panels)"
