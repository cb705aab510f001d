#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kubeconfig proxy-url: the operator reaches the API server only through an HTTP CONNECT proxy
# (test/tools/connect_proxy, requiring basic auth from the URL's user info), TLS inside the tunnel,
# and converges an AppService; the proxy saw CONNECT requests for the API server. Without the
# password the proxy answers 407 and the operator never becomes ready.
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
proxy_bin=${ASOP_CONNECT_PROXY:-$(dirname "${ASOP_BINARY:?}")/test/connect_proxy}
[ -x "$proxy_bin" ] || fail "no connect_proxy at $proxy_bin (build the connect_proxy target)"
work=$(mktemp -d /tmp/asop-proxy-e2e.XXXXXX)
cleanup() {
  stop_all_operators
  [ -z "${proxy_pid:-}" ] || { kill "$proxy_pid" 2>/dev/null; wait "$proxy_pid" 2>/dev/null; } || true
  kubectl delete namespace "${ns:-none}" --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "--- $*"; }

kubectl apply -f crds/ >/dev/null
wait_established appservices.app.example.com
ns=proxy-$RANDOM$RANDOM
kubectl create namespace "$ns" >/dev/null
eventually 60 kubectl get serviceaccount default -n "$ns"

port=$(free_port)
# user "op", password "s3cret:x" (a ':' in the password is fine; '%3A' in the URL decodes to it).
"$proxy_bin" --listen "$port" --auth "$(printf 'op:s3cret:x' | base64)" >>"$work/proxy.log" 2>&1 &
proxy_pid=$!
eventually 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port"
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
api=${server#https://}
# with_proxy URL: the admin kubeconfig with proxy-url: URL.
with_proxy() {
  kubectl config view --raw --minify --flatten |
    awk -v p="$1" '{print} /^    server:/ {print "    proxy-url: " p}'
}

step "a wrong password: the proxy answers 407 and nothing gets through"
with_proxy "http://op:wrong@127.0.0.1:$port" >"$work/bad"
OP_KUBECONFIG=$work/bad launch_operator bad --namespace "$ns"
eventually 30 grep -q "via proxy 127.0.0.1:$port (proxy-url) answered 407" "$OP_LOG_DIR/bad.log"
! curl -fsS "127.0.0.1:$OP_HEALTH_bad/readyz" >/dev/null 2>&1 || fail "ready without getting through"
stop_operator "$OP_PID_bad" || true
! grep -q 's3cret\|wrong' "$OP_LOG_DIR/bad.log" || fail "the proxy password is in the log"

step "through the proxy: the AppService converges"
with_proxy "http://op:s3cret%3Ax@127.0.0.1:$port" >"$work/good"
: >"$work/proxy.log"
OP_KUBECONFIG=$work/good start_operator proxied --namespace "$ns"
converge_app "$ns" web
grep -q "^CONNECT $api HTTP/1.1\$" "$work/proxy.log" || fail "no CONNECT $api: $(cat "$work/proxy.log")"
echo "CONNECT requests: $(wc -l <"$work/proxy.log")"
echo "PASS: operator_proxy"
