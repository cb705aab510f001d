#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The namespace is the user's choice, made once: an overlay that sets `namespace:` over deploy/base
# and the monitoring component (test/packaging/fixtures/other-namespace) moves every namespaced
# object, the Namespace itself, the ServiceAccount subjects of the bindings and the Lease (the
# operator's flags name no namespace: the Pod's is the default), and leaves no appservice-system
# anywhere. The operator Deployment spreads over nodes and has a PodDisruptionBudget.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$(kubectl kustomize "$root/test/packaging/fixtures/other-namespace") || fail "kubectl kustomize"
left=$(grep -n 'appservice-system' <<<"$out" || true)
[ -z "$left" ] || fail "appservice-system is still written in the overlay's output: $left"
namespaces=$(sed -n 's/^  namespace: //p' <<<"$out" | sort -u)
[ "$namespaces" = platform-ops ] || fail "objects in namespaces: $namespaces"
[ "$(grep -c '^  namespace: platform-ops' <<<"$out")" -ge 10 ] || fail "too few namespaced objects moved"
grep -q '^  name: platform-ops$' <<<"$out" || fail "the Namespace object was not renamed"
subjects=$(awk '/^subjects:/ {s=1; next} /^[a-z]/ {s=0} s && /namespace:/ {print $2}' <<<"$out" | sort -u)
[ "$subjects" = platform-ops ] || fail "binding subjects in: $subjects"
grep -q -- '--leader-election-namespace' <<<"$out" && fail "a --leader-election-namespace flag pins the Lease"
grep -q '^kind: PodDisruptionBudget' <<<"$out" || fail "no PodDisruptionBudget"
grep -q 'topologyKey: kubernetes.io/hostname' <<<"$out" || fail "no topology spread over nodes"
echo "namespace platform-ops: $(grep -c '^  namespace: platform-ops' <<<"$out") namespaced objects, the Namespace and the binding subjects moved; PDB and spread present"

# A namePrefix (kubebuilder's config/default) renames objects; every reference must follow,
# including those kustomize knows only from deploy/monitoring/kustomizeconfig.yaml.
out=$(kubectl kustomize "$root/test/packaging/fixtures/prefixed") || fail "kubectl kustomize prefixed"
field() { yq -r "select(.kind == \"$1\") | $2" <<<"$out" | grep -v '^---$' | sort -u; }
sa=$(field Deployment '.spec.template.spec.serviceAccountName')
[ "$sa" = team-a-appservice-operator ] || fail "Deployment's ServiceAccount: $sa"
token=$(field Secret '.metadata.name')
[ "$(field ServiceMonitor '.spec.endpoints[0].authorization.credentials.name')" = "$token" ] ||
  fail "the ServiceMonitor reads $(field ServiceMonitor '.spec.endpoints[0].authorization.credentials.name'), the Secret is $token"
[ "$(field Secret '.metadata.annotations["kubernetes.io/service-account.name"]')" = team-a-appservice-operator-metrics-scraper ] ||
  fail "the token Secret is for $(field Secret '.metadata.annotations["kubernetes.io/service-account.name"]')"
grep -q 'name: team-a-appservice-operator-metrics-scraper$' <<<"$out" || fail "no prefixed scraper ServiceAccount"
[ "$(field Certificate '.spec.issuerRef.name')" = "$(field Issuer '.metadata.name')" ] ||
  fail "the Certificate's issuer does not follow the prefix"
# The certificate's Secret is made by cert-manager, not kustomize: one name across the three.
cert=$(field Certificate '.spec.secretName')
[ "$(field Deployment '.spec.template.spec.volumes[0].secret.secretName')" = "$cert" ] || fail "the mounted Secret is not $cert"
[ "$(field ServiceMonitor '.spec.endpoints[0].tlsConfig.ca.secret.name')" = "$cert" ] || fail "the ServiceMonitor's CA is not $cert"
echo "prefix team-a-: the Deployment's ServiceAccount, the ServiceMonitor's token Secret, its ServiceAccount and the Certificate's Issuer follow"
