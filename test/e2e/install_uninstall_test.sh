#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A cluster admin's install and uninstall with the one file, on a control plane of its own (the
# uninstall deletes the CRD, which the shared one's tests need): `kubectl apply -f
# dist/install.yaml` brings up the CRD, RBAC and the operator's Deployment; with the real binary
# reconciling, AppServices get their children; then the documented order (docs/deploy.md): the
# AppServices first, while the operator runs to remove their finalizers, then `kubectl delete -f
# dist/install.yaml`. Nothing of ours is left: no CRD, namespace, ClusterRole, binding or child.
# ctest: processors 2
source "$(dirname "$0")/faults/lib.sh"
own_controlplane
kubectl delete -f crds/ --wait=true >/dev/null  # the install file brings its own
step() { echo "--- $*"; }

step "kubectl apply -f dist/install.yaml"
kubectl apply -f dist/install.yaml >/dev/null
wait_established appservices.app.example.com
kubectl -n appservice-system rollout status deployment/appservice-operator --timeout=120s >/dev/null
[ "$(kubectl -n appservice-system get deployment appservice-operator -o jsonpath='{.metadata.labels.app\.kubernetes\.io/version}')" = \
  "$(sed -n 's/^project(appservice-operator VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)" ] ||
  fail "the installed Deployment does not carry the version label"
# The Pods are kwok's (nothing runs in them): the real binary does the reconciling, as the
# installed ServiceAccount would.
start_operator main
for a in one two; do
  kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: $a}
spec: {size: 1, image: nginx:1.27, ports: [{port: 80}]}
YAML
done
for a in one two; do
  eventually 90 value_is True kubectl -n "$ns" get "appservice/$a" -o 'jsonpath={.status.conditions[?(@.type=="Available")].status}'
done

step "uninstall: the AppServices first, while the operator runs"
kubectl delete appservices --all -A --wait=true --timeout=120s >/dev/null
eventually 60 value_is 0 sh -c "kubectl get deployments,services -A -l app.kubernetes.io/managed-by=appservice-operator -o name | wc -l"
stop_all_operators
step "uninstall: kubectl delete -f dist/install.yaml"
kubectl delete -f dist/install.yaml --wait=true --timeout=180s >/dev/null
left=$(kubectl get clusterroles,clusterrolebindings -l app.kubernetes.io/name=appservice-operator -o name)
[ -z "$left" ] || fail "left behind: $left"
kubectl get crd appservices.app.example.com >/dev/null 2>&1 && fail "the CRD is still there"
kubectl get namespace appservice-system >/dev/null 2>&1 && fail "namespace appservice-system is still there"
echo "nothing left: no CRD, no appservice-system, no ClusterRole or binding, no child"
echo "PASS: install_uninstall"
