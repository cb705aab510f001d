#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The roles of AppService users (deploy/base/rbac-users.yaml) as a cluster admin hands them out:
# a developer bound only to the built-in `edit` ClusterRole in a namespace creates, edits, scales
# and deletes AppServices there with kubectl, and cannot write their status; a reader bound to
# `view` lists and reads them and can change nothing; appservice-admin bound in one namespace gives
# nothing in another. Checked with `kubectl auth can-i` and by doing it.
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
new_namespace roles
other=$ns-other
trap 'for n in "$ns" "$other"; do kubectl delete namespace "$n" --wait=false >/dev/null 2>&1 || true; done' EXIT
kubectl create namespace "$other" >/dev/null
kubectl apply -f crds/ -f deploy/base/rbac-users.yaml >/dev/null
wait_established appservices.app.example.com
kubectl -n "$ns" create serviceaccount dev >/dev/null
kubectl -n "$ns" create serviceaccount reader >/dev/null
kubectl -n "$ns" create serviceaccount boss >/dev/null
kubectl -n "$ns" create rolebinding dev-edit --clusterrole=edit --serviceaccount="$ns:dev" >/dev/null
kubectl -n "$ns" create rolebinding reader-view --clusterrole=view --serviceaccount="$ns:reader" >/dev/null
kubectl -n "$ns" create rolebinding boss-admin --clusterrole=appservice-admin --serviceaccount="$ns:boss" >/dev/null
dev=system:serviceaccount:$ns:dev reader=system:serviceaccount:$ns:reader boss=system:serviceaccount:$ns:boss
can() { kubectl auth can-i --as="$1" "${@:2}" 2>/dev/null || true; }
expect() {  # expect WANT USER CAN-I-ARGS...: in $ns unless the arguments name -n
  local want=$1 user=$2 got; shift 2
  [[ " $* " == *" -n "* ]] || set -- "$@" -n "$ns"
  got=$(can "$user" "$@")
  [ "$got" = "$want" ] || fail "can-i --as=$user $*: want $want, got $got"
}
# The aggregation controller adds the rules to edit and view asynchronously.
eventually 60 value_is yes can "$dev" create appservices.app.example.com -n "$ns"
eventually 60 value_is yes can "$reader" list appservices.app.example.com -n "$ns"
for verb in create get list watch update patch delete deletecollection; do
  expect yes "$dev" "$verb" appservices.app.example.com
done
expect yes "$dev" update appservices.app.example.com --subresource=scale
expect no "$dev" update appservices.app.example.com --subresource=status
expect no "$dev" create appservices.app.example.com -n "$other"
for verb in get list watch; do expect yes "$reader" "$verb" appservices.app.example.com; done
for verb in create update patch delete; do expect no "$reader" "$verb" appservices.app.example.com; done
expect yes "$boss" delete appservices.app.example.com
expect no "$boss" get appservices.app.example.com -n "$other"
echo "can-i: edit -> create/update/delete/scale, not status; view -> get/list/watch only; admin stays in its namespace"

# Doing it, as kubectl users do (impersonating the ServiceAccounts).
as_dev() { kubectl --as="$dev" -n "$ns" "$@"; }
as_dev apply -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: mine}
spec: {size: 1, image: nginx:1.27}
YAML
as_dev scale appservice/mine --replicas=2 >/dev/null
[ "$(as_dev get appservice mine -o jsonpath='{.spec.size}')" = 2 ] || fail "kubectl scale as the developer did not set spec.size"
out=$(kubectl --as="$reader" -n "$ns" get appservices 2>&1) || fail "the reader cannot list: $out"
grep -q mine <<<"$out" || fail "the reader does not see mine: $out"
out=$(kubectl --as="$reader" -n "$ns" delete appservice mine 2>&1) && fail "the reader deleted an AppService"
grep -q Forbidden <<<"$out" || fail "the reader's delete failed otherwise: $out"
as_dev delete appservice mine --wait=false >/dev/null
echo "PASS: user_roles"
