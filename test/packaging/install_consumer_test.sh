#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# unit.install_consumer BUILD_DIR: `cmake --install` of the build tree to a temporary prefix holds
# the runtime's headers, static libraries and the AsopRuntime package, and not the AppService
# domain; a one-file program (fixtures/consumer/) configures against it with
# find_package(AsopRuntime), builds out of tree and runs.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:?usage: install_consumer_test.sh BUILD_DIR}
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" || {
  cat "$tmp/install.log"; fail "cmake --install $build"; }
for f in include/asop/ctrl/manager.h include/asop/ctrl/builder.h include/asop/ctrl/app/app.h \
         include/asop/kube/api/rest_client.h lib/libasop_ctrl_app.a \
         lib/libasop_ctrl.a lib/libasop_kube_core.a lib/cmake/AsopRuntime/AsopRuntimeConfig.cmake \
         lib/cmake/AsopRuntime/AsopRuntimeConfigVersion.cmake; do
  [ -e "$tmp/prefix/$f" ] || fail "the install has no $f"
done
domain=$(find "$tmp/prefix" -path '*/appservice/*' -o -name 'libasop_appservice*')
[ -z "$domain" ] || fail "the AppService domain was installed: $domain"

launcher=()
# With ccache, paths relative to the temporary directory: the next run's build hits the cache.
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$tmp CCACHE_NOHASHDIR=true
fi
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$here/fixtures/consumer" -B "$tmp/consumer" "${generator[@]}" "${launcher[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/configure.log" 2>&1 || {
  cat "$tmp/configure.log"; fail "configuring the consumer against the installed package"; }
cmake --build "$tmp/consumer" >"$tmp/build.log" 2>&1 || {
  cat "$tmp/build.log"; fail "building the consumer against the installed package"; }
out=$("$tmp/consumer/consumer") || fail "the consumer exited $?: $out"
want="AsopRuntime $(sed -n 's/^project(appservice-operator VERSION \([0-9.]*\).*/\1/p' \
  "$here/../../CMakeLists.txt"): team-a/settings at /api/v1/namespaces/team-a/configmaps/settings"
[ "$out" = "$want" ] || fail "the consumer printed '$out', want '$want'"
echo "ok: installed, built out of tree with find_package(AsopRuntime), ran: $out"
