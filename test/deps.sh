#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what building and testing need on a fresh Debian 12 machine (as root), and nothing when
# it is all there already. Go (>= 1.26, from /usr/local/go on our machines) must be present:
# Debian 12's own golang is too old for Kubernetes 1.35. kubectl is built with the control plane
# (test/controlplane/build.sh), at the server's version.
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config libboost1.81-dev libssl-dev zlib1g-dev rapidjson-dev
  libgoogle-glog-dev libyaml-cpp-dev catch2 clang clang-format libclang-rt-14-dev
  openssl curl iproute2 ca-certificates jq yq prometheus ccache python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps.sh: installing ${missing[*]}" >&2
  [ "$(id -u)" = 0 ] || { echo "deps.sh: need root to apt-get install ${missing[*]}" >&2; exit 1; }
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The image's build stage installs libssl-dev from the mirror and shares the suite's ccache: with
# older OpenSSL headers here, every TU that includes Asio's SSL misses there (28 of 81 files).
# Keep the host at the mirror's candidate so both compile against the same headers.
ssl_have=$(dpkg-query -W -f='${Version}' libssl-dev 2>/dev/null || true)
ssl_want=$(apt-cache policy libssl-dev 2>/dev/null | awk '/Candidate:/ {print $2}')
if [ -n "$ssl_want" ] && [ "$ssl_want" != "(none)" ] && [ "$ssl_have" != "$ssl_want" ]; then
  echo "deps.sh: libssl-dev $ssl_have -> $ssl_want (the image's build stage gets $ssl_want)" >&2
  [ "$(id -u)" = 0 ] || { echo "deps.sh: need root to upgrade libssl-dev" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    libssl-dev libssl3 openssl >/dev/null
fi
if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then
  echo "deps.sh: Go is at /usr/local/go/bin; add it to PATH" >&2
fi
command -v go >/dev/null || [ -x /usr/local/go/bin/go ] ||
  { echo "deps.sh: Go >= 1.26 is required to build the control plane (not found)" >&2; exit 1; }
