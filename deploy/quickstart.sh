#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# quickstart.sh [--kubeconfig FILE] [OPERATOR FLAGS...]
#
# From a fresh Debian 12 machine (as root): installs what is missing, builds the operator, and
# when no cluster is given (no --kubeconfig, no KUBECONFIG) starts a local control plane in
# .controlplane/quickstart (etcd, kube-apiserver, controller-manager, scheduler, one kwok node).
# Then applies crds/ and runs the operator in the foreground. The local control plane keeps running
# after the operator stops; stop it with: test/controlplane/down.sh .controlplane/quickstart
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export PATH=$PATH:/usr/local/go/bin

kubeconfig=${KUBECONFIG:-}
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --kubeconfig) kubeconfig=${2:?--kubeconfig needs a file}; shift 2 ;;
    --kubeconfig=*) kubeconfig=${1#*=}; shift ;;
    *) args+=("$1"); shift ;;
  esac
done

bash test/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build --target appservice-operator

if [ -z "$kubeconfig" ]; then
  bash test/controlplane/up.sh .controlplane/quickstart
  kubeconfig=$root/.controlplane/quickstart/kubeconfig
  # The kubectl built with the control plane, at its version: no client outside kubectl's skew.
  client=$(bash test/controlplane/build.sh)/client
  export PATH=$client:$PATH
  echo "quickstart: local control plane running; use it with:"
  echo "  export KUBECONFIG=$kubeconfig PATH=$client:\$PATH"
  echo "quickstart: stop it with: test/controlplane/down.sh .controlplane/quickstart"
elif ! command -v kubectl >/dev/null; then
  PATH=$(bash test/controlplane/build.sh)/client:$PATH
fi
export KUBECONFIG=$kubeconfig

if compgen -G "crds/*.yaml" >/dev/null; then
  kubectl apply -f crds/
fi
echo "quickstart: running the operator ($(command -v kubectl) is $(kubectl version --client -o json | jq -r .clientVersion.gitVersion)); try: kubectl apply -f deploy/samples/nginx-app.yaml"
exec build/appservice-operator --kubeconfig "$kubeconfig" "${args[@]}"
