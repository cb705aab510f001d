#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sanitized.sh SCRIPT: runs an e2e script whose $ASOP_BINARY is the ASan+UBSan build, with every
# sanitizer report written to a file; any report fails the test, even when the script passed
# (an operator that leaked or overflowed while the test's checks still held).
set -uo pipefail
script=${1:?usage: sanitized.sh SCRIPT}
reports=$(mktemp -d /tmp/asop-sanitizer.XXXXXX)
trap 'rm -rf "$reports"' EXIT
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:log_path=$reports/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan"
# Sanitizer start-up and checks make the operator slower; tests wait with deadlines, not sleeps.
bash "$script"
rc=$?
found=0
for f in "$reports"/*; do
  [ -s "$f" ] || continue
  found=1
  echo "FAIL: sanitizer report $(basename "$f"):" >&2
  head -n 60 "$f" >&2
done
[ "$found" = 0 ] || exit 1
exit "$rc"
