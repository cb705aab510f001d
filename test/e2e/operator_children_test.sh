#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Children follow the spec exactly, driven with kubectl: fields removed from the spec leave the
# children, the Service type goes through all three values and back, children are created with
# one Apply entry and a same-named stranger is left untouched, children made by an older version
# (POST, old selector, unfolded) are migrated, every cascade policy does what kubectl promises, a
# conflict clears by itself with reads only, and Events are recorded once per real change.
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
trap 'stop_all_operators; kubectl delete namespace "${ns:-none}" --wait=false >/dev/null 2>&1 || true' EXIT
kubectl apply -f crds/ >/dev/null
wait_established appservices.app.example.com
ns=ch-$RANDOM$RANDOM
kubectl create namespace "$ns" >/dev/null
eventually 60 kubectl get serviceaccount default -n "$ns"
k() { kubectl -n "$ns" "$@"; }
jp() { k get "$1" -o jsonpath="$2"; }
cond() { jp "appservice/$1" "{.status.conditions[?(@.type==\"$2\")].status}"; }
step() { echo "--- $*"; }
events() { k get events --field-selector "involvedObject.name=$1,reason=$2" -o jsonpath='{range .items[*]}{.count}{"\n"}{end}' | awk '{s+=$1} END {print s+0}'; }

step "migration: children made by an older version (POST, old selector) are taken over once"
k apply -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: legacy}
spec: {size: 1, image: nginx:1.27, ports: [{port: 80, name: p80}, {port: 81, name: p81}]}
YAML
uid=$(jp appservice/legacy '{.metadata.uid}')
owner="ownerReferences: [{apiVersion: app.example.com/v1, kind: AppService, name: legacy, uid: $uid, controller: true, blockOwnerDeletion: true}]"
old_labels="{app.kubernetes.io/name: legacy, app.kubernetes.io/instance: legacy, app.kubernetes.io/managed-by: appservice-operator}"
k create --field-manager=appservice-operator -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: legacy, labels: $old_labels, $owner}
spec:
  selector: {app.kubernetes.io/instance: legacy}
  ports: [{port: 80, protocol: TCP, targetPort: 80, name: p80}, {port: 81, protocol: TCP, targetPort: 81, name: p81}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: legacy, labels: $old_labels, $owner}
spec:
  replicas: 1
  selector: {matchLabels: {app.kubernetes.io/instance: legacy}}
  template:
    metadata: {labels: $old_labels}
    spec: {containers: [{name: app, image: nginx:1.27}]}
YAML
old_deploy_uid=$(jp deployment/legacy '{.metadata.uid}')

step "unfolded: a child an earlier build POSTed, with today's labels, is folded"
# What an earlier build's create (a POST) left when its fold never ran: our manager's Update
# entry, today's labels and selector, our ownerReference. It also carries an env var that the
# spec does not have, owned by that Update entry.
k apply -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: unfolded}
spec: {size: 1, image: nginx:1.27, envs: [{name: A, value: "1"}]}
YAML
uid=$(jp appservice/unfolded '{.metadata.uid}')
labels="{app.kubernetes.io/name: unfolded, app.kubernetes.io/instance: unfolded, app.kubernetes.io/managed-by: appservice-operator, app.example.com/appservice: unfolded}"
k create --field-manager=appservice-operator -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata:
  name: unfolded
  labels: $labels
  ownerReferences: [{apiVersion: app.example.com/v1, kind: AppService, name: unfolded, uid: $uid, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: 1
  selector: {matchLabels: {app.example.com/appservice: unfolded}}
  template:
    metadata: {labels: $labels}
    spec: {containers: [{name: app, image: nginx:1.27, env: [{name: A, value: "1"}, {name: EXTRA, value: "x"}]}]}
YAML
ops() { jp deployment/unfolded '{range .metadata.managedFields[?(@.manager=="appservice-operator")]}{.operation}{" "}{end}'; }
echo "unfolded: appservice-operator entries before the operator: $(ops)"
# -v=1: each write is logged (verb, path, answer, why), printed when a write count is wrong.
start_operator main --namespace "$ns" -v=1
eventually 90 value_is legacy jp deployment/legacy '{.spec.selector.matchLabels.app\.example\.com/appservice}'
[ "$(jp deployment/legacy '{.metadata.uid}')" != "$old_deploy_uid" ] || fail "deployment not recreated"
eventually 60 value_is legacy jp service/legacy '{.spec.selector.app\.example\.com/appservice}'
eventually 30 sh -c "kubectl -n $ns describe appservice legacy | grep -qE 'Normal +Recreating'"
k patch appservice legacy --type merge -p '{"spec":{"ports":[{"port":80,"name":"p80"}]}}' >/dev/null
eventually 60 value_is 80 jp service/legacy '{.spec.ports[*].port}'
eventually 60 value_is True cond legacy Available
echo "legacy Service ports after removing 81: $(jp service/legacy '{.spec.ports[*].port}')"
k patch appservice unfolded --type merge -p '{"spec":{"image":"nginx:1.27.1"}}' >/dev/null
eventually 60 value_is nginx:1.27.1 jp deployment/unfolded '{.spec.template.spec.containers[0].image}'
eventually 60 value_is A jp deployment/unfolded '{.spec.template.spec.containers[0].env[*].name}'
eventually 60 value_is "Apply " ops
echo "unfolded after a spec edit: env $(jp deployment/unfolded '{.spec.template.spec.containers[0].env[*].name}'), appservice-operator entries: $(ops)"

step "removed fields leave the children"
k apply -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: edit}
spec:
  size: 1
  image: nginx:1.27
  envs: [{name: A, value: "1"}, {name: B, value: "2"}]
  resources: {limits: {cpu: 500m, memory: 128Mi}}
  ports: [{port: 80}]
YAML
eventually 60 value_is "A B" jp deployment/edit '{.spec.template.spec.containers[0].env[*].name}'
eventually 60 value_is 80 jp service/edit '{.spec.ports[*].port}'
# Created by an apply that only creates: our one entry is an Apply, so nothing needs folding.
for child in deployment/edit service/edit; do
  got=$(jp $child '{range .metadata.managedFields[?(@.manager=="appservice-operator")]}{.operation}{" "}{end}')
  [ "$got" = "Apply " ] || fail "$child: appservice-operator managedFields entries '$got', want one Apply"
done
k apply -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: edit}
spec:
  size: 1
  image: nginx:1.27
  envs: [{name: A, value: "1"}]
  ports: [{port: 8080}]
YAML
eventually 60 value_is A jp deployment/edit '{.spec.template.spec.containers[0].env[*].name}'
eventually 60 value_is "" jp deployment/edit '{.spec.template.spec.containers[0].resources.limits}'
eventually 60 value_is 8080 jp service/edit '{.spec.ports[*].port}'
eventually 60 value_is True cond edit Available
[ "$(cond edit Degraded)" != True ] || fail "edit is Degraded: $(jp appservice/edit '{.status.conditions}')"

step "service type: ClusterIP -> NodePort -> LoadBalancer -> ClusterIP"
np=$(sample_app | sed -n 's/.*nodePort: \([0-9]*\).*/\1/p')
k patch appservice edit --type merge -p "{\"spec\":{\"ports\":[{\"port\":8080,\"nodePort\":$np}]}}" >/dev/null
eventually 60 value_is "NodePort $np" jp service/edit '{.spec.type} {.spec.ports[0].nodePort}'
k patch appservice edit --type merge -p '{"spec":{"serviceType":"LoadBalancer","ports":[{"port":8080}]}}' >/dev/null
eventually 60 value_is LoadBalancer jp service/edit '{.spec.type}'
k patch appservice edit --type json -p '[{"op":"remove","path":"/spec/serviceType"}]' >/dev/null
eventually 60 value_is "ClusterIP " jp service/edit '{.spec.type} {.spec.ports[0].nodePort}'
eventually 60 value_is False cond edit Degraded

step "events: Created once per child, no Updated without a change"
[ "$(events edit Created)" = 2 ] || fail "Created events for edit: $(events edit Created), want 2"

step "conflict: reads only at rest, clears by itself"
k create deployment clash --image=nginx >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: clash}
spec: {size: 1, image: nginx:1.27}
YAML
eventually 60 value_is True cond clash Degraded
# The refused create left the stranger as it was: no owner, its image, no fields of ours.
got=$(jp deployment/clash '{.metadata.ownerReferences}|{.spec.template.spec.containers[*].image}|{.metadata.managedFields[?(@.manager=="appservice-operator")].operation}')
[ "$got" = "|nginx|" ] || fail "the stranger's deployment was touched: $got"
eventually 60 value_is True cond edit Available
eventually 60 value_is True cond legacy Available
# Their rollouts reported done too: a late report of the Deployment controller (a loaded machine)
# is a status change the operator rightly writes, not a write at rest.
for a in edit legacy; do
  eventually 120 value_is RolloutComplete jp appservice/$a '{.status.conditions[?(@.type=="Progressing")].reason}'
done
sleep_until() { while [ "$(date +%s)" -lt "$1" ]; do sleep 1; done; }
writes_settled "$OP_METRICS_main"  # the conflict's Event is sent after its status
w_before=$(writes "$OP_METRICS_main")
from=$(log_lines "$OP_METRICS_main")
sleep_until $(( $(date +%s) + 65 ))  # more than two conflict re-checks (30 s each)
w_after=$(writes "$OP_METRICS_main")
echo "writes over 65 s at rest with a conflict: $(( w_after - w_before ))"
[ "$w_after" = "$w_before" ] ||
  fail "operator wrote at rest with a conflict: $w_before -> $w_after; $(written "$OP_METRICS_main" "$from")"
k delete deployment clash --wait=true >/dev/null
eventually 60 value_is False cond clash Degraded
eventually 30 sh -c "kubectl -n $ns describe appservice clash | grep -qE 'Normal +ConflictResolved'"
[ "$(jp deployment/clash '{.metadata.ownerReferences[0].name}')" = clash ] || fail "clash not ours"

step "orphan: children stay, untouched and running, without ownerReferences"
k delete appservice edit --cascade=orphan --wait=true --timeout=60s >/dev/null
eventually 60 value_is "" jp deployment/edit '{.metadata.ownerReferences}'
eventually 60 value_is "" jp service/edit '{.metadata.ownerReferences}'
[ -z "$(jp deployment/edit '{.metadata.deletionTimestamp}')" ] || fail "orphaned deployment being deleted"
eventually 60 value_is 1 jp deployment/edit '{.status.availableReplicas}'

step "foreground: the AppService stays until its Pods are gone"
k delete appservice clash --cascade=foreground --wait=true --timeout=120s >/dev/null
pods=$(k get pods -l app.example.com/appservice=clash -o name | wc -l)
[ "$pods" = 0 ] || fail "$pods Pods still exist after a foreground delete returned"
k get deployment clash >/dev/null 2>&1 && fail "deployment clash still exists"

step "background: the children go, then the AppService"
k delete appservice legacy --wait=true --timeout=60s >/dev/null
eventually 60 sh -c "! kubectl -n $ns get deployment legacy && ! kubectl -n $ns get service legacy"
[ "$(events legacy Deleted)" -le 2 ] || fail "more than one Deleted event per child"
step "resync: --sync-period reconciles again at rest, with no writes"
k apply -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: sync}
spec: {size: 0, image: nginx:1.27}
YAML
eventually 60 value_is True cond sync Available
# Its Deployment's status settled and mirrored: the Deployment controller observed the generation
# and reported the rollout done. A report it makes later (a loaded machine is late) is a change the
# operator rightly writes, not a resync's write.
eventually 120 value_is RolloutComplete jp appservice/sync '{.status.conditions[?(@.type=="Progressing")].reason}'
stop_operator "$OP_PID_main" TERM || fail "operator did not exit 0 on SIGTERM"
start_operator resync --namespace "$ns" --sync-period 2s -v=1
# Reconciles of sync (controller.cpp logs each at -v=1 with the object's anchors), and the writes
# about it: by its reconciles, to it or its children, and Events about it.
sync_log=$OP_LOG_DIR/resync.log
reconciles_of_sync() { grep -c "controller=appservice namespace=$ns name=sync reconcileID=[^ ]* reconciled result=" "$sync_log" || true; }
at_least() { [ "$("$2")" -ge "$1" ]; }
writes_of_sync() {
  tail -n +"$(( $1 + 1 ))" "$sync_log" | grep ' write: ' |
    grep -E "namespace=$ns name=sync |/namespaces/$ns/[a-z]+/sync([/? .]|$)|AppService $ns/sync\)" || true
}
# The first reconcile of a new process may still write what the old one left undone (and its Events
# go out after it): once that is over and the writes settled, sync changes no more, so every
# reconcile of it is a resync.
eventually 30 at_least 1 reconciles_of_sync
writes_settled "$OP_METRICS_resync"
from=$(log_lines "$OP_METRICS_resync")
w_before=$(writes "$OP_METRICS_resync")
r_before=$(reconciles_of_sync)
eventually 30 at_least $(( r_before + 2 )) reconciles_of_sync  # two more sync periods
r_after=$(reconciles_of_sync)
w_after=$(writes "$OP_METRICS_resync")
echo "resync: reconciles of sync $r_before -> $r_after; writes about sync: $(writes_of_sync "$from" | grep -c .);" \
  "all writes of the operator meanwhile: $(( w_after - w_before )) (other objects' are not the resync's)"
[ -z "$(writes_of_sync "$from")" ] ||
  fail "a resync of sync wrote with nothing to change: $(written "$OP_METRICS_resync" "$from")"
echo "PASS: operator_children"
