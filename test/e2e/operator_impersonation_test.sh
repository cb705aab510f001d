#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kubeconfig impersonation (as:) really runs the operator with the impersonated user's rights: the
# admin kubeconfig plus `as: system:serviceaccount:NS:SA` for a ServiceAccount without rights gets
# 403 for every list (logged, counted in rest_client_requests_total); bound to deploy/base/rbac.yaml's
# ClusterRole, the same kubeconfig converges an AppService. No Docker: the binary runs on the host.
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
work=$(mktemp -d /tmp/asop-impersonation.XXXXXX)
sa=asop-imp-$RANDOM$RANDOM
cleanup() {
  stop_all_operators
  kubectl delete clusterrolebinding "$sa" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete namespace "${ns:-none}" --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "--- $*"; }

kubectl apply -f crds/ -f deploy/base/namespace.yaml -f deploy/base/rbac.yaml >/dev/null
wait_established appservices.app.example.com
ns=imp-$RANDOM$RANDOM
kubectl create namespace "$ns" >/dev/null
eventually 60 kubectl get serviceaccount default -n "$ns"
kubectl -n "$ns" create serviceaccount "$sa" >/dev/null
user=system:serviceaccount:$ns:$sa

step "the admin kubeconfig, impersonating $user"
kubectl config view --raw --minify --flatten >"$work/admin"
awk -v as="$user" '{print} /^  user:$/ {print "    as: " as}' "$work/admin" >"$work/kubeconfig"
grep -q "^    as: $user\$" "$work/kubeconfig" || fail "as: not added: $(grep -n user "$work/admin")"
chmod 0600 "$work/kubeconfig"
out=$(kubectl --kubeconfig "$work/kubeconfig" -n "$ns" get appservices 2>&1 || true)
grep -q Forbidden <<<"$out" || fail "kubectl itself is not forbidden with this kubeconfig: $out"

step "no rights: every request is Forbidden, counted and logged"
OP_KUBECONFIG=$work/kubeconfig launch_operator forbidden --namespace "$ns"
log=$OP_LOG_DIR/forbidden.log
eventually 60 has_metric "$OP_METRICS_forbidden" '^rest_client_requests_total{.*code="403"'
eventually 30 grep -q "\"$user\" cannot list resource" "$log"
! curl -fsS "127.0.0.1:$OP_HEALTH_forbidden/readyz" >/dev/null 2>&1 || fail "ready without any right"
stop_operator "$OP_PID_forbidden" || true
# The credential never reaches the log; the impersonated user only in the server's 403 messages.
! grep -qiE 'client-key|BEGIN|Impersonate-' "$log" || fail "log leaks headers or keys"

step "bound to deploy/base/rbac.yaml's ClusterRole: an AppService converges"
kubectl create clusterrolebinding "$sa" --clusterrole=appservice-operator \
  --serviceaccount="$ns:$sa" >/dev/null
eventually 30 value_is yes kubectl auth can-i --as="$user" list appservices.app.example.com -n "$ns"
OP_KUBECONFIG=$work/kubeconfig start_operator allowed --namespace "$ns"
converge_app "$ns" web
[ "$(kubectl -n "$ns" get deployment/web -o jsonpath='{.metadata.ownerReferences[0].name}')" = web ] ||
  fail "deployment not owned"
body=$(metrics "$OP_METRICS_allowed")
grep -q '^rest_client_requests_total{code="201"' <<<"$body" || fail "no create succeeded"
! grep -q 'code="403"' <<<"$body" || fail "403 with the ClusterRole bound: $(grep 403 <<<"$body")"
echo "PASS: operator_impersonation"
