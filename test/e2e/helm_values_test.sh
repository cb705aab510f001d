#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The chart refuses values that cannot run, as an admin meets it: `helm install` against the
# shared control plane (into a namespace of this test) and `helm template` both fail with a
# message that names the values to change, and the refused install leaves no release behind.
# Combinations (templates/_helpers.tpl, asop.validate): cert-manager's certificate without secure
# metrics (the binary refuses --metrics-cert-path without --metrics-secure), several replicas
# without leader election (two active reconcilers), one port for metrics and health. Single
# values (values.schema.json): a misspelled key, top-level or nested, a pull policy that is not
# one, a port out of range. The allowed neighbours of each refusal still render.
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
helm=$(bash test/tools/build-helm.sh) || fail "test/tools/build-helm.sh failed"
chart=charts/appservice-operator
new_namespace helmvalues
tmp=$(mktemp -d /tmp/asop-helm-values.XXXXXX)
trap 'kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

# refused SET MESSAGE: install and template with --set SET fail, saying MESSAGE; no release is left.
refused() {
  local out
  if out=$("$helm" install refused "$chart" --namespace "$ns" --set "$1" 2>&1); then
    fail "helm install --set $1 was accepted"
  fi
  grep -F -- "$2" <<<"$out" >/dev/null || fail "helm install --set $1 failed without '$2': $out"
  # (helm 4 lists releases in any status by default)
  out=$("$helm" list --namespace "$ns" --short) || fail "helm list: $out"
  [ -z "$out" ] || fail "a release is left after the refused --set $1: $out"
  if out=$("$helm" template refused "$chart" --namespace "$ns" --set "$1" 2>&1); then
    fail "helm template --set $1 was accepted"
  fi
  grep -F -- "$2" <<<"$out" >/dev/null || fail "helm template --set $1 failed without '$2': $out"
  echo "refused --set $1: $(grep -F -- "$2" <<<"$out" | sed 's/^Error: //')"
}
refused certManager.enabled=true,metrics.secure=false \
  "certManager.enabled=true with metrics.secure=false: the certificate is for HTTPS metrics (--metrics-cert-path), which the operator refuses without --metrics-secure. Set metrics.secure=true, or certManager.enabled=false."
refused leaderElection.enabled=false \
  "leaderElection.enabled=false with replicaCount=2: every replica would reconcile the same AppServices at once. Set replicaCount=1, or leaderElection.enabled=true."
refused leaderElection.enabled=false,replicaCount=3 "leaderElection.enabled=false with replicaCount=3"
refused metrics.port=8081 \
  "metrics.port and health.port are both 8081: the operator cannot serve both on one port. Set one of them to another port."
refused replicaCont=1 "additional properties 'replicaCont' not allowed"
refused certManager.enable=true "additional properties 'enable' not allowed"
refused image.pullPolicy=Sometimes "pullPolicy"
refused health.port=70000 "health/port"

# The neighbours render: one replica without leader election, cert-manager with secure metrics.
render() { "$helm" template ok "$chart" --namespace "$ns" --set "$1" >"$tmp/ok.yaml" || fail "helm template --set $1 was refused"; }
render leaderElection.enabled=false,replicaCount=1
[ "$(yq -r 'select(.kind == "Deployment") | .spec.replicas' "$tmp/ok.yaml")" = 1 ] || fail "replicaCount=1 not rendered"
render certManager.enabled=true,metrics.secure=true
args=$(yq -r 'select(.kind == "Deployment") | .spec.template.spec.containers[0].args | join(" ")' "$tmp/ok.yaml")
[[ $args == *--metrics-secure*--metrics-cert-path=* ]] || fail "cert-manager with secure metrics renders args: $args"
echo "PASS: helm_values"
