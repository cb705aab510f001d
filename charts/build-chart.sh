#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copies into the chart the files it shares with deploy/ and crds/, so there is one source for
# each: the CRD, the alerting rules (the spec of deploy/monitoring/prometheusrule.yaml) and the
# Grafana dashboard. test/e2e/helm_chart_test.sh fails while a copy is stale, and compares what
# the chart renders with what kustomize renders from deploy/.
#   charts/build-chart.sh [CHART-DIR]    (default charts/appservice-operator)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
chart=${1:-$root/charts/appservice-operator}
mkdir -p "$chart/files"
cp "$root/crds/app.example.com_appservices.yaml" "$chart/files/crd.yaml"
cp "$root/deploy/monitoring/dashboard.json" "$chart/files/dashboard.json"
awk 'found { sub(/^  /, ""); print } /^spec:/ { found = 1 }' \
  "$root/deploy/monitoring/prometheusrule.yaml" >"$chart/files/prometheus-rules.yaml"
