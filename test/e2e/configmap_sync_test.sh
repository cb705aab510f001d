#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The runtime as a library: `cmake --install` of this build to a temporary prefix, then
# examples/configmap-sync configured and built out of tree against it with
# find_package(AsopRuntime), then run against the control plane the way a user runs a controller.
# Checks, with kubectl: a labelled source is copied into a namespace that asks (and gets the
# finalizer and a Synced Event); a hand-edited copy and a deleted copy are put back; a namespace
# that starts asking later gets its copy, one that stops loses it; deleting the source deletes
# every copy (CopiesDeleted Event) and then the source itself goes. Then the example's own tests
# (docs/testing.md, on the installed test kit) pass against the same control plane.
# ctest: timeout 600
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/../lib/out_of_tree.sh"
cd "${ASOP_SOURCE_DIR:?}"
build=$(dirname "${ASOP_BINARY:?}")
tmp=$(mktemp -d)
pid=""
suffix=$RANDOM$RANDOM
src=cms-src-$suffix a=cms-a-$suffix b=cms-b-$suffix
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  # The finalizer must not outlive the controller that removes it.
  kubectl patch configmap settings -n "$src" --type=json \
    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1 || true
  kubectl delete namespace "$src" "$a" "$b" --wait=false >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# 1. Install, then build the example from the installed package only.
install_runtime "$build" "$tmp/prefix"
build_against "$tmp/prefix" examples/configmap-sync "$tmp/build"
echo "ok: examples/configmap-sync built out of tree against the installed AsopRuntime"

# 2. Run it: plain HTTP metrics and probes on free ports.
metrics=$(free_port) probes=$(free_port "$metrics")
"$tmp/build/configmap-sync" --metrics-bind-address "127.0.0.1:$metrics" \
  --health-probe-bind-address "127.0.0.1:$probes" -v 1 >"$tmp/log" 2>&1 &
pid=$!
ready() { curl -fsS "http://127.0.0.1:$probes/readyz"; }
eventually 60 ready || { cat "$tmp/log"; fail "never ready"; }

kubectl create namespace "$src" >/dev/null
kubectl create namespace "$a" >/dev/null
kubectl create namespace "$b" >/dev/null
kubectl label namespace "$a" configmap-sync.example.com/sync=true >/dev/null
kubectl create configmap settings -n "$src" --from-literal=greeting=hello --from-literal=size=3 >/dev/null
kubectl label configmap settings -n "$src" configmap-sync.example.com/source=true >/dev/null

copy_says() {  # NS KEY WANT: the copy in NS has data KEY=WANT
  [ "$(kubectl get configmap settings -n "$1" -o "jsonpath={.data.$2}" 2>/dev/null)" = "$3" ]
}
check() { check_while_running "$pid" "$tmp/log" "$@"; }  # WHAT SECONDS CMD...
has_finalizer() {
  grep -q configmap-sync.example.com/cleanup \
    <<<"$(kubectl get configmap settings -n "$src" -o jsonpath='{.metadata.finalizers}')"
}
event_seen() {  # REASON
  grep -q configmap-sync <<<"$(kubectl get events -n "$src" \
    --field-selector "involvedObject.name=settings,reason=$1" -o jsonpath='{.items[*].source.component}')"
}
copy_labelled() {
  [ "$(kubectl get configmap settings -n "$a" \
       -o 'jsonpath={.metadata.labels.configmap-sync\.example\.com/copy-of-namespace}')" = "$src" ]
}
gone() { ! kubectl get "$@" >/dev/null 2>&1; }

check "the source is copied into the namespace that asks" 60 copy_says "$a" greeting hello
check "the copy says where it came from" 10 copy_labelled
check "the source carries the finalizer" 10 has_finalizer
check "a Synced Event on the source" 30 event_seen Synced
gone configmap settings -n "$b" || fail "namespace $b did not ask but got a copy"

kubectl patch configmap settings -n "$a" --type=merge -p '{"data":{"greeting":"edited by hand"}}' >/dev/null
check "a hand-edited copy is put back" 30 copy_says "$a" greeting hello
kubectl delete configmap settings -n "$a" >/dev/null
check "a deleted copy is put back" 30 copy_says "$a" greeting hello

kubectl patch configmap settings -n "$src" --type=merge -p '{"data":{"greeting":"bonjour"}}' >/dev/null
check "a change of the source reaches the copy" 30 copy_says "$a" greeting bonjour

kubectl label namespace "$b" configmap-sync.example.com/sync=true >/dev/null
check "a namespace that starts asking gets its copy" 30 copy_says "$b" greeting bonjour
kubectl label namespace "$b" configmap-sync.example.com/sync- >/dev/null
check "a namespace that stops asking loses its copy" 30 gone configmap settings -n "$b"

kubectl delete configmap settings -n "$src" --wait=false >/dev/null
check "deleting the source deletes its copies" 30 gone configmap settings -n "$a"
check "then the source itself goes (finalizer removed)" 30 gone configmap settings -n "$src"
check "a CopiesDeleted Event on the source" 30 event_seen CopiesDeleted

kill -TERM "$pid"
code=0; wait "$pid" || code=$?
pid=""
[ "$code" = 0 ] || { tail -n 30 "$tmp/log" >&2; fail "configmap-sync exited $code on SIGTERM"; }
echo "ok: configmap-sync stopped cleanly on SIGTERM"

# 3. The example's own tests (docs/testing.md, on the installed test kit) against this control
# plane, as its author runs them: ctest in its build.
(cd "$tmp/build" && ASOP_CONTROLPLANE_DIR=${ASOP_CONTROLPLANE_DIR:?} ctest --output-on-failure) \
  >"$tmp/kit.log" 2>&1 || { cat "$tmp/kit.log"; fail "configmap-sync's tests on the test kit failed"; }
grep -F "100% tests passed" "$tmp/kit.log" >/dev/null || { cat "$tmp/kit.log"; fail "configmap-sync's tests did not all pass"; }
if grep -F "did not run" "$tmp/kit.log" >/dev/null; then cat "$tmp/kit.log"; fail "configmap-sync's tests were skipped"; fi
echo "ok: configmap-sync's own tests on the test kit passed against this control plane"
