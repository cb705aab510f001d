#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SIGKILL mid-reconcile and mid-deletion, then restart: everything converges, nothing leaks, no
# finalizer is stuck. The windows are caught by killing while 40 AppServices are being reconciled
# (or deleted) and reading the objects afterwards: after a SIGKILL nothing changes any more, so
# the snapshot is the state at the kill. Each window must have been hit at least once. The 40 are
# created (or deleted) while no operator runs, so the one started next has all of them queued and
# works on four at a time: the windows stay open for the whole batch. Created while it ran, they
# came at kubectl's pace, one window of a few milliseconds at a time, which a loaded machine
# missed. The operators to be killed are not waited on for /readyz: its 0.5 s poll is time enough
# for a Release binary to finish the batch before the log is followed. Nothing else runs then: the
# operator that cleaned up after a round is stopped before the next round.
# ctest: processors 2
# ctest: asan
source "$(dirname "$0")/lib.sh"
own_controlplane
count=40
# mid_reconcile: AppServices whose Deployment exists but whose status was never written.
mid_reconcile() {
  local with_status
  with_status=" $(k get appservices -o jsonpath='{range .items[?(@.status.observedGeneration)]}{.metadata.name} {end}') "
  k get deployments -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' |
    while read -r d; do case "$with_status" in *" $d "*) ;; *) echo "$d" ;; esac; done | grep -c . || true
}
# mid_deletion: AppServices being deleted, finalizer still on, with a child already gone.
mid_deletion() {
  local deps svcs
  deps=" $(k get deployments -o jsonpath='{.items[*].metadata.name}') "
  svcs=" $(k get services -o jsonpath='{.items[*].metadata.name}') "
  k get appservices -o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{.metadata.name}{"\n"}{end}' |
    while read -r a; do [[ $deps == *" $a "* && $svcs == *" $a "* ]] || echo "$a"; done | grep -c . || true
}
# kill_at LOG TEXT PID: SIGKILLs PID at the first line of LOG with TEXT. It follows the log
# instead of polling it: between two polls the Release binary could finish the whole batch.
kill_at() {
  local fd follower found=0
  exec {fd}< <(exec tail -n +1 -F "$1" 2>/dev/null)
  follower=$!
  if timeout 60 grep -q -m1 -- "$2" <&"$fd"; then
    found=1
    kill -KILL "$3" 2>/dev/null || true
  fi
  kill "$follower" 2>/dev/null || true
  exec {fd}<&-
  [ "$found" = 1 ] || fail "no '$2' in $1"
}
apps_yaml() {
  for i in $(seq "$count"); do
    printf -- '---\napiVersion: app.example.com/v1\nkind: AppService\nmetadata: {name: app-%03d}\nspec: {size: 0, image: "%s", ports: [{port: 80}]}\n' "$i" "$1"
  done
}
# pid NAME: operator NAME's process id.
pid() { local v=OP_PID_$1; echo "${!v}"; }
# kill_when NAME TEXT: starts operator NAME on the queued work, SIGKILLs it at TEXT in its log.
kill_when() {
  launch_operator "$1" --namespace "$ns"
  kill_at "$OP_LOG_DIR/$1.log" "$2" "$(pid "$1")"
  wait "$(pid "$1")" 2>/dev/null || true
  kills=$((kills + 1))
}
kills=0 hit_reconcile=0 hit_deletion=0
start_ms=$(now_ms)
for round in 1 2 3; do
  apps_yaml nginx:1.27 | k apply -f - >/dev/null
  kill_when "r$round" 'created Deployment'
  hit_reconcile=$(( hit_reconcile + $(mid_reconcile) ))
  start_operator "r${round}b" --namespace "$ns"
  for i in $(seq "$count"); do eventually 60 converged "$(printf app-%03d "$i")" nginx:1.27; done
  stop_operator "$(pid "r${round}b")" || fail "r${round}b did not stop cleanly"
  k delete appservices --all --wait=false >/dev/null
  kill_when "r${round}d" 'deleted Deployment'
  hit_deletion=$(( hit_deletion + $(mid_deletion) ))
  start_operator "r${round}c" --namespace "$ns"
  eventually 120 sh -c "! kubectl -n $ns get appservices -o name | grep -q ."
  eventually 60 sh -c "! kubectl -n $ns get deployments,services -o name | grep -q ."
  [ "$hit_reconcile" -ge 1 ] && [ "$hit_deletion" -ge 1 ] && break
  stop_operator "$(pid "r${round}c")" || fail "r${round}c did not stop cleanly"
done
recover_ms=$(( $(now_ms) - start_ms ))
[ "$hit_reconcile" -ge 1 ] || fail "never killed between creating children and writing status"
[ "$hit_deletion" -ge 1 ] || fail "never killed between deleting children and removing the finalizer"
leaked=$(k get deployments,services -o name | grep -c . || true)
[ "$leaked" = 0 ] || fail "$leaked leaked children"
[ "$(stuck_finalizers)" = 0 ] || fail "finalizer stuck"
last=OP_METRICS_r${round}c
requests=$(metric "${!last}" rest_client_requests_total)
errors=$(metric "${!last}" controller_runtime_reconcile_errors_total)
echo "figures: recover=$(secs "$recover_ms") (all rounds) requests=$requests errors=$errors leaks=$leaked kills=$kills rounds=$round killed_mid_reconcile=$hit_reconcile killed_mid_deletion=$hit_deletion"
echo "PASS: sigkill_midway"
