#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The operator end to end, driven with kubectl as a user would: create, update, scale, drift,
# ownership conflict, Events in kubectl describe, steady state without writes, deletion (also
# while the operator is down, and foreground cascading). Also run against the ASan+UBSan build.
# ctest: asan
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
trap 'stop_all_operators; rm -rf "${exec_dir:-}"; kubectl delete namespace "${ns:-none}" --wait=false >/dev/null 2>&1 || true' EXIT
kubectl apply -f crds/ >/dev/null
wait_established appservices.app.example.com
ns=op-$RANDOM$RANDOM
kubectl create namespace "$ns" >/dev/null
eventually 60 kubectl get serviceaccount default -n "$ns"
start_operator main --namespace "$ns" -v=1  # each write logged: printed if one comes at rest
k() { kubectl -n "$ns" "$@"; }
jp() { k get "$1" -o jsonpath="$2"; }
cond() { jp "appservice/$1" "{.status.conditions[?(@.type==\"$2\")].status}"; }
step() { echo "--- $*"; }
# new_app NAME: a one-replica AppService with a ClusterIP port.
new_app() {
  k apply -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: $1}
spec: {size: 1, image: nginx:1.27, ports: [{port: 80}]}
YAML
}

step "create: the opdemo sample applies unchanged and converges"
sample_app | k apply -f - >/dev/null
eventually 60 value_is True cond nginx-app Available
uid=$(jp appservice/nginx-app '{.metadata.uid}')
[ "$(jp appservice/nginx-app '{.metadata.finalizers[0]}')" = app.example.com/cleanup ] || fail "no finalizer"
for child in deployment/nginx-app service/nginx-app; do
  [ "$(jp $child '{.metadata.ownerReferences[0].uid}')" = "$uid" ] || fail "$child: owner uid"
  [ "$(jp $child '{.metadata.ownerReferences[0].controller}')" = true ] || fail "$child: controller"
  [ "$(jp $child '{.metadata.ownerReferences[0].blockOwnerDeletion}')" = true ] || fail "$child: blockOwnerDeletion"
done
[ "$(jp appservice/nginx-app '{.status.readyReplicas}')" = 2 ] || fail "readyReplicas != 2"
[ "$(k get pods -l app.kubernetes.io/instance=nginx-app --field-selector=status.phase=Running -o name | wc -l)" = 2 ] ||
  fail "pods not Running"
[ "$(jp service/nginx-app '{.spec.type}')" = NodePort ] || fail "service type"
k get appservices

step "update image and size"
k patch appservice nginx-app --type merge -p '{"spec":{"image":"nginx:1.27","size":3}}' >/dev/null
eventually 60 value_is "3 nginx:1.27" jp deployment/nginx-app '{.spec.replicas} {.spec.template.spec.containers[0].image}'
eventually 60 value_is 3 jp appservice/nginx-app '{.status.availableReplicas}'

step "scale subresource"
k scale appservice/nginx-app --replicas=1 >/dev/null
eventually 60 value_is 1 jp deployment/nginx-app '{.spec.replicas}'
eventually 60 value_is 1 jp appservice/nginx-app '{.status.replicas}'

step "drift: edited and deleted children come back"
k scale deployment/nginx-app --replicas=4 >/dev/null
eventually 60 value_is 1 jp deployment/nginx-app '{.spec.replicas}'
k set image deployment/nginx-app app=busybox >/dev/null
eventually 60 value_is nginx:1.27 jp deployment/nginx-app '{.spec.template.spec.containers[0].image}'
k delete service nginx-app >/dev/null
eventually 60 k get service nginx-app
k delete deployment nginx-app >/dev/null
eventually 60 value_is "$uid" jp deployment/nginx-app '{.metadata.ownerReferences[0].uid}'

step "events: kubectl describe shows them"
# The recreated Deployment's rollout is the control plane's work, and can be slow under load (its
# first ReplicaSet name can collide with the old one the garbage collector has not removed yet,
# and the Deployment controller then retries under a new hash). Wait for it with its own
# deadline, then give the operator its own to report it.
eventually 120 value_is "1 1" jp deployment/nginx-app '{.status.updatedReplicas} {.status.availableReplicas}'
eventually 60 value_is True cond nginx-app Available
describe=$(k describe appservice nginx-app)
echo "$describe" | sed -n '/^Events:/,$p'
for reason in Created Updated; do
  grep -qE "Normal +$reason +.*appservice-operator" <<<"$describe" || fail "describe lacks $reason"
done

step "steady state: no writes for a minute"
# Converged: the rollout is over (no old Pods left) and the AppService status says so.
eventually 120 value_is "1 1 1 1" jp deployment/nginx-app '{.status.replicas} {.status.updatedReplicas} {.status.readyReplicas} {.status.availableReplicas}'
eventually 60 value_is "1 1 $(jp appservice/nginx-app '{.metadata.generation}')" \
  jp appservice/nginx-app '{.status.replicas} {.status.availableReplicas} {.status.observedGeneration}'
rv_before=$(k get appservice/nginx-app deployment/nginx-app service/nginx-app -o jsonpath='{range .items[*]}{.metadata.resourceVersion} {end}')
w_before=$(writes "$OP_METRICS_main")
from=$(log_lines "$OP_METRICS_main")
deadline=$(( $(date +%s) + 60 ))
while [ "$(date +%s)" -lt "$deadline" ]; do
  [ "$(writes "$OP_METRICS_main")" = "$w_before" ] ||
    fail "operator wrote in steady state: $(written "$OP_METRICS_main" "$from")"
  sleep 5
done
rv_after=$(k get appservice/nginx-app deployment/nginx-app service/nginx-app -o jsonpath='{range .items[*]}{.metadata.resourceVersion} {end}')
[ "$rv_before" = "$rv_after" ] || fail "resourceVersions moved: $rv_before -> $rv_after"
echo "writes stayed at $w_before; resourceVersions $rv_after"

step "ownership conflict: a same-named Deployment of someone else is not taken over"
k create deployment taken --image=nginx >/dev/null
new_app taken
eventually 60 value_is True cond taken Degraded
[ "$(jp appservice/taken '{.status.conditions[?(@.type=="Degraded")].reason}')" = OwnershipConflict ] ||
  fail "Degraded reason"
[ -z "$(jp deployment/taken '{.metadata.ownerReferences}')" ] || fail "deployment taken over"
eventually 30 sh -c "kubectl -n $ns describe appservice taken | grep -qE 'Warning +OwnershipConflict'"
k delete appservice taken --wait=true --timeout=60s >/dev/null
k get deployment taken >/dev/null || fail "someone else's deployment was deleted"

step "delete: children go, then the finalizer, then the AppService"
k delete appservice nginx-app --wait=true --timeout=60s >/dev/null
eventually 60 sh -c "! kubectl -n $ns get deployment nginx-app && ! kubectl -n $ns get service nginx-app"

step "delete while the operator is stopped, then start it"
new_app later
eventually 60 value_is True cond later Available
stop_operator "$OP_PID_main" TERM || fail "operator did not exit 0 on SIGTERM"
k delete appservice later --wait=false >/dev/null
[ -n "$(jp appservice/later '{.metadata.deletionTimestamp}')" ] || fail "no deletionTimestamp"
k get deployment later >/dev/null || fail "deployment gone without the operator"
# This start authenticates with an exec credential plugin (as EKS/GKE/AKS kubeconfigs do): the
# credential it returns has no expiry, so the plugin must run once, not once per request.
exec_dir=$(mktemp -d /tmp/asop-e2e-exec.XXXXXX)
exec_kubeconfig "$exec_dir"
OP_KUBECONFIG=$exec_dir/kubeconfig start_operator again --namespace "$ns"
eventually 60 sh -c "! kubectl -n $ns get appservice later"
eventually 60 sh -c "! kubectl -n $ns get deployment later && ! kubectl -n $ns get service later"
runs=$(grep -c . "$exec_dir/runs")
[ "$runs" = 1 ] || fail "the exec credential plugin ran $runs times for the operator, want 1"

step "foreground cascading delete"
new_app fg
eventually 60 value_is True cond fg Available
k delete appservice fg --cascade=foreground --wait=true --timeout=90s >/dev/null
eventually 60 sh -c "! kubectl -n $ns get deployment fg && ! kubectl -n $ns get service fg"
echo "PASS: operator"
