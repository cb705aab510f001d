# SPDX-License-Identifier: Apache-2.0
# Pinned control-plane versions; sourced by build.sh and up.sh. Change them together with
# modules/*/go.mod (the cache key below includes those files, so a change rebuilds).
KUBERNETES_VERSION=v1.35.4
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
CONTROLPLANE_CACHE_ROOT=${APPSERVICE_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/appservice-operator}/controlplane
