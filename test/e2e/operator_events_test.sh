#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Events aggregate like client-go's EventAggregator: a burst of refused creates
# (DeploymentCreateFailed) whose messages all differ (an admission policy refuses every Deployment
# with the new object's uid in its message) becomes one "(combined from similar events)" Event after 9 separate ones, so it cannot empty the
# AppService's Event budget: once the policy is gone, `kubectl describe` still shows Created.
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
new_namespace ev
policy=deny-deployments-$ns
cleanup() {
  stop_all_operators
  kubectl delete validatingadmissionpolicybinding "$policy" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete validatingadmissionpolicy "$policy" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
kubectl apply -f crds/ >/dev/null
wait_established appservices.app.example.com

# Refuses Deployments in this namespace only, with a message that differs on every request.
kubectl apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: $policy}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  validations:
  - expression: "false"
    messageExpression: "'the test policy refuses Deployments (uid ' + object.metadata.uid + ')'"
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
  out=$(kubectl create deployment probe --image=nginx -n "$ns" --dry-run=server 2>&1) && return 1
  grep -q 'the test policy refuses Deployments' <<<"$out"
}
eventually 60 refused

start_operator op --namespace "$ns"
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: web}
spec: {size: 1, image: nginx:1.27}
YAML
errors() {
  local body
  body=$(metrics "$OP_METRICS_op") || return 1
  awk '/^controller_runtime_reconcile_errors_total\{controller="appservice"\}/ {s+=$NF} END {print s+0}' <<<"$body"
}
# A burst of 40 failed reconciles, each with its own message; spec edits (a new generation) bring
# the key back at once, whatever its backoff.
for i in $(seq 200); do
  [ "$(errors)" -ge 40 ] && break
  kubectl patch appservice web -n "$ns" --type merge -p "{\"spec\":{\"size\":$(( i % 5 + 1 ))}}" >/dev/null
  sleep 0.2
done
[ "$(errors)" -ge 40 ] || fail "only $(errors) failed reconciles"
warnings() {
  kubectl get events -n "$ns" --field-selector involvedObject.name=web,reason=DeploymentCreateFailed \
    -o jsonpath='{range .items[*]}{.count} {.message}{"\n"}{end}'
}
combined() { warnings | grep '(combined from similar events): .*the test policy refuses Deployments' >/dev/null; }
eventually 30 combined
separate=$(warnings | grep -vc 'combined from similar events' || true)
echo "DeploymentCreateFailed: $(errors) failed reconciles -> ${separate} separate Events + 1 combined: $(warnings | grep combined | cut -d' ' -f1) occurrences"
[ "$separate" -le 9 ] || fail "${separate} separate DeploymentCreateFailed Events, want at most 9"

# No hot loop: each failed pass writes a status whose message differs (the uid), and that status
# write must not bring the key back past the rate limiter's backoff (by now past minutes). Nothing
# else changes for 15 s: a fixed window, because what is checked is that nothing happens.
reconciles() {
  local body
  body=$(metrics "$OP_METRICS_op") || return 1
  awk '/^controller_runtime_reconcile_total\{controller="appservice"/ {s+=$NF} END {print s+0}' <<<"$body"
}
r_before=$(reconciles)
sleep 15
r_after=$(reconciles)
echo "reconciles in 15 s at rest with the error standing: $(( r_after - r_before ))"
[ $(( r_after - r_before )) -le 3 ] || fail "$(( r_after - r_before )) reconciles in 15 s with nothing changed: a hot loop"

# The policy goes; the next edit reconciles and creates the children. Their Created Events still
# fit in the AppService's budget, and kubectl describe shows them after the burst.
kubectl delete validatingadmissionpolicybinding "$policy" >/dev/null
kubectl delete validatingadmissionpolicy "$policy" >/dev/null
size=1
created() {
  size=$(( size % 5 + 1 ))
  kubectl patch appservice web -n "$ns" --type merge -p "{\"spec\":{\"size\":$size}}" >/dev/null
  kubectl get deployment web -n "$ns" >/dev/null 2>&1
}
eventually 60 created
described() {
  local out
  out=$(kubectl describe appservice web -n "$ns")
  grep -q 'Normal.*Created.*Created Deployment' <<<"$out" &&
    grep -q 'combined from similar events' <<<"$out"
}
eventually 30 described
echo "PASS: operator_events"
