# SPDX-License-Identifier: Apache-2.0
# Shared helpers for the shell e2e tests. Each test runs against $KUBECONFIG (set by run-all.sh).
set -euo pipefail
: "${KUBECONFIG:?KUBECONFIG must point at a running control plane (test/controlplane/up.sh)}"

fail() { echo "FAIL: $*" >&2; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../../lib/crd.sh"

# require_docker: skips the test (exit 77, tagged "# ctest: may-skip") when there is no usable
# Docker engine; with REQUIRE_DOCKER=1 (CI machines have an engine) that is a failure instead.
require_docker() {
  local why
  if why=$(docker info 2>&1 >/dev/null); then return 0; fi
  why=$(tail -n 1 <<<"$why")
  [ "${REQUIRE_DOCKER:-0}" != 1 ] || fail "REQUIRE_DOCKER=1 but docker info failed: $why"
  echo "SKIP: no usable Docker engine (docker info: $why)"
  exit 77
}

# eventually SECONDS CMD...: retries CMD until it succeeds; fails the test at the deadline.
eventually() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "condition not met in time: $*"
    sleep 0.5
  done
}

# check_while_running PID LOG WHAT SECONDS CMD...: eventually, for a test that runs a controller
# itself: prints "ok: WHAT" once CMD succeeds; fails with the last 30 lines of LOG when SECONDS pass
# first or the process PID exits.
check_while_running() {
  local pid=$1 log=$2 what=$3 seconds=$4
  shift 4
  local deadline=$(( $(date +%s) + seconds ))
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      tail -n 30 "$log" >&2
      fail "$what: not so after ${seconds}s"
    fi
    kill -0 "$pid" 2>/dev/null || { tail -n 30 "$log" >&2; fail "$what: the controller exited"; }
    sleep 0.3
  done
  echo "ok: $what"
}

# value_is WANT CMD...: CMD prints WANT (for eventually, which re-runs it).
value_is() { local want=$1; shift; [ "$("$@")" = "$want" ]; }

# new_namespace PREFIX: creates a namespace, sets $ns to it (removed when the test exits) and waits
# for its default service account, without which Pods are refused. Not for $(...): the exit trap
# would fire in the subshell.
new_namespace() {
  ns=$1-$RANDOM$RANDOM
  kubectl create namespace "$ns" >/dev/null
  trap 'kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT
  eventually 60 kubectl get serviceaccount default -n "$ns"
}

source "$(dirname "${BASH_SOURCE[0]}")/../../lib/free_port.sh"

# exec_kubeconfig DIR [KUBECTL-FLAGS...]: writes DIR/kubeconfig, $KUBECONFIG with a user that
# authenticates through test/e2e/fixtures/exec-credential.sh (the admin token; each run is a line
# in DIR/runs). FLAGS add knobs (--exec-env=ASOP_E2E_EXEC_EXPIRY=60). DIR/runs starts empty:
# kubectl may run the plugin while editing the file, and only the operator's runs count.
exec_kubeconfig() {
  local dir=$1; shift
  cp "$KUBECONFIG" "$dir/kubeconfig"
  kubectl --kubeconfig "$dir/kubeconfig" config set-credentials e2e-exec \
    --exec-api-version=client.authentication.k8s.io/v1 --exec-interactive-mode=Never \
    --exec-command="${ASOP_SOURCE_DIR:?}/test/e2e/fixtures/exec-credential.sh" \
    --exec-env="ASOP_E2E_TOKEN_FILE=${ASOP_CONTROLPLANE_DIR:-$(dirname "$KUBECONFIG")}/token" \
    --exec-env="ASOP_E2E_EXEC_LOG=$dir/runs" "$@" >/dev/null
  kubectl --kubeconfig "$dir/kubeconfig" config set-context --current --user=e2e-exec >/dev/null
  : >"$dir/runs"
}

# sa_kubeconfig OUT NAMESPACE SERVICEACCOUNT: writes OUT, $KUBECONFIG's cluster with a 10-minute
# token of that ServiceAccount as the only credential, to run the binary with exactly its RBAC.
sa_kubeconfig() {
  local user
  kubectl config view --raw --minify --flatten >"$1"
  user=$(kubectl config view --raw --minify -o jsonpath='{.users[0].name}' --kubeconfig "$1")
  kubectl config set-credentials "$user" --kubeconfig "$1" \
    --token="$(kubectl create token "$3" -n "$2" --duration=10m)" >/dev/null
  kubectl config unset "users.$user.client-certificate-data" --kubeconfig "$1" >/dev/null
  kubectl config unset "users.$user.client-key-data" --kubeconfig "$1" >/dev/null
}

# sample_app: deploy/samples/nginx-app.yaml with its nodePort 30002 swapped for one that no Service
# in the cluster holds now (nodePorts are cluster-wide; other tests' Services may still exist).
sample_app() {
  local taken p
  taken=" $(kubectl get services -A -o jsonpath='{.items[*].spec.ports[*].nodePort}') "
  for _ in $(seq 100); do
    p=$(( 30000 + RANDOM % 2768 ))
    case "$taken" in *" $p "*) continue ;; esac
    sed "s/30002/$p/" deploy/samples/nginx-app.yaml
    return 0
  done
  fail "no free nodePort"
}

# start_operator NAME [FLAGS...]: runs $ASOP_BINARY in the background with free metrics/probe
# ports; sets OP_PID_<NAME>, OP_METRICS_<NAME>, OP_HEALTH_<NAME>; logs to $OP_LOG_DIR/NAME.log.
# OP_KUBECONFIG, when set, replaces $KUBECONFIG for it.
# Every operator started here is stopped when the test exits (stop_all_operators in the trap).
OP_LOG_DIR=${OP_LOG_DIR:-$(mktemp -d /tmp/asop-e2e-logs.XXXXXX)}
OPERATOR_PIDS=()
declare -A OP_LOG_BY_METRICS=()  # metrics port -> log file, for written
start_operator() {
  launch_operator "$@"
  local health_var="OP_HEALTH_$1"
  eventually 60 curl -fsS "127.0.0.1:${!health_var}/readyz"
}
# launch_operator NAME [FLAGS...]: start_operator without waiting for /readyz (for one that must
# not get ready).
launch_operator() {
  local name=$1; shift
  local metrics health
  metrics=$(free_port); health=$(free_port "$metrics")
  "${ASOP_BINARY:?ASOP_BINARY must name the operator binary}" --kubeconfig "${OP_KUBECONFIG:-$KUBECONFIG}" \
    --metrics-bind-address "127.0.0.1:$metrics" --health-probe-bind-address "127.0.0.1:$health" \
    "$@" >> "$OP_LOG_DIR/$name.log" 2>&1 &
  local pid=$!
  OPERATOR_PIDS+=("$pid")
  OP_LOG_BY_METRICS[$metrics]=$OP_LOG_DIR/$name.log
  printf -v "OP_PID_$name" '%s' "$pid"
  printf -v "OP_METRICS_$name" '%s' "$metrics"
  printf -v "OP_HEALTH_$name" '%s' "$health"
}
# appservices_manifest COUNT IMAGE: COUNT AppServices app-001... of size 0 running IMAGE, one
# manifest (named so the API server lists them in order), for bulk creates and bulk changes.
appservices_manifest() {
  local i
  for i in $(seq -w 1 "$1"); do
    printf -- '---\napiVersion: app.example.com/v1\nkind: AppService\nmetadata: {name: app-%s}\nspec: {size: 0, image: "%s", ports: [{port: 80}]}\n' "$i" "$2"
  done
}
# converge_app NS NAME: a one-replica AppService NAME in NS, Available within 90 s.
converge_app() {
  kubectl -n "$1" apply -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: $2}
spec: {size: 1, image: nginx:1.27, ports: [{port: 80}]}
YAML
  eventually 90 value_is True kubectl -n "$1" get "appservice/$2" \
    -o 'jsonpath={.status.conditions[?(@.type=="Available")].status}'
}
# stop_operator PID [SIGNAL]: signals it and waits; returns its exit code.
stop_operator() {
  kill "-${2:-TERM}" "$1" 2>/dev/null || true
  local rc=0
  wait "$1" || rc=$?
  return $rc
}
stop_all_operators() {
  local pid
  for pid in "${OPERATOR_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${OPERATOR_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
# liveness_probe FIELD DEFAULT: a field of the operator's livenessProbe in deploy/base/operator.yaml
# (DEFAULT, the kubelet's, when it is not set): the kubelet restarts the Pod once failureThreshold
# probes in a row failed, a probe failing when /healthz does not answer 200 within timeoutSeconds.
liveness_probe() {
  local v
  v=$(awk -v f="$1" '
    /^ *livenessProbe:/ { inside = 1; indent = match($0, /[^ ]/); next }
    inside && match($0, /[^ ]/) <= indent { inside = 0 }
    inside && $1 == f ":" { print $2; exit }' "$(dirname "${BASH_SOURCE[0]}")/../../../deploy/base/operator.yaml")
  echo "${v:-$2}"
}
PROBE_TIMEOUT_S=$(liveness_probe timeoutSeconds 1)
PROBE_FAILURE_THRESHOLD=$(liveness_probe failureThreshold 3)
# kubelet_probe PORT PATH: one probe as the kubelet makes it: 0 when PATH answered 200 within
# PROBE_TIMEOUT_S. Prints the seconds it took (the timeout when it did not answer).
kubelet_probe() {
  local out
  out=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time "$PROBE_TIMEOUT_S" \
    "http://127.0.0.1:$1$2") || { echo "$PROBE_TIMEOUT_S"; return 1; }
  echo "${out#* }"
  [ "${out%% *}" = 200 ]
}

# metrics PORT: the operator's /metrics text. Read whole before any grep: with pipefail,
# `curl | grep -q` fails when grep stops reading early and curl gets SIGPIPE (curl exit 23).
metrics() { curl -fsS "127.0.0.1:$1/metrics"; }
# has_metric PORT REGEX: a line of the operator's /metrics matches REGEX.
has_metric() { local body; body=$(metrics "$1") || return 1; grep -q -- "$2" <<<"$body"; }
# writes PORT: the operator's count of requests other than GET (what would change something).
# Fails when the metric is missing, so a renamed or dropped metric cannot pass as "no writes".
writes() {
  local body
  body=$(metrics "$1") || fail "no /metrics on port $1"
  grep -q '^rest_client_requests_total{' <<<"$body" || fail "rest_client_requests_total missing on port $1"
  awk '/^rest_client_requests_total/ && !/method="GET"/ {s+=$NF} END {print s+0}' <<<"$body"
}

# log_lines PORT: how many lines the log of the operator on metrics PORT has now (for written).
log_lines() { wc -l < "${OP_LOG_BY_METRICS[$1]:?no operator with metrics port $1}"; }
# written PORT [FROM_LINE]: the writes the operator on metrics PORT logged (after line FROM_LINE of
# its log), one a line: verb, path, answer and why (kube::RestClient::logging_writes, -v=1). What a
# test that counts writes prints when the count is wrong; it says so when the operator does not
# log its writes (run it with -v=1).
written() {
  local log=${OP_LOG_BY_METRICS[$1]:?no operator with metrics port $1} lines
  lines=$(tail -n +"$(( ${2:-0} + 1 ))" "$log" | grep ' write: ' || true)
  if [ -n "$lines" ]; then
    echo "$(grep -c . <<<"$lines") writes the operator logged (${log##*/}), the last 40:"
    tail -n 40 <<<"$lines" | sed 's/^/  /'
  elif grep -q ' write: ' "$log"; then
    echo "(${log##*/}: no write logged in that span)"
  else
    echo "(${log##*/}: no write logged at all: run the operator with -v=1 to see each write)"
  fi
}

# writes_settled PORT: waits (deadline 60 s) until the operator's write count has not moved for
# 5 s, so a measurement "at rest" does not count an Event or status write still on its way from
# the change before it.
writes_settled() {
  local deadline=$(( $(date +%s) + 60 )) last now still=0 from
  from=$(log_lines "$1")
  last=$(writes "$1")
  while [ "$still" -lt 5 ]; do
    [ "$(date +%s)" -lt "$deadline" ] ||
      fail "writes did not settle within 60 s (port $1): $(written "$1" "$from")"
    sleep 1
    now=$(writes "$1")
    if [ "$now" = "$last" ]; then still=$((still + 1)); else still=0 last=$now; fi
  done
}
