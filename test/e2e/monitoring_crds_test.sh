#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/monitored and deploy/cert-managed against the real CRDs of the Prometheus Operator and
# cert-manager, taken from their Go modules (pinned in test/lib/go_modules.sh, cached in the Go
# module cache like the control plane's sources): both overlays, moved into a namespace of this
# test, pass a server-side apply with strict field validation (a dry run: nothing is created), and
# a field the CRDs do not know is refused, so the check has teeth. Then the ServiceMonitor's scrape identity
# (deploy/monitoring/scraper.yaml) is applied for real: the token controller fills its Secret, and
# the operator's secure /metrics answers that token with 200.
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
source test/lib/go_modules.sh
new_namespace moncrd
tmp=$(mktemp -d)
trap 'stop_all_operators; kubectl delete clusterrolebinding "appservice-operator-metrics-scraper-$ns" --ignore-not-found >/dev/null 2>&1 || true; kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

po=$(prometheus_operator_crds) || fail "the Prometheus Operator's CRDs"
cm=$(cert_manager_crds) || fail "cert-manager's CRDs"
# Only the kinds the overlays use. Cluster-wide, and the same for every run: applied, never deleted
# (another test of this run may be checking against them).
kubectl apply --server-side --force-conflicts -f "$po/monitoring.coreos.com_servicemonitors.yaml" \
  -f "$po/monitoring.coreos.com_prometheusrules.yaml" \
  -f "$cm/cert-manager.io_issuers.yaml" -f "$cm/cert-manager.io_certificates.yaml" >/dev/null
for crd in servicemonitors.monitoring.coreos.com prometheusrules.monitoring.coreos.com \
  issuers.cert-manager.io certificates.cert-manager.io; do
  wait_established "$crd"
done

# render OVERLAY: deploy/OVERLAY moved into $ns, without the Namespace
# object (the test's namespace exists) and with cluster-wide names suffixed, so parallel runs and
# the other tests' objects are untouched.
render() {
  mkdir -p "$tmp/$1"
  printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nnameSuffix: -%s\nresources: [%s]\npatches:\n- target: {kind: Namespace}\n  patch: |-\n    $patch: delete\n    apiVersion: v1\n    kind: Namespace\n    metadata: {name: x}\n' \
    "$ns" "$ns" "$(realpath --relative-to="$tmp/$1" "deploy/$1")" >"$tmp/$1/kustomization.yaml"
  kubectl kustomize --load-restrictor LoadRestrictionsNone "$tmp/$1"
}
for overlay in monitored cert-managed; do
  render "$overlay" >"$tmp/$overlay.yaml"
  for kind in ServiceMonitor PrometheusRule Secret; do
    grep -q "^kind: $kind\$" "$tmp/$overlay.yaml" || fail "deploy/$overlay renders no $kind"
  done
  out=$(kubectl apply --server-side --dry-run=server --validate=strict --field-manager=moncrd-test \
    -f "$tmp/$overlay.yaml" 2>&1) || fail "deploy/$overlay refused by the API server: $out"
  echo "deploy/$overlay: $(grep -c 'serverside-applied' <<<"$out") objects accepted (server dry run, strict)"
done
grep -q '^kind: Certificate$' "$tmp/cert-managed.yaml" || fail "deploy/cert-managed renders no Certificate"
grep -q 'bearerTokenFile' "$tmp/monitored.yaml" && fail "the ServiceMonitor still uses the deprecated bearerTokenFile"

# Teeth: an unknown field in the ServiceMonitor is refused by its CRD's schema.
sed 's/^  - authorization:$/  - notAField: 1\n    authorization:/' "$tmp/monitored.yaml" >"$tmp/bad.yaml"
grep -q notAField "$tmp/bad.yaml" || fail "could not plant the unknown field"
if out=$(kubectl apply --server-side --dry-run=server --validate=strict --field-manager=moncrd-test \
  -f "$tmp/bad.yaml" 2>&1); then
  fail "an unknown ServiceMonitor field was accepted"
fi
grep -q 'notAField' <<<"$out" || fail "the refusal does not name the field: $out"

# The scrape identity, for real: the token controller fills the Secret; the token may get /metrics.
mkdir -p "$tmp/scraper"
# With the component's kustomizeconfig.yaml, so the Secret's service-account.name annotation
# follows the suffix (without it the token controller finds no such account and leaves it empty).
printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nnameSuffix: -%s\nresources: [%s]\nconfigurations: [%s]\n' \
  "$ns" "$ns" "$(realpath --relative-to="$tmp/scraper" deploy/monitoring/scraper.yaml)" \
  "$(realpath --relative-to="$tmp/scraper" deploy/monitoring/kustomizeconfig.yaml)" >"$tmp/scraper/kustomization.yaml"
kubectl kustomize --load-restrictor LoadRestrictionsNone "$tmp/scraper" | kubectl apply -f - >/dev/null
# The ClusterRole the scraper is bound to, as deploy/base installs it (cluster-wide, shared).
yq -y 'select(.kind == "ClusterRole" and .metadata.name == "appservice-operator-metrics-reader")' \
  deploy/base/rbac.yaml | kubectl apply -f - >/dev/null
token_of() { kubectl -n "$ns" get secret "appservice-operator-metrics-token-$ns" -o jsonpath='{.data.token}'; }
has_token() { [ -n "$(token_of)" ]; }
eventually 60 has_token
token=$(token_of | base64 -d)
start_operator mon --namespace "$ns" --metrics-secure
url="https://127.0.0.1:$OP_METRICS_mon/metrics"
code=$(curl -k -s -o "$tmp/metrics" -w '%{http_code}' --max-time 10 -H "Authorization: Bearer $token" "$url" || true)
[ "$code" = 200 ] || fail "the ServiceMonitor's token got $code from /metrics"
grep -q '^controller_runtime_reconcile_total' "$tmp/metrics" || fail "no operator series in the scrape"
code=$(curl -k -s -o /dev/null -w '%{http_code}' --max-time 10 "$url" || true)
[ "$code" = 401 ] || fail "no token got $code"
echo "PASS: monitoring_crds (Prometheus Operator $PROMETHEUS_OPERATOR_VERSION, cert-manager $CERT_MANAGER_VERSION)"
