# SPDX-License-Identifier: Apache-2.0
# Shared helpers for the fault tests. A test that disrupts the API server starts its own control
# plane (own_controlplane), so the shared one other tests use is never touched.
here_faults=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# common.sh demands a running cluster; own_controlplane provides it before anything talks to one.
export KUBECONFIG=${KUBECONFIG:-/nonexistent-until-own-controlplane}
source "$here_faults/../lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"

# own_controlplane: starts a control plane in a temp dir (APISERVER_EXTRA_ARGS passes through),
# points KUBECONFIG at it, applies the CRD and creates namespace $ns. cleanup (the EXIT trap)
# stops the operators and removes it all.
own_controlplane() {
  cp_dir=$(mktemp -d /tmp/asop-fault-cp.XXXXXX)
  trap cleanup EXIT
  bash test/controlplane/up.sh "$cp_dir" >/dev/null
  export KUBECONFIG=$cp_dir/kubeconfig
  kubectl apply -f crds/ >/dev/null
  wait_established appservices.app.example.com
  ns=fault
  kubectl create namespace "$ns" >/dev/null
  eventually 60 kubectl get serviceaccount default -n "$ns"
}
# shared_controlplane PREFIX: for a test that disturbs only the operator (not the API server): a
# namespace of its own on the shared control plane of $KUBECONFIG, removed at exit. Its operators
# must run with --namespace "$ns".
shared_controlplane() {
  [ -f "$KUBECONFIG" ] || fail "KUBECONFIG must point at a running control plane"
  kubectl apply -f crds/ >/dev/null
  wait_established appservices.app.example.com
  new_namespace "$1"
  shared_ns=$ns
  trap cleanup EXIT
}
cleanup() {
  stop_all_operators
  stop_proxy
  if [ -n "${cp_dir:-}" ]; then
    bash test/controlplane/down.sh "$cp_dir" --purge
  elif [ -n "${shared_ns:-}" ]; then
    kubectl delete namespace "$shared_ns" --wait=false >/dev/null 2>&1 || true
  fi
  return 0
}

# start_proxy: test/tools/blackhole_proxy between the operators and the API server of $KUBECONFIG.
# Sets OP_KUBECONFIG (same credentials, server through the proxy) for start_operator; kubectl in
# the test keeps talking to the API server directly.
start_proxy() {
  local bin=${ASOP_BLACKHOLE_PROXY:-$(dirname "${ASOP_BINARY:?}")/test/blackhole_proxy}
  [ -x "$bin" ] || fail "no blackhole_proxy at $bin (build the blackhole_proxy target)"
  local server cluster
  server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
  cluster=$(kubectl config view --minify -o jsonpath='{.clusters[0].name}')
  proxy_port=$(free_port)
  proxy_control=$(free_port "$proxy_port")
  "$bin" --listen "$proxy_port" --control "$proxy_control" --target "${server#https://}" \
    > "$OP_LOG_DIR/proxy.log" 2>&1 &
  proxy_pid=$!
  eventually 30 grep -q 'control on' "$OP_LOG_DIR/proxy.log"
  export OP_KUBECONFIG=$OP_LOG_DIR/proxy.kubeconfig
  kubectl config view --minify --flatten > "$OP_KUBECONFIG"
  kubectl --kubeconfig "$OP_KUBECONFIG" config set-cluster "$cluster" \
    --server "https://127.0.0.1:$proxy_port" >/dev/null
}
stop_proxy() {
  [ -n "${proxy_pid:-}" ] || return 0
  kill -TERM "$proxy_pid" 2>/dev/null || true
  wait "$proxy_pid" 2>/dev/null || true
}
# start_slow_watch_proxy DELAY_MS: test/tools/slow_watch_proxy (the test kit's FaultProxy) between
# the operators and the API server of own_controlplane: every watch response's bytes DELAY_MS
# late, every other request at once. Sets proxy_pid (cleanup stops it) and slow_kubeconfig, the
# proxy's kubeconfig: the API server's CA (the proxy serves the API server's certificate) and the
# admin bearer token, which the proxy forwards as it came (a client certificate cannot pass a
# TLS-terminating proxy).
start_slow_watch_proxy() {
  local bin=${ASOP_SLOW_WATCH_PROXY:-$(dirname "${ASOP_BINARY:?}")/test/slow_watch_proxy}
  [ -x "$bin" ] || fail "no slow_watch_proxy at $bin (build the slow_watch_proxy target)"
  [ -f "$cp_dir/token" ] || fail "no admin token at $cp_dir/token"
  "$bin" --controlplane "$cp_dir" --delay-ms "$1" >"$OP_LOG_DIR/proxy.log" 2>&1 &
  proxy_pid=$!
  eventually 30 grep -q '^listening' "$OP_LOG_DIR/proxy.log"
  slow_kubeconfig=$OP_LOG_DIR/slow.kubeconfig
  cp "$(sed -n 's/^listening on .* kubeconfig \([^ ]*\) .*/\1/p' "$OP_LOG_DIR/proxy.log")" \
    "$slow_kubeconfig"
  chmod 600 "$slow_kubeconfig"
  # The proxy works and passes a plain request at once.
  kubectl --kubeconfig "$slow_kubeconfig" get --raw /readyz >/dev/null || fail "the proxy does not pass requests"
}
# stale_holds PORT [CONTROLLER]: controller_runtime_reconcile_stale_cache_total of the appservice
# controller (or CONTROLLER): reconciles held back because a cache had not yet observed the
# controller's own last write.
stale_holds() {
  local body controller=${2:-appservice}
  body=$(metrics "$1") || fail "no /metrics on port $1"
  grep -q "^controller_runtime_reconcile_stale_cache_total{controller=\"$controller\"} " <<<"$body" ||
    fail "controller_runtime_reconcile_stale_cache_total{controller=\"$controller\"} missing on port $1"
  awk -v series="controller_runtime_reconcile_stale_cache_total{controller=\"$controller\"}" \
    '$1 == series {print $NF}' <<<"$body"
}
# proxy stall|flow|cut|status: switches the proxy and waits for its acknowledgement.
proxy() {
  local fd reply=""
  exec {fd}<>"/dev/tcp/127.0.0.1/$proxy_control"
  echo "$1" >&"$fd"
  read -r -t 10 reply <&"$fd" || true
  exec {fd}>&-
  [[ $reply == ok* ]] || fail "proxy $1: '$reply'"
  echo "$reply"
}

# stop_apiserver / start_apiserver: the API server of our own control plane only.
stop_apiserver() {
  local pid
  pid=$(cat "$cp_dir/run/kube-apiserver.pid")
  kill -TERM "$pid"
  while [ -d "/proc/$pid" ]; do sleep 0.1; done
}
start_apiserver() { bash test/controlplane/up.sh "$cp_dir" >/dev/null; }

k() { kubectl -n "$ns" "$@"; }
# app NAME SIZE IMAGE: applies an AppService.
app() {
  k apply -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: $1}
spec: {size: $2, image: "$3", ports: [{port: 80}]}
YAML
}
# converged NAME IMAGE: status observed the current generation and the Deployment runs IMAGE.
converged() {
  [ "$(k get appservice "$1" -o jsonpath='{.status.observedGeneration}')" = \
    "$(k get appservice "$1" -o jsonpath='{.metadata.generation}')" ] &&
    [ "$(k get deployment "$1" -o jsonpath='{.spec.template.spec.containers[0].image}')" = "$2" ] &&
    k get service "$1" >/dev/null
}
# gone NAME: the AppService and both children no longer exist.
gone() { ! k get appservice "$1" && ! k get deployment "$1" && ! k get service "$1"; }
# leaks: children whose owning AppService no longer exists (by uid).
leaks() {
  local uids
  uids=" $(k get appservices -o jsonpath='{.items[*].metadata.uid}') "
  k get deployments,services -l app.kubernetes.io/managed-by=appservice-operator \
    -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].uid}{"\n"}{end}' |
    while read -r uid; do case "$uids" in *" $uid "*) ;; *) echo "$uid" ;; esac; done | grep -c . || true
}
# stuck_finalizers: AppServices being deleted that still hold a finalizer.
stuck_finalizers() {
  k get appservices -o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{.metadata.name}{"\n"}{end}' | grep -c . || true
}
# metric PORT NAME: sum of a counter over all its series; fails the test when it is missing.
metric() {
  local out
  out=$(curl -fsS "127.0.0.1:$1/metrics") || fail "metrics on port $1 not reachable"
  awk -v n="$2" '$1 == n || index($1, n "{") == 1 {s += $NF; found = 1} END {if (!found) exit 1; print s}' <<<"$out" ||
    fail "metric $2 missing"
}
# running PID: the process exists and is not a zombie (an exited child stays one until waited for).
running() { [ -r "/proc/$1/status" ] && ! grep -q '^State:.*Z' "/proc/$1/status"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# glog_ms LINE: the time of a glog line ("W20260612 10:11:12.345678 ...") in ms since the epoch.
glog_ms() { date -d "${1:1:4}-${1:5:2}-${1:7:2} ${1:10:15}" +%s%3N; }
secs() { printf '%d.%03ds' $(( $1 / 1000 )) $(( $1 % 1000 )); }
