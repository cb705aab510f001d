# SPDX-License-Identifier: Apache-2.0
# Pinned control-plane versions, one set per supported Kubernetes minor; sourced by build.sh and
# up.sh. K8S_MINOR picks the set (default: the newest). Change a set together with its
# modules/*/go.mod (pin-kubernetes.sh writes those; the cache key includes them, so a change
# rebuilds).
K8S_MINORS="1.37 1.36 1.35"
K8S_MINOR=${K8S_MINOR:-1.37}
case "$K8S_MINOR" in
  1.37) KUBERNETES_VERSION=v1.37.2 ETCD_VERSION=v3.7.3 ETCD_MODULE=etcd-v3.7 ;;
  1.36) KUBERNETES_VERSION=v1.36.3 ETCD_VERSION=v3.6.16 ETCD_MODULE=etcd-v3.6 ;;
  1.35) KUBERNETES_VERSION=v1.35.4 ETCD_VERSION=v3.6.16 ETCD_MODULE=etcd-v3.6 ;;
  *) echo "versions.sh: K8S_MINOR=$K8S_MINOR is not one of $K8S_MINORS" >&2; return 1 2>/dev/null || exit 1 ;;
esac
KUBERNETES_MODULE=kubernetes-v$K8S_MINOR
KWOK_VERSION=v0.8.0
CONTROLPLANE_CACHE_ROOT=${APPSERVICE_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/appservice-operator}/controlplane
