#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The image under the deploy/ ServiceAccount with the in-cluster layout a Pod gets (env
# KUBERNETES_SERVICE_HOST/PORT; token, CA and namespace under
# /var/run/secrets/kubernetes.io/serviceaccount/), against the local control plane, which enforces
# RBAC and OwnerReferencesPermissionEnforcement: the full create/update/delete flow works with
# leader election on, so deploy/base/rbac.yaml is enough; `kubectl auth can-i` shows it is no more
# (no Secrets, no Leases outside appservice-system, no deleting AppServices).
# Skipped (exit 77) without a Docker engine, unless REQUIRE_DOCKER=1. Uses the image that
# docker_image_test.sh builds (ASOP_IMAGE, default appservice-operator:dev).
# ctest: may-skip
# ctest: requires docker_image
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
require_docker
: "${ASOP_CONTROLPLANE_DIR:?ASOP_CONTROLPLANE_DIR must name the control plane directory, as given to up.sh}"
image=${ASOP_IMAGE:-appservice-operator:dev}
docker image inspect "$image" >/dev/null || fail "$image is not in the Docker engine (docker_image_test.sh builds it)"
sa=appservice-operator
system=appservice-system
as=system:serviceaccount:$system:$sa
lease=asop-incluster-e2e-$RANDOM$RANDOM
step() { echo "--- $*"; }

op=asop-e2e-incluster-$$
work=$(mktemp -d /tmp/asop-incluster-e2e.XXXXXX)
cleanup() {
  docker rm -f "$op" >/dev/null 2>&1 || true
  kubectl delete namespace "${ns:-none}" --wait=false >/dev/null 2>&1 || true
  kubectl -n "$system" delete lease "$lease" --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

step "install the CRD, the namespace and the RBAC from deploy/"
kubectl apply -f crds/ -f deploy/base/namespace.yaml -f deploy/base/rbac.yaml
wait_established appservices.app.example.com
eventually 60 kubectl -n "$system" get serviceaccount "$sa"

step "kubectl apply -k deploy/ (server dry run): accepted, and the pod meets the restricted Pod Security Standard"
out=$(kubectl apply -k deploy/ --dry-run=server 2>&1) || { echo "$out"; fail "kubectl apply -k deploy/ failed"; }
echo "$out"
grep -qi 'warning' <<<"$out" && fail "kubectl apply -k deploy/ warned"
grep -q '^deployment.apps/appservice-operator ' <<<"$out" || fail "no Deployment in deploy/"

step "kubectl auth can-i: what the ServiceAccount may and may not do"
can() { kubectl auth can-i --as="$as" "$@" 2>/dev/null || true; }
expect() {
  local want=$1; shift
  local got; got=$(can "$@")
  printf '%-4s %s\n' "$got" "$*"
  [ "$got" = "$want" ] || fail "can-i $*: want $want, got $got"
}
expect yes list appservices.app.example.com --all-namespaces
expect yes update appservices.app.example.com --subresource=finalizers -n default
expect yes patch appservices.app.example.com --subresource=status -n default
expect yes delete deployments.apps -n default
expect yes create events -n default
expect yes update leases.coordination.k8s.io -n "$system"
expect yes create tokenreviews.authentication.k8s.io
expect yes create subjectaccessreviews.authorization.k8s.io
expect no get secrets -n "$system"
expect no list secrets --all-namespaces
expect no update leases.coordination.k8s.io -n kube-system
expect no create leases.coordination.k8s.io -n default
expect no delete appservices.app.example.com -n default
expect no create appservices.app.example.com -n default
expect no create pods -n default

step "the in-cluster layout: a token for the ServiceAccount, the cluster CA, the namespace"
port=$(sed -E 's#^https://[^:]+:([0-9]+).*#\1#' "$ASOP_CONTROLPLANE_DIR/server")
mkdir -m 0755 "$work/sa"
kubectl -n "$system" create token "$sa" --duration 1h >"$work/sa/token"
cp "$ASOP_CONTROLPLANE_DIR/pki/ca.crt" "$work/sa/ca.crt"
printf %s "$system" >"$work/sa/namespace"
chmod 0644 "$work/sa/token" "$work/sa/ca.crt" "$work/sa/namespace"

step "run the image in-cluster style, with leader election"
# Its own namespace (--namespace): other e2e tests run at the same time on this control plane.
ns=incluster-$RANDOM$RANDOM
kubectl create namespace "$ns" >/dev/null
metrics=$(free_port); health=$(free_port "$metrics")
docker run -d --name "$op" --network host --read-only \
  -e KUBERNETES_SERVICE_HOST=127.0.0.1 -e KUBERNETES_SERVICE_PORT="$port" \
  -v "$work/sa:/var/run/secrets/kubernetes.io/serviceaccount:ro" "$image" \
  --namespace "$ns" --leader-elect --leader-election-namespace "$system" --leader-election-id "$lease" \
  --metrics-bind-address "127.0.0.1:$metrics" --health-probe-bind-address "127.0.0.1:$health" \
  -v 2 >/dev/null
eventually 60 curl -fsS "127.0.0.1:$health/readyz"
eventually 60 kubectl -n "$system" get lease "$lease"
holder=$(kubectl -n "$system" get lease "$lease" -o jsonpath='{.spec.holderIdentity}')
[ -n "$holder" ] || fail "nobody holds the lease"
echo "lease $system/$lease held by $holder"

k() { kubectl -n "$ns" "$@"; }
jp() { k get "$1" -o jsonpath="$2"; }
cond() { jp "appservice/$1" "{.status.conditions[?(@.type==\"$2\")].status}"; }

step "create: children with blockOwnerDeletion ownerReferences (needs appservices/finalizers)"
sample_app | k apply -f - >/dev/null
eventually 90 value_is True cond nginx-app Available
uid=$(jp appservice/nginx-app '{.metadata.uid}')
[ "$(jp appservice/nginx-app '{.metadata.finalizers[0]}')" = app.example.com/cleanup ] || fail "no finalizer"
for child in deployment/nginx-app service/nginx-app; do
  [ "$(jp $child '{.metadata.ownerReferences[0].uid}')" = "$uid" ] || fail "$child: owner uid"
  [ "$(jp $child '{.metadata.ownerReferences[0].blockOwnerDeletion}')" = true ] || fail "$child: blockOwnerDeletion"
done
eventually 30 sh -c "kubectl -n $ns get events --field-selector involvedObject.name=nginx-app -o name | grep -q ."
k get appservice,deployment,service

step "update: image and size reach the Deployment, status follows"
k patch appservice nginx-app --type merge -p '{"spec":{"image":"nginx:1.27","size":3}}' >/dev/null
eventually 60 value_is "3 nginx:1.27" jp deployment/nginx-app '{.spec.replicas} {.spec.template.spec.containers[0].image}'
eventually 60 value_is 3 jp appservice/nginx-app '{.status.availableReplicas}'

step "drift: a deleted Service comes back"
k delete service nginx-app >/dev/null
eventually 60 value_is "$uid" jp service/nginx-app '{.metadata.ownerReferences[0].uid}'

step "delete: children go, then the finalizer, then the AppService"
k delete appservice nginx-app --wait=true --timeout=60s >/dev/null
eventually 60 sh -c "! kubectl -n $ns get deployment nginx-app && ! kubectl -n $ns get service nginx-app"

step "no request was refused by RBAC"
# -v 2 logs every failed write. Two kinds of 403 are not RBAC and are allowed: a terminating
# namespace (other tests' leftovers), and OwnerReferencesPermissionEnforcement's "cannot find
# RESTMapping": that admission plugin refreshes its discovery only every 30 s, so for a while after
# an API server (re)start or a new CRD it does not know AppService yet; the operator retries.
logs=$(docker logs "$op" 2>&1)
denied=$(grep -Ei 'forbidden|cannot (get|list|watch|create|update|patch|delete) resource' <<<"$logs" |
  grep -v -e 'because it is being terminated' -e 'cannot find RESTMapping' || true)
if [ -n "$denied" ]; then
  head -n 5 <<<"$denied"
  fail "the operator was refused something under deploy/base/rbac.yaml"
fi
codes=$(metrics "$metrics" | grep '^rest_client_requests_total' | grep -o 'code="[0-9]*"' | sort -u | tr '\n' ' ')
echo "rest_client_requests_total codes: $codes(403s, if any, were the two kinds above)"

step "docker stop releases cleanly"
docker stop -t 20 "$op" >/dev/null
[ "$(docker inspect -f '{{.State.ExitCode}}' "$op")" = 0 ] || fail "exit code after docker stop"
echo "PASS: incluster_rbac"
