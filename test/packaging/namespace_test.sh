#!/usr/bin/env bash
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
