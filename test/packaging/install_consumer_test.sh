#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# unit.install_consumer BUILD_DIR: `cmake --install` of the build tree to a temporary prefix holds
# the runtime's public headers (src/asop/, and no other), static libraries and the AsopRuntime
# package, and not the AppService domain; a one-file program (fixtures/consumer/) configures against it with
# find_package(AsopRuntime), builds out of tree and runs; so does the controller docs/library.md
# writes from an empty directory (its yaml, cmake and cpp blocks, which must be examples/greeting's
# files), up to --version; and docs/testing.md's test (examples/configmap-sync's, on the test kit)
# builds and, with no control plane, is reported skipped (exit 77), or failed when CI requires one.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:?usage: install_consumer_test.sh BUILD_DIR}
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$here/../lib/out_of_tree.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

install_runtime "$build" "$tmp/prefix"
for f in include/asop/app.h include/asop/builder.h include/asop/client.h \
         include/asop/reconciler.h lib/libasop_ctrl_app.a \
         lib/libasop_ctrl.a lib/libasop_kube_core.a lib/cmake/AsopRuntime/AsopRuntimeConfig.cmake \
         lib/cmake/AsopRuntime/AsopRuntimeConfigVersion.cmake; do
  [ -e "$tmp/prefix/$f" ] || fail "the install has no $f"
done
# The public headers and nothing else: the same files as src/asop/.
installed=$(cd "$tmp/prefix/include" && find . -type f | sed 's|^\./||' | sort)
public=$(cd "$here/../../src" && find asop -type f -name '*.h' | sort)
[ "$installed" = "$public" ] || fail "installed headers differ from src/asop/: $(diff <(echo "$public") <(echo "$installed") | tr '\n' ' ')"
echo "ok: $(echo "$installed" | wc -l) headers installed, all of src/asop/ and nothing else"
domain=$(find "$tmp/prefix" -path '*/appservice/*' -o -name 'libasop_appservice*')
[ -z "$domain" ] || fail "the AppService domain was installed: $domain"

build_against "$tmp/prefix" "$here/fixtures/consumer" "$tmp/consumer"
out=$("$tmp/consumer/consumer") || fail "the consumer exited $?: $out"
want="AsopRuntime $(sed -n 's/^project(appservice-operator VERSION \([0-9.]*\).*/\1/p' \
  "$here/../../CMakeLists.txt"): team-a/settings at /api/v1/namespaces/team-a/configmaps/settings"
[ "$out" = "$want" ] || fail "the consumer printed '$out', want '$want'"
echo "ok: installed, built out of tree with find_package(AsopRuntime), ran: $out"

# A controller's file stays light: the public headers, every one included by the consumer, pull in
# no Beast, no OpenSSL and nothing of the runtime's own headers (the transport above all).
c++ -std=c++20 -DRAPIDJSON_HAS_STDSTRING=1 -DBOOST_ASIO_NO_DEPRECATED -DCONSUMER_FOUND_VERSION='""' \
  -I"$tmp/prefix/include" -H -fsyntax-only "$here/fixtures/consumer/consumer.cpp" 2>"$tmp/headers" ||
  { cat "$tmp/headers"; fail "the consumer does not compile against the install alone"; }
heavy=$(grep '^\.' "$tmp/headers" | awk '{print $2}' | grep -E 'boost/beast|openssl/|/(kube|ctrl)/' |
  sort -u) || true
[ -z "$heavy" ] || fail "the public headers pull in $(echo "$heavy" | sed -n '1,5p' | tr '\n' ' ')"
echo "ok: the public headers include $(grep -c '^\.' "$tmp/headers") headers, none of Beast, OpenSSL or the runtime"

# docs/library.md's controller, from an empty directory: its blocks are examples/greeting's files.
mkdir "$tmp/doc"
doc=$here/../../docs/library.md example=$here/../../examples/greeting
blocks() { awk -v lang="$1" '$0 == "```" lang {on = 1; next} /^```$/ {on = 0} on' "$doc"; }
blocks yaml >"$tmp/doc/crd.yaml"
blocks cmake >"$tmp/doc/CMakeLists.txt"
blocks cpp >"$tmp/doc/main.cpp"
for f in crd.yaml CMakeLists.txt main.cpp; do
  [ -s "$tmp/doc/$f" ] || fail "docs/library.md has no block for $f"
  diff -u "$example/$f" "$tmp/doc/$f" >"$tmp/diff" ||
    fail "docs/library.md's blocks differ from examples/greeting/$f: $(cat "$tmp/diff")"
done
echo "ok: docs/library.md's blocks are examples/greeting's crd.yaml, CMakeLists.txt and main.cpp"
build_against "$tmp/prefix" "$tmp/doc" "$tmp/doc-build"
out=$("$tmp/doc-build/greeting" --version) || fail "docs/library.md's controller exited $?"
[ "$out" = "greeting 0.1.0" ] || fail "docs/library.md's controller printed '$out'"
echo "ok: docs/library.md's controller builds from its own lines and runs: $out"

# docs/testing.md's blocks are examples/configmap-sync's CMakeLists.txt and its test; the example
# and its tests build against the install with COMPONENTS testing. With no control plane (the
# installed scripts, an empty binary cache, no Go on PATH) the test binary says why and exits 77,
# which ctest reports as skipped, never passed; with ASOP_TESTING_REQUIRE_CONTROLPLANE=1 it fails.
testing_doc=$here/../../docs/testing.md sync=$here/../../examples/configmap-sync
testing_blocks() { awk -v lang="$1" '$0 == "```" lang {on = 1; next} /^```$/ {on = 0} on' "$testing_doc"; }
testing_blocks cmake >"$tmp/testing-CMakeLists.txt"
testing_blocks cpp >"$tmp/testing-test.cpp"
diff -u "$sync/CMakeLists.txt" "$tmp/testing-CMakeLists.txt" >"$tmp/diff" ||
  fail "docs/testing.md's cmake block differs from examples/configmap-sync/CMakeLists.txt: $(cat "$tmp/diff")"
diff -u "$sync/configmap_sync_test.cpp" "$tmp/testing-test.cpp" >"$tmp/diff" ||
  fail "docs/testing.md's cpp block differs from examples/configmap-sync/configmap_sync_test.cpp: $(cat "$tmp/diff")"
[ -d "$tmp/prefix/share/asop/controlplane" ] || fail "the install has no share/asop/controlplane"
build_against "$tmp/prefix" "$sync" "$tmp/sync"
no_control_plane=(env -u ASOP_CONTROLPLANE_DIR -u ASOP_CONTROLPLANE_SCRIPTS
  -u ASOP_TESTING_REQUIRE_CONTROLPLANE APPSERVICE_OPERATOR_CACHE="$tmp/empty-cache"
  XDG_RUNTIME_DIR="$tmp" PATH=/usr/bin:/bin)
code=0
"${no_control_plane[@]}" "$tmp/sync/configmap-sync-tests" >"$tmp/skip.log" 2>&1 || code=$?
[ "$code" = 77 ] || { cat "$tmp/skip.log"; fail "with no control plane the kit's test exited $code, not 77"; }
grep -F "asop::testing: SKIPPED: no control plane: the control plane binaries are not built and Go is not installed" \
  "$tmp/skip.log" >/dev/null || { cat "$tmp/skip.log"; fail "the skip does not say why"; }
(cd "$tmp/sync" && "${no_control_plane[@]}" ctest --output-on-failure) >"$tmp/ctest.log" 2>&1 ||
  { cat "$tmp/ctest.log"; fail "ctest failed where the kit's test should be skipped"; }
grep -E "configmap-sync-tests .*Skipped" "$tmp/ctest.log" >/dev/null ||
  { cat "$tmp/ctest.log"; fail "ctest did not report the kit's test skipped"; }
code=0
"${no_control_plane[@]}" ASOP_TESTING_REQUIRE_CONTROLPLANE=1 "$tmp/sync/configmap-sync-tests" \
  >"$tmp/require.log" 2>&1 || code=$?
if [ "$code" = 0 ] || [ "$code" = 77 ]; then
  cat "$tmp/require.log"; fail "with ASOP_TESTING_REQUIRE_CONTROLPLANE=1 the kit's test exited $code"
fi
grep -F "ASOP_TESTING_REQUIRE_CONTROLPLANE=1" "$tmp/require.log" >/dev/null ||
  { cat "$tmp/require.log"; fail "the required control plane's failure does not say why"; }
echo "ok: docs/testing.md's test builds with the kit; no control plane: skipped (77), required: failed ($code)"
