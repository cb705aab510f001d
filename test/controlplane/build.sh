#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok and a kubectl of the
# same version from their Go modules (through the Go module proxy) at the versions pinned in
# versions.sh and modules/*/go.mod, for the minor K8S_MINOR picks (default the newest). Prints the
# folder that holds the binaries; kubectl is in its client/ (what tests put first on PATH). A
# second run builds nothing.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/versions.sh"

mods=("$here/modules/$KUBERNETES_MODULE" "$here/modules/$ETCD_MODULE" "$here/modules/kwok")
key=$(for m in "${mods[@]}"; do cat "$m/go.mod" "$m/go.sum"; done | cat - "$here/build.sh" | sha256sum | cut -c1-12)
out="$CONTROLPLANE_CACHE_ROOT/k8s-$KUBERNETES_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION-$key"
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

complete() {
  for b in "${bins[@]}" client/kubectl; do [ -x "$out/$b" ] || return 1; done
  [ -s "$out/kwok-stages.yaml" ]
}
if complete; then echo "$out"; exit 0; fi

command -v go >/dev/null || { echo "build.sh: Go is not installed (need go >= 1.26 on PATH)" >&2; exit 1; }
mkdir -p "$out/client"
export GOFLAGS="${GOFLAGS:-} -mod=readonly -trimpath"
export CGO_ENABLED=0
log() { echo "build.sh: $*" >&2; }

# The Kubernetes binaries report their version from these variables (kubectl shows it).
minor=${KUBERNETES_VERSION#v1.}; minor=${minor%%.*}
kver="-X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION
 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor
 -X k8s.io/component-base/version.gitTreeState=clean
 -X k8s.io/client-go/pkg/version.gitVersion=$KUBERNETES_VERSION
 -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"

start=$(date +%s)
log "building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl $KUBERNETES_VERSION"
(cd "$here/modules/$KUBERNETES_MODULE" && go build -ldflags "-s -w $kver" -o "$out/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler &&
  go build -ldflags "-s -w $kver" -o "$out/client/kubectl" k8s.io/kubernetes/cmd/kubectl)
log "building etcd $ETCD_VERSION"
(cd "$here/modules/$ETCD_MODULE" && go build -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3)
log "building kwok $KWOK_VERSION"
(cd "$here/modules/kwok" && go build -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" \
  -o "$out/kwok" sigs.k8s.io/kwok/cmd/kwok)
# kwok runs nothing without stages: take the "fast" set (node-initialize, lease heartbeat, pod
# ready/complete/delete) from the same pinned module.
stages=$(cd "$here/modules/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
  pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
  echo "---"; cat "$stages/$f"
done > "$out/kwok-stages.yaml"
complete || { log "a binary is missing in $out after the build"; exit 1; }
log "built in $(( $(date +%s) - start ))s into $out"
echo "$out"
