#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Helm chart (charts/appservice-operator) with the real helm (test/tools/build-helm.sh builds
# it from helm.sh/helm/v4): its copies of crds/ and deploy/monitoring are current; `helm lint
# --strict`; `helm template` with the default values renders what `kubectl kustomize deploy/`
# renders (same objects, same specs and rules; the chart adds its release labels), and with
# monitoring, the NetworkPolicy and cert-manager on what `deploy/cert-managed` renders; the
# values reach the manifests. Then, as an admin installs it, on a control plane of its own:
# `helm install` into a new namespace, the operator run under the chart's own ServiceAccount and
# RBAC converges an AppService, `helm upgrade` with a changed value rolls the Deployment, and
# `helm uninstall` leaves nothing of the release but the CRD it keeps.
# ctest: processors 2
source "$(dirname "$0")/faults/lib.sh"
helm=$(bash test/tools/build-helm.sh) || fail "test/tools/build-helm.sh failed"
chart=charts/appservice-operator
tmp=$(mktemp -d /tmp/asop-helm.XXXXXX)
trap 'cleanup; rm -rf "$tmp"' EXIT
"$helm" version --short

bash charts/build-chart.sh "$tmp/fresh" >/dev/null
for f in crd.yaml dashboard.json prometheus-rules.yaml; do
  cmp -s "$tmp/fresh/files/$f" "$chart/files/$f" || fail "$chart/files/$f is stale: run charts/build-chart.sh"
done
version=$(sed -n 's/^project(appservice-operator VERSION \([0-9][0-9.]*\).*/\1/p' CMakeLists.txt)
grep -q "^version: $version\$" "$chart/Chart.yaml" || fail "Chart.yaml's version is not $version"
grep -q "^appVersion: \"$version\"\$" "$chart/Chart.yaml" || fail "Chart.yaml's appVersion is not $version"
"$helm" lint --strict "$chart" || fail "helm lint"
"$helm" lint --strict "$chart" --set serviceMonitor.enabled=true,prometheusRule.enabled=true,dashboard.enabled=true,networkPolicy.enabled=true,certManager.enabled=true ||
  fail "helm lint with every switch on"

# normalize: each object as one JSON line "Kind/name" + its content without metadata labels,
# annotations and the selector labels only the chart has, keys sorted, so two renderings compare.
normalize() {
  yq -c 'select(. != null) | del(.metadata.labels, .metadata.annotations)
    | walk(if type == "object" then del(.["app.kubernetes.io/instance"]) else . end)
    | {key: (.kind + "/" + .metadata.name), value: .}' | jq -sc 'sort_by(.key) | .[]' | jq -S -c .
}
compare() { # compare NAME KUSTOMIZE-OUTPUT HELM-OUTPUT
  normalize <"$2" >"$tmp/$1.k"
  normalize <"$3" >"$tmp/$1.h"
  if ! diff <(jq -r .key "$tmp/$1.k") <(jq -r .key "$tmp/$1.h") >"$tmp/$1.keys"; then
    fail "$1: the chart renders other objects than kustomize:
$(cat "$tmp/$1.keys")"
  fi
  if ! diff "$tmp/$1.k" "$tmp/$1.h" >"$tmp/$1.diff"; then
    fail "$1: the chart and kustomize render different objects:
$(head -c 4000 "$tmp/$1.diff")"
  fi
  echo "$1: $(wc -l <"$tmp/$1.k") objects render the same"
}
# kustomize's Namespace is the chart's release namespace (helm install --create-namespace).
kubectl kustomize deploy | yq -y 'select(.kind != "Namespace")' >"$tmp/k-default.yaml"
"$helm" template appservice-operator "$chart" --namespace appservice-system >"$tmp/h-default.yaml"
compare defaults "$tmp/k-default.yaml" "$tmp/h-default.yaml"
kubectl kustomize deploy/cert-managed | yq -y 'select(.kind != "Namespace")' >"$tmp/k-all.yaml"
"$helm" template appservice-operator "$chart" --namespace appservice-system \
  --set serviceMonitor.enabled=true,prometheusRule.enabled=true,dashboard.enabled=true,networkPolicy.enabled=true,certManager.enabled=true \
  >"$tmp/h-all.yaml"
compare every-switch "$tmp/k-all.yaml" "$tmp/h-all.yaml"

# Values reach the manifests.
cat >"$tmp/values.yaml" <<'YAML'
image: {repository: registry.example/asop, tag: "1.2.3", pullPolicy: Always}
replicaCount: 1
priorityClassName: system-cluster-critical
nodeSelector: {kubernetes.io/os: linux}
tolerations: [{key: dedicated, operator: Equal, value: ops, effect: NoSchedule}]
affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: tier, operator: In, values: [ops]}]}]}}}
extraArgs: [--max-concurrent-reconciles=8, --reconcile-timeout=1m]
resources: {limits: {memory: 256Mi}}
leaderElection: {enabled: false}
metrics: {secure: false}
podDisruptionBudget: {enabled: false}
crds: {install: false}
userRoles: {enabled: false}
YAML
"$helm" template ops "$chart" --namespace ops -f "$tmp/values.yaml" >"$tmp/h-values.yaml"
dep() { yq -r "select(.kind == \"Deployment\") | $1" "$tmp/h-values.yaml"; }
[ "$(dep .metadata.name)" = ops-appservice-operator ] || fail "release name not in the object names: $(dep .metadata.name)"
[ "$(dep .spec.replicas)" = 1 ] || fail "replicaCount"
[ "$(dep '.spec.template.spec.containers[0].image')" = registry.example/asop:1.2.3 ] || fail "image"
[ "$(dep '.spec.template.spec.containers[0].imagePullPolicy')" = Always ] || fail "pullPolicy"
[ "$(dep .spec.template.spec.priorityClassName)" = system-cluster-critical ] || fail "priorityClassName"
[ "$(dep '.spec.template.spec.nodeSelector["kubernetes.io/os"]')" = linux ] || fail "nodeSelector"
[ "$(dep '.spec.template.spec.tolerations[0].key')" = dedicated ] || fail "tolerations"
[ "$(dep '.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key')" = tier ] || fail "affinity"
[ "$(dep '.spec.template.spec.containers[0].resources.limits.memory')" = 256Mi ] || fail "resources"
args=$(dep '.spec.template.spec.containers[0].args | join(" ")')
[ "$args" = "--metrics-bind-address=:8443 --health-probe-bind-address=:8081 --max-concurrent-reconciles=8 --reconcile-timeout=1m" ] ||
  fail "args: $args"
for kind in PodDisruptionBudget CustomResourceDefinition ServiceMonitor; do
  grep -q "^kind: $kind\$" "$tmp/h-values.yaml" && fail "$kind rendered although switched off"
done
grep -q 'name: appservice-editor$' "$tmp/h-values.yaml" && fail "user roles rendered although switched off"
echo "values: names, replicas, image, priorityClassName, nodeSelector, tolerations, affinity, resources, args and switches reach the manifests"

# Install as an admin does, on a control plane of its own (the CRD and the cluster roles are
# cluster-wide, and this installs them).
own_controlplane
kubectl delete crd appservices.app.example.com >/dev/null # own_controlplane applies crds/; the chart installs it
release=asop rns=operators
"$helm" install "$release" "$chart" --namespace "$rns" --create-namespace --wait --timeout 3m \
  >"$tmp/install.txt" || fail "helm install: $(cat "$tmp/install.txt")"
cat "$tmp/install.txt"
wait_established appservices.app.example.com
kubectl -n "$rns" rollout status deployment/asop-appservice-operator --timeout=120s
# The chart's RBAC is enough to run the operator: the binary under its ServiceAccount's token.
sa_kubeconfig "$tmp/sa.kubeconfig" "$rns" asop-appservice-operator
OP_KUBECONFIG=$tmp/sa.kubeconfig start_operator chart --namespace "$ns" --leader-elect \
  --leader-election-namespace "$rns" --metrics-secure
app c1 1 nginx:1.27
eventually 90 converged c1 nginx:1.27
k wait appservice/c1 --for condition=Available --timeout=60s >/dev/null
# The built-in edit role now carries AppServices (the chart's aggregated editor role).
kubectl -n "$ns" create serviceaccount dev >/dev/null
kubectl -n "$ns" create rolebinding dev-edit --clusterrole=edit --serviceaccount="$ns:dev" >/dev/null
eventually 30 value_is yes kubectl auth can-i create appservices.app.example.com -n "$ns" --as "system:serviceaccount:$ns:dev"

# Upgrade with a changed value: the Pod template changes, so the Deployment rolls.
gen=$(kubectl -n "$rns" get deployment asop-appservice-operator -o jsonpath='{.metadata.generation}')
"$helm" upgrade "$release" "$chart" --namespace "$rns" --reuse-values \
  --set 'extraArgs={--max-concurrent-reconciles=8}' --wait --timeout 3m >/dev/null || fail "helm upgrade"
[ "$(kubectl -n "$rns" get deployment asop-appservice-operator -o jsonpath='{.metadata.generation}')" -gt "$gen" ] ||
  fail "helm upgrade did not change the Deployment"
kubectl -n "$rns" get deployment asop-appservice-operator -o jsonpath='{.spec.template.spec.containers[0].args}' |
  grep -q -- '--max-concurrent-reconciles=8' || fail "the upgrade's argument is not in the Pod template"
kubectl -n "$rns" rollout status deployment/asop-appservice-operator --timeout=120s
[ "$(kubectl -n "$rns" get replicasets -l app.kubernetes.io/instance="$release" -o name | wc -l)" -ge 2 ] ||
  fail "no new ReplicaSet: the Deployment did not roll"
"$helm" history "$release" --namespace "$rns" | tail -n 2

# Uninstall (AppServices first, while the operator removes their finalizers).
k delete appservice c1 --wait=true --timeout=60s >/dev/null
stop_all_operators
"$helm" uninstall "$release" --namespace "$rns" --wait --timeout 3m | tee "$tmp/uninstall.txt"
left=$(kubectl get clusterroles,clusterrolebindings,serviceaccounts,roles,rolebindings,deployments,services,poddisruptionbudgets \
  -A -l app.kubernetes.io/instance="$release" -o name)
[ -z "$left" ] || fail "left after helm uninstall: $left"
kubectl get crd appservices.app.example.com >/dev/null || fail "the CRD was deleted (crds.keep is the default)"
echo "PASS: helm_chart"
