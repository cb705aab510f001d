#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Release binary carries its C++ dependencies (ASOP_STATIC_DEPS): it may need only glibc and
# libunwind at run time. A shared libcrypto or libstdc++ creeping back costs about 4 MiB of RSS.
# Its relative relocations are packed (-z pack-relative-relocs).
#   linkage_test.sh BINARY
set -euo pipefail
binary=$1
allowed=" libc.so.6 libm.so.6 libunwind.so.8 ld-linux-x86-64.so.2 "
needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || { echo "FAIL: readelf found no NEEDED entries in $binary" >&2; exit 1; }
status=0
for lib in $needed; do
  case $allowed in
    *" $lib "*) ;;
    *) echo "FAIL: $binary needs $lib at run time" >&2; status=1 ;;
  esac
done
# C++ exceptions must unwind through libgcc's unwinder linked in, not through the _Unwind_*
# functions that libunwind.so (glog's stack traces) also exports.
if nm -D --undefined-only "$binary" | grep -w _Unwind_RaiseException >/dev/null; then
  echo "FAIL: $binary takes _Unwind_RaiseException from a shared library" >&2
  status=1
fi
# Relative relocations packed (DT_RELR): as RELA entries they are about 580 KB of resident file.
if ! readelf -d "$binary" | grep '(RELR)' >/dev/null; then
  echo "FAIL: $binary has no DT_RELR: its relative relocations are not packed" >&2
  status=1
fi
# It loads and runs; TLS, glog and yaml-cpp at work are the e2e tests' part.
"$binary" --help > /dev/null
[ "$status" = 0 ] && echo "ok: $binary needs only:" $needed
exit "$status"
