#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Side-by-side benchmark of appservice-operator against a controller-runtime peer doing the same
# job (test/bench/peer), on one local control plane. For each N and size, each round runs both
# operators one after the other (ours first in odd rounds, the peer first in even ones), each in a
# fresh namespace; benchctl measures the run. Prints a table of medians and ratios ours/peer.
#
#   test/bench/run.sh [--counts 100,1000] [--sizes 0,1] [--rounds 3] [--rest 60] [--quiet 15]
#                     [--settle-max 600] [--timeout 1800] [--out DIR] [--raw-writes]
#                     [--ops ours,peer] [--kubeconfig FILE] [--restart] [--restart-idle S]
#
# --restart then runs the restart scenario (test/bench/restart.sh) for the same counts and
# operators, with and without a bulk change while stopped, into DIR/restart/.
#
# Without --kubeconfig it starts its own control plane (test/controlplane/up.sh) and stops it at
# the end. ASOP_BINARY names our binary (default: build/appservice-operator, built if missing).
# Results: DIR/results.txt (one line of figures per run), DIR/table.md, DIR/medians.tsv,
# DIR/machine.txt, DIR/logs/.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/test/lib/free_port.sh"
source "$root/test/lib/crd.sh"

counts=100,1000 sizes=0,1 rounds=3 rest=60 quiet=15 settle_max=600 timeout=1800 ops=ours,peer out="" kubeconfig="" raw=0
restart=0 restart_idle=60
while [ $# -gt 0 ]; do
  case $1 in
    --counts) counts=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --rest) rest=$2; shift 2 ;;
    --quiet) quiet=$2; shift 2 ;;
    --settle-max) settle_max=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --kubeconfig) kubeconfig=$2; shift 2 ;;
    --raw-writes) raw=1; shift ;;
    --restart) restart=1; shift ;;
    --restart-idle) restart_idle=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for v in "$rounds" "$rest" "$quiet" "$settle_max" "$timeout" "$restart_idle" ${counts//,/ } ${sizes//,/ }; do
  [[ $v =~ ^[0-9]+$ ]] || { echo "run.sh: not a number: $v" >&2; exit 2; }
done
out=${out:-$root/build/bench/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/logs"
log() { echo "run.sh: $*" >&2; }

ours=${ASOP_BINARY:-$root/build/appservice-operator}
if [ ! -x "$ours" ]; then
  log "building $ours"
  cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  nice cmake --build "$root/build" --target appservice-operator >/dev/null
fi
tools=$(bash "$here/build.sh")
peer=$tools/appservice-peer benchctl=$tools/benchctl

op_pid="" cp_dir=""
cleanup() {
  if [ -n "$op_pid" ]; then kill -KILL "$op_pid" 2>/dev/null || true; wait "$op_pid" 2>/dev/null || true; fi
  if [ -n "$cp_dir" ]; then bash "$root/test/controlplane/down.sh" "$cp_dir" --purge; fi
  return 0
}
trap cleanup EXIT
if [ -z "$kubeconfig" ]; then
  cp_dir=$(mktemp -d /tmp/asop-bench-cp.XXXXXX)
  log "starting a control plane in $cp_dir"
  bash "$root/test/controlplane/up.sh" "$cp_dir" >/dev/null
  kubeconfig=$cp_dir/kubeconfig
fi
export KUBECONFIG=$kubeconfig
kubectl apply -f "$root/crds/" >/dev/null
wait_established appservices.app.example.com

{
  echo "date: $(date -u +%FT%TZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x $(nproc)"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "kernel: $(uname -r)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "ours: $ours ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown))"
  echo "peer: $peer (controller-runtime $(grep 'sigs.k8s.io/controller-runtime ' "$here/peer/go.mod" | awk '{print $2}'))"
  echo "server: $(kubectl get --raw /version 2>/dev/null | grep gitVersion | tr -d ' ",' | cut -d: -f2 || true)"
  echo "args: counts=$counts sizes=$sizes rounds=$rounds rest=${rest}s quiet=${quiet}s"
} > "$out/machine.txt"

# start OP: starts one operator cluster-wide with free ports; sets op_pid, metrics, health, started.
start() {
  local op=$1 logfile=$2 bin
  metrics=$(free_port); health=$(free_port "$metrics")
  bin=$ours; [ "$op" = peer ] && bin=$peer
  started=$(date +%s%N)
  "$bin" --kubeconfig "$KUBECONFIG" --metrics-bind-address "127.0.0.1:$metrics" \
    --health-probe-bind-address "127.0.0.1:$health" > "$logfile" 2>&1 &
  op_pid=$!
}
stop() {
  kill -TERM "$op_pid" 2>/dev/null || true
  wait "$op_pid" 2>/dev/null || true
  op_pid=""
}

results=$out/results.txt
for n in ${counts//,/ }; do
  if [ "$raw" = 1 ]; then
    for w in 4 16; do
      ns=bench-raw-$n-$w
      kubectl create namespace "$ns" >/dev/null
      log "raw writes: N=$n, $w clients"
      "$benchctl" writes -namespace "$ns" -count "$n" -workers "$w" | tee -a "$out/raw-writes.txt"
      kubectl delete namespace "$ns" --timeout=900s >/dev/null
    done
  fi
  for size in ${sizes//,/ }; do
    for round in $(seq "$rounds"); do
      order="ours peer"; [ $(( round % 2 )) = 0 ] && order="peer ours"
      for op in $order; do
        [[ ,$ops, == *,$op,* ]] || continue
        ns=bench-$op-$n-$size-$round-$RANDOM
        kubectl create namespace "$ns" >/dev/null
        until kubectl get serviceaccount default -n "$ns" >/dev/null 2>&1; do sleep 0.5; done
        log "N=$n size=$size round $round: $op in $ns"
        start "$op" "$out/logs/$op-$n-$size-$round.log"
        "$benchctl" run -op "$op" -pid "$op_pid" -started "$started" -round "$round" \
          -metrics "http://127.0.0.1:$metrics/metrics" -ready "http://127.0.0.1:$health/readyz" \
          -namespace "$ns" -count "$n" -size "$size" -rest "${rest}s" -quiet "${quiet}s" \
          -settle-max "${settle_max}s" -timeout "${timeout}s" | tee -a "$results"
        stop
        # The children go with the namespace; wait, so the next run starts on a quiet cluster.
        kubectl delete namespace "$ns" --timeout=900s >/dev/null
      done
    done
  done
done
"$benchctl" table -tsv "$results" > "$out/medians.tsv"
"$benchctl" table "$results" | tee "$out/table.md"
if [ "$restart" = 1 ]; then
  ASOP_BINARY=$ours bash "$here/restart.sh" --kubeconfig "$KUBECONFIG" --counts "$counts" \
    --ops "$ops" --idle "$restart_idle" --out "$out/restart"
fi
log "results in $out"
