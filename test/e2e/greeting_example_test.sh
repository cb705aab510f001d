#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/library.md's controller (examples/greeting, whose files are that page's blocks), built out
# of tree against `cmake --install` of this build and run as the page says, checked with kubectl:
# a Greeting gets the finalizer, an owned ConfigMap (controller ownerReference with the owner's
# uid) holding its message, Ready=True at its generation and a Created Event; a hand edit of the
# ConfigMap is put back; a new message reaches it without moving the condition's
# lastTransitionTime; a ConfigMap of the child's name that is not the Greeting's is never taken
# over (Ready=False ChildConflict and a Warning Event); the schema refuses a Greeting without a
# message; at rest nothing is written; a ConfigMap a ResourceQuota refuses is Ready=False
# ChildFailed with the API server's words, and made once the quota goes; deleting the Greeting
# cleans up once (one CleanupComplete Event), then it and its ConfigMap go; SIGTERM exits 0.
# ctest: timeout 600
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/../lib/out_of_tree.sh"
cd "${ASOP_SOURCE_DIR:?}"
build=$(dirname "${ASOP_BINARY:?}")
tmp=$(mktemp -d)
ns=greeting-$RANDOM$RANDOM
cleanup() {
  stop_all_operators
  # The finalizer must not outlive the controller that removes it.
  for g in $(kubectl get greetings -n "$ns" -o name 2>/dev/null); do
    kubectl patch "$g" -n "$ns" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
  done
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

install_runtime "$build" "$tmp/prefix"
build_against "$tmp/prefix" examples/greeting "$tmp/build"
echo "ok: examples/greeting built out of tree against the installed AsopRuntime"

kubectl apply -f examples/greeting/crd.yaml >/dev/null
wait_established greetings.demo.example.com
kubectl create namespace "$ns" >/dev/null
ASOP_BINARY=$tmp/build/greeting start_operator greeting --namespace "$ns" -v 1
port=$OP_METRICS_greeting log=$OP_LOG_DIR/greeting.log

check() { check_while_running "$OP_PID_greeting" "$log" "$@"; }  # WHAT SECONDS CMD...
greeting() {  # NAME MESSAGE
  kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: demo.example.com/v1
kind: Greeting
metadata: {name: $1}
spec: {message: "$2"}
YAML
}
field() { kubectl get -n "$ns" "$1" -o "jsonpath=$2" 2>/dev/null; }
ready() {  # NAME -> "STATUS REASON OBSERVED_GENERATION/GENERATION"
  field "greeting/$1" '{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason} {.status.conditions[?(@.type=="Ready")].observedGeneration}/{.metadata.generation}'
}
events() {  # NAME REASON: how many times the Event was seen (its count), 0 if never
  kubectl get events -n "$ns" --field-selector "involvedObject.name=$1,reason=$2" -o json |
    jq '[.items[] | .count // 1] | add // 0'
}
gone() { ! kubectl get -n "$ns" "$1" >/dev/null 2>&1; }

# 1. A Greeting: finalizer, owned child, Ready, Created.
greeting hello "hello, world"
check "the Greeting's ConfigMap holds its message" 60 value_is "hello, world" field configmap/hello-greeting '{.data.message}'
uid=$(field greeting/hello '{.metadata.uid}')
owner=$(field configmap/hello-greeting '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}/{.metadata.ownerReferences[0].controller}/{.metadata.ownerReferences[0].blockOwnerDeletion}')
[ "$owner" = "Greeting/hello/$uid/true/true" ] || fail "the ConfigMap's owner reference is $owner"
echo "ok: the ConfigMap's controller owner is the Greeting (uid, blockOwnerDeletion)"
[ "$(field greeting/hello '{.metadata.finalizers[*]}')" = demo.example.com/cleanup ] ||
  fail "the Greeting's finalizers: $(field greeting/hello '{.metadata.finalizers}')"
check "Ready=True ChildReady at generation 1" 30 value_is "True ChildReady 1/1" ready hello
check "a Created Event on the Greeting" 30 value_is 1 events hello Created
since=$(field greeting/hello '{.status.conditions[?(@.type=="Ready")].lastTransitionTime}')

# 2. Drift is put back; a new message reaches the child, the condition does not move.
kubectl patch configmap hello-greeting -n "$ns" --type=merge -p '{"data":{"message":"edited by hand"}}' >/dev/null
check "a hand-edited ConfigMap is put back" 30 value_is "hello, world" field configmap/hello-greeting '{.data.message}'
greeting hello "bonjour"
check "a new message reaches the ConfigMap" 30 value_is bonjour field configmap/hello-greeting '{.data.message}'
check "Ready=True at generation 2" 30 value_is "True ChildReady 2/2" ready hello
[ "$(field greeting/hello '{.status.conditions[?(@.type=="Ready")].lastTransitionTime}')" = "$since" ] ||
  fail "Ready's lastTransitionTime moved although its status did not"
echo "ok: Ready's lastTransitionTime stayed at $since"

# 3. A ConfigMap of the child's name that is not the Greeting's is left alone.
kubectl create configmap taken-greeting -n "$ns" --from-literal=message=mine >/dev/null
greeting taken "not mine"
check "Ready=False ChildConflict for a name someone else holds" 30 value_is "False ChildConflict 1/1" ready taken
check "a ChildConflict Warning Event" 30 test "$(events taken ChildConflict)" -ge 1
[ "$(field configmap/taken-greeting '{.data.message}/{.metadata.ownerReferences}')" = "mine/" ] ||
  fail "the other ConfigMap was changed: $(field configmap/taken-greeting '{.data.message} {.metadata.ownerReferences}')"
echo "ok: the other ConfigMap is untouched"
# Its Greeting goes (it retries every minute, which would be writes in step 5); the ConfigMap stays.
kubectl delete greeting taken -n "$ns" --wait=false >/dev/null
check "a Greeting whose child was never its own is deleted" 30 gone greeting/taken
[ "$(field configmap/taken-greeting '{.data.message}')" = mine ] || fail "the other ConfigMap went with the Greeting"

# 4. Bad input is refused by the schema and loses nothing.
if out=$(kubectl apply -n "$ns" -f - 2>&1 <<'YAML'
apiVersion: demo.example.com/v1
kind: Greeting
metadata: {name: empty}
spec: {}
YAML
); then fail "a Greeting without a message was accepted"; fi
grep -q 'spec.message: Required value' <<<"$out" || fail "the schema's refusal does not name spec.message: $out"
echo "ok: the schema refuses a Greeting without a message: $(tail -n 1 <<<"$out")"

# 5. At rest nothing is written: a reconcile of a Greeting whose world is as it should be.
reconciles() {
  metrics "$port" | awk '/^controller_runtime_reconcile_total\{controller="greeting"/ {s += $NF} END {print s + 0}'
}
writes_settled "$port"
before=$(writes "$port") reconciled=$(reconciles)
kubectl annotate greeting hello -n "$ns" touched=1 >/dev/null  # an update that changes nothing we own
check "the annotated Greeting is reconciled" 30 test "$(reconciles)" -gt "$reconciled"
writes_settled "$port"
[ "$(writes "$port")" = "$before" ] || fail "an update that changes nothing was written: $(written "$port")"
echo "ok: an update that changes nothing we own writes nothing"

# 6. A write the cluster refuses (a ResourceQuota of no ConfigMaps) is what Ready says, and is
#    retried until it goes through once the quota goes.
kubectl create quota no-configmaps -n "$ns" --hard=count/configmaps=0 >/dev/null
greeting quota "over quota"
check "Ready=False ChildFailed while the quota refuses the ConfigMap" 60 value_is "False ChildFailed 1/1" ready quota
message=$(field greeting/quota '{.status.conditions[?(@.type=="Ready")].message}')
grep -q 'exceeded quota\|forbidden' <<<"$message" || fail "Ready's message does not say why: $message"
check "a ChildFailed Warning Event" 30 test "$(events quota ChildFailed)" -ge 1
echo "ok: Ready says what the API server said: $message"
kubectl delete quota no-configmaps -n "$ns" >/dev/null
check "once the quota goes, the retry creates the ConfigMap" 120 value_is "over quota" field configmap/quota-greeting '{.data.message}'
check "and Ready=True ChildReady" 30 value_is "True ChildReady 1/1" ready quota

# 7. Deletion: the cleanup runs once, then the Greeting and its ConfigMap go.
kubectl delete greeting hello -n "$ns" --wait=false >/dev/null
check "the Greeting goes (finalizer removed)" 30 gone greeting/hello
check "its ConfigMap goes with it (garbage collector)" 60 gone configmap/hello-greeting
check "a CleanupComplete Event" 30 value_is 1 events hello CleanupComplete
writes_settled "$port"
[ "$(events hello CleanupComplete)" = 1 ] || fail "the cleanup ran $(events hello CleanupComplete) times"
echo "ok: the cleanup ran once"

stop_operator "$OP_PID_greeting" || { tail -n 30 "$log" >&2; fail "greeting did not exit 0 on SIGTERM"; }
echo "ok: greeting stopped cleanly on SIGTERM"
echo "PASS: greeting_example"
