#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The local control plane behaves like a real cluster: a Deployment gets Running Pods on the kwok
# node and becomes Available; deleting it lets the garbage collector remove its ReplicaSet and Pods.
source "$(dirname "$0")/lib/common.sh"
new_namespace cp

kubectl apply -n "$ns" -f - <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
YAML
kubectl wait -n "$ns" deployment/web --for=condition=Available --timeout=120s
running() { [ "$(kubectl get pods -n "$ns" -l app=web --field-selector=status.phase=Running -o name | wc -l)" = 2 ]; }
eventually 120 running
[ "$(kubectl get deployment web -n "$ns" -o jsonpath='{.status.readyReplicas}')" = 2 ] ||
  fail "readyReplicas is not 2"
rs=$(kubectl get rs -n "$ns" -l app=web -o name)
[ -n "$rs" ] || fail "no ReplicaSet for the Deployment"

kubectl delete deployment web -n "$ns" --wait=true --timeout=60s
gone() { [ -z "$(kubectl get rs,pods -n "$ns" -l app=web -o name)" ]; }
eventually 120 gone
echo "PASS: controlplane"
