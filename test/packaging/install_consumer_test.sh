#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# unit.install_consumer BUILD_DIR: `cmake --install` of the build tree to a temporary prefix holds
# the runtime's public headers (src/asop/, and no other), static libraries and the AsopRuntime
# package, and not the AppService domain; a one-file program (fixtures/consumer/) configures against it with
# find_package(AsopRuntime), builds out of tree and runs; so does the controller docs/library.md
# writes from an empty directory (its yaml, cmake and cpp blocks, which must be examples/greeting's
# files), up to --version.
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
