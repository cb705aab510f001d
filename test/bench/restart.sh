#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The restart scenario of issue 27, side by side with the controller-runtime peer: N AppServices
# converged, the operator stopped, every AppService's image changed while it is down (a GitOps
# bulk bump), the operator started again, one AppService edited as soon as /readyz answers. Per
# operator, in a fresh namespace each, one after the other on one control plane:
#   ready_s      process start to the first 200 from /readyz
#   edit_s       the edit's `kubectl patch` to its Deployment carrying the new image
#   bulk_s       process start to every other Deployment carrying the bulk image
#   rss_mib      peak RSS (VmHWM) of the restarted process, once its writes settle after the
#                bulk change (no write for 5 s)
#   writes_per_app  its requests other than GET by then, divided by N
#   cpu_s        its utime + stime by then
#   fresh_rss_mib  peak RSS of the first process, which converged the N AppServices from nothing
#   restart_vs_fresh  rss_mib / fresh_rss_mib (issue 27's target: at most 1.1)
#   idle_*       a restart with nothing changed: ready_s, rss_mib, cpu_s at the end of the first
#                60 s, and its writes then
#
#   test/bench/restart.sh [--counts 1000] [--ops ours,peer] [--out DIR] [--kubeconfig FILE]
#
# Without --kubeconfig it starts its own control plane. Results: DIR/restart.txt (one line per
# run) and DIR/restart.md (a table with the ratio ours/peer).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/test/lib/free_port.sh"
source "$root/test/lib/crd.sh"

counts=1000 ops=ours,peer out="" kubeconfig="" idle_s=60
while [ $# -gt 0 ]; do
  case $1 in
    --counts) counts=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --kubeconfig) kubeconfig=$2; shift 2 ;;
    --idle) idle_s=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "restart.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
out=${out:-$root/build/bench/restart-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/logs"
log() { echo "restart.sh: $*" >&2; }
fail() { echo "restart.sh: $*" >&2; exit 1; }

ours=${ASOP_BINARY:-$root/build/appservice-operator}
[ -x "$ours" ] || fail "no operator binary at $ours (build it, or set ASOP_BINARY)"
tools=$(bash "$here/build.sh")
peer=$tools/appservice-peer

pid="" cp_dir=""
cleanup() {
  if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if [ -n "$cp_dir" ]; then bash "$root/test/controlplane/down.sh" "$cp_dir" --purge; fi
  return 0
}
trap cleanup EXIT
if [ -z "$kubeconfig" ]; then
  cp_dir=$(mktemp -d /tmp/asop-bench-cp.XXXXXX)
  bash "$root/test/controlplane/up.sh" "$cp_dir" >/dev/null
  kubeconfig=$cp_dir/kubeconfig
fi
export KUBECONFIG=$kubeconfig
kubectl apply -f "$root/crds/" >/dev/null
wait_established appservices.app.example.com

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
secs() { awk -v ms="$1" 'BEGIN {printf "%.2f", ms / 1000}'; }
# until_true SECONDS CMD...: polls CMD every 50 ms; fails the run at the deadline.
until_true() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "timed out: $*"
    sleep 0.05
  done
}
manifest() {
  local i
  for i in $(seq -w 1 "$n"); do
    printf -- '---\napiVersion: app.example.com/v1\nkind: AppService\nmetadata: {name: app-%s}\nspec: {size: 0, image: "%s", ports: [{port: 80}]}\n' "$i" "$1"
  done
}
images_are() {
  [ "$(kubectl -n "$ns" get deployments -o jsonpath='{range .items[*]}{.spec.template.spec.containers[0].image}{"\n"}{end}' |
    grep -c "^$1\$")" -ge "$2" ]
}
edited_is() {
  [ "$(kubectl -n "$ns" get deployment "app-$n" -o jsonpath='{.spec.template.spec.containers[0].image}')" = "$1" ]
}
# start OP NAME: the operator, cluster-wide, with free ports; sets pid, metrics, health, started.
start() {
  local bin=$ours
  [ "$1" = peer ] && bin=$peer
  metrics=$(free_port); health=$(free_port "$metrics")
  started=$(now_ms)
  "$bin" --kubeconfig "$KUBECONFIG" --metrics-bind-address "127.0.0.1:$metrics" \
    --health-probe-bind-address "127.0.0.1:$health" >"$out/logs/$1-$n-$2.log" 2>&1 &
  pid=$!
}
stop() { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""; }
# writes: requests other than GET so far. Fails when the metric is missing, so a renamed or dropped
# metric cannot pass as "no writes".
writes() {
  local body
  body=$(curl -fsS "127.0.0.1:$metrics/metrics") || fail "no /metrics on port $metrics"
  grep -q '^rest_client_requests_total{' <<<"$body" || fail "rest_client_requests_total missing"
  awk '/^rest_client_requests_total/ && !/method="GET"/ {s+=$NF} END {print s+0}' <<<"$body"
}
ready() { curl -fsS "127.0.0.1:$health/readyz"; }
rss_of() { awk '/^VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }
# settled: the writes count has not moved for 5 s. The deadline grows with N: after a first
# convergence the status follows the Deployment controller's reports on every Deployment (at
# N = 5,000 that took over 300 s).
settle() {
  local last now still=0 deadline=$(( $(date +%s) + slow_s ))
  last=$(writes)
  while [ "$still" -lt 5 ]; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "writes did not settle"
    sleep 1
    now=$(writes)
    if [ "$now" = "$last" ]; then still=$((still + 1)); else still=0 last=$now; fi
  done
}

results=$out/restart.txt
: >"$results"
for n in ${counts//,/ }; do
  # Deadline of the steps whose work grows with N (settling, deleting the namespace).
  slow_s=$(( n / 5 > 300 ? n / 5 : 300 ))
  for op in ${ops//,/ }; do
    ns=restart-$op-$n-$RANDOM
    kubectl create namespace "$ns" >/dev/null
    log "N=$n: $op in $ns"
    manifest nginx:1.27 | kubectl -n "$ns" apply -f - >/dev/null
    start "$op" first
    until_true 900 images_are nginx:1.27 "$n"
    settle
    fresh_rss=$(rss_of "$pid")
    stop
    # Nothing changed: the writes of a new process in its first idle_s seconds.
    start "$op" idle
    until_true 120 ready
    idle_ready_ms=$(( $(now_ms) - started ))
    sleep "$idle_s"
    idle_writes=$(writes)
    idle_rss=$(rss_of "$pid")
    idle_cpu=$(cpu_of "$pid")
    stop
    manifest nginx:1.28 | kubectl -n "$ns" apply -f - >/dev/null
    start "$op" bulk
    until_true 120 ready
    ready_ms=$(( $(now_ms) - started ))
    edit_at=$(now_ms)
    kubectl -n "$ns" patch appservice "app-$n" --type merge -p '{"spec":{"image":"nginx:1.29"}}' >/dev/null
    until_true 600 edited_is nginx:1.29
    edit_ms=$(( $(now_ms) - edit_at ))
    until_true 900 images_are nginx:1.28 $(( n - 1 ))
    bulk_ms=$(( $(now_ms) - started ))
    # Counted once the writes settle, not at a fixed time after the last image: each AppService's
    # status follows its Deployment's rollout (RollingOut, then RolloutComplete once the
    # Deployment controller has seen the new generation), and an operator that applies faster
    # leaves more of those to come after any fixed moment.
    settle
    rss=$(rss_of "$pid")
    cpu=$(cpu_of "$pid")
    w=$(writes)
    # The namespace goes while this operator still runs, so it removes its own finalizers: left
    # terminating with N finalized AppServices, it would hand the next operator (cluster-wide) N
    # AppServices it can only fail on (at N = 5,000 the peer spent its 900 s on those errors).
    kubectl delete namespace "$ns" --wait=false >/dev/null
    until_true "$slow_s" sh -c "! kubectl get namespace $ns"
    stop
    echo "op=$op n=$n ready_s=$(secs "$ready_ms") edit_s=$(secs "$edit_ms") bulk_s=$(secs "$bulk_ms") rss_mib=$rss fresh_rss_mib=$fresh_rss restart_vs_fresh=$(awk -v r="$rss" -v f="$fresh_rss" 'BEGIN {printf "%.2f", r / f}') writes_per_app=$(awk -v w="$w" -v n="$n" 'BEGIN {printf "%.2f", w / n}') cpu_s=$cpu idle_ready_s=$(secs "$idle_ready_ms") idle_rss_mib=$idle_rss idle_cpu_s=$idle_cpu idle_writes=$idle_writes" |
      tee -a "$results"
  done
done

# The table: one block per N, ours and the peer side by side.
{
  for n in ${counts//,/ }; do
    echo
    echo "N = $n, size 0, every image changed while stopped, one edit at /readyz"
    echo
    echo "| figure | ours | peer | ours/peer |"
    echo "|---|---:|---:|---:|"
    for f in "edit_s:the edit, patch to Deployment (s)" "ready_s:start to ready (s)" \
      "bulk_s:start to every bulk change applied (s)" "rss_mib:peak RSS of the restarted process (MiB)" \
      "fresh_rss_mib:peak RSS of the first start, converging from nothing (MiB)" \
      "restart_vs_fresh:restart peak / first-start peak" \
      "writes_per_app:writes per AppService, bulk change" "cpu_s:CPU of the restarted process (s)" \
      "idle_ready_s:nothing changed: start to ready (s)" \
      "idle_rss_mib:nothing changed: peak RSS after ${idle_s} s (MiB)" \
      "idle_cpu_s:nothing changed: CPU in ${idle_s} s (s)" \
      "idle_writes:nothing changed: writes in ${idle_s} s"; do
      key=${f%%:*}
      o=$(grep "^op=ours n=$n " "$results" | grep -o " $key=[0-9.]*" | cut -d= -f2 || true)
      p=$(grep "^op=peer n=$n " "$results" | grep -o " $key=[0-9.]*" | cut -d= -f2 || true)
      r=$(awk -v o="$o" -v p="$p" 'BEGIN {if (o != "" && p != "" && p + 0 > 0) printf "%.2f", o / p; else print "-"}')
      echo "| ${f#*:} | ${o:--} | ${p:--} | $r |"
    done
  done
} | tee "$out/restart.md"
log "results in $out"
