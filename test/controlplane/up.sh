#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# up.sh DIR: starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (one fake
# node) on loopback with free ports, writes DIR/kubeconfig (admin, system:masters, client
# certificate), waits until /readyz answers and the node is Ready, and returns. Idempotent: what is
# already running is left alone, what died is started again on the same ports and data.
#
# Also written: DIR/pki/ca.crt, DIR/token (static admin bearer token), DIR/server (API URL),
# DIR/etcd-url, DIR/logs/*.log. Extra kube-apiserver flags: APISERVER_EXTRA_ARGS (first start only).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$1"
dir=$(cd "$1" && pwd)
source "$here/versions.sh"
source "$here/pki.sh"
source "$here/lib.sh"

bin=$("$here/build.sh")
# The kubectl of the same version as the server (built with it), not whatever PATH has.
export PATH=$bin/client:$PATH
mkdir -p "$dir/logs" "$dir/run"
make_pki "$dir"
pki=$dir/pki

# Ports are chosen once and kept, so a restarted component comes back where clients expect it.
if [ ! -f "$dir/ports.env" ]; then
  etcd_port=$(free_port)
  etcd_peer_port=$(free_port "$etcd_port")
  apiserver_port=$(free_port "$etcd_port" "$etcd_peer_port")
  kwok_port=$(free_port "$etcd_port" "$etcd_peer_port" "$apiserver_port")
  {
    echo "ETCD_PORT=$etcd_port"
    echo "ETCD_PEER_PORT=$etcd_peer_port"
    echo "APISERVER_PORT=$apiserver_port"
    echo "KWOK_PORT=$kwok_port"
  } > "$dir/ports.env"
  printf '%s\n' "${APISERVER_EXTRA_ARGS:-}" > "$dir/apiserver-extra-args"
fi
source "$dir/ports.env"
server=https://127.0.0.1:$APISERVER_PORT
echo "$server" > "$dir/server"
echo "http://127.0.0.1:$ETCD_PORT" > "$dir/etcd-url"
cp "$pki/admin.token" "$dir/token"
write_kubeconfig "$dir/kubeconfig" "$server" "$pki/admin.crt" "$pki/admin.key"
write_kubeconfig "$dir/controller-manager.kubeconfig" "$server" "$pki/controller-manager.crt" \
  "$pki/controller-manager.key"
write_kubeconfig "$dir/scheduler.kubeconfig" "$server" "$pki/scheduler.crt" "$pki/scheduler.key"
export KUBECONFIG=$dir/kubeconfig

start etcd "$dir" "$bin/etcd" --name default --data-dir "$dir/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT" --log-level warn
wait_for "etcd health" 60 curl -fsS "http://127.0.0.1:$ETCD_PORT/health"

# shellcheck disable=SC2046 # the extra args are meant to split into words
start kube-apiserver "$dir" "$bin/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$APISERVER_PORT" \
  --cert-dir "$dir/run" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
  --client-ca-file "$pki/ca.crt" --token-auth-file "$pki/tokens.csv" \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --service-cluster-ip-range 10.0.0.0/16 --endpoint-reconciler-type none \
  --authorization-mode RBAC --enable-admission-plugins OwnerReferencesPermissionEnforcement \
  --allow-privileged --profiling=false $(cat "$dir/apiserver-extra-args")
wait_for "kube-apiserver /readyz" 120 kubectl get --raw /readyz

start kube-controller-manager "$dir" "$bin/kube-controller-manager" \
  --kubeconfig "$dir/controller-manager.kubeconfig" --leader-elect=false --secure-port 0 \
  --use-service-account-credentials --service-account-private-key-file "$pki/sa.key" \
  --root-ca-file "$pki/ca.crt" --controllers '*'
start kube-scheduler "$dir" "$bin/kube-scheduler" \
  --kubeconfig "$dir/scheduler.kubeconfig" --leader-elect=false --secure-port 0
start kwok "$dir" "$bin/kwok" --kubeconfig "$dir/kubeconfig" --config "$bin/kwok-stages.yaml" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
  --node-ip 10.0.0.1 --cidr 10.0.1.0/24 --node-lease-duration-seconds 40 \
  --server-address "127.0.0.1:$KWOK_PORT"

kubectl apply -f "$here/fake-node.yaml" >/dev/null
wait_for "the fake node to be Ready" 120 kubectl wait --for=condition=Ready node/kwok-node-0 --timeout=5s
# Ready is not yet schedulable: the API server taints a new node not-ready, and the node lifecycle
# controller lifts that taint only on its next pass (5 s, longer under load).
wait_for "the fake node to be untainted" 120 \
  bash -c '[ -z "$(kubectl get node kwok-node-0 -o jsonpath="{.spec.taints}")" ]'
# Pods can only be created once the service-account controller made the default account.
wait_for "the default service account" 120 kubectl get serviceaccount default -n default
echo "control plane is up: KUBECONFIG=$dir/kubeconfig ($server)"
