#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Status and Events tell the truth when the cluster says no, driven with kubectl as a user would:
# an admission policy refuses an update (Available and the counts stay those of the running
# Deployment, Degraded names the child and the verb), a ResourceQuota and the restricted Pod
# Security Standard refuse the Pods (Degraded=ReplicaFailure), each clears by itself with a Normal
# Event once the cause is gone; children orphaned by `--cascade=orphan` are adopted when the
# AppService comes back; a foreign Deployment of the same name is never described as ours; and hand
# edits of atomic and keyed fields we own are undone.
# ctest: asan
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
ns=truth-$RANDOM$RANDOM
policy=deny-image-$ns
cleanup() {
  stop_all_operators
  kubectl delete validatingadmissionpolicybinding "$policy" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete validatingadmissionpolicy "$policy" --ignore-not-found >/dev/null 2>&1 || true
  for n in "$ns" "$ns-quota" "$ns-psa"; do kubectl delete namespace "$n" --wait=false >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
kubectl apply -f crds/ >/dev/null
wait_established appservices.app.example.com
for n in "$ns" "$ns-quota" "$ns-psa"; do kubectl create namespace "$n" >/dev/null; done
for n in "$ns" "$ns-quota" "$ns-psa"; do eventually 60 kubectl get serviceaccount default -n "$n"; done
jp() { kubectl -n "$1" get "$2" -o jsonpath="$3"; }
cond() { jp "$1" "appservice/$2" "{.status.conditions[?(@.type==\"$3\")].$4}"; }
# has_event NS NAME TYPE REASON: kubectl describe shows such an Event for the AppService.
has_event() { kubectl -n "$1" describe appservice "$2" | grep -E "$3 +$4 " >/dev/null; }
step() { echo "--- $*"; }
# events NS NAME REASON: how many times such an Event was recorded (repeats count in .count).
events() { kubectl -n "$1" get events --field-selector "involvedObject.name=$2,reason=$3" -o jsonpath='{range .items[*]}{.count}{"\n"}{end}' | awk '{s+=$1} END {print s+0}'; }
# show NS NAME: what `kubectl get` and the Events of `kubectl describe` show a user now.
show() {
  echo "$1: $(kubectl -n "$1" get appservice "$2" --no-headers) | $(jp "$1" "appservice/$2" '{range .status.conditions[*]}{.type}={.status}/{.reason} {end}')"
  kubectl -n "$1" describe appservice "$2" | sed -n '/^Events:/,$p' | sed 's/^/    /'
}
app() {  # app NS NAME IMAGE [SIZE]
  kubectl -n "$1" apply -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: $2}
spec: {size: ${4:-1}, image: "$3", ports: [{port: 80}]}
YAML
}

# One operator per namespace: other tests' AppServices run beside these on the shared control plane.
start_operator main --namespace "$ns"
start_operator quota --namespace "$ns-quota"
start_operator psa --namespace "$ns-psa"

step "a refused update keeps Available and the counts of the Deployment that runs"
kubectl apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: $policy}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - expression: "object.spec.template.spec.containers.all(c, c.image != 'nginx:0.0-denied')"
    message: "the image nginx:0.0-denied is not allowed here"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: $policy}
spec:
  policyName: $policy
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: $ns}
YAML
refused() {
  local out
  out=$(kubectl create deployment probe --image=nginx:0.0-denied -n "$ns" --dry-run=server 2>&1) && return 1
  grep -q 'is not allowed here' <<<"$out"
}
eventually 60 refused
app "$ns" web nginx:1.27
eventually 90 value_is True cond "$ns" web Available status
app "$ns" web nginx:0.0-denied
eventually 60 value_is DeploymentApplyFailed cond "$ns" web Degraded reason
show "$ns" web
cond "$ns" web Degraded message | grep 'is not allowed here' >/dev/null || fail "Degraded message: $(cond "$ns" web Degraded message)"
[ "$(cond "$ns" web Available status)" = True ] || fail "Available is not True while the Deployment serves"
[ "$(jp "$ns" appservice/web '{.status.readyReplicas}')" = 1 ] || fail "readyReplicas is not 1"
[ "$(jp "$ns" deployment/web '{.spec.template.spec.containers[0].image}')" = nginx:1.27 ] || fail "the denied image got through"
eventually 30 has_event "$ns" web Warning DeploymentApplyFailed
app "$ns" web nginx:1.27.1
eventually 60 value_is False cond "$ns" web Degraded status
eventually 60 value_is nginx:1.27.1 jp "$ns" deployment/web '{.spec.template.spec.containers[0].image}'
eventually 30 has_event "$ns" web Normal Recovered
# Once per cause: the retries of the refused apply (the first 5 ms later) announce nothing new.
[ "$(events "$ns" web DeploymentApplyFailed)" = 1 ] || fail "$(events "$ns" web DeploymentApplyFailed) DeploymentApplyFailed Events, want 1"
[ "$(events "$ns" web Recovered)" = 1 ] || fail "$(events "$ns" web Recovered) Recovered Events, want 1"
eventually 90 value_is True cond "$ns" web Available status
show "$ns" web

step "a ResourceQuota that admits no Pods: Degraded=ReplicaFailure, cleared when it goes"
kubectl -n "$ns-quota" create quota no-pods --hard=pods=0 >/dev/null
# Admission judges a quota by its status, which the quota controller fills in.
eventually 60 value_is 0 jp "$ns-quota" resourcequota/no-pods '{.status.hard.pods}'
app "$ns-quota" q nginx:1.27
eventually 60 value_is ReplicaFailure cond "$ns-quota" q Degraded reason
show "$ns-quota" q
cond "$ns-quota" q Degraded message | grep 'exceeded quota' >/dev/null || fail "Degraded message: $(cond "$ns-quota" q Degraded message)"
eventually 30 has_event "$ns-quota" q Warning ReplicaFailure
kubectl -n "$ns-quota" delete quota no-pods >/dev/null
eventually 240 value_is True cond "$ns-quota" q Available status
eventually 60 value_is False cond "$ns-quota" q Degraded status
eventually 30 has_event "$ns-quota" q Normal Recovered
show "$ns-quota" q

step "the restricted Pod Security Standard refuses nginx as root: Degraded=ReplicaFailure"
kubectl label namespace "$ns-psa" pod-security.kubernetes.io/enforce=restricted >/dev/null
app "$ns-psa" strict nginx:1.27
eventually 60 value_is ReplicaFailure cond "$ns-psa" strict Degraded reason
show "$ns-psa" strict
cond "$ns-psa" strict Degraded message | grep 'PodSecurity' >/dev/null || fail "Degraded message: $(cond "$ns-psa" strict Degraded message)"
[ "$(cond "$ns-psa" strict Available status)" = False ] || fail "Available without Pods"
eventually 30 has_event "$ns-psa" strict Warning ReplicaFailure
kubectl label namespace "$ns-psa" pod-security.kubernetes.io/enforce=baseline --overwrite >/dev/null
eventually 240 value_is False cond "$ns-psa" strict Degraded status
show "$ns-psa" strict

step "a nodePort outside the cluster's range: the API server's refusal, not the CRD's, in Degraded"
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: lowport}
spec: {size: 1, image: nginx:1.27, ports: [{port: 80, nodePort: 80}]}
YAML
eventually 60 value_is ServiceCreateFailed cond "$ns" lowport Degraded reason
show "$ns" lowport
cond "$ns" lowport Degraded message | grep 'not in the valid range' >/dev/null || fail "Degraded message: $(cond "$ns" lowport Degraded message)"
[ "$(cond "$ns" lowport Available reason)" = ServiceNotFound ] || fail "Available: $(cond "$ns" lowport Available reason)"
eventually 30 has_event "$ns" lowport Warning ServiceCreateFailed

step "orphaned children are adopted when the AppService comes back, and follow its spec"
app "$ns" orph nginx:1.27
eventually 90 value_is True cond "$ns" orph Available status
kubectl -n "$ns" delete appservice orph --cascade=orphan --wait=true --timeout=60s >/dev/null
eventually 60 value_is "" jp "$ns" deployment/orph '{.metadata.ownerReferences}'
eventually 60 value_is "" jp "$ns" service/orph '{.metadata.ownerReferences}'
app "$ns" orph nginx:1.27
uid=$(jp "$ns" appservice/orph '{.metadata.uid}')
eventually 60 value_is "$uid" jp "$ns" deployment/orph '{.metadata.ownerReferences[?(@.controller==true)].uid}'
eventually 60 value_is "$uid" jp "$ns" service/orph '{.metadata.ownerReferences[?(@.controller==true)].uid}'
eventually 30 has_event "$ns" orph Normal Adopted
eventually 60 value_is False cond "$ns" orph Degraded status
app "$ns" orph nginx:1.27.1
eventually 60 value_is nginx:1.27.1 jp "$ns" deployment/orph '{.spec.template.spec.containers[0].image}'
show "$ns" orph

step "a foreign Deployment of the same name is a conflict, never described as ours"
kubectl -n "$ns" create deployment stranger --image=nginx:1.27 >/dev/null
eventually 90 value_is 1 jp "$ns" deployment/stranger '{.status.readyReplicas}'
app "$ns" stranger nginx:1.27
eventually 60 value_is OwnershipConflict cond "$ns" stranger Degraded reason
show "$ns" stranger
[ "$(cond "$ns" stranger Available reason)" = DeploymentNotOwned ] || fail "Available: $(cond "$ns" stranger Available reason)"
[ "$(jp "$ns" appservice/stranger '{.status.readyReplicas}')" = 0 ] || fail "the stranger's Pods are counted"
kubectl -n "$ns" wait --for=condition=Available appservice/stranger --timeout=3s >/dev/null 2>&1 &&
  fail "kubectl wait --for=condition=Available succeeded on a foreign Deployment"
[ -z "$(jp "$ns" deployment/stranger '{.metadata.ownerReferences}')" ] || fail "the stranger was taken over"

step "hand edits of the fields we own are undone: the Service's atomic selector, a port, an env"
kubectl -n "$ns" patch appservice web --type merge -p '{"spec":{"envs":[{"name":"A","value":"1"}]}}' >/dev/null
eventually 60 value_is 1 jp "$ns" deployment/web '{.spec.template.spec.containers[0].env[0].value}'
kubectl -n "$ns" patch service web -p '{"spec":{"selector":{"tier":"x"}}}' >/dev/null
kubectl -n "$ns" patch deployment web --type json -p '[{"op":"replace","path":"/spec/template/spec/containers/0/ports/0/containerPort","value":81},{"op":"replace","path":"/spec/template/spec/containers/0/env/0/value","value":"2"}]' >/dev/null
eventually 60 value_is '{"app.example.com/appservice":"web"}' jp "$ns" service/web '{.spec.selector}'
# ports is a list keyed by containerPort and protocol: the edit replaced our item 80 with one of
# kubectl's, 81, which the apply leaves to kubectl (it is not ours to remove) and our 80 comes back.
# env is keyed by name: the value of our A is ours again.
has_port_80() { grep -qw 80 <<<"$(jp "$ns" deployment/web '{.spec.template.spec.containers[0].ports[*].containerPort}')"; }
eventually 60 has_port_80
eventually 60 value_is 1 jp "$ns" deployment/web '{.spec.template.spec.containers[0].env[?(@.name=="A")].value}'
echo "after the hand edits: selector $(jp "$ns" service/web '{.spec.selector}'), port and env $(jp "$ns" deployment/web '{.spec.template.spec.containers[0].ports[*].containerPort} {.spec.template.spec.containers[0].env[*].value}')"
echo "PASS: operator_status_truth"
