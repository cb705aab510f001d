#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The local control plane behaves like a real cluster: a Deployment gets Running Pods on the kwok
# node and becomes Available; deleting it lets the garbage collector remove its ReplicaSet and Pods.
# Server and kubectl are both at the pinned version, so no test leans on a skewed client.
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/../controlplane/versions.sh"
new_namespace cp

server=$(kubectl version -o json 2>/dev/null | jq -r .serverVersion.gitVersion)
client=$(kubectl version --client -o json | jq -r .clientVersion.gitVersion)
[ "$server" = "$KUBERNETES_VERSION" ] || fail "server is $server, the pin is $KUBERNETES_VERSION"
[ "$client" = "$KUBERNETES_VERSION" ] || fail "kubectl is $client ($(command -v kubectl)), the server $server"

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
